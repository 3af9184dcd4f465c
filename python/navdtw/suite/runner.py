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
from .marks import leaderboard_marks
from .outputs import check_writable, plan_outputs, write_outputs
from .results import SuiteResults
from .scoring import DatasetRun, failure_record, score_agents, warning_record

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
    metrics: Sequence[str] | str | None = None,
    latex: str | None = None,
    command: Sequence[str] | None = None,
) -> SuiteResults:
    """Runs a suite and returns the content of ``results.json``.

    Parameters
    ----------
    suite:
        a TOML file name, a dict of the same content, or a :class:`navdtw.suite.Suite`.
    out_dir:
        if given, the leaderboards, ``results.json``, the per-episode values and (with ``report``)
        ``report.html`` are written there (``navdtw.suite.outputs``), all together at the end; the
        folder is checked for writing before anything is scored.
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
        episodes per data set whose maps the report embeds: those where the agents differ most
        (every episode when there are no more).
    metrics, latex:
        override the suite's ``metrics`` (the metrics reported, in order) and ``latex`` (the form
        of ``leaderboard.tex``: ``"intervals"`` or ``"compact"``).
    command:
        the command line that started the run, recorded in ``results.json`` (``provenance``).

    Returns
    -------
    :class:`navdtw.suite.SuiteResults`: a dict with ``navdtw_version``, ``settings``,
    ``metrics``, ``datasets``, ``failures``, ``warnings``, ``provenance`` and ``outputs``
    (docs/suite.md). A predictions file that cannot be read or matched is listed in ``failures``
    (agent, data set, file, error) and the run goes on; a data set whose files cannot be opened
    fails all its agents the same way; a metric whose values break the non-finite policy fails
    that agent's column only.

    Raises
    ------
    SuiteError
        (a ``ValueError``) for a mistake in the suite, before anything is scored.
    navdtw.suite.OutputError
        (an ``OSError``) when the output folder or an output cannot be written; the message names
        the output, and the previous run's outputs are left as they were.
    """
    from .. import __version__

    suite = load_suite(suite, base=base, metrics=metrics, latex=latex)
    settings = suite.settings
    out = None if out_dir is None else Path(out_dir)
    if out is not None:
        check_writable(out)
    cache = Path(cache_dir) if cache_dir is not None else (None if out is None else out / ".cache")
    failures: list[dict[str, Any]] = []
    warned: list[dict[str, Any]] = []
    runs: list[DatasetRun] = []
    total = sum(len(paths) for files in suite.agents.values() for paths in files.values())
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
                    for path in files.get(spec.name, ()):
                        failures.append(failure_record(agent, spec.name, path, exc))
                        bar.step()
                bar.step()
                continue
            t = _timed(timings, "load", t)
            score_agents(r, suite, failures, warned, bar.step)
            _select(r, suite.metrics)
            t = _timed(timings, "score", t)
            try:
                r.baseline = cached_baseline(spec, r.bench, settings, cache, progress)
                if suite.metrics is not None:
                    r.baseline = {m: r.baseline[m] for m in suite.metrics if m in r.baseline}
            except (ValueError, OSError) as exc:
                failures.append(failure_record(BASELINE_ROW, spec.name, None, exc))
            t = _timed(timings, "baseline", t)
            try:
                reported = {a: t[spec.name] for a, t in suite.reported.items() if spec.name in t}
                r.result = analyze_dataset(r, settings, reported)
            except ValueError as exc:  # a bug upstream: the policy has run, stats refuses NaN
                failures.append(failure_record(None, spec.name, None, exc))
                r.result = {}
            bar.step(f"statistics of {spec.name}")
            t = _timed(timings, "stats", t)
    finally:
        bar.close()
    datasets = {r.spec.name: r.result for r in runs if r.result}
    warned += _unresolved_warnings(datasets, settings)
    results = SuiteResults(
        navdtw_version=__version__,
        settings=dict(settings),
        metrics=None if suite.metrics is None else list(suite.metrics),
        datasets=datasets,
        failures=failures,
        warnings=warned,
        provenance=_provenance(suite, command),
        outputs=None,
    )
    if out is not None:
        names = plan_outputs(out, results, report)
        clock = [t]

        def timed(stage: str) -> None:
            clock[0] = _timed(timings, stage, clock[0])

        write_outputs(out, results, runs, suite, names, max_scenes, timed)
        timed("write")  # writing the files to disk counts as writing
    return results


def _select(r: DatasetRun, chosen: Sequence[str] | None) -> None:
    """Keeps the chosen metrics (the suite's ``metrics``), in their order."""
    if chosen is None:
        return
    r.metrics = [m for m in chosen if m in r.metrics]
    r.values = {a: {m: v[m] for m in r.metrics if m in v} for a, v in r.values.items()}


