#!/usr/bin/env python
"""Pooled ratios (issue 35): the coverage of a ratio's interval and the level of its paired test,
measured where the truth is known.

LH-VLN's ISR is successes over subtasks pooled over episodes, not a mean of per-episode rates;
``navdtw.stats`` resamples episodes and recomputes the ratio (``weights=``, docs/statistics.md,
"Pooled ratios"). The simulation: an episode has ``N`` subtasks, ``P(N = k)`` for k = 0..5 as
``PROBS`` (some episodes have none), longer tasks are harder: the episode's success probability
``p ~ Beta(m_N c, (1 - m_N) c)`` with mean ``m_N = 0.85 - 0.1 N`` and concentration ``c = 4``, and
its subtasks succeed independently with probability ``p`` (so the subtasks of one episode are
correlated). The truth, the expected successes over the expected subtasks, is
``sum_k P(k) k m_k / sum_k P(k) k`` exactly.

Three intervals of the truth, on the same episodes (``--method``, 2,000 resamples by default):

* **ratio** (navdtw): episodes resampled, the ratio recomputed (``stats.bootstrap_means(...,
  weights=N)``);
* **mean of rates**: the plain mean of the episodes' rates (0 without subtasks), what a table of
  per-episode values would average: it estimates another quantity;
* **subtasks as units**: every subtask resampled on its own, as if subtasks were independent:
  too narrow, as those of one episode share its difficulty.

And the paired sign-flip test of two agents with the same truth (the same episodes, the same
per-episode probabilities, independent outcomes): its type-I error at 5%, with the same weights
(``stats.analyze(..., weights=)``).

**Several runs** (``--part runs``, its own generator, ``--runs-seed``): each run (seed) of an
agent scales every success probability by ``1 - lambda_r`` (a seed that fails more often; ``h`` =
0: no seed effect), ``lambda_r`` of mean ``h`` and symmetric on ``[0, 2 h]``, so the truth, the
expected ratio over seeds, is ``(1 - h)`` times the one above exactly: ``--offsets normal``
(default) ``N(h, (h / 3)**2)`` clipped to ``[0, 2 h]`` (nearly the normal model the runs
machinery is calibrated under), ``--offsets uniform`` ``Uniform(0, 2 h)`` (light tails: the t
interval on 3 uniform draws alone covers 92.3% at 95%). Per row: the coverage of ``stats.runs_intervals(...,
weights=)`` (each run's ratio, the runs linearized, the calibrated t interval over episodes and
seeds), of its interval over episodes alone, and of the plain runs interval of the mean of the
rates; the median ratio of the linearized episode standard error to the bootstrap's (the
percentile interval over episodes of the mean of the runs' ratios, over ``2 z``: 1 in the limit);
and the type-I error at 5% of ``stats.runs_difference(..., weights=)`` for two agents with the same
truth (the same episodes, their own seeds).

Printed as Markdown, never asserted (tests/test_stats_ratio.py and tests/test_stats_ratio_runs.py
check the computation against plain loops).

    PYTHONPATH=python python benchmarks/bench_ratio.py --reps 2000 --seed 3535 --part single
    PYTHONPATH=python python benchmarks/bench_ratio.py --reps 2000 --runs-seed 20261201 --part runs
    PYTHONPATH=python python benchmarks/bench_ratio.py --reps 2000 --runs-seed 20261201 --part runs --offsets uniform
    python benchmarks/bench_ratio.py --tiny     # a few replications: checks it runs
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from navdtw import stats

PROBS = np.array([0.05, 0.25, 0.25, 0.2, 0.15, 0.1])  # P(N = 0..5)
CONCENTRATION = 4.0
CHUNK = 100  # replications per stats call (columns sharing the resamples)


def mean_of(k: np.ndarray) -> np.ndarray:
    return 0.85 - 0.1 * k


def truth() -> float:
    k = np.arange(len(PROBS))
    return float((PROBS * k * mean_of(k)).sum() / (PROBS * k).sum())


def rates_truth() -> float:
    """What the mean of the episodes' rates estimates (0 for an episode without subtasks)."""
    k = np.arange(len(PROBS))
    return float((PROBS[1:] * mean_of(k[1:])).sum())


def episodes(rng, reps: int, n: int):
    """``(rates, subtasks, successes, p)`` ``[reps, n]`` each."""
    k = rng.choice(len(PROBS), size=(reps, n), p=PROBS)
    m = mean_of(k)
    p = rng.beta(m * CONCENTRATION, (1.0 - m) * CONCENTRATION)
    ok = rng.binomial(k, p)
    rate = np.divide(ok, k, out=np.zeros((reps, n)), where=k > 0)
    return rate, k.astype(np.float64), ok, p


