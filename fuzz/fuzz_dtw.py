"""Differential fuzz target: navdtw's C++ kernels against the slow reference in tests/naive.py.

Each input (bytes) decodes to one small pair of paths, either coordinates ([n, D], D = 1..4, with
many ties and some huge values) or node paths over a random, possibly non-symmetric [V, V] matrix
with some ``inf`` entries (int32 or int64 ids). For that pair it checks

* exact DTW                  == naive.dtw                     (see TOL; inf stays inf, never NaN)
* band DTW, every window 0 .. max(n, m) + 1 == naive.dtw_band (and >= exact, bit for bit)
* FastDTW, radius 0..3       >= exact, == exact when the radius covers the shorter path
* dtw_prefix                 == naive.dtw_prefix
* warping_path               value == exact, valid path whose summed cost is the value
* dtw_batch / dtw_matrix     == the single-pair values, for workers 1 and 2, pairs= and env=
* transposition              DTW(R, Q; M) == DTW(Q, R; M.T), same for every band

Run it (see fuzz/README.md):
    python fuzz/fuzz_dtw.py fuzz/corpus -max_total_time=600      # atheris / libFuzzer
    python fuzz/fuzz_dtw.py --replay fuzz/corpus                 # replay files, no atheris needed
    python fuzz/fuzz_dtw.py --random 2000                        # random inputs, no atheris needed
With NAVDTW_FUZZ_KEEP_GOING=DIR a mismatch is saved to DIR (and printed) instead of stopping.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import numpy as np  # noqa: E402

try:
    import atheris
except ImportError:  # replay / random modes work without it
    atheris = None

if atheris is not None and not any(a in sys.argv for a in ("--replay", "--random")):
    with atheris.instrument_imports(include=["navdtw", "naive"]):
        import naive

        import navdtw
else:
    import naive

    import navdtw


# NAVDTW_FUZZ_NO_HUGE=1 leaves out coordinates whose squares overflow float32 (the engine refuses
# coordinates beyond navdtw.engine.MAX_COORDINATE; the target checks that refusal otherwise).
NO_HUGE = os.environ.get("NAVDTW_FUZZ_NO_HUGE") == "1"


class Reader:
    """Consumes an input byte by byte; past the end every byte reads as 0."""

    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        b = self.data[self.pos] if self.pos < len(self.data) else 0
        self.pos += 1
        return b

    def below(self, n: int) -> int:
        return self.byte() % n


def coordinate(rd: Reader) -> float:
    kind, v = rd.below(16), rd.byte()
    if kind < 9:
        return float(v % 7 - 3)  # small integers: many exact ties
    if kind < 14:
        return (v - 128) / 7.3
    if kind == 14:
        return (v - 128) * 1e15  # large, squares stay inside float32
    if v % 2 and not NO_HUGE:
        return (v - 128) * 1e18  # huge: the square overflows float32 (finite in float64)
    return (v - 128) * 1e-30  # tiny


def decode(data: bytes):
    """bytes -> ('points', R, Q, None) or ('nodes', R, Q, M)."""
    rd = Reader(data)
    head = rd.byte()
    n, m = 1 + rd.below(12), 1 + rd.below(12)
    if head % 2 == 0:
        dim = 1 + (head >> 1) % 4
        r = np.array([[coordinate(rd) for _ in range(dim)] for _ in range(n)], dtype=np.float32)
        q = np.array([[coordinate(rd) for _ in range(dim)] for _ in range(m)], dtype=np.float32)
        return "points", r, q, None
    V = 1 + (head >> 1) % 6
    symmetric = (head >> 4) & 1
    dtype = np.int32 if (head >> 5) & 1 else np.int64
    M = np.empty((V, V), dtype=np.float32)
    for i in range(V):
        for j in range(V):
            b = rd.byte()
            M[i, j] = np.inf if b % 11 == 0 else (b % 17) * 0.5
    if symmetric:
        M = np.minimum(M, M.T)
    r = np.array([rd.below(V) for _ in range(n)], dtype=dtype)
    q = np.array([rd.below(V) for _ in range(m)], dtype=dtype)
    return "nodes", r, q, M


# Engine vs naive: node costs are float32 matrix entries summed in double on both sides, so the
# values agree to rounding of the sums; coordinate costs may be measured in float32 by the engine
# (one rounding per distance) but in float64 by naive, so they agree to ~1e-7 relative (all costs
# are >= 0, so a relative error per cost bounds the relative error of the minimum).
# Engine vs engine (batch vs single, workers, SIMD or not): bit for bit.
TOL = {"points": 2e-6, "nodes": 1e-12}


def same(a: float, b: float, rel: float = 0.0) -> bool:
    a, b = float(a), float(b)
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b
    return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=1e-30 if rel else 0.0)


def check(mode, r, q, M) -> None:
    limit = getattr(navdtw.engine, "MAX_COORDINATE", None)
    if M is None and limit is not None and max(np.abs(r).max(), np.abs(q).max()) > limit:
        # beyond the engine's coordinate range (float32 squares would overflow): a clear refusal
        for call in (
            lambda: navdtw.dtw(r, q),
            lambda: navdtw.dtw_batch([r], [q], workers=2),
            lambda: navdtw.dtw_prefix(r, q),
            lambda: navdtw.warping_path(r, q),
        ):
            try:
                call()
            except ValueError as e:
                assert "beyond" in str(e), f"unexpected refusal message: {e}"
            else:
                raise AssertionError("a coordinate beyond MAX_COORDINATE was not refused")
        return
    kw = {} if M is None else {"distances": M}
    cost = naive.euclidean_cost(r, q) if M is None else naive.node_cost(M, r, q)
    n, m = cost.shape
    exact = naive.dtw(cost)
    tol = TOL[mode]

    got = navdtw.dtw(r, q, **kw)
    assert same(got, exact, tol), f"exact: engine {got!r} != naive {exact!r}"
    assert not math.isnan(got), "exact DTW is NaN"

    # transposition: cost^T is the cost of (Q, R) under M^T (Euclidean is symmetric)
    kw_t = {} if M is None else {"distances": np.ascontiguousarray(M.T)}
    got_t = navdtw.dtw(q, r, **kw_t)
    assert same(got_t, got), f"transposed exact: {got_t!r} != {exact!r}"

    bands = []
    for w in range(max(n, m) + 2):
        want = naive.dtw_band(cost, w)
        b = navdtw.dtw(r, q, window=w, **kw)
        assert same(b, want, tol), f"band w={w}: engine {b!r} != naive {want!r}"
        assert b >= got, f"band w={w}: {b!r} < exact {exact!r}"
        bt = navdtw.dtw(q, r, window=w, **kw_t)
        assert same(bt, b), f"transposed band w={w}: {bt!r} != {want!r}"
        bands.append(b)
    assert same(bands[-1], got), "a window >= max(n, m) - 1 must be exact"

    if M is None:
        for rad in range(4):
            f = navdtw.dtw(r, q, radius=rad)
            assert f >= got or same(f, got, tol), f"FastDTW radius={rad}: {f!r} < exact {exact!r}"
            assert math.isfinite(f) or not math.isfinite(got), f"FastDTW radius={rad} is not finite: {f!r}"
            if min(n, m) < rad + 2:
                assert same(f, exact, tol), f"FastDTW radius={rad} covers the shorter path but {f!r} != {exact!r}"

    pref = navdtw.dtw_prefix(r, q, **kw)
    want_pref = naive.dtw_prefix(cost)
    assert pref.shape == (m,) and pref.dtype == np.float64, f"prefix shape/dtype {pref.shape} {pref.dtype}"
    for j in range(m):
        assert same(pref[j], want_pref[j], tol), f"prefix[{j}]: {pref[j]!r} != {want_pref[j]!r}"

    value, path = navdtw.warping_path(r, q, **kw)
    assert same(value, got), f"warping_path value {value!r} != {exact!r}"
    assert naive.is_valid_warping_path(path, n, m), f"invalid warping path {path.tolist()}"
    if math.isfinite(exact):
        assert same(naive.path_cost(cost, path), exact, tol), "warping path cost != DTW"

    # batches: the pair twice plus the swapped pair, element-wise, with pairs=, env= and all-pairs
    if M is None:
        refs, qrys = [r, q, r], [q, r, q]
        for workers in (1, 2):
            got_b = navdtw.dtw_batch(refs, qrys, workers=workers)
            assert all(same(v, got) for v in got_b), f"dtw_batch workers={workers}: {got_b} != {exact}"
            gb = navdtw.dtw_batch(refs, qrys, window=0, workers=workers)
            assert all(same(v, bands[0]) for v in gb), f"band dtw_batch workers={workers}: {gb}"
            for rad in range(4):
                f1 = navdtw.dtw_batch([r], [q], radius=rad, workers=workers)[0]
                assert same(f1, navdtw.dtw(r, q, radius=rad)), f"FastDTW batch radius={rad}"
        mat = navdtw.dtw_matrix([r, q], [q, r], workers=2)
        assert same(mat[0, 0], got) and same(mat[1, 1], got), f"dtw_matrix {mat}"
    else:
        MT = np.ascontiguousarray(M.T)
        for workers in (1, 2):
            got_b = navdtw.dtw_batch([r, q], [q, r], distances=[M, MT], env=[0, 1], workers=workers)
            assert same(got_b[0], got) and same(got_b[1], got), f"env batch {got_b} != {exact}"
            got_p = navdtw.dtw_batch([r], [q], distances=M, pairs=[[0, 0], [0, 0]], workers=workers)
            assert all(same(v, got) for v in got_p), f"pairs batch {got_p} != {exact}"
            for w in (0, 1):
                gb = navdtw.dtw_batch([r], [q], distances=M, window=w, workers=workers)[0]
                assert same(gb, bands[w]), f"band batch w={w}: {gb} != {bands[w]}"
        mat = navdtw.dtw_matrix([r], [q], distances=M)
        assert mat.shape == (1, 1) and same(mat[0, 0], got), f"dtw_matrix {mat}"


def describe(data: bytes) -> str:
    mode, r, q, M = decode(data)
    lines = [f"mode={mode} r={r.tolist()} (dtype {r.dtype}) q={q.tolist()}"]
    if M is not None:
        lines.append(f"M={M.tolist()}")
    return "\n".join(lines)


_SEEN: dict = {}


def one_input(data: bytes) -> None:
    try:
        check(*decode(data))
    except AssertionError:
        keep = os.environ.get("NAVDTW_FUZZ_KEEP_GOING")
        if not keep:
            sys.stderr.write(describe(data) + "\n")
            raise
        # one kind of mismatch (message with the numbers stripped) is saved at most 3 times
        kind = re.sub(r"[-+0-9.e]+|inf|nan", "#", str(sys.exc_info()[1]).splitlines()[0])
        _SEEN[kind] = _SEEN.get(kind, 0) + 1
        if _SEEN[kind] > 3:
            return
        os.makedirs(keep, exist_ok=True)
        name = os.path.join(keep, "mismatch-" + hashlib.sha1(data).hexdigest()[:16])
        with open(name, "wb") as f:
            f.write(data)
        sys.stderr.write(f"MISMATCH saved to {name}\n{describe(data)}\n{traceback.format_exc()}\n")


def replay(paths) -> int:
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += [os.path.join(p, f) for f in sorted(os.listdir(p))]
        else:
            files.append(p)
    for f in files:
        with open(f, "rb") as fh:
            one_input(fh.read())
    print(f"replayed {len(files)} inputs: ok")
    return 0


def random_inputs(count: int, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        one_input(rng.integers(0, 256, size=int(rng.integers(1, 200)), dtype=np.uint8).tobytes())
    print(f"{count} random inputs: ok")
    return 0


def main(argv) -> int:
    if len(argv) > 1 and argv[1] == "--replay":
        return replay(argv[2:])
    if len(argv) > 1 and argv[1] == "--random":
        return random_inputs(int(argv[2]) if len(argv) > 2 else 1000, int(argv[3]) if len(argv) > 3 else 0)
    if atheris is None:
        sys.exit("atheris is not installed: pip install atheris (or use --replay / --random)")
    atheris.Setup(argv, one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
