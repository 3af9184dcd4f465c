"""Every benchmark script runs: each with ``--tiny`` (the smallest sizes; the figures mean nothing),
so a renamed name or a changed signature fails here instead of when someone measures. Benchmarks
that need the real data say so and exit 0 without it; peers that are not installed (numba,
dtaidistance) are skipped with a note. Skipped where benchmarks/ is absent (the sdist)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("bench_*.py")) if BENCHMARKS.is_dir() else []


@pytest.mark.skipif(not SCRIPTS, reason="no benchmarks/ beside tests/ (an sdist or a wheel test)")
def test_every_script_is_checked():
    assert SCRIPTS == [
        "bench_anchored.py",
        "bench_broken_order.py",
        "bench_checkpoints.py",
        "bench_dagger_reach.py",
        "bench_datasets.py",
        "bench_distributed.py",
        "bench_engine.py",
        "bench_episode_log.py",
        "bench_habitat.py",
        "bench_marks.py",
        "bench_metrics.py",
        "bench_off_by_one.py",
        "bench_pair.py",
        "bench_ratio.py",
        "bench_results.py",
        "bench_reward.py",
        "bench_runs.py",
        "bench_runs_df.py",
        "bench_startup.py",
        "bench_stats.py",
        "bench_suite.py",
        "bench_watch.py",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_runs_tiny(script, tmp_path):
    # the data-set benchmarks find the data as the tests do (NAVDTW_DATA, else ../shared/data)
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--tiny"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # nothing may be written into the repository
        env=dict(os.environ, MPLBACKEND="Agg"),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    assert list(tmp_path.iterdir()) == []
    if script == "bench_engine.py":
        for peer in ("numba", "dtaidistance", "fastdtw"):
            if find_spec(peer) is None:
                assert f"note: {peer} not installed: its rows are skipped" in proc.stdout
