"""The results layouts of VLN projects: :mod:`navdtw.datasets.results.layouts`, under the name it had
before the results package (kept so that ``navdtw.datasets.layouts`` goes on working; new code
imports :mod:`navdtw.datasets.results.layouts`)."""

from __future__ import annotations

from .results.layouts import (
    LAYOUTS,
    Layout,
    Summary,
    evaluator_mean,
    layout,
    policy_words,
    recognise,
    shard_of,
    summary_layout,
)

__all__ = [
    "LAYOUTS",
    "Layout",
    "Summary",
    "evaluator_mean",
    "layout",
    "policy_words",
    "recognise",
    "shard_of",
    "summary_layout",
]