def subtask_interval(ok, k, rng, resamples: int, confidence: float):
    """The interval of the subtasks pooled as independent units: each subtask a 0/1 value."""
    lo, hi = np.empty(len(k)), np.empty(len(k))
    a = (1.0 - confidence) / 2.0
    for r in range(len(k)):
        s = np.repeat(np.arange(len(k[r])), k[r].astype(int))
        values = (np.arange(len(s)) - np.searchsorted(s, s)) < ok[r][s]  # ok[r][e] ones per episode
        boot = rng.choice(values, size=(resamples, len(values))).mean(axis=1)
        lo[r], hi[r] = np.quantile(boot, [a, 1.0 - a])
    return lo, hi


def coverage(rng, reps, sizes, args):
    t, wrong = truth(), rates_truth()
    print("## Coverage of the ratio's interval (truth: successes / subtasks, expected)\n")
    print(f"truth {t:.4f}; the mean of the episodes' rates estimates {wrong:.4f} instead\n")
    print("| episodes | ratio (navdtw) | mean of rates | subtasks as units | median width ratio / subtasks |")
    print("|---|---|---|---|---|")
    for n in sizes:
        hit = {"ratio": 0, "rates": 0, "subtasks": 0}
        widths = []
        done = 0
        while done < reps:
            b = min(CHUNK, reps - done)
            rate, k, ok, _ = episodes(rng, b, n)
            seed = int(rng.integers(2**31))
            r = stats.bootstrap_means(rate.T, weights=k.T, resamples=args.resamples, method=args.method, seed=seed)
            plain = stats.bootstrap_means(rate.T, resamples=args.resamples, method=args.method, seed=seed)
            sub = min(b, max(1, args.subtask_reps))  # the loop over subtasks is slow: a share of the replications
            slo, shi = subtask_interval(ok[:sub], k[:sub], rng, args.resamples, 0.95)
            hit["ratio"] += int(((r.lo <= t) & (t <= r.hi)).sum())
            hit["rates"] += int(((plain.lo <= t) & (t <= plain.hi)).sum())
            hit["subtasks"] += int(((slo <= t) & (t <= shi)).sum()) * b / sub
            widths += list((r.hi[:sub] - r.lo[:sub]) / (shi - slo))
            done += b
        print(
            f"| {n} | {hit['ratio'] / reps:.3f} | {hit['rates'] / reps:.3f} | {hit['subtasks'] / reps:.3f} "
            f"| {np.median(widths):.2f} |"
        )
    print()


def level(rng, reps, sizes, args):
    print("## Paired test of two agents with the same truth (type-I error at 5%)\n")
    print("| episodes | ratio sign-flip test (navdtw) | sign test |")
    print("|---|---|---|")
    for n in sizes:
        rej_p, rej_s, done = 0, 0, 0
        while done < reps:
            b = min(CHUNK, reps - done)
            rng_k = rng.choice(len(PROBS), size=(b, n), p=PROBS)
            m = mean_of(rng_k)
            p = rng.beta(m * CONCENTRATION, (1.0 - m) * CONCENTRATION)
            oka, okb = rng.binomial(rng_k, p), rng.binomial(rng_k, p)
            ra = np.divide(oka, rng_k, out=np.zeros((b, n)), where=rng_k > 0)
            rb = np.divide(okb, rng_k, out=np.zeros((b, n)), where=rng_k > 0)
            matrix = np.empty((n, 2 * b))
            matrix[:, 0::2], matrix[:, 1::2] = ra.T, rb.T
            w = np.repeat(rng_k.T.astype(np.float64), 2, axis=1)
            pairs = [(2 * q, 2 * q + 1) for q in range(b)]
            res = stats.analyze(
                matrix, pairs, resamples=args.resamples, method="percentile", seed=int(rng.integers(2**31)), weights=w
            )
            rej_p += int((res.comparisons.p_permutation < 0.05).sum())
            rej_s += int((res.comparisons.p_sign < 0.05).sum())
            done += b
        print(f"| {n} | {rej_p / reps:.3f} | {rej_s / reps:.3f} |")
    print()


def run_episodes(rng, reps: int, n: int, runs: int, h: float, tasks=None, offsets: str = "normal"):
    """``(rates [reps, n, runs], subtasks [reps, n], tasks)``: each run's outcomes on the same tasks,
    the success probabilities scaled by ``1 - lambda_r`` per replication and run (``offsets``)."""
    k, p = tasks if tasks is not None else (None, None)
    if k is None:
        k = rng.choice(len(PROBS), size=(reps, n), p=PROBS)
        m = mean_of(k)
        p = rng.beta(m * CONCENTRATION, (1.0 - m) * CONCENTRATION)
    if offsets == "uniform":
        lam = rng.uniform(0.0, 2.0 * h, size=(reps, 1, runs))
    else:  # symmetric clipping keeps the mean h
        lam = np.clip(rng.normal(h, h / 3.0, size=(reps, 1, runs)), 0.0, 2.0 * h)
    ok = rng.binomial(k[..., None], p[..., None] * (1.0 - lam))
    rate = np.divide(ok, k[..., None], out=np.zeros(ok.shape), where=k[..., None] > 0)
    return rate, k.astype(np.float64), (k, p)


