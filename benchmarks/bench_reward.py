"""Benchmark of navdtw.NDTWReward, the streaming nDTW RL reward.

Workload: B = 1024 environments, one reference of |R| = 100 points per environment and 500 steps,
all 3-D float32 random walks of 0.25 m steps (directions uniform on the sphere; seed 0). Measured:

* ``NDTWReward.step`` (workers=1 and 2): total time of the 500 steps / (B * 500) = cost per
  env-step; target <= 1 us (printed PASS / MISS, never fails).
* recomputing the full DTW of every prefix at every step, the way a reward without streaming
  works: (a) ``navdtw.dtw_batch`` on the B prefixes (building the Paths included), timed at a few
  step counts t and integrated over t = 1..500 (the cost is linear in t); (b) a plain
  Python/numpy DP (numpy cost matrix, Python loops over the cells), timed on a few environments
  at a few t and extrapolated. Both labelled ``[extrap]``.
* the Python wrapper's share of ``step``: ``navdtw._core.reward_step_points`` called directly on
  the same kind of state arrays, and the wrapper's individual numpy operations.

Usage: python benchmarks/bench_reward.py [--B 1024] [--ref-len 100] [--steps 500] [--repeat 3]
       python benchmarks/bench_reward.py --tiny    # B = 16, |R| = 10, 20 steps: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import navdtw
from navdtw import NDTWReward, Paths, _core

TARGET_US = 1.0


def random_walks(rng, count, length, step=0.25, dim=3):
    d = rng.normal(size=(count, length, dim))
    d *= step / np.linalg.norm(d, axis=2, keepdims=True)
    d[:, 0] = rng.uniform(-5, 5, size=(count, dim))  # start point
    return np.cumsum(d, axis=1).astype(np.float32)


CPU = {"wall": 0.0, "cpu": 0.0}  # totals over every timed call: the machine may be shared


def best_of(repeat, fn):
    best = np.inf
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = time.perf_counter() - t0
        CPU["wall"] += wall
        CPU["cpu"] += time.process_time() - c0
        best = min(best, wall)
    return best


def cpu_of(repeat, fn):
    """Best process CPU time of fn (for single-threaded calls: the time on an idle core)."""
    best = np.inf
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


# ---- streaming ------------------------------------------------------------------------------


def run_stream(refs, traj, workers):
    R = NDTWReward(refs, threshold=3.0, workers=workers)
    for t in range(traj.shape[1]):
        R.step(traj[:, t])
    return R


def run_core(refs, traj, workers):
    """The C++ step alone, on state arrays laid out as NDTWReward keeps them."""
    R = NDTWReward(refs, threshold=3.0, workers=workers)
    args = (R._refs.values, R._columns, R._refs.offsets, R._steps, R._dtw, R._ndtw, R._active)
    pts = [np.ascontiguousarray(traj[:, t]) for t in range(traj.shape[1])]
    t0 = time.perf_counter()
    for p in pts:
        _core.reward_step_points(*args, p, R._rewards, 3.0, workers=workers)
    return time.perf_counter() - t0, R


# ---- full recomputation ---------------------------------------------------------------------


def full_dtw_batch_step(ref_paths, traj, t, workers):
    """Reward at step t without streaming: DTW of every length-t prefix (Paths built each call)."""
    B = traj.shape[0]
    q = Paths(traj[:, :t].reshape(-1, traj.shape[2]), np.arange(B + 1, dtype=np.int64) * t)
    return navdtw.dtw_batch(ref_paths, q, workers=workers)


def python_dtw(ref, query):
    """Plain DTW: numpy Euclidean cost matrix, the recurrence in Python loops (one rolling row)."""
    cost = np.sqrt(((ref[:, None, :].astype(np.float64) - query[None, :, :]) ** 2).sum(axis=2)).tolist()
    n, m = len(ref), len(query)
    inf = float("inf")
    prev = [inf] * m
    for i in range(n):
        row = cost[i]
        cur = [0.0] * m
        left = inf
        for j in range(m):
            if i == 0 and j == 0:
                best = 0.0
            else:
                diag = prev[j - 1] if j > 0 else inf
                best = min(diag, prev[j], left)
            left = cur[j] = row[j] + best
        prev = cur
    return prev[-1]


def integrate_linear(ts, costs, steps):
    """sum_{t=1..steps} cost(t), with cost piecewise linear through the measured (t, cost)."""
    return float(np.interp(np.arange(1, steps + 1), ts, costs).sum())


# ---- report ---------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--B", type=int, default=1024)
    ap.add_argument("--ref-len", type=int, default=100)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions, best kept")
    ap.add_argument("--py-envs", type=int, default=3, help="environments timed for the Python DP")
    ap.add_argument("--tiny", action="store_true", help="B = 16, |R| = 10, 20 steps, 1 run: checks the script runs")
    args = ap.parse_args()
    if args.tiny:
        args.B, args.ref_len, args.steps, args.repeat, args.py_envs = 16, 10, 20, 1, 1
    B, n, T = args.B, args.ref_len, args.steps
    rng = np.random.default_rng(0)
    refs = list(random_walks(rng, B, n))
    traj = random_walks(rng, B, T)
    ref_paths = Paths.from_list(refs)
    env_steps = B * T
    print(
        f"NDTWReward benchmark: B = {B} envs, |R| = {n} 3-D points, {T} steps "
        f"({env_steps:,} env-steps, {B * n * T / 1e6:.1f} M DP cells streamed)\n"
    )

    rows = []  # (label, total s, extrapolated?)
    stream = {}
    for w in (1, 2):
        stream[w] = best_of(args.repeat, lambda w=w: run_stream(refs, traj, w))
        rows.append((f"NDTWReward.step, workers={w}", stream[w], False))
    stream_cpu = cpu_of(args.repeat, lambda: run_stream(refs, traj, 1))
    core_cpu = cpu_of(args.repeat, lambda: run_core(refs, traj, 1))
    core_t = min(run_core(refs, traj, 1)[0] for _ in range(args.repeat))
    core_t2 = min(run_core(refs, traj, 2)[0] for _ in range(args.repeat))
    rows.append(("_core.reward_step_points, workers=1", core_t, False))
    rows.append(("_core.reward_step_points, workers=2", core_t2, False))

    # correctness cross-check: the stream's final DTW equals dtw_batch of the full trajectories
    R = run_stream(refs, traj, 1)
    full = navdtw.dtw_batch(ref_paths, Paths(traj.reshape(-1, 3), np.arange(B + 1) * T), workers=1)
    rel = float(np.max(np.abs(R.dtw - full) / full))

    # (a) navdtw.dtw_batch on every prefix
    ts = sorted({1, max(1, T // 4), max(1, T // 2), max(1, 3 * T // 4), T})
    for w in (1, 2):
        costs = [best_of(args.repeat, lambda t=t, w=w: full_dtw_batch_step(ref_paths, traj, t, w)) for t in ts]
        rows.append((f"recompute: navdtw.dtw_batch, workers={w}", integrate_linear(ts, costs, T), True))

    # (b) plain Python DP on a few envs at a few t
    py_ts = sorted({1, max(1, T // 10), max(1, T // 4)})  # larger t extrapolated linearly
    envs = rng.choice(B, size=min(args.py_envs, B), replace=False)
    py_costs = []
    for t in py_ts:
        t0 = time.perf_counter()
        for b in envs:
            python_dtw(refs[b], traj[b, :t])
        py_costs.append((time.perf_counter() - t0) / len(envs))
    slope = np.polyfit(py_ts, py_costs, 1) if len(py_ts) > 1 else (0.0, py_costs[0])
    py_total = B * float(np.polyval(slope, np.arange(1, T + 1)).clip(min=py_costs[0]).sum())
    check = python_dtw(refs[envs[0]], traj[envs[0], :20])
    py_rel = abs(check - navdtw.dtw(refs[envs[0]], traj[envs[0], :20])) / check
    rows.append(("recompute: Python/numpy DP, 1 thread", py_total, True))

    print(f"{'method':42s} {'total s':>11s} {'us/env-step':>12s} {'x stream w1':>12s}")
    for label, total, extrap in rows:
        us = total / env_steps * 1e6
        print(f"{label:42s} {total:11.3f} {us:12.3f} {total / stream[1]:12.1f}" + ("  [extrap]" if extrap else ""))
    print(
        "\n[extrap]: dtw_batch timed at t = " + ", ".join(map(str, ts)) + " and integrated over t = 1.."
        f"{T} (linear interpolation); the Python DP timed on {len(envs)} envs at t = "
        + ", ".join(map(str, py_ts))
        + f", linear fit in t, times B = {B}."
    )
    print(
        f"cross-checks: stream vs dtw_batch final DTW max rel diff {rel:.1e}; "
        f"Python DP vs navdtw.dtw rel diff {py_rel:.1e}"
    )

    print(
        f"CPU/wall over the timed calls: {CPU['cpu'] / CPU['wall']:.2f} (about 1 for single-thread rows on an "
        "idle machine; well below 1 means another process took the core and wall times are inflated)"
    )
    print(
        f"process CPU time, workers=1 (less sensitive to a shared machine): NDTWReward.step "
        f"{stream_cpu / env_steps * 1e6:.3f} us/env-step, C++ call alone (incl. its setup) "
        f"{core_cpu / env_steps * 1e6:.3f} us/env-step"
    )

    # ---- wrapper vs C++ ----
    per_step = stream_cpu / T  # CPU time: the wall-clock difference drowns in noise on a shared machine
    core_step = core_cpu / T
    print(
        f"\nPython wrapper share (workers=1, process CPU time): step {per_step * 1e6:.1f} us, "
        f"C++ call {core_step * 1e6:.1f} us, "
        f"wrapper {max(per_step - core_step, 0) * 1e6:.1f} us = {max(per_step - core_step, 0) / per_step:.0%}"
        " of the step"
    )
    R = run_stream(refs, traj[:, :2], 1)
    p64 = traj[:, 1].astype(np.float64)
    p32 = np.ascontiguousarray(traj[:, 1])
    act = R._active.view(bool)
    N = 2000
    parts = {
        "np.asarray + shape/dtype check": lambda: np.asarray(p32).dtype.kind in "iuf",
        "ascontiguousarray float32 (float32 in)": lambda: np.ascontiguousarray(p32, dtype=np.float32),
        "ascontiguousarray float32 (float64 in)": lambda: np.ascontiguousarray(p64, dtype=np.float32),
        "np.isfinite(p[act]).all()": lambda: np.isfinite(p32[act]).all(),
        "  alternative: np.isfinite(p).all()": lambda: np.isfinite(p32).all(),
        "np.copyto(_last, p, where=act[:, None])": lambda: np.copyto(R._last, p32, where=act[:, None]),
    }
    print(f"  wrapper operations at B = {B} (process CPU us per call):")
    for name, fn in parts.items():
        c0 = time.process_time()
        for _ in range(N):
            fn()
        print(f"    {name:44s} {(time.process_time() - c0) / N * 1e6:8.2f}")
    c0 = time.process_time()
    for _ in range(50):
        R.step(p64)
    print(
        f"  step with float64 points (the usual simulator dtype): {(time.process_time() - c0) / 50 * 1e6:.1f} us CPU"
        f" vs {stream_cpu / T * 1e6:.1f} us CPU with float32 points"
    )

    print()
    for label, us in (
        ("wall, workers=1", stream[1] / env_steps * 1e6),
        ("wall, workers=2", stream[2] / env_steps * 1e6),
        ("CPU time, workers=1", stream_cpu / env_steps * 1e6),
    ):
        print(
            f"Target: NDTWReward.step <= {TARGET_US} us per env-step ({label}): {us:.3f} us -> "
            + ("PASS" if us <= TARGET_US else "MISS")
            + f" ({TARGET_US / us:.2f}x of target)"
        )


if __name__ == "__main__":
    main()
