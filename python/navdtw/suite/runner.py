"""Running a suite: every data set in turn is opened, its agents scored, its baseline computed (or
read from the cache) and its statistics computed; then the outputs are written.

The stages live in their own modules (:mod:`~navdtw.suite.scoring`, :mod:`~navdtw.suite.baselines`,
:mod:`~navdtw.suite.analysis`, :mod:`~navdtw.suite.outputs`); this one orders them, collects the
failures, keeps the progress bar and the stage timings.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .analysis import analyze_dataset
from .baselines import BASELINE_ROW, cached_baseline
from .config import SuiteError, load_suite
from .outputs import write_outputs, write_report
from .results import SuiteResults
from .scoring import DatasetRun, failure_record, score_agents

__all__ = ["compare", "run"]


def run(
    suite,
    out_dir: str | Path | None = None,
    *,
    progress: bool = True,
    report: bool = True,
    cache_dir: str | Path | None = None,
    base: str | Path | None = None,
    timings: dict[str, float] | None = None,
    max_scenes: int = 500,
) -> SuiteResults:
    """Runs a suite and returns the content of ``results.json``.

    Parameters
    ----------
    suite:
        a TOML file name, a dict of the same content, or a :class:`navdtw.suite.Suite`.
    out_dir:
        if given, the leaderboards, ``results.json``, the per-episode values and (with ``report``)
        ``report.html`` are written there (``navdtw.suite.outputs``).
    progress:
        show a progress bar (needs the ``[progress]`` extra, tqdm).
    report:
        write ``report.html`` too.
    cache_dir:
        where baselines are cached (default ``<out_dir>/.cache``; no cache without either).
    base:
        the folder relative paths of a dict suite start from (:func:`navdtw.suite.load_suite`).
    timings:
        if given, receives wall seconds per stage (load, score, baseline, stats, write, report) and
        CPU seconds as ``<stage>_cpu``.
    max_scenes:
        episodes per data set whose maps the report embeds (evenly spaced).

    Returns
    -------
    :class:`navdtw.suite.SuiteResults`: a dict with ``navdtw_version``, ``settings``, ``datasets``
    and ``failures``. A predictions file that cannot be read or matched is listed in ``failures``
    (agent, data set, file, error) and the run goes on; a data set whose files cannot be opened
    fails all its agents the same way.

    Raises
    ------
    SuiteError
        (a ``ValueError``) for a mistake in the suite, before anything is scored.
    OSError
        when an output cannot be written.
    """
    from .. import __version__

    suite = load_suite(suite, base=base)
    settings = suite.settings
    out = None if out_dir is None else Path(out_dir)
    cache = Path(cache_dir) if cache_dir is not None else (None if out is None else out / ".cache")
    failures: list[dict[str, Any]] = []
    runs: list[DatasetRun] = []
    total = sum(len(files) for files in suite.agents.values())
    bar = _Bar(total + len(suite.datasets), "suite", progress)
    t = (time.perf_counter(), time.process_time())
    try:
        for spec in suite.datasets.values():
            r = DatasetRun(spec)
            runs.append(r)
            try:
                r.bench = spec.kind.open(**spec.options)
            except (ValueError, KeyError, OSError) as exc:
                failures.append(failure_record(None, spec.name, None, exc))
                for agent, files in suite.agents.items():
                    if spec.name in files:
                        failures.append(failure_record(agent, spec.name, files[spec.name], exc))
                        bar.step()
                bar.step()
                continue
            t = _timed(timings, "load", t)
            score_agents(r, suite, failures, bar.step)
            t = _timed(timings, "score", t)
            try:
                r.baseline = cached_baseline(spec, r.bench, settings, cache, progress)
            except (ValueError, OSError) as exc:
                failures.append(failure_record(BASELINE_ROW, spec.name, None, exc))
            t = _timed(timings, "baseline", t)
            try:
                r.result = analyze_dataset(r, settings)
            except ValueError as exc:  # e.g. a NaN metric value
                failures.append(failure_record(None, spec.name, None, exc))
                r.result = {}
            bar.step(f"statistics of {spec.name}")
            t = _timed(timings, "stats", t)
    finally:
        bar.close()
    results = SuiteResults(
        navdtw_version=__version__,
        settings=dict(settings),
        datasets={r.spec.name: r.result for r in runs if r.result},
        failures=failures,
    )
    if out is not None:
        write_outputs(out, results, runs, suite)
        t = _timed(timings, "write", t)
        if report:
            write_report(out, results, runs, suite, max_scenes)
            _timed(timings, "report", t)
    return results


def compare(
    predictions: Sequence[str | Path],
    *,
    dataset: str,
    out_dir: str | Path | None = None,
    convention: str | None = None,
    threshold: float | None = None,
    settings: Mapping[str, Any] | None = None,
    progress: bool = True,
    report: bool = True,
    **options: Any,
) -> SuiteResults:
    """:func:`run` for one data set without a suite file; agents are named by their files' stems.

    Parameters
    ----------
    predictions:
        one predictions file per agent.
    dataset:
        the data set kind (``"r2r"``, a key of :data:`navdtw.datasets.DATASETS`).
    out_dir, progress, report:
        as :func:`run`.
    convention, threshold:
        the data set's convention and success distance (default: the kind's, 3.0 m).
    settings:
        the suite's ``[settings]`` (:data:`navdtw.suite.DEFAULT_SETTINGS`).
    **options:
        the kind's files and options (``split=..., connectivity=...``).

    Returns
    -------
    As :func:`run`.

    Raises
    ------
    SuiteError
        when two files have the same stem, and for every mistake :func:`run` reports.
    """
    agents: dict[str, dict[str, str]] = {}
    for p in predictions:
        name = Path(p).stem
        if name in agents:
            raise SuiteError(f"{p}: two predictions files are both named {name!r}; rename one")
        agents[name] = {dataset: str(Path(p).resolve())}
    table: dict[str, Any] = {"dataset": dataset}
    table.update({k: str(Path(v).resolve()) if isinstance(v, Path) else v for k, v in options.items() if v})
    if convention is not None:
        table["convention"] = convention
    if threshold is not None:
        table["threshold"] = threshold
    raw = {"datasets": {dataset: table}, "agents": agents, "settings": dict(settings or {})}
    return run(raw, out_dir, progress=progress, report=report)


class _Bar:
    """A tqdm progress bar when tqdm is installed and ``enabled``, else nothing."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self._bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self._bar = tqdm(total=total, desc=desc, unit="run", leave=False, file=sys.stderr)

    def step(self, text: str = "") -> None:
        if self._bar is not None:
            if text:
                self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _timed(timings: dict[str, float] | None, stage: str, t0: tuple[float, float]) -> tuple[float, float]:
    """Adds the wall and CPU seconds since ``t0`` to ``timings[stage]`` and ``timings[stage + "_cpu"]``."""
    now = (time.perf_counter(), time.process_time())
    if timings is not None:
        timings[stage] = timings.get(stage, 0.0) + now[0] - t0[0]
        timings[stage + "_cpu"] = timings.get(stage + "_cpu", 0.0) + now[1] - t0[1]
    return now
