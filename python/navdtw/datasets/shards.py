"""One run's results from several files: :mod:`navdtw.datasets.results.shards`, under the name it had
before the results package (kept so that ``navdtw.datasets.shards`` goes on working; new code
imports :mod:`navdtw.datasets.results.shards`)."""

from __future__ import annotations

from .results.shards import Files, files_of, one_run_as_agents

__all__ = ["Files", "files_of", "one_run_as_agents"]
