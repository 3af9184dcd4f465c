"""Plain per-episode Python twin of the ``positions`` data set kind, written from
docs/datasets/positions.md.

Nothing here imports navdtw: one episode (a reference record and a prediction record, as parsed
JSON) is scored with Python loops. Distances are the engine's documented cost for float32 points
(coordinates rounded to float32; differences, squares, their sum and the square root in float32,
:func:`d`), sums in float64, so the twin agrees with navdtw to
rounding in the last bits of float64, not only to float32 precision.

The definitions (d_th the success distance, g the goal, l SPL's shortest length):

* the coordinates used are ``dims`` (all, or two of x, y, z); g = the record's ``goal``, else the
  reference's last point;
* PL = sum d(q_i, q_i+1); NE = d(q_last, g); ONE = min over q of d(q, g);
* with ``distance="geodesic"``: NE = the prediction's ``distance_to_goal`` when it has one (then
  ONE = min(ONE, NE)), l = the reference's ``geodesic_distance`` when it has one; otherwise
  l = d(r_1, g);
* SR = 1[NE < d_th] (``inclusive``: <=); OSR likewise with ONE; SPL = SR * l / max(PL, l), with
  l / max = 1 when l = PL = 0 and 0 when l = inf;
* CLS = PC * LS, PC = mean over r of exp(-d(r, Q) / d_th), a = PC * PL(R),
  LS = a / (a + |a - PL|) (1 when a = PL = 0); AD = mean over q of d(q, R), MD = the max;
* DTW exact (or FastDTW radius 1 of the ``fastdtw`` package with a position equal to the previous
  one dropped first, ``fast=True``), nDTW = exp(-DTW / (|R| d_th)), SDTW = SR * nDTW;
* GP = l - NE (0 when both are infinite).
"""

from __future__ import annotations

import math
import struct

import naive
import numpy as np

NAMES = ("pl", "ne", "one", "sr", "osr", "spl", "cls", "ad", "md", "dtw", "ndtw", "sdtw", "gp")


_F32 = struct.Struct("f")


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (returned as a Python float)."""
    return _F32.unpack(_F32.pack(x))[0]


def d(a, b) -> float:
    """The engine's distance between two float32 points: differences, squares, their left-to-right
    sum and the square root, each rounded to float32. (One IEEE operation on float32 values done in
    float64 and rounded to float32 is the float32 operation: float64 has more than 2 x 24 + 2 bits.)"""
    s = 0.0
    for x, y in zip(a, b):
        diff = f32(x - y)
        s = f32(s + f32(diff * diff))
    return f32(math.sqrt(s))


def _points(path, dims) -> list[list[float]]:
    """The points as the engine holds them: rounded to float32, the ``dims`` coordinates."""
    pts = [[f32(float(x)) for x in p] for p in path]
    return pts if dims is None else [[p[k] for k in dims] for p in pts]


def _length(path) -> float:
    total = 0.0
    for a, b in zip(path[:-1], path[1:]):
        total += d(a, b)
    return total


def _success(x: float, threshold: float, inclusive: bool) -> float:
    return float(x <= threshold if inclusive else x < threshold)


def episode(
    ref: dict,
    pred: dict,
    *,
    threshold: float = 3.0,
    inclusive: bool = False,
    distance: str = "euclidean",
    dims: tuple[int, int] | None = None,
    fast: bool = False,
) -> dict[str, float]:
    """Every metric of one episode: ``ref`` and ``pred`` are the records as parsed from the files."""
    R = _points(ref["path"], dims)
    Q = _points(pred["path"], dims)
    if fast:  # VLN-CE drops a position equal to the previous one
        Q = [q for k, q in enumerate(Q) if k == 0 or q != Q[k - 1]]
    g = _points([ref["goal"]], dims)[0] if "goal" in ref else R[-1]
    out = {"pl": _length(Q)}
    ne = d(Q[-1], g)
    one = min(d(q, g) for q in Q)
    l = d(R[0], g)
    if distance == "geodesic":
        if "distance_to_goal" in pred:
            ne = float(pred["distance_to_goal"])
            one = min(one, ne)
        if "geodesic_distance" in ref:
            l = float(ref["geodesic_distance"])
    out["ne"], out["one"] = ne, one
    sr = _success(ne, threshold, inclusive)
    out["sr"], out["osr"] = sr, _success(one, threshold, inclusive)
    if l == 0.0:
        ratio = 1.0 if out["pl"] == 0.0 else 0.0
    elif math.isinf(l):
        ratio = 0.0
    else:
        ratio = l / max(out["pl"], l)
    out["spl"] = sr * ratio
    cost = [[d(r, q) for q in Q] for r in R]  # cost[i][j] = d(r_i, q_j)
    pc = sum(math.exp(-min(row) / threshold) for row in cost) / len(R)
    a = pc * _length(R)
    ls = 1.0 if a == 0.0 and out["pl"] == 0.0 else a / (a + abs(a - out["pl"]))
    out["cls"] = pc * ls
    dev = [min(row[j] for row in cost) for j in range(len(Q))]
    out["ad"], out["md"] = sum(dev) / len(dev), max(dev)
    if fast:
        from fastdtw import fastdtw

        out["dtw"] = float(fastdtw(np.array(Q), np.array(R), radius=1, dist=d)[0])
    else:
        out["dtw"] = naive.dtw(np.array(cost))
    out["ndtw"] = math.exp(-out["dtw"] / (len(R) * threshold))
    out["sdtw"] = sr * out["ndtw"]
    out["gp"] = 0.0 if math.isinf(l) and math.isinf(ne) else l - ne
    return out


def batch(refs: list[dict], preds: list[dict], **kwargs) -> dict[str, np.ndarray]:
    """Per-episode metrics of paired records (same keyword arguments as :func:`episode`)."""
    rows = [episode(r, p, **kwargs) for r, p in zip(refs, preds)]
    return {k: np.array([row[k] for row in rows]) for k in NAMES}
