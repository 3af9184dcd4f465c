"""Every file a suite run writes into its output folder, and nothing else writes there.

``results.json`` (the run's content), the leaderboards (``leaderboard.md``, ``.csv``, ``.tex``:
:mod:`navdtw.suite.tables`), the per-episode values (``episodes.parquet``, or ``episodes.csv``
without pyarrow), ``report.html`` (:mod:`navdtw.report`, from :mod:`navdtw.suite.report_data`) and
the manifest ``.navdtw-outputs.json`` (what this run wrote, with each file's SHA-256).

A user's files are never replaced: an output may replace a file of the same name only when the
manifest says navdtw wrote it and its SHA-256 still matches (a file the user edited since is theirs
now), and never a read-only file (:func:`navdtw._io.check_writable`; ``force`` replaces the others).

All or nothing: the folder is checked before the run does any work (:func:`navdtw._io.check_writable`) and
again at the end; then every file is rendered in memory and switched in as one step
(:func:`navdtw._io.commit_outputs`): after any failure the folder holds the previous run's files, unchanged, and the
error names the real output (:class:`navdtw._io.OutputError`, an ``OSError``); a switch cut
short by a kill is finished by the next run (:func:`navdtw._io.recover_switch`). Files of an
earlier run that this run does not write (its ``report.html`` after ``--no-report``) are removed
in the same step when the manifest says navdtw wrote them and they are unchanged since; any other
file is never touched (a warning lists it). Internal to :mod:`navdtw.suite`
(``navdtw.suite.OUTPUTS`` is the public name of the list).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._io import MANIFEST, check_replaceable, commit_outputs, folder_lock, protected, read_manifest, sha256_of
from .._optional import import_optional
from .config import Suite
from .scoring import DatasetRun, warning_record
from .tables import csv_cell, format_leaderboard_csv, format_leaderboard_md, format_leaderboard_tex

#: The output files of a run (``episodes.csv`` replaces ``episodes.parquet`` without pyarrow).
OUTPUTS = (
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.tex",
    "results.json",
    "episodes.parquet",
    "episodes.csv",
    "report.html",
    MANIFEST,
)


def output_names(report: bool) -> list[str]:
    """The files a run writes (the manifest aside): the tables, ``results.json``, the episodes and,
    with ``report`` (and the report's assets), ``report.html``."""
    names = ["results.json", "leaderboard.md", "leaderboard.csv", "leaderboard.tex", _episodes_name()]
    if report and _report_module() is not None:
        names.append("report.html")
    return names


def plan_outputs(out: Path, results: dict, report: bool) -> list[str]:
    """The names this run will write into ``out``; records them (and the stale files of an earlier
    run it will remove) in ``results["outputs"]`` and warns in ``results["warnings"]`` about the
    stale files it leaves."""
    names = output_names(report)
    remove, keep = _stale(out, names)
    for name, why in keep:
        results["warnings"].append(
            warning_record(None, None, out / name, f"{out / name}: not written by this run and left in place ({why})")
        )
    results["outputs"] = {"folder": str(out.resolve()), "files": names, "removed": remove}
    return names


def write_outputs(
    out: Path,
    results: dict,
    runs: Sequence[DatasetRun],
    suite: Suite,
    names: Sequence[str],
    max_scenes: int,
    timed: Callable[[str], None] = lambda stage: None,
    *,
    force: bool = False,
) -> list[Path]:
    """Renders the files ``names`` (:func:`plan_outputs`), checks again that the files there may
    be replaced (:func:`check_replaceable`: the run took a while) and switches them all into
    ``out`` in one step, removing the stale files of the earlier run (see the module docstring).
    ``timed(stage)`` is called after the tables ("write") and the report ("report") are rendered.
    Returns the paths.

    Raises
    ------
    OutputError
        when a file may not be replaced, or cannot be written or renamed: ``out`` is then as it was.
    ValueError
        when ``results`` holds a non-finite number (``results.json`` is strict JSON).
    """
    data: dict[str, bytes] = {
        "results.json": (json.dumps(results, indent=2, allow_nan=False) + "\n").encode(),
        "leaderboard.md": format_leaderboard_md(results).encode(),
        "leaderboard.csv": format_leaderboard_csv(results).encode(),
        "leaderboard.tex": format_leaderboard_tex(results, latex=suite.latex).encode(),
    }
    name = _episodes_name()
    data[name] = _episodes_bytes(runs, parquet=name.endswith(".parquet"))
    timed("write")
    if "report.html" in names:
        from .report_data import report_data

        report = _report_module()
        data["report.html"] = report.render_report(
            report_data(results, runs, suite, max_scenes, report), max_scenes=max_scenes
        ).encode()
        timed("report")
    data = {n: data[n] for n in names}
    manifest = {
        "navdtw_version": results["navdtw_version"],
        "files": {n: hashlib.sha256(b).hexdigest() for n, b in data.items()},
    }
    data[MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()
    with folder_lock(out):  # another navdtw command writing here waits (and says so)
        check_replaceable(out, names, force=force)
        return commit_outputs(out, data, results["outputs"]["removed"])


def _report_module():
    try:
        from .. import report
    except ImportError:  # pragma: no cover - a build without the report's assets
        return None
    return report


def _episodes_name() -> str:
    parquet = import_optional("pyarrow.parquet", "episodes.parquet", errors="ignore")
    return "episodes.csv" if parquet is None else "episodes.parquet"


def _stale(out: Path, names: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The outputs of an earlier run that this one does not write: those the manifest lists with
    unchanged contents (to remove), and those it cannot vouch for (to leave, with the reason)."""
    listed = read_manifest(out) or {}
    remove, keep = [], []
    for name in OUTPUTS:
        path = out / name
        if name in names or name == MANIFEST or not path.is_file():
            continue
        if name not in listed:
            keep.append((name, "no record that navdtw wrote it"))
        elif sha256_of(path) != listed[name]:
            keep.append((name, "changed since navdtw wrote it"))
        elif protected(path):
            keep.append((name, f"it is {protected(path)}"))
        else:
            remove.append(name)
    return remove, keep


def _episode_columns(runs: Sequence[DatasetRun]) -> dict[str, list]:
    metrics: dict[str, None] = {}
    for r in runs:
        if r.result:
            metrics.update(dict.fromkeys(r.metrics))
    cols: dict[str, list] = {"dataset": [], "agent": [], "id": [], "scan": []}
    cols.update({m: [] for m in metrics})
    for r in runs:
        if not r.result:
            continue
        n = len(r.ids)
        for agent, values in r.values.items():
            cols["dataset"] += [r.spec.name] * n
            cols["agent"] += [agent] * n
            cols["id"] += r.ids
            cols["scan"] += r.scans if len(r.scans) == n else [""] * n
            for m in metrics:
                v = values.get(m)
                cols[m].append(v if v is not None else np.full(n, np.nan))
    for m in metrics:
        cols[m] = np.concatenate(cols[m]) if cols[m] else np.zeros(0)
    return cols


_TEXT_COLUMNS = ("dataset", "agent", "id", "scan")


def _episodes_bytes(runs: Sequence[DatasetRun], *, parquet: bool) -> bytes:
    """``episodes.parquet`` (or ``episodes.csv``): one row per (data set, agent, episode). In the
    CSV, text cells are escaped against formula injection (:func:`navdtw.suite.tables.csv_cell`);
    an infinite distance is ``inf``, a metric the agent lacks is empty."""
    cols = _episode_columns(runs)
    if parquet:
        pa = import_optional("pyarrow", "episodes.parquet")
        pq = import_optional("pyarrow.parquet", "episodes.parquet")
        table = pa.table({k: pa.array(v) for k, v in cols.items()})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return sink.getvalue().to_pybytes()
    names = list(cols)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    fixed: list[Any] = [
        [csv_cell(x) for x in cols[k]]
        if k in _TEXT_COLUMNS
        else ["" if np.isnan(x) else repr(float(x)) for x in cols[k]]
        for k in names
    ]
    w.writerows(zip(*fixed))
    return buf.getvalue().encode()
