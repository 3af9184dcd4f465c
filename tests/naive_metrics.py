"""Plain per-episode Python twins of every navigation metric, written from docs/metrics.md.

Nothing here imports navdtw: each metric is computed for ONE episode with Python loops, from the
formulas of docs/metrics.md (Ilharco et al. 2019, Table 3; Jain et al. 2019; Anderson et al. 2018) and
the degenerate-input answers documented in navdtw.metrics' module docstring:

* node paths: consecutive repeats are one node (when the convention collapses them);
* coordinate paths: a query position equal to the previous one is dropped under ``vlnce``;
* SPL with l = 0: l / max(pl, l) is 1 when pl is 0 too, else 0; an infinite l (unreachable goal)
  gives 0;
* CLS: LS = a / (a + |a - pl|), a = PC * PL(R), is 1 when a and pl are both 0; CLS is 0 where a
  path length is infinite (an unreachable step) or PC is 0;
* SED with no edges on either side: ED / max = 0, so sed = sr;
* unreachable (inf) distances: sr/osr follow the comparison (inf never succeeds), ndtw = sdtw = 0,
  distances and dtw stay inf. Never NaN.

A convention is described by plain values (:class:`Rules`) so the twin does not share the
implementation's Convention record. Distances follow docs/metrics.md ("Distances"): node paths
read a ``[V, V]`` matrix rounded to float32 (the engine's storage type) and then used in float64;
coordinate paths are rounded to float32 and measured in float32 arithmetic (the float32 rule),
then used in float64. A float64 distance would disagree with the rule's at a success threshold
(issue 19: a reference ending at (0, 1.77e-12), a query ending at (0, 1), d_th = 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import naive
import numpy as np

INF = math.inf
NAMES = ("pl", "ne", "one", "sr", "osr", "spl", "sed", "cls", "ad", "md", "dtw", "ndtw", "sdtw")


@dataclass(frozen=True)
class Rules:
    """One evaluator's choices: ``inclusive`` success (``<=``) or strict (``<``); SPL's l from
    ``"start_goal"`` d(q_1, r_last), ``"shortest"`` d(r_1, r_last) (or a given shortest distance),
    ``"reference_length"`` PL(R); whether consecutive repeated nodes are merged first; whether
    a query position equal to the previous one is dropped (coordinates, VLN-CE); SPL's
    divisor floor (DUET / HAMT: max(pl, l, 0.01))."""

    inclusive: bool
    spl_length: str
    collapse: bool = True
    drop_positions: bool = False
    spl_floor: float = 0.0


RULES: dict[str, Rules] = {
    "paper": Rules(True, "start_goal"),
    "r2r": Rules(False, "shortest"),
    "r4r": Rules(True, "shortest", collapse=False),  # r4r DTW.__call__: raw node lists
    "duet": Rules(False, "reference_length", collapse=False, spl_floor=0.01),  # VLN-HAMT/DUET cal_dtw: raw lists
    "vlnce": Rules(False, "shortest", drop_positions=True),  # VLN-CE NDTW.update_metric
}


# --------------------------------------------------------------------------------------------
# distances
# --------------------------------------------------------------------------------------------


def node_distance(matrix) -> Callable[[int, int], float]:
    m = np.asarray(matrix, dtype=np.float32).astype(np.float64)

    def d(a, b) -> float:
        return float(m[int(a), int(b)])

    return d


def euclidean(a, b) -> float:
    """The float32 rule: the points rounded to float32; each difference, square and the running
    sum over the coordinates (left to right) rounded to float32; a correctly rounded float32
    square root; the result widened to float64."""
    s = np.float32(0.0)
    for x, y in zip(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)):
        diff = np.float32(x - y)
        s = np.float32(s + np.float32(diff * diff))
    return float(np.sqrt(s))


def collapse(path: Sequence[int]) -> list:
    out = []
    for v in path:
        if not out or out[-1] != v:
            out.append(v)
    return out


def drop_repeated_positions(points) -> list:
    """The positions without any one equal to the previous one (VLN-CE ``NDTW.update_metric``)."""
    points = [np.asarray(p, dtype=np.float64) for p in points]
    return [p for k, p in enumerate(points) if k == 0 or not np.array_equal(p, points[k - 1])]


# --------------------------------------------------------------------------------------------
# pieces
# --------------------------------------------------------------------------------------------


def path_length(path, d) -> float:
    total = 0.0
    for a, b in zip(path[:-1], path[1:]):
        total += d(a, b)
    return total


def nearest(point, path, d) -> float:
    """d(n, P) = min over p in P of d(n, p)."""
    return min(d(point, p) for p in path)


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Unit-cost edit distance (insert, delete, substitute) between two sequences."""
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if a[i - 1] == b[j - 1] else 1))
        prev = cur
    return prev[-1]


def edges(path) -> list:
    """A_P: the edge sequence (p_i, p_i+1) of a node path (directed pairs)."""
    return [(int(a), int(b)) for a, b in zip(path[:-1], path[1:])]


