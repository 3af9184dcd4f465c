#!/usr/bin/env python
"""Throughput and peak-memory benchmark of the navdtw engine against peers, in one run.

Workloads (deterministic synthetic data, ``numpy.random.default_rng(seed)``):

* **W1** node paths: 1,000,000 pairs over 100 random geometric graphs (~150 nodes in a 20 x 20 m
  square, edges within 2.5 m, largest component, all-pairs shortest paths), references 4-7 nodes,
  queries 1-15 nodes (random walks), ``navdtw.dtw_batch(..., distances=[100 matrices], env=env)``.
* **W2** coordinates: 50,000 3-D float32 pairs, |R| 30-120, |Q| 20-400, 0.25 m-step random walks.
* **W3** long coordinates: 200 pairs of 2000 x 2000 3-D points: exact, band (``window=200``),
  FastDTW ``radius=1`` and ``radius=10``.

Every (workload, engine) measurement runs in a fresh subprocess, so peak RSS (VmHWM, reset through
``/proc/self/clear_refs`` just before the timed region) is that engine's own. Throughput is the best
of ``--repeat`` runs. Peers: navdtw workers=1 and 2, dtaidistance (C, per-pair Python loop), the
``fastdtw`` package (pure Python: a small sample, extrapolated, labelled ``[extrap]``) and an
"afternoon" numba kernel written below. Figures are only comparable within one run (the machine is
shared): read the ``x navdtw/w1`` ratio column.

    python benchmarks/bench_engine.py --quick            # ~20x smaller smoke run
    python benchmarks/bench_engine.py --tiny             # seconds: checks the script runs (CI); figures mean nothing
    python benchmarks/bench_engine.py --json out.json     # full run
    python benchmarks/bench_engine.py --workloads W1,W3 --engines navdtw-w1,navdtw-w2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = os.path.abspath(__file__)
RESULT_TAG = "@@RESULT "

# ------------------------------------------------------------------------------------------------
# sizes and targets
# ------------------------------------------------------------------------------------------------

FULL = {
    "W1": {"pairs": 1_000_000, "graphs": 100, "nodes": 150},
    "W2": {"pairs": 50_000},
    "W3": {"pairs": 200, "length": 2000},
}
QUICK_DIV = 20
#: --tiny: the smallest sizes that still run every code path, for CI (the figures mean nothing).
TINY = {
    "W1": {"pairs": 2_000, "graphs": 3, "nodes": 150},
    "W2": {"pairs": 200},
    "W3": {"pairs": 2, "length": 64},
}
#: --tiny measures one thread count of each engine family (every code path, fewer subprocesses).
TINY_ENGINES = "navdtw-w1,navdtw-single-w1,navdtw-core-w1,numba-w1,dtaidistance,fastdtw-pkg"

# (workload, method, engine, metric, threshold) ; metric "pairs/s", "cells/s" or "speedup_vs"
TARGETS = [
    ("W1", "exact", "navdtw-w2", "pairs/s", 2e7),
    ("W2", "exact", "navdtw-w2", "pairs/s", 3e5),
    ("W3", "exact", "navdtw-w2", "cells/s", 6e9),
    ("W3", "fastdtw-r1", "navdtw-w2", "x fastdtw-pkg", 20.0),
    # the same throughput targets with the opt-in float32 sums (precision="single")
    ("W1", "exact", "navdtw-single-w2", "pairs/s", 2e7),
    ("W2", "exact", "navdtw-single-w2", "pairs/s", 3e5),
    ("W3", "exact", "navdtw-single-w2", "cells/s", 6e9),
]

ALL_ENGINES = (
    "navdtw-w1,navdtw-w2,navdtw-single-w1,navdtw-single-w2,navdtw-core-w1,navdtw-core-w2,"
    "numba-w1,numba-w2,dtaidistance,fastdtw-pkg"
)

# engine -> methods it runs per workload (None = not applicable, with the reason)
W3_METHODS = ["exact", "band", "fastdtw-r1", "fastdtw-r10"]


def sizes(quick: bool, tiny: bool = False) -> dict:
    if tiny:
        return {k: dict(v) for k, v in TINY.items()}
    s = {k: dict(v) for k, v in FULL.items()}
    if quick:
        s["W1"]["pairs"] //= QUICK_DIV
        s["W2"]["pairs"] //= QUICK_DIV
        s["W3"]["pairs"] = max(1, s["W3"]["pairs"] // QUICK_DIV)
    return s


# ------------------------------------------------------------------------------------------------
# data generation (parent process; cached as .npy in a temp dir the children load)
# ------------------------------------------------------------------------------------------------


def make_graphs(rng, n_graphs: int, n_nodes: int, side=20.0, radius=2.5):
    """Random geometric graphs: largest component, APSP float32 matrices, CSR neighbour lists."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components, shortest_path

    mats, indptrs, indices = [], [], []
    for _ in range(n_graphs):
        pts = rng.uniform(0.0, side, size=(n_nodes, 2))
        d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1))
        adj = (d <= radius) & (d > 0)
        g = csr_matrix(np.where(adj, d, 0.0))
        _, labels = connected_components(g, directed=False)
        keep = labels == np.argmax(np.bincount(labels))
        sub = g[keep][:, keep].tocsr()
        apsp = shortest_path(sub, method="D", directed=False).astype(np.float32)
        assert np.isfinite(apsp).all()
        mats.append(np.ascontiguousarray(apsp))
        indptrs.append(sub.indptr.astype(np.int64))
        indices.append(sub.indices.astype(np.int64))
    return mats, indptrs, indices