def _unresolved_warnings(datasets: dict[str, dict], settings: dict) -> list[dict[str, Any]]:
    """One warning per (data set, metric) where the comparisons with the best left an agent's
    p-value within Monte-Carlo error of ``alpha`` (:func:`navdtw.suite.leaderboard_marks`,
    ``unresolved``), after every resample navdtw drew for it; the advice follows from the
    settings used."""
    from .. import stats

    out = []
    alpha, resamples = settings["alpha"], int(settings["resamples"])
    for name, ds in datasets.items():
        for m, mk in leaderboard_marks(ds, alpha).items():
            if not mk["unresolved"]:
                continue
            said = []
            for a in mk["unresolved"]:
                vs = ds["agents"][a][m]["vs_best"]
                lo, hi = vs["p_bounds"]
                said.append(f"{a} (p in [{lo:.4f}, {hi:.4f}] after {vs['resamples']} resamples)")
            drawn = max(ds["agents"][a][m]["vs_best"]["resamples"] for a in mk["unresolved"])
            if drawn < stats.MAX_RESAMPLES:
                more = min(stats.MAX_RESAMPLES // 100, 10 * resamples)
                advice = f"resamples = {more} (now {resamples}) lets navdtw draw up to {100 * more} where needed"
            else:
                advice = (
                    f"{drawn} is the most navdtw draws: the p-value is {alpha:g} up to Monte-Carlo error, "
                    "and no count navdtw can run decides it"
                )
            out.append(
                warning_record(
                    None,
                    name,
                    None,
                    f"{m}: whether {', '.join(said)} could be the best, as {', '.join(mk['best'])} is, stays "
                    f"within Monte-Carlo error of alpha = {alpha:g}: no mark is given; {advice}",
                )
            )
    return out


def _provenance(suite, command: Sequence[str] | None) -> dict[str, Any]:
    """What produced the numbers: the command line or the suite file (with its SHA-256), every
    input with its path and SHA-256 (a folder: of its files' names and contents), and the versions
    of Python, numpy and scipy (navdtw's is ``navdtw_version``)."""
    import platform

    import numpy as np
    import scipy

    digests: dict[Path, str] = {}

    def entry(path: Path, **who) -> dict[str, Any]:
        if path not in digests:
            digests[path] = _digest(path)
        return {**who, "path": str(path), "sha256": digests[path]}

    inputs = []
    for spec in suite.datasets.values():
        for option, value in spec.options.items():
            if isinstance(value, Path):
                inputs.append(entry(value, dataset=spec.name, agent=None, option=option, run=None))
    for agent, files in suite.agents.items():
        for ds, paths in files.items():
            for k, path in enumerate(paths):
                inputs.append(entry(path, dataset=ds, agent=agent, option="predictions", run=k))
    return {
        "command": None if command is None else [str(c) for c in command],
        "suite_file": None if suite.path is None else {"path": str(suite.path), "sha256": _digest(suite.path)},
        "inputs": inputs,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
    }


def _digest(path: Path) -> str | None:
    """SHA-256 of a file; of a folder, over its files' names and SHA-256s (sorted); None if unreadable."""
    import hashlib

    try:
        if path.is_dir():
            h = hashlib.sha256()
            for p in sorted(path.iterdir()):
                if p.is_file():
                    h.update(f"{p.name}\0{_digest(p)}\n".encode())
            return h.hexdigest()
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


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
    metrics: Sequence[str] | str | None = None,
    latex: str | None = None,
    command: Sequence[str] | None = None,
    max_scenes: int = 500,
    runs: Mapping[str, Sequence[str | Path] | str] | None = None,
    reported: Mapping[str, Mapping[str, Any] | str] | None = None,
    **options: Any,
) -> SuiteResults:
    """:func:`run` for one data set without a suite file; agents are named by their files' stems,
    or by the names of ``runs``.

    Parameters
    ----------
    predictions:
        one predictions file per agent (one run each).
    runs:
        agent name -> its predictions files, one per run (seed): a list, or a glob pattern
        (``{"mine": "runs/mine_seed*.jsonl"}``); the agent's figure is the mean over its runs.
    reported:
        agent name -> the figures its paper reports (``{"mine": {"sr": 0.558}}`` or
        ``{"mine": "sr=55.8%,spl=0.512"}``; rates as fractions, or with ``%``).
    dataset:
        the data set kind (``"r2r"``, a key of :data:`navdtw.datasets.DATASETS`).
    out_dir, progress, report, metrics, latex, command, max_scenes:
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
    agents: dict[str, dict[str, Any]] = {}
    for p in predictions:
        name = Path(p).stem
        if name in agents:
            raise SuiteError(f"{p}: two predictions files are both named {name!r}; rename one")
        agents[name] = {dataset: str(Path(p).resolve())}
    for name, files in (runs or {}).items():
        if name in agents:
            raise SuiteError(f"--runs {name}: an agent named {name!r} is given twice")
        if not name:
            raise SuiteError("--runs: an agent without a name; expected NAME=FILES")
        items = [files] if isinstance(files, (str, Path)) else list(files)
        agents[name] = {
            dataset: [str(f) if isinstance(f, str) and _is_glob(f) else str(Path(f).resolve()) for f in items]
        }
    for name, figures in (reported or {}).items():
        if name not in agents:
            raise SuiteError(f"--reported {name}: no agent {name!r}; the agents are {', '.join(agents)}")
        from .config import parse_reported

        try:
            agents[name]["reported"] = {dataset: parse_reported(figures)}
        except ValueError as exc:
            raise SuiteError(f"--reported {name}: {exc}") from None
    table: dict[str, Any] = {"dataset": dataset}
    table.update({k: str(Path(v).resolve()) if isinstance(v, Path) else v for k, v in options.items() if v})
    if convention is not None:
        table["convention"] = convention
    if threshold is not None:
        table["threshold"] = threshold
    raw = {"datasets": {dataset: table}, "agents": agents, "settings": dict(settings or {})}
    return run(
        raw,
        out_dir,
        progress=progress,
        report=report,
        metrics=metrics,
        latex=latex,
        command=command,
        max_scenes=max_scenes,
    )


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


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
