"""What :func:`navdtw.suite.run` and :func:`navdtw.suite.compare` return: the content of
``results.json`` as a dict that shows itself as the leaderboards in a notebook."""

from __future__ import annotations

from .tables import format_leaderboard_html

__all__ = ["SuiteResults"]


class SuiteResults(dict):
    """The content of a run's ``results.json``: a plain ``dict`` (indexing, ``==`` with dicts,
    ``json.dumps``, pickling all work as for a dict) that Jupyter shows as one HTML leaderboard
    per data set (``navdtw.suite.tables.format_leaderboard_html``).

    Keys: ``navdtw_version``, ``settings``, ``metrics`` (the selection, or None), ``datasets``
    (per data set: ``agents``, ``baseline``, ``comparisons``, ...), ``failures``, ``warnings``,
    ``provenance`` (command or suite file, inputs with SHA-256, versions) and ``outputs`` (the
    files written, or None); see docs/suite.md.
    """

    __slots__ = ()

    def _repr_html_(self) -> str:
        return format_leaderboard_html(self)