def linearized_se(rate: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The delta method's standard error over episodes of the mean over runs of the runs' ratios
    (numpy, beside navdtw's: what the bootstrap's width is compared with)."""
    ratio = (rate * w[..., None]).sum(axis=1, keepdims=True) / w.sum(axis=1)[:, None, None]
    d = (w[..., None] * (rate - ratio)).mean(axis=-1)  # 0 for an episode of weight 0
    n = (w > 0).sum(axis=1)  # the episodes that count
    return np.sqrt((d**2).sum(axis=1) / w.sum(axis=1) ** 2 * n / (n - 1.0))


def several_runs(rng, reps, sizes, args):
    """Coverage and size of the pooled ratio's runs-aware interval and pair test."""
    z = 1.959963984540054
    print("## Several runs: the ratio's interval over episodes and seeds, and its pair test\n")
    print(f"truth {truth():.4f} x (1 - h); seed offsets {args.offsets}; 95% intervals; type-I error at 5%\n")
    print(
        "| runs | h (seed effect) | episodes | ratio over episodes and seeds (navdtw) | ratio over episodes only "
        "| mean of rates, runs interval | median se: linearized / bootstrap | pair test, same truth (type-I) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for runs in (3, 5):
        for h in (0.0, 0.1):
            t = truth() * (1.0 - h)
            for n in sizes:
                hit = {"runs": 0, "episodes": 0, "plain": 0}
                rej, ratios, done = 0, [], 0
                while done < reps:
                    b = min(CHUNK, reps - done)
                    rate, w, tasks = run_episodes(rng, b, n, runs, h, offsets=args.offsets)
                    other, _, _ = run_episodes(rng, b, n, runs, h, tasks, offsets=args.offsets)
                    matrix = rate.transpose(1, 0, 2).reshape(n, b * runs)
                    weights = np.repeat(w.T, runs, axis=1)
                    groups = [list(range(q * runs, (q + 1) * runs)) for q in range(b)]
                    seed = int(rng.integers(2**31))
                    opts = {"resamples": args.resamples, "method": "percentile", "seed": seed}
                    r = stats.runs_intervals(matrix, groups, weights=weights, **opts)
                    plain = stats.runs_intervals(matrix, groups, **opts)
                    hit["runs"] += int(((r.lo <= t) & (t <= r.hi)).sum())
                    hit["episodes"] += int(((r.episode_lo <= t) & (t <= r.episode_hi)).sum())
                    hit["plain"] += int(((plain.lo <= t) & (t <= plain.hi)).sum())
                    ratios += list(linearized_se(rate, w) * 2 * z / (r.episode_hi - r.episode_lo))
                    d = stats.runs_difference(rate, other, weights=w)
                    rej += int((d.p < 0.05).sum())
                    done += b
                print(
                    f"| {runs} | {h:g} | {n} | {hit['runs'] / reps:.3f} | {hit['episodes'] / reps:.3f} "
                    f"| {hit['plain'] / reps:.3f} | {np.median(ratios):.3f} | {rej / reps:.3f} |"
                )
    print()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2000, help="replications per row (default 2000)")
    ap.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples and sign flips (default 2000)")
    ap.add_argument("--method", default="bca", choices=("bca", "percentile"))
    ap.add_argument("--subtask-reps", type=int, default=20, help="replications per chunk with the subtask interval")
    ap.add_argument("--seed", type=int, default=3535, help="the generator of the single-run part (default 3535)")
    ap.add_argument("--runs-seed", type=int, default=20261201, help="the generator of the several-runs part")
    ap.add_argument("--offsets", default="normal", choices=("normal", "uniform"), help="the seeds' offsets")
    ap.add_argument("--part", default="all", choices=("all", "single", "runs"), help="which part to run")
    ap.add_argument("--tiny", action="store_true", help="a few replications: checks that it runs")
    args = ap.parse_args(argv)
    sizes = (50, 200, 1000)
    if args.tiny:
        args.reps, args.resamples, args.subtask_reps, sizes = 6, 200, 2, (30,)
    t0 = time.perf_counter()
    if args.part in ("all", "single"):
        rng = np.random.default_rng(args.seed)
        print(f"seed {args.seed}, {args.reps} replications per row, {args.resamples} resamples, method {args.method}\n")
        coverage(rng, args.reps, sizes, args)
        level(rng, args.reps, sizes, args)
    if args.part in ("all", "runs"):
        print(f"runs seed {args.runs_seed}, {args.reps} replications per row, {args.resamples} resamples\n")
        several_runs(np.random.default_rng(args.runs_seed), args.reps, sizes, args)
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