def success(x: float, threshold: float, inclusive: bool) -> float:
    if inclusive:
        return 1.0 if x <= threshold else 0.0
    return 1.0 if x < threshold else 0.0


def spl_ratio(pl: float, l: float, floor: float = 0.0) -> float:
    """l / max(pl, l, floor) with the documented degenerate answers."""
    if l == 0.0:
        return 1.0 if pl == 0.0 and floor == 0.0 else 0.0
    if math.isinf(l):
        return 0.0
    return l / max(pl, l, floor)


def cls(reference, query, d, threshold: float) -> float:
    """CLS = PC * LS (Jain et al. 2019)."""
    pc = 0.0
    for r in reference:
        pc += math.exp(-nearest(r, query, d) / threshold)
    pc /= len(reference)
    if pc == 0.0:
        return 0.0
    plr = path_length(reference, d)
    plq = path_length(query, d)
    if math.isinf(plr) or math.isinf(plq):
        return 0.0
    a = pc * plr
    ls = 1.0 if a == 0.0 and plq == 0.0 else a / (a + abs(a - plq))
    return pc * ls


def exact_dtw(reference, query, d) -> float:
    cost = np.array([[d(r, q) for q in query] for r in reference], dtype=np.float64)
    return naive.dtw(cost)


def ndtw_of(dtw_value: float, ref_len: int, threshold: float) -> float:
    if math.isinf(dtw_value):
        return 0.0
    return math.exp(-dtw_value / (ref_len * threshold))


# --------------------------------------------------------------------------------------------
# one episode, every metric
# --------------------------------------------------------------------------------------------


def episode(
    reference,
    query,
    *,
    rules: Rules,
    threshold: float = 3.0,
    matrix=None,
    shortest_distance: float | None = None,
    stopped: bool = True,
    dtw_value: float | None = None,
) -> dict[str, float]:
    """Every metric of one episode. ``matrix`` given: node paths over it; else coordinates.

    ``dtw_value`` overrides the exact DTW (e.g. the FastDTW of the vlnce convention).
    """
    nodes = matrix is not None
    if nodes:
        d = node_distance(matrix)
        reference = [int(v) for v in np.asarray(reference).ravel()]
        query = [int(v) for v in np.asarray(query).ravel()]
        if rules.collapse:
            reference, query = collapse(reference), collapse(query)
    else:
        d = euclidean
        reference = [np.asarray(p) for p in np.asarray(reference)]
        query = [np.asarray(p) for p in np.asarray(query)]
        if rules.drop_positions:
            query = drop_repeated_positions(query)
    assert reference and query

    goal = reference[-1]
    out: dict[str, float] = {}
    out["pl"] = path_length(query, d)
    out["ne"] = d(query[-1], goal)
    out["one"] = min(d(q, goal) for q in query)
    sr = success(out["ne"], threshold, rules.inclusive) if stopped else 0.0
    out["sr"] = sr
    out["osr"] = success(out["one"], threshold, rules.inclusive)

    if rules.spl_length == "start_goal":
        l = d(query[0], goal)
    elif rules.spl_length == "reference_length":
        l = path_length(reference, d)
    elif shortest_distance is not None:
        l = float(shortest_distance)
    else:
        l = d(reference[0], goal)
    out["spl"] = sr * spl_ratio(out["pl"], l, rules.spl_floor)

    if nodes:
        er, eq = edges(reference), edges(query)
        most = max(len(er), len(eq))
        frac = 0.0 if most == 0 else levenshtein(er, eq) / most
        out["sed"] = sr * (1.0 - frac)

    out["cls"] = cls(reference, query, d, threshold)
    dev = [nearest(q, reference, d) for q in query]
    out["ad"] = sum(dev) / len(dev)
    out["md"] = max(dev)
    dv = exact_dtw(reference, query, d) if dtw_value is None else float(dtw_value)
    out["dtw"] = dv
    out["ndtw"] = ndtw_of(dv, len(reference), threshold)
    out["sdtw"] = sr * out["ndtw"]
    return out


def batch(references, queries, **kwargs) -> dict[str, np.ndarray]:
    """Per-episode metrics of a batch as arrays (same keyword arguments as :func:`episode`, with
    ``matrix`` one matrix or ``matrices`` + ``env``)."""
    matrices = kwargs.pop("matrices", None)
    env = kwargs.pop("env", None)
    shortest = kwargs.pop("shortest_distance", None)
    stopped = kwargs.pop("stopped", None)
    rows = []
    for i, (r, q) in enumerate(zip(references, queries)):
        kw = dict(kwargs)
        if matrices is not None:
            kw["matrix"] = matrices[int(env[i])]
        if shortest is not None:
            kw["shortest_distance"] = shortest[i]
        if stopped is not None:
            kw["stopped"] = bool(stopped[i])
        rows.append(episode(r, q, **kw))
    return {k: np.array([row[k] for row in rows], dtype=np.float64) for k in rows[0]}