def random_walks(rng, indptr, indices, n_nodes, count, length):
    """`count` random walks of `length` nodes on one graph -> int32 [count, length]."""
    out = np.empty((count, length), dtype=np.int32)
    cur = rng.integers(0, n_nodes, size=count)
    out[:, 0] = cur
    for s in range(1, length):
        deg = indptr[cur + 1] - indptr[cur]
        cur = indices[indptr[cur] + (rng.random(count) * deg).astype(np.int64)]
        out[:, s] = cur
    return out


def ragged(block: np.ndarray, lengths: np.ndarray):
    """Row-major prefix of each row of `block` -> (flat values, int64 offsets)."""
    mask = np.arange(block.shape[1])[None, :] < lengths[:, None]
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.ascontiguousarray(block[mask]), offsets


def gen_w1(n_pairs, n_graphs, n_nodes, seed=1):
    rng = np.random.default_rng(seed)
    mats, indptrs, indices = make_graphs(rng, n_graphs, n_nodes)
    env = rng.integers(0, n_graphs, size=n_pairs).astype(np.int64)
    rl = rng.integers(4, 8, size=n_pairs)
    ql = rng.integers(1, 16, size=n_pairs)
    R = np.empty((n_pairs, 7), dtype=np.int32)
    Q = np.empty((n_pairs, 15), dtype=np.int32)
    for g in range(n_graphs):
        idx = np.flatnonzero(env == g)
        V = mats[g].shape[0]
        R[idx] = random_walks(rng, indptrs[g], indices[g], V, len(idx), 7)
        Q[idx] = random_walks(rng, indptrs[g], indices[g], V, len(idx), 15)
    rv, ro = ragged(R, rl)
    qv, qo = ragged(Q, ql)
    return {"rv": rv, "ro": ro, "qv": qv, "qo": qo, "env": env, "mats": mats, "vmax": max(m.shape[0] for m in mats)}


