"""Every file a suite run writes into its output folder, and nothing else writes there.

``results.json`` (the run's content), the leaderboards (``leaderboard.md``, ``.csv``, ``.tex``:
:mod:`navdtw.suite.tables`), the per-episode values (``episodes.parquet``, or ``episodes.csv``
without pyarrow) and ``report.html`` (:mod:`navdtw.report`, from :mod:`navdtw.suite.report_data`).
Each file is written atomically (a temporary file renamed over it). Internal to :mod:`navdtw.suite`
(``navdtw.suite.OUTPUTS`` is the public name of the list).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .config import Suite
from .report_data import report_data
from .scoring import DatasetRun
from .tables import format_leaderboard_csv, format_leaderboard_md, format_leaderboard_tex

#: The output files of a run (``episodes.csv`` replaces ``episodes.parquet`` without pyarrow).
OUTPUTS = (
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.tex",
    "results.json",
    "episodes.parquet",
    "episodes.csv",
    "report.html",
)


def write_outputs(out: Path, results: dict, runs: Sequence[DatasetRun], suite: Suite) -> list[Path]:
    """Writes ``results.json``, the three leaderboards and the per-episode values into ``out``
    (created if needed) and returns their paths.

    Raises
    ------
    OSError
        when a file cannot be written.
    ValueError
        when ``results`` holds a non-finite number (``results.json`` is strict JSON).
    """
    from .._io import atomic_write_text

    text = json.dumps(results, indent=2, allow_nan=False)
    return [
        atomic_write_text(out / "results.json", text + "\n"),
        atomic_write_text(out / "leaderboard.md", format_leaderboard_md(results)),
        atomic_write_text(out / "leaderboard.csv", format_leaderboard_csv(results)),
        atomic_write_text(out / "leaderboard.tex", format_leaderboard_tex(results)),
        _write_episodes(out, runs),
    ]


def write_report(out: Path, results: dict, runs: Sequence[DatasetRun], suite: Suite, max_scenes: int) -> Path | None:
    """Writes ``report.html`` into ``out`` and returns its path (None when :mod:`navdtw.report`
    cannot be imported).

    Raises
    ------
    OSError
        when the file cannot be written.
    """
    try:
        from .. import report
    except ImportError:
        return None
    path = out / "report.html"
    report.write_report(path, report_data(results, runs, suite, max_scenes, report), max_scenes=max_scenes)
    return path


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


def _write_episodes(out: Path, runs: Sequence[DatasetRun]) -> Path:
    from .._io import atomic_write_bytes, atomic_write_text

    cols = _episode_columns(runs)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        names = list(cols)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        fixed = [
            cols[k] if k in ("dataset", "agent", "id", "scan") else [repr(float(x)) for x in cols[k]] for k in names
        ]
        w.writerows(zip(*fixed))
        return atomic_write_text(out / "episodes.csv", buf.getvalue())
    table = pa.table({k: pa.array(v) for k, v in cols.items()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return atomic_write_bytes(out / "episodes.parquet", sink.getvalue().to_pybytes())
