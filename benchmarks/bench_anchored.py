#!/usr/bin/env python
"""Anchored DTW (navdtw.dtw_anchored_batch) against unconstrained DTW on the same cells, in one run.

Workload (``numpy.random.default_rng(seed)``, seed 0): T tours of k = 2-6 episodes, each episode a
ground-truth walk of 20-80 and an agent walk of 15-100 3-D float32 points (0.25 m steps), the tour
the episodes' walks joined. The anchors are IVLN-CE's: at each episode change, (last, last) and
(first, first) steps. Measured, best of ``--repeat`` rounds, the rows interleaved in every round:

* ``anchored``: ``dtw_anchored_batch(gt tours, agent tours, anchors)`` (through, the default),
  the anchors a list of one array per tour (packed by the call);
* ``anchored, packed``: the same with the anchors packed once, ``(values, offsets)``, as the
  tours are (``Paths``) and as the plain rows' stretches are: the engine against the engine;
* ``exclusive``: the same with ``exclusive=True`` (IVLN-CE's window; the scalar kernel);
* ``plain, same cells``: ``dtw_batch`` over the stretches between anchors as separate pairs,
  exactly the DP cells the anchored call computes (the unconstrained engine on the same cells);
* ``plain, whole tours``: ``dtw_batch`` of the tours unconstrained (every cell of each table), for
  scale (its cells/s is the engine's throughput on long pairs).

The figure that counts is the ratio of CPU seconds per cell (process time, best of the rounds:
on a shared machine wall time measures the neighbours too), anchored / plain on the same cells
(target <= 1.2, printed PASS or MISS, never fails): times from one run are comparable with each
other only. The list row pays for reading the 2,000 anchor arrays, scattered in memory and cold
after every call (touching them alone costs the next call ~0.5 ms); the packed row is the engine
against the engine.

    python benchmarks/bench_anchored.py                 # T = 2000 tours, workers 1 and 2
    python benchmarks/bench_anchored.py --tiny          # seconds: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import navdtw

TARGET = 1.2


def walk(rng, n, start):
    d = rng.normal(size=(n, 3))
    d *= 0.25 / np.linalg.norm(d, axis=1, keepdims=True)
    d[0] = 0.0
    return (start + np.cumsum(d, axis=0)).astype(np.float32)


def tours(rng, count, episodes=(2, 6), gt_len=(20, 80), agent_len=(15, 100)):
    refs, qrys, anchors = [], [], []
    for _ in range(count):
        g_parts, a_parts, pairs = [], [], []
        start = rng.uniform(-10, 10, size=3)
        for e in range(int(rng.integers(episodes[0], episodes[1] + 1))):
            g = walk(rng, int(rng.integers(gt_len[0], gt_len[1] + 1)), start)
            a = walk(rng, int(rng.integers(agent_len[0], agent_len[1] + 1)), start)
            if e:
                gi, ai = sum(map(len, g_parts)), sum(map(len, a_parts))
                pairs += [(gi - 1, ai - 1), (gi, ai)]
            g_parts.append(g)
            a_parts.append(a)
            start = g[-1] + rng.normal(scale=2.0, size=3)
        refs.append(np.concatenate(g_parts))
        qrys.append(np.concatenate(a_parts))
        anchors.append(np.array(pairs, dtype=np.int64).reshape(-1, 2))
    return refs, qrys, anchors


def stretches(refs, qrys, anchors):
    """The stretches between consecutive anchors (corners included) as separate pairs."""
    r_out, q_out = [], []
    for r, q, a in zip(refs, qrys, anchors):
        corners = [(0, 0), *map(tuple, a.tolist()), (len(r) - 1, len(q) - 1)]
        for (r0, q0), (r1, q1) in zip(corners, corners[1:]):
            if (r0, q0) != (r1, q1):
                r_out.append(r[r0 : r1 + 1])
                q_out.append(q[q0 : q1 + 1])
    return r_out, q_out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tours", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="a few tours: checks the script runs")
    args = ap.parse_args(argv)
    count, repeat = (20, 1) if args.tiny else (args.tours, args.repeat)
    rng = np.random.default_rng(0)
    refs, qrys, anchors = tours(rng, count)
    sr, sq = stretches(refs, qrys, anchors)
    R, Q = navdtw.Paths.from_list(refs), navdtw.Paths.from_list(qrys)
    SR, SQ = navdtw.Paths.from_list(sr), navdtw.Paths.from_list(sq)
    same_cells = float(sum(len(a) * len(b) for a, b in zip(sr, sq)))
    all_cells = float(sum(len(a) * len(b) for a, b in zip(refs, qrys)))
    print(f"{count} tours, {len(sr)} stretches; {same_cells:.3g} cells anchored, {all_cells:.3g} unconstrained")
    print(f"SIMD kernel: {navdtw._core.build_info()['simd_kernel']}")

    # the results first: anchored = stretches joined (checks the benchmark measures the same work)
    through = navdtw.dtw_anchored_batch(R, Q, anchors, workers=1)
    assert np.all(through >= navdtw.dtw_batch(R, Q, workers=1) - 1e-9)
    packed = (np.concatenate(anchors), np.r_[0, np.cumsum([len(a) for a in anchors])])
    assert navdtw.dtw_anchored_batch(R, Q, packed, workers=1).tobytes() == through.tobytes()

    for workers in (1, 2):
        rows = {
            "anchored": (lambda w=workers: navdtw.dtw_anchored_batch(R, Q, anchors, workers=w), same_cells),
            "anchored, packed": (lambda w=workers: navdtw.dtw_anchored_batch(R, Q, packed, workers=w), same_cells),
            "exclusive": (
                lambda w=workers: navdtw.dtw_anchored_batch(R, Q, anchors, exclusive=True, workers=w),
                same_cells,
            ),
            "plain, same cells": (lambda w=workers: navdtw.dtw_batch(SR, SQ, workers=w), same_cells),
            "plain, whole tours": (lambda w=workers: navdtw.dtw_batch(R, Q, workers=w), all_cells),
        }
        wall, cpu = dict.fromkeys(rows, np.inf), dict.fromkeys(rows, np.inf)
        for _ in range(repeat):  # rows interleaved: load changes hit every row alike
            for name, (fn, _) in rows.items():
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                wall[name] = min(wall[name], time.perf_counter() - t0)
                cpu[name] = min(cpu[name], time.process_time() - c0)
        base = cpu["plain, same cells"] / same_cells
        print(f"\nworkers={workers}")
        print(f"{'row':<22}{'wall s':>10}{'CPU s':>10}{'cells/CPU s':>13}{'CPU/cell vs plain':>19}")
        for name, (_, cells) in rows.items():
            ratio = cpu[name] / cells / base
            print(f"{name:<22}{wall[name]:>10.4f}{cpu[name]:>10.4f}{cells / cpu[name]:>13.3g}{ratio:>18.2f}x")
        for name in ("anchored", "anchored, packed"):
            ratio = cpu[name] / cpu["plain, same cells"]
            verdict = "PASS" if ratio <= TARGET else "MISS"
            print(f"{name} / plain on the same cells (CPU time): {ratio:.2f}x (target <= {TARGET}x): {verdict}")


if __name__ == "__main__":
    main()