def walks_3d(rng, lengths, step=0.25, side=20.0):
    """3-D random walks of 0.25 m steps (directions uniform on the sphere) -> float32 values, offsets."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    n = int(offsets[-1])
    d = rng.normal(size=(n, 3))
    d *= step / np.linalg.norm(d, axis=1, keepdims=True)
    starts = offsets[:-1]
    d[starts] = np.column_stack([rng.uniform(0, side, (len(lengths), 2)), np.zeros(len(lengths))])
    pos = np.cumsum(d, axis=0)
    base = pos[starts] - d[starts]
    pos -= np.repeat(base, lengths, axis=0)
    return np.ascontiguousarray(pos, dtype=np.float32), offsets


def gen_w2(n_pairs, seed=2):
    rng = np.random.default_rng(seed)
    rl = rng.integers(30, 121, size=n_pairs)
    ql = rng.integers(20, 401, size=n_pairs)
    rv, ro = walks_3d(rng, rl)
    qv, qo = walks_3d(rng, ql)
    return {"rv": rv, "ro": ro, "qv": qv, "qo": qo}


def gen_w3(n_pairs, length, seed=3):
    rng = np.random.default_rng(seed)
    lens = np.full(n_pairs, length, dtype=np.int64)
    rv, ro = walks_3d(rng, lens)
    qv, qo = walks_3d(rng, lens)
    return {"rv": rv, "ro": ro, "qv": qv, "qo": qo}


def save_data(d: dict, folder: str):
    os.makedirs(folder, exist_ok=True)
    for k, v in d.items():
        if k == "mats":
            for i, m in enumerate(v):
                np.save(os.path.join(folder, f"mat{i:04d}.npy"), m)
            with open(os.path.join(folder, "n_mats"), "w") as f:
                f.write(str(len(v)))
        elif k == "vmax":
            with open(os.path.join(folder, "vmax"), "w") as f:
                f.write(str(v))
        else:
            np.save(os.path.join(folder, f"{k}.npy"), v)


def load_data(folder: str) -> dict:
    d = {}
    for k in ("rv", "ro", "qv", "qo", "env"):
        p = os.path.join(folder, f"{k}.npy")
        if os.path.exists(p):
            d[k] = np.load(p)
    p = os.path.join(folder, "n_mats")
    if os.path.exists(p):
        n = int(Path(p).read_text())
        d["mats"] = [np.load(os.path.join(folder, f"mat{i:04d}.npy")) for i in range(n)]
        d["vmax"] = int(Path(folder, "vmax").read_text())
    return d


# ------------------------------------------------------------------------------------------------
# the "afternoon numba kernel": straightforward exact DTW, rolling row, prange over pairs
# ------------------------------------------------------------------------------------------------

_NB = None


def numba_kernels():
    global _NB
    if _NB is not None:
        return _NB
    import math

    import numba
    from numba import njit, prange

    @njit(cache=False)
    def dtw_points(a, b):
        n, m, D = a.shape[0], b.shape[0], a.shape[1]
        row = np.full(m, np.inf)
        for i in range(n):
            diag = 0.0 if i == 0 else np.inf
            left = np.inf
            for j in range(m):
                up = row[j]
                s = 0.0
                for k in range(D):
                    t = np.float64(a[i, k]) - np.float64(b[j, k])
                    s += t * t
                v = math.sqrt(s) + min(up, left, diag)
                row[j] = v
                diag = up
                left = v
        return row[m - 1]

    @njit(cache=False)
    def dtw_nodes(r, q, M):
        n, m = r.shape[0], q.shape[0]
        row = np.full(m, np.inf)
        for i in range(n):
            diag = 0.0 if i == 0 else np.inf
            left = np.inf
            ri = r[i]
            for j in range(m):
                up = row[j]
                v = np.float64(M[ri, q[j]]) + min(up, left, diag)
                row[j] = v
                diag = up
                left = v
        return row[m - 1]

    @njit(parallel=True, cache=False)
    def batch_points(rv, ro, qv, qo, out):
        for b in prange(out.shape[0]):
            out[b] = dtw_points(rv[ro[b] : ro[b + 1]], qv[qo[b] : qo[b + 1]])

    @njit(parallel=True, cache=False)
    def batch_nodes(rv, ro, qv, qo, env, stack, out):
        for b in prange(out.shape[0]):
            out[b] = dtw_nodes(rv[ro[b] : ro[b + 1]], qv[qo[b] : qo[b + 1]], stack[env[b]])

    _NB = {"numba": numba, "batch_points": batch_points, "batch_nodes": batch_nodes}
    return _NB


# ------------------------------------------------------------------------------------------------
# child side: one (workload, method, engine) measurement in this fresh process
# ------------------------------------------------------------------------------------------------


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def timed(fn, repeat: int, budget: float):
    """Best wall time of up to `repeat` calls (stops early once `budget` seconds are spent), and the
    best CPU time of the calling thread (where workers=1 computes; other processes' share of the
    core left out)."""
    best, best_cpu, spent, out, n = float("inf"), float("inf"), 0.0, None, 0
    for _ in range(max(1, repeat)):
        t0, c0 = time.perf_counter(), time.thread_time()
        out = fn()
        dt, dc = time.perf_counter() - t0, time.thread_time() - c0
        best, best_cpu, spent, n = min(best, dt), min(best_cpu, dc), spent + dt, n + 1
        if spent >= budget:
            break
    return best, best_cpu, out, n, spent


def split_engine(engine: str) -> tuple[str, str | None]:
    """'navdtw-w1@avx2' -> ('navdtw-w1', 'avx2'): a navdtw row with its SIMD kernel forced
    (NAVDTW_SIMD in the child); no suffix: the automatic choice."""
    base, _, kernel = engine.partition("@")
    return base, kernel or None


def child(spec: dict) -> dict:
    wl, method, engine = spec["workload"], spec["method"], spec["engine"]
    engine, _ = split_engine(engine)
    data = load_data(spec["data"])
    ro, qo = data["ro"], data["qo"]
    B = len(ro) - 1
    cells_all = (np.diff(ro) * np.diff(qo)).astype(np.float64)
    res = {
        "workload": wl,
        "method": method,
        "engine": spec["engine"],
        "pairs": B,
        "cells": float(cells_all.sum()),
        "note": "",
    }
    repeat, budget = spec["repeat"], spec["budget"]
    kw = {}
    if method == "band":
        kw["window"] = spec["window"]
    elif method.startswith("fastdtw-r"):
        kw["radius"] = int(method[len("fastdtw-r") :])

    if engine.startswith("navdtw-core"):
        # diagnostic: the compiled entry point alone, inputs validated once outside the timed region
        import navdtw
        from navdtw import _core
        from navdtw.engine import as_matrices

        workers = int(engine.split("-w")[1])
        rv, qv = data["rv"], data["qv"]
        w, rad = kw.get("window", -1), kw.get("radius", -1)
        if wl == "W1":
            mats = as_matrices(data["mats"])
            env = data["env"]

            def call():
                return _core.dtw_nodes(
                    rv, ro, qv, qo, mats, env=env, pairs=None, all_pairs=False, window=-1, workers=workers
                )
        else:

            def call():
                return _core.dtw_points(
                    rv, ro, qv, qo, pairs=None, all_pairs=False, window=w, radius=rad, workers=workers
                )

        res["note"] = "_core call only (no engine.py checks): diagnostic for Python overhead"
        sample_idx = np.arange(B)
    elif engine.startswith("navdtw"):
        import navdtw

        workers = int(engine.split("-w")[1])
        if engine.startswith("navdtw-single"):
            kw["precision"] = "single"
        if wl != "W1" and method == "exact":  # the lane kernel this batch runs
            res["simd_kernel"] = navdtw._core.simd_kernel_for(B, float(cells_all.mean()), kw.get("precision", "double"))
        t0 = time.perf_counter()
        refs = navdtw.Paths(data["rv"], ro)
        qrys = navdtw.Paths(data["qv"], qo)
        res["paths_build_s"] = time.perf_counter() - t0
        if wl == "W1":

            def call():
                return navdtw.dtw_batch(refs, qrys, distances=data["mats"], env=data["env"], workers=workers, **kw)
        else:

            def call():
                return navdtw.dtw_batch(refs, qrys, workers=workers, **kw)

        # warm-up on a few pairs (page in code, first-touch of the module)
        k = min(B, 64)
        if wl == "W1":
            navdtw.dtw_batch(
                refs.take(np.arange(k)),
                qrys.take(np.arange(k)),
                distances=data["mats"],
                env=data["env"][:k],
                workers=workers,
                **kw,
            )
        else:
            navdtw.dtw_batch(refs.take(np.arange(k)), qrys.take(np.arange(k)), workers=workers, **kw)
        sample_idx = np.arange(B)
    elif engine.startswith("numba"):
        nb = numba_kernels()
        workers = int(engine.split("-w")[1])
        nb["numba"].set_num_threads(workers)
        out = np.empty(B)
        t0 = time.perf_counter()
        if wl == "W1":
            vmax = data["vmax"]
            stack = np.full((len(data["mats"]), vmax, vmax), np.inf, dtype=np.float32)
            for i, m in enumerate(data["mats"]):
                stack[i, : m.shape[0], : m.shape[0]] = m
            args = (data["rv"], ro, data["qv"], qo, data["env"], stack)
            k = min(B, 8)
            nb["batch_nodes"](data["rv"], ro[: k + 1], data["qv"], qo[: k + 1], data["env"][:k], stack, np.empty(k))

            def call():
                return (nb["batch_nodes"](*args, out), out)[1]
        else:
            k = min(B, 8)
            nb["batch_points"](data["rv"], ro[: k + 1], data["qv"], qo[: k + 1], np.empty(k))

            def call():
                return (nb["batch_points"](data["rv"], ro, data["qv"], qo, out), out)[1]

        res["compile_s"] = time.perf_counter() - t0
        res["note"] = f"numba {nb['numba'].__version__}, layer {nb['numba'].config.THREADING_LAYER}"
        sample_idx = np.arange(B)
    elif engine == "dtaidistance":
        from dtaidistance import dtw_ndim

        rv64 = data["rv"].astype(np.float64)
        qv64 = data["qv"].astype(np.float64)
        n = min(B, spec.get("sample") or B)
        sample_idx = np.arange(n)
        dkw = {}
        if method == "band":  # dtaidistance keeps |i - j| < window; navdtw's w keeps |i - j| <= w
            dkw["window"] = spec["window"] + 1
        R = [rv64[ro[i] : ro[i + 1]] for i in sample_idx]
        Q = [qv64[qo[i] : qo[i + 1]] for i in sample_idx]
        dtw_ndim.distance_fast(R[0], Q[0], inner_dist="euclidean", **dkw)

        def call():
            return np.array([dtw_ndim.distance_fast(r, q, inner_dist="euclidean", **dkw) for r, q in zip(R, Q)])

        res["note"] = "per-pair Python loop over dtw_ndim.distance_fast(float64, inner_dist='euclidean'), 1 thread"
        if method == "band":
            res["note"] += f", window={dkw['window']}"
    elif engine == "fastdtw-pkg":
        from fastdtw import fastdtw
        from scipy.spatial.distance import euclidean

        n = min(B, spec["sample"])
        sample_idx = np.arange(n)
        radius = kw["radius"]
        R = [data["rv"][ro[i] : ro[i + 1]].astype(np.float64) for i in sample_idx]
        Q = [data["qv"][qo[i] : qo[i + 1]].astype(np.float64) for i in sample_idx]

        def call():  # as VLN-CE calls it: fastdtw(query, reference, radius, dist=euclidean)
            return np.array([fastdtw(q, r, radius=radius, dist=euclidean)[0] for r, q in zip(R, Q)])

        repeat = 1
        res["note"] = f"pure Python; timed {n} of {B} pairs, extrapolated"
    else:
        raise ValueError(engine)

    rss_before = _status_kb("VmRSS")
    hwm_before = _status_kb("VmHWM")
    reset = _reset_peak()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    secs, thread_secs, out, nrep, spent = timed(call, repeat, budget)
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    hwm_after = _status_kb("VmHWM")
    # CPU seconds per wall second over the timed calls: ~N for N busy threads; less means the
    # threads did not get their cores (shared machine) or waited.
    res["cpu_util"] = (ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime) / spent
    res["loadavg_1min"] = os.getloadavg()[0]
    n_timed = len(sample_idx)
    res["timed_pairs"] = n_timed
    res["extrapolated"] = n_timed < B
    res["seconds"] = secs * (B / n_timed)  # full-batch seconds (extrapolated if sampled)
    res["pairs_per_s"] = n_timed / secs
    res["cells_per_s"] = float(cells_all[sample_idx].sum()) / secs
    res["cells_per_thread_cpu_s"] = float(cells_all[sample_idx].sum()) / max(thread_secs, 1e-9)
    res["repeats"] = nrep
    res["extra_peak_mb"] = ((hwm_after - rss_before) if reset else max(0, hwm_after - hwm_before)) / 1024.0
    res["peak_method"] = "VmHWM reset" if reset else "VmHWM delta"
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork+exec, so it would show the parent's peak
    res["child_maxrss_mb"] = max(hwm_before, hwm_after) / 1024.0
    out = np.asarray(out, dtype=np.float64)
    res["values"] = out[: min(len(out), 256)].tolist()
    return res


# ------------------------------------------------------------------------------------------------
# parent side
# ------------------------------------------------------------------------------------------------


def installed(mod: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(mod) is not None


def plan(workloads, engines, s, quick):
    """Yields (workload, method, engine, extra spec) or (workload, method, engine, skip reason)."""
    fast_sample = {"fastdtw-r1": 3 if not quick else 1, "fastdtw-r10": 1}
    for wl in workloads:
        methods = ["exact"] if wl != "W3" else W3_METHODS
        for method in methods:
            for eng in engines:
                spec, skip = {}, None
                if eng.startswith("navdtw-core"):
                    if method != "exact":
                        continue
                elif eng.startswith("navdtw-single"):
                    if method.startswith("fastdtw"):
                        continue  # FastDTW sums in double only
                elif eng.startswith("navdtw"):
                    pass
                elif eng.startswith("numba"):
                    if method != "exact":
                        continue  # the afternoon kernel is exact DTW only
                    if not installed("numba"):
                        skip = "numba not installed"
                elif eng == "dtaidistance":
                    if wl == "W1":
                        skip = "dtaidistance has no node/distance-matrix mode"
                    elif method.startswith("fastdtw"):
                        continue
                    elif not installed("dtaidistance"):
                        skip = "dtaidistance not installed"
                    elif wl == "W2":
                        spec["sample"] = s["W2"]["pairs"] // (5 if not quick else 1)
                elif eng == "fastdtw-pkg":
                    if not method.startswith("fastdtw"):
                        continue
                    if not installed("fastdtw"):
                        skip = "fastdtw not installed"
                    spec["sample"] = fast_sample[method]
                yield wl, method, eng, spec, skip


def run_child(spec, timeout):
    cmd = [sys.executable, HERE, "--child", json.dumps(spec)]
    env = dict(os.environ)
    kernel = split_engine(spec["engine"])[1]
    if kernel:
        env["NAVDTW_SIMD"] = kernel
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    for line in p.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG) :])
    raise RuntimeError(f"child failed ({p.returncode}):\n{p.stderr[-3000:]}")


def fmt(x, unit=""):
    if x is None:
        return "-"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suf}{unit}"
    return f"{x:.3g}{unit}"


def verify(results):
    """Max |value - navdtw-w1 value| over the returned sample of every engine."""
    ref = {(r["workload"], r["method"]): r for r in results if r["engine"] == "navdtw-w1"}
    for r in results:
        b = ref.get((r["workload"], r["method"]))
        if b is None or r is b or "values" not in r:
            continue
        n = min(len(r["values"]), len(b["values"]))
        a, c = np.array(r["values"][:n]), np.array(b["values"][:n])
        rel = np.abs(a - c) / np.maximum(1e-12, np.abs(c))
        r["max_rel_diff_vs_navdtw"] = float(rel.max()) if n else None


def print_table(results, skipped, quick):
    hdr = (
        f"{'workload':8} {'method':11} {'engine':25} {'pairs':>8} {'time s':>8} {'pairs/s':>9} "
        f"{'cells/s':>9} {'x nav/w1':>8} {'peak+MB':>8} {'rss MB':>7} {'cpu':>4} {'rel.diff':>8}  note"
    )
    print(hdr)
    print("-" * len(hdr))
    base = {(r["workload"], r["method"]): r for r in results if r["engine"] == "navdtw-w1"}
    for r in results:
        b = base.get((r["workload"], r["method"]))
        ratio = r["pairs_per_s"] / b["pairs_per_s"] if b else None
        d = r.get("max_rel_diff_vs_navdtw")
        note = r.get("note", "")
        if r.get("extrapolated"):
            note = "[extrap] " + note
        if "paths_build_s" in r and r["workload"] == "W1":
            note = f"Paths() build {r['paths_build_s'] * 1e3:.1f} ms (not timed) " + note
        if "compile_s" in r:
            note = f"compile {r['compile_s']:.1f}s (not timed); " + note
        print(
            f"{r['workload']:8} {r['method']:11} {r['engine']:25} {r['pairs']:>8} {r['seconds']:>8.3f} "
            f"{fmt(r['pairs_per_s']):>9} {fmt(r['cells_per_s']):>9} {fmt(ratio) + 'x' if ratio else '-':>8} "
            f"{r['extra_peak_mb']:>8.1f} {r['child_maxrss_mb']:>7.0f} {r.get('cpu_util', 0):>4.2f} "
            f"{(f'{d:.1e}') if d is not None else '-':>8}  {note}"
        )
    for wl, method, eng, why in skipped:
        print(f"{wl:8} {method:11} {eng:25} {'skipped':>8}  {why}")
    print()
    print(
        "Targets (2 threads; a MISS never fails the script)"
        + ("  [--quick / --tiny: sizes differ from the issue's]" if quick else "")
    )
    idx = {(r["workload"], r["method"], r["engine"]): r for r in results}
    for wl, method, eng, metric, thr in TARGETS:
        r = idx.get((wl, method, eng))
        if r is None:
            print(f"  {wl} {method:11} {eng}: {metric} >= {fmt(thr)}   not measured")
            continue
        if metric == "pairs/s":
            val = r["pairs_per_s"]
        elif metric == "cells/s":
            val = r["cells_per_s"]
        else:
            peer = idx.get((wl, method, metric.split(" ", 1)[1]))
            if peer is None:
                print(f"  {wl} {method:11} {eng}: {metric} >= {thr:g}x   peer not measured")
                continue
            val = r["pairs_per_s"] / peer["pairs_per_s"]
        verdict = "PASS" if val >= thr else "MISS"
        print(
            f"  {wl} {method:11} {eng}: {metric:14} measured {fmt(val):>8}  target >= {fmt(thr):>6}  "
            f"{verdict} ({val / thr:.2f} of target)"
        )


# ------------------------------------------------------------------------------------------------
# --ceiling: navdtw's public API against the plain lane kernels of benchmarks/lanes_ceiling.cpp
# ------------------------------------------------------------------------------------------------

CEILING_SRC = os.path.join(os.path.dirname(HERE), "lanes_ceiling.cpp")
# (workload, engine, goal): the goals against the widest ceiling kernel of the same round
CEILING_GOALS = [
    ("W2", "navdtw-single-w1", 0.8),
    ("W3", "navdtw-single-w1", 0.8),
    ("W2", "navdtw-w1", 0.6),
    ("W3", "navdtw-w1", 0.6),
]


def compile_ceiling(folder: str) -> str:
    """benchmarks/lanes_ceiling.cpp built with -O2 -march=native ($CXX, else c++, g++ or clang++)."""
    import shutil

    cxx = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cxx is None:
        raise RuntimeError("no C++ compiler found (set CXX)")
    exe = os.path.join(folder, "lanes_ceiling")
    subprocess.run(
        [cxx, "-std=c++17", "-O2", "-march=native", CEILING_SRC, "-o", exe], check=True, capture_output=True, text=True
    )
    return exe


def run_ceiling_binary(exe: str, folder: str, repeat: int, timeout: float) -> dict:
    p = subprocess.run([exe, folder, str(repeat)], capture_output=True, text=True, timeout=timeout)
    for line in p.stdout.splitlines():
        if line.startswith("@@CEILING "):
            return json.loads(line[len("@@CEILING ") :])
    raise RuntimeError(f"lanes_ceiling failed ({p.returncode}): {p.stderr[-2000:]}")


def ceiling_engines() -> list[str]:
    """navdtw single and double with the automatic kernel choice, then each lane kernel forced."""
    import navdtw

    engines = ["navdtw-single-w1", "navdtw-w1"]
    for kernel in navdtw._core.simd_kernels():
        if kernel != "portable":
            engines += [f"navdtw-single-w1@{kernel}", f"navdtw-w1@{kernel}"]
    return engines


def run_ceiling(args, s: dict, root: str) -> dict:
    """Rounds of (ceiling kernels, navdtw rows), interleaved, on W2 and W3; prints medians, ranges and
    the ratios to the widest ceiling kernel of the same round. Returns the raw figures."""
    import statistics

    workloads = [w for w in (x.strip().upper() for x in args.workloads.split(",")) if w in ("W2", "W3")]
    if not workloads:
        raise SystemExit("--ceiling runs on W2 and/or W3 (--workloads)")
    engines = [e for e in args.engines.split(",") if e.strip()] if args.engines_given else ceiling_engines()
    exe = compile_ceiling(root)
    folders = {}
    for wl in workloads:
        folders[wl] = os.path.join(root, f"{wl}-{'quick' if args.quick else 'full'}")
        if not os.path.exists(os.path.join(folders[wl], "qo.npy")):
            d = gen_w2(s["W2"]["pairs"]) if wl == "W2" else gen_w3(s["W3"]["pairs"], s["W3"]["length"])
            save_data(d, folders[wl])
    figures: dict = {}  # (workload, row) -> list of cells/s, one per round
    kernels: dict = {}
    for rnd in range(args.rounds):
        for wl in workloads:
            c = run_ceiling_binary(exe, folders[wl], args.repeat, args.timeout)
            for key, row in (("lanes8", "ceiling: 8 lanes (AVX2)"), ("lanes16", "ceiling: 16 lanes (AVX-512)")):
                if key in c:
                    figures.setdefault((wl, row), []).append(c[key])
            for eng in engines:
                spec = {"workload": wl, "method": "exact", "engine": eng, "data": folders[wl]}
                spec.update(repeat=args.repeat, budget=1e9)
                r = run_child(spec, args.timeout)
                figures.setdefault((wl, eng), []).append(r["cells_per_thread_cpu_s"])
                kernels[(wl, eng)] = r.get("simd_kernel", "")
            print(f"[round {rnd + 1}/{args.rounds} {wl}] done", flush=True)

    def widest(wl):
        wide = "ceiling: 16 lanes (AVX-512)"
        return wide if (wl, wide) in figures else "ceiling: 8 lanes (AVX2)"

    def ratios(wl, row):
        return [a / b for a, b in zip(figures[(wl, row)], figures[(wl, widest(wl))])]

    def span(v, fmt_="{:.2f}"):
        return f"{fmt_.format(statistics.median(v))} [{fmt_.format(min(v))}-{fmt_.format(max(v))}]"

    print()
    print(
        f"1 thread, CPU time, best of {args.repeat} calls per round, {args.rounds} rounds interleaved: "
        "median [min-max] over rounds; ratio = row / the widest ceiling kernel of the same round"
    )
    print(f"{'workload':8} {'row':32} {'kernel':8} {'G cells/s':>20} {'x widest ceiling':>20}")
    for wl in workloads:
        for row in [r for (w, r) in figures if w == wl]:
            g = [x / 1e9 for x in figures[(wl, row)]]
            print(f"{wl:8} {row:32} {kernels.get((wl, row), ''):8} {span(g):>20} {span(ratios(wl, row)):>20}")
    print()
    print("Goals (the issue's; a MISS never fails the script):")
    for wl, eng, goal in CEILING_GOALS:
        if (wl, eng) not in figures:
            continue
        v = ratios(wl, eng)
        verdict = "PASS" if statistics.median(v) >= goal else "MISS"
        print(f"  {wl} {eng:18} >= {goal}x the widest ceiling: {span(v)}x  {verdict}")
    return {f"{wl} {row}": v for (wl, row), v in figures.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shrink every workload ~20x (smoke run)")
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="the smallest sizes, one repetition, one thread count per engine: checks the script runs (CI)",
    )
    ap.add_argument("--workloads", default="W1,W2,W3", help="comma list of W1,W2,W3")
    ap.add_argument(
        "--engines",
        default=None,
        help="comma list (default: all; with --tiny: " + TINY_ENGINES + ")",
    )
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions per measurement (best is kept)")
    ap.add_argument("--budget", type=float, default=8.0, help="stop repeating after this many seconds")
    ap.add_argument("--json", metavar="OUT", help="write the results to this JSON file")
    ap.add_argument("--data-dir", help="cache directory for generated data (default: a temp dir)")
    ap.add_argument("--timeout", type=float, default=600.0, help="per-measurement subprocess timeout (s)")
    ap.add_argument(
        "--ceiling",
        action="store_true",
        help="instead of the peers table: navdtw on W2 and W3 (1 thread) against the plain lane kernels of "
        "benchmarks/lanes_ceiling.cpp (compiled here with -march=native), in interleaved rounds",
    )
    ap.add_argument("--rounds", type=int, default=3, help="--ceiling: interleaved rounds (default 3)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.engines_given = any(a == "--engines" or a.startswith("--engines=") for a in (argv or sys.argv[1:]))

    if args.child:
        res = child(json.loads(args.child))
        print(RESULT_TAG + json.dumps(res), flush=True)
        return 0

    workloads = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    for w in workloads:
        if w not in FULL:
            ap.error(f"unknown workload {w}")
    if args.engines is None:
        args.engines = TINY_ENGINES if args.tiny else ALL_ENGINES
    if args.tiny:
        args.repeat, args.budget = 1, 0.5
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    s = sizes(args.quick, args.tiny)
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    import navdtw

    print(
        f"navdtw {navdtw.__version__} | numpy {np.__version__} | python {platform.python_version()} | "
        f"{os.cpu_count()} cpus | {mode.upper()} sizes: " + ", ".join(f"{w}={s[w]['pairs']} pairs" for w in workloads)
    )
    print("load average (1/5/15 min) at start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for mod in ("dtaidistance", "fastdtw", "numba"):
        if not installed(mod):
            print(f"note: {mod} not installed: its rows are skipped")

    tmp = None
    root = args.data_dir
    if root is None:
        tmp = tempfile.TemporaryDirectory(prefix="navdtw-bench-")
        root = tmp.name
    if args.ceiling:
        try:
            figures = run_ceiling(args, s, root)
        finally:
            if tmp is not None:
                tmp.cleanup()
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"quick": args.quick, "ceiling": figures}, f, indent=1)
            print(f"wrote {args.json}")
        return 0
    t_start = time.perf_counter()
    results, skipped = [], []
    try:
        for wl in workloads:
            folder = os.path.join(root, f"{wl}-{mode}")
            if not os.path.exists(os.path.join(folder, "qo.npy")):
                t0 = time.perf_counter()
                if wl == "W1":
                    d = gen_w1(s["W1"]["pairs"], s["W1"]["graphs"], s["W1"]["nodes"])
                elif wl == "W2":
                    d = gen_w2(s["W2"]["pairs"])
                else:
                    d = gen_w3(s["W3"]["pairs"], s["W3"]["length"])
                save_data(d, folder)
                print(f"[{wl}] generated data in {time.perf_counter() - t0:.1f} s", flush=True)
            for wl_, method, eng, extra, skip in plan([wl], engines, s, args.quick or args.tiny):
                if skip:
                    skipped.append((wl_, method, eng, skip))
                    continue
                spec = dict(
                    workload=wl_,
                    method=method,
                    engine=eng,
                    data=folder,
                    repeat=args.repeat,
                    budget=args.budget,
                    window=200,
                    **extra,
                )
                try:
                    r = run_child(spec, args.timeout)
                except Exception as exc:  # report and continue
                    skipped.append((wl_, method, eng, f"failed: {str(exc).strip().splitlines()[-1]}"))
                    print(f"[{wl_} {method} {eng}] FAILED: {exc}", file=sys.stderr, flush=True)
                    continue
                results.append(r)
                print(
                    f"[{wl_} {method:11} {eng:15}] {fmt(r['pairs_per_s'])} pairs/s, "
                    f"{fmt(r['cells_per_s'])} cells/s{' [extrap]' if r['extrapolated'] else ''}",
                    flush=True,
                )
    finally:
        if tmp is not None:
            tmp.cleanup()

    verify(results)
    print()
    print_table(results, skipped, args.quick or args.tiny)
    print(
        f"\ntotal wall time {time.perf_counter() - t_start:.0f} s; load average at end: "
        "%.2f %.2f %.2f" % os.getloadavg()
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "quick": args.quick,
                    "tiny": args.tiny,
                    "sizes": s,
                    "results": results,
                    "skipped": [{"workload": a, "method": b, "engine": c, "reason": d} for a, b, c, d in skipped],
                    "targets": [
                        {"workload": a, "method": b, "engine": c, "metric": d, "threshold": e}
                        for a, b, c, d, e in TARGETS
                    ],
                },
                f,
                indent=1,
            )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
