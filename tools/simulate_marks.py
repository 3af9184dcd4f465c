#!/usr/bin/env python
"""The leaderboard marks measured where the truth is known (issue 26, "the best, chosen honestly").

Simulated leaderboards of 40 or 80 agents on one success-rate column, 1 or 3 runs per agent:
``paths`` paths of 3 instructions; path difficulty ``p ~ Beta(2, 2)``, each instruction
``p + N(0, 0.1)``; agent a succeeds with probability ``clip(p_e + shift_a + b_r, 0, 1)``, where
``b_r ~ N(0, sigma)`` is run r's seed offset. Three groups of agents, by ``shift``:

* **tied**: 4 agents with shift 0, equal in distribution: each truly is (one of) the best;
* **in-between**: a tenth of the agents at shifts -0.02, -0.04, -0.06 (cycled): worse, but by
  less than the data can always show;
* **clearly worse**: the rest, at shifts from -0.15 down to -0.45.

Each replication runs the suite's rule (``navdtw.stats.analyze`` with ``best=``, the marks of
``navdtw.suite.leaderboard_marks``: the best mean, ``†`` where ``vs_best``'s low bound is at least
alpha, ``?`` where the Monte-Carlo bounds hold alpha) and, for comparison, Holm over the
comparisons with the best (the observed best against each other agent: the paired sign-flip
permutation test with one run, the runs-aware test with several; Holm over the k - 1 p-values)
and, with one run, the rule before issue 26 (Holm over all pairs). Printed per group: how often an
agent is marked (best or †), and how often it gets a ``?``.

    PYTHONPATH=python python tools/simulate_marks.py                   # the docs' table
    python tools/simulate_marks.py --agents 40 --runs 1 --reps 20      # one cell, quickly
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from navdtw import stats

GROUPS = ("tied", "in-between", "clearly worse")


def shifts(k: int) -> tuple[np.ndarray, list[str]]:
    """Per agent: its shift and group (4 tied, k / 10 in-between, the rest clearly worse)."""
    mid = max(1, k // 10)
    worse = k - 4 - mid
    s = [0.0] * 4 + [(-0.02, -0.04, -0.06)[q % 3] for q in range(mid)] + list(np.linspace(-0.15, -0.45, worse))
    g = ["tied"] * 4 + ["in-between"] * mid + ["clearly worse"] * worse
    return np.array(s), g


def simulate(k: int, runs: int, paths: int, sigma: float, rng: np.random.Generator, odd: float = 0.0):
    """``(x [episodes, k, runs], clusters, groups)``; ``odd``: the first tied agent's seed offsets'
    standard deviation instead of ``sigma`` (one agent whose seeds matter more than the others')."""
    p = np.repeat(rng.beta(2.0, 2.0, paths), 3)
    p = p + rng.normal(0.0, 0.1, len(p))
    shift, groups = shifts(k)
    offsets = rng.normal(0.0, sigma, (k, runs)) if sigma > 0 else np.zeros((k, runs))
    if odd and runs > 1:
        offsets[0] = rng.normal(0.0, odd, runs)
    prob = np.clip(p[:, None, None] + shift[None, :, None] + offsets[None], 0.0, 1.0)
    x = (rng.random(prob.shape) < prob).astype(float)
    return x, np.repeat(np.arange(paths), 3), groups


def marks_of(best: stats.BestTests, means: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The suite's rule (navdtw.suite.leaderboard_marks) on one family: (marked, unresolved)."""
    top = means == means.max()
    return top | (best.lo >= alpha), ~top & (best.lo < alpha) & (best.hi >= alpha)


def pairwise_p(x: np.ndarray, top: int, clusters: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """p-values of the observed best against each other agent ([k], NaN at ``top``)."""
    k, runs = x.shape[1], x.shape[2]
    others = [a for a in range(k) if a != top]
    p = np.full(k, np.nan)
    if runs == 1:
        r = stats.analyze(x[:, :, 0], [(top, a) for a in others], resamples=resamples, seed=seed, clusters=clusters)
        p[others] = r.comparisons.p_permutation
    else:
        p[others] = _runs_p(x, top, others, clusters)
    return p


def _runs_p(x: np.ndarray, top: int, others: list[int], clusters: np.ndarray) -> np.ndarray:
    """The runs-aware paired test (``stats.runs_difference`` where it exists; else a Welch-style
    t: the paired episode term by cluster plus each agent's run-means variance over R, with
    Satterthwaite's degrees of freedom)."""
    if hasattr(stats, "runs_difference"):
        return np.array([stats.runs_difference(x[:, top], x[:, a], clusters=clusters).p for a in others])
    from scipy import stats as sps

    runs = x.shape[2]
    m = x.mean(axis=2)
    g = np.unique(clusters)
    out = []
    for a in others:
        d = m[:, top] - m[:, a]
        sums = np.bincount(clusters, d)
        sizes = np.bincount(clusters)
        n = len(d)
        ve = len(g) / (len(g) - 1) * ((sums - sizes * d.mean()) ** 2).sum() / n**2
        va, vb = x[:, top].mean(axis=0).var(ddof=1) / runs, x[:, a].mean(axis=0).var(ddof=1) / runs
        v = ve + va + vb
        df = v**2 / (ve**2 / (len(g) - 1) + va**2 / (runs - 1) + vb**2 / (runs - 1))
        out.append(2 * sps.t.sf(abs(d.mean()) / np.sqrt(v), df))
    return np.array(out)


def one_cell(k: int, runs: int, args: argparse.Namespace, seed: int) -> dict[str, dict[str, list[float]]]:
    """Counts per group over the replications: marked (new rule), unresolved, marked (Holm over
    the comparisons with the best), marked (Holm over all pairs, one run only)."""
    rng = np.random.default_rng(seed)
    cap = args.max_resamples or args.resamples
    tally = {g: {"n": 0, "mcb": 0, "unresolved": 0, "holm_best": 0, "holm_all": 0, "resamples": 0} for g in GROUPS}
    tally["odd"] = {"n": 0, "mcb": 0}  # the first tied agent (with --odd-sigma: its seeds matter more)
    tally["se"], tally["moderated"] = [], 0  # the standard error of the gap to the nearest clearly worse
    for rep in range(args.reps):
        x, clusters, groups = simulate(k, runs, args.paths, args.sigma if runs > 1 else 0.0, rng, args.odd_sigma)
        first = groups.index("clearly worse")
        tally["se"].append(stats.runs_difference(x[:, 1], x[:, first], clusters=clusters).se)
        m = x.mean(axis=2)
        if runs == 1:
            res = stats.analyze(
                m,
                resamples=args.resamples,
                seed=rep,
                clusters=clusters,
                best=[(list(range(k)), True)],
                max_resamples=cap,
            )
            means = res.means.mean
        else:
            groups_cols = [list(range(a * runs, (a + 1) * runs)) for a in range(k)]
            res = stats.analyze(
                m,
                resamples=args.resamples,
                seed=rep,
                clusters=clusters,
                runs=(x.reshape(len(m), k * runs), groups_cols),
                best=[(list(range(k, 2 * k)), True)],
                max_resamples=cap,
            )
            means = res.runs.mean
        best = res.best[0]
        tally["moderated"] += best.seeds == "moderated"
        marked, unresolved = marks_of(best, means, args.alpha)
        tally["odd"]["n"] += 1
        tally["odd"]["mcb"] += int(marked[0])
        top = int(np.argmax(means))
        p = pairwise_p(x, top, clusters, args.resamples, rep)
        holm_best = np.isnan(p) | (stats.holm(p) >= args.alpha)
        if runs == 1:
            pairs = list(itertools.combinations(range(k), 2))
            r = stats.analyze(m, pairs, resamples=args.resamples, seed=rep, clusters=clusters).comparisons
            adj = stats.holm(r.p_permutation)
            holm_all = means == means.max()  # the old rule: p_holm >= alpha against a best agent
            for q, (a, b) in enumerate(pairs):
                if adj[q] >= args.alpha:
                    holm_all[a] |= means[b] == means.max()
                    holm_all[b] |= means[a] == means.max()
        for a, g in enumerate(groups):
            t = tally[g]
            t["n"] += 1
            t["mcb"] += int(marked[a])
            t["unresolved"] += int(unresolved[a])
            t["holm_best"] += int(holm_best[a])
            t["holm_all"] += int(holm_all[a]) if runs == 1 else 0
            t["resamples"] = max(t["resamples"], int(best.resamples[a]))
    return tally


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, nargs="+", default=[40, 80])
    ap.add_argument("--runs", type=int, nargs="+", default=[1, 3])
    ap.add_argument("--reps", type=int, default=100, help="replications per cell (default 100)")
    ap.add_argument("--paths", type=int, default=250, help="paths of 3 instructions (default 250)")
    ap.add_argument("--sigma", type=float, default=0.03, help="seed offsets' standard deviation with runs")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument(
        "--max-resamples",
        type=int,
        help="resamples drawn for p-values near alpha (default: resamples, i.e. none: the ? column is then "
        "an upper bound of the suite's, which streams up to 100 x resamples)",
    )
    ap.add_argument(
        "--odd-sigma",
        type=float,
        default=0.0,
        help="with runs: the first tied agent's seed offsets' standard deviation (default: --sigma)",
    )
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=20261128, help="seed of the simulation (not tuned)")
    args = ap.parse_args(argv)
    print(f"{args.paths} paths x 3, sigma {args.sigma} with runs, {args.resamples} resamples, alpha {args.alpha}")
    heads = ["agents", "runs", "group", "agents seen", "marked (new)", "? (new)", "marked (Holm vs best)"]
    print("| " + " | ".join([*heads, "marked (Holm, all pairs)"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for c, (k, runs) in enumerate(itertools.product(args.agents, args.runs)):
        t0 = time.perf_counter()
        tally = one_cell(k, runs, args, args.seed + c)
        for g in GROUPS:
            t = tally[g]
            n = t["n"]
            old = f"{100 * t['holm_all'] / n:.1f}%" if runs == 1 else "n/a"
            print(
                f"| {k} | {runs} | {g} | {n} | {100 * t['mcb'] / n:.1f}% ({t['mcb']}) | "
                f"{100 * t['unresolved'] / n:.2f}% ({t['unresolved']}) | {100 * t['holm_best'] / n:.1f}% | {old} |"
            )
        most = max(tally[g]["resamples"] for g in GROUPS)
        se = float(np.mean(tally["se"]))
        odd = tally["odd"]
        print(
            f"<!-- {k} agents, {runs} runs: {time.perf_counter() - t0:.0f} s; most resamples drawn {most}; "
            f"standard error of the gap to the nearest clearly worse agent (15 points): {100 * se:.2f} points, "
            f"so 15 points = {0.15 / se:.1f} SE; seeds' terms moderated in {tally['moderated']} of {args.reps}; "
            f"first tied agent marked {100 * odd['mcb'] / odd['n']:.1f}% -->"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
