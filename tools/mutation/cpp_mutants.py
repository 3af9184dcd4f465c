"""The C++ mutation pass: hand-made mutants of the DTW recurrence and its kernels, each applied, built and
judged by the engine tests (docs/development.md, "Mutation testing").

Each mutant is an exact (file, old text, new text) replacement: the script applies one, rebuilds the
extension incrementally in build/mutation-cpp (tools/mutation/CMakeLists.txt: the project's sources
and options, the bindings as one translation unit, -O1), runs the judging tests with `pytest -x`
against a copy of the Python package beside that build (build/mutation/pkg-cpp), restores the file
and prints a table. A mutant the tests reject is killed; one they pass survived; one marked
`equivalent` states why no result can change (it is run all the same, and reported as wrongly
marked if the tests kill it). The source tree is restored after every mutant, also on Ctrl-C. The
judges run derandomized, without Hypothesis' example database (HYPOTHESIS_PROFILE=ci), and the
script works from a clean tree (it builds its own extension first). Needs pybind11, cmake, ninja
and the test dependencies (pip install ".[test]").

    python tools/mutation/cpp_mutants.py                  # all mutants
    python tools/mutation/cpp_mutants.py --sample 10      # a seeded random 10 (CI)
    python tools/mutation/cpp_mutants.py --only band-lo-plus1 lanes-strip-diag-zero
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build" / "mutation-cpp"
PKG = REPO / "build" / "mutation" / "pkg-cpp"
JUDGES = ["tests/test_engine.py", "tests/test_engine_errors.py", "tests/test_fastdtw_compat.py"]


def m(ident: str, file: str, old: str, new: str, what: str, equivalent: str | None = None) -> dict:
    return {"id": ident, "file": file, "old": old, "new": new, "what": what, "equivalent": equivalent}


DTW = "cpp/navdtw/dtw.hpp"
LANES = "cpp/navdtw/lanes_kernel.hpp"
LANESH = "cpp/navdtw/lanes.hpp"
BATCH = "cpp/navdtw/batch.hpp"
AVX2 = "cpp/kernels_avx2.cpp"
AVX512 = "cpp/kernels_avx512.cpp"

MUTANTS = [
    # --- costs
    m(
        "cost-no-sqrt",
        DTW,
        "return static_cast<double>(std::sqrt(s));",
        "return static_cast<double>(s);",
        "Euclidean cost: squared distance",
    ),
    m(
        "cost-drop-last-coord",
        DTW,
        "for (int k = 1; k < n; ++k) {",
        "for (int k = 1; k < n - 1; ++k) {",
        "Euclidean cost: last coordinate left out",
    ),
    m(
        "matrix-cost-transposed",
        DTW,
        "m[static_cast<index_t>(a[i]) * stride + static_cast<index_t>(b[j])]",
        "m[static_cast<index_t>(b[j]) * stride + static_cast<index_t>(a[i])]",
        "distance matrix read as its transpose",
    ),
    # --- Sakoe-Chiba band
    m(
        "band-lo-plus1",
        DTW,
        "return std::max<index_t>(0, f - w);",
        "return std::max<index_t>(0, f - w + 1);",
        "band: lower edge one column too far right",
    ),
    m(
        "band-hi-minus1",
        DTW,
        "return std::min<index_t>(cols - 1, c + w);",
        "return std::min<index_t>(cols - 1, c + w - 1);",
        "band: upper edge one column too far left",
    ),
    m(
        "band-hi-floor",
        DTW,
        "const index_t c = (t * (cols - 1) + rows - 2) / (rows - 1);",
        "const index_t c = (t * (cols - 1)) / (rows - 1);",
        "band: diagonal rounded down, not up, at the upper edge",
    ),
    m(
        "band-one-row",
        DTW,
        "if (rows <= 1) return cols - 1;",
        "if (rows <= 1) return 0;",
        "band: upper edge of a one-row table",
        equivalent="rows >= cols is required (the longer sequence is on the rows), so rows <= 1 means cols == 1 "
        "and cols - 1 == 0",
    ),
    m(
        "band-clamp-min",
        DTW,
        "window = std::min(window, std::max(n, m));",
        "window = std::min(window, std::min(n, m));",
        "dtw_pair: band width clamped to the shorter length",
        equivalent="the band's columns are the shorter sequence, so a half-width >= min(n, m) keeps every column "
        "either way",
    ),
    # --- the rolling-row recurrence
    m(
        "rolling-lost-left",
        DTW,
        "const T best = std::min(std::min(diag, up), left);",
        "const T best = std::min(diag, up);",
        "recurrence: the (t, s-1) term lost from the min",
    ),
    m(
        "rolling-lost-diag",
        DTW,
        "const T best = std::min(std::min(diag, up), left);",
        "const T best = std::min(up, left);",
        "recurrence: the diagonal term lost from the min",
    ),
    m(
        "rolling-diag-edge",
        DTW,
        "(lo - 1 >= prev_lo ? buf[lo - 1] : inf)",
        "(lo - 1 > prev_lo ? buf[lo - 1] : inf)",
        "windowed recurrence: `>` for `>=`, the diagonal at the window's left edge dropped",
    ),
    m(
        "rolling-diag-stale",
        DTW,
        "            diag = up;\n            left = v;\n        }\n        // Once",
        "            diag = v;\n            left = v;\n        }\n        // Once",
        "recurrence: the next diagonal taken from this row, not the row above",
    ),
    m(
        "prefix-wrong-column",
        DTW,
        "last_col(t, buf[cols - 1]);",
        "last_col(t, buf[cols > 1 ? cols - 2 : 0]);",
        "prefix scores read from the next-to-last column",
    ),
    m(
        "short-row-diag-zero",
        DTW,
        "T diag = t == 0 ? T(0) : inf, left = inf;",
        "T diag = T(0), left = inf;",
        "short-row kernel: D(t-1, -1) = 0 on every row",
    ),
    m(
        "short-matrix-col0",
        DTW,
        "T diag = buf[0];\n",
        "T diag = std::numeric_limits<T>::infinity();\n",
        "short node kernel: diagonal from column 0 lost",
    ),
    m(
        "short-matrix-row0",
        DTW,
        "left = static_cast<T>(row[col_at[s]]) + left;",
        "left = static_cast<T>(row[col_at[s]]);",
        "short node kernel: row 0 not accumulated",
    ),
    m(
        "short-matrix-transposed-stride",
        DTW,
        "col_at[s] = kTransposed ? static_cast<index_t>(cost.a[s]) * stride : static_cast<index_t>(cost.b[s]);",
        "col_at[s] = kTransposed ? static_cast<index_t>(cost.a[s]) : static_cast<index_t>(cost.b[s]);",
        "short node kernel, transposed: the column offset misses the stride",
    ),
    m(
        "short-threshold",
        DTW,
        "if (window < 0 && std::min(n, m) <= kShortRow)",
        "if (window < 0 && std::min(n, m) < kShortRow)",
        "short kernels: `<` for `<=` (8 columns to the general one)",
        equivalent="the short-row kernels run the same operations in the same order as dtw_rolling, so either "
        "kernel returns the same bits; only speed changes",
    ),
    # --- the path kernel and the warping path
    m(
        "path-ties-diag-first",
        DTW,
        "                if (up < best) {\n                    best = up;\n                    d = 0;",
        "                if (up <= best) {\n                    best = up;\n                    d = 0;",
        "warping path: a tie prefers (t-1, s) over the diagonal",
    ),
    m(
        "path-fastdtw-ties",
        DTW,
        "                if (diag < best) {\n                    best = diag;\n                    d = 2;",
        "                if (diag <= best) {\n                    best = diag;\n                    d = 2;",
        "FastDTW's path: a tie prefers the diagonal (not the fastdtw package's order)",
    ),
    m(
        "path-up-window",
        DTW,
        "(t > 0 && s >= plo && s <= phi) ? prev[s] : kInf",
        "(t > 0 && s >= plo && s < phi) ? prev[s] : kInf",
        "path kernel: `<` for `<=`, the last cell above lost",
    ),
    # --- FastDTW
    m(
        "fastdtw-no-average",
        DTW,
        "(x[(2 * i) * dim + k] + x[(2 * i + 1) * dim + k]) / 2.0",
        "x[(2 * i) * dim + k]",
        "FastDTW coarsening keeps the first point of each pair, no average",
    ),
    m(
        "fastdtw-window-lo",
        DTW,
        "const index_t clo = pmin[static_cast<std::size_t>(a)] - radius;",
        "const index_t clo = pmin[static_cast<std::size_t>(a)];",
        "FastDTW window not expanded to the left",
    ),
    m(
        "fastdtw-window-hi",
        DTW,
        "hi[static_cast<std::size_t>(i)] = std::min<index_t>(ny - 1, 2 * chi + 1);",
        "hi[static_cast<std::size_t>(i)] = std::min<index_t>(ny - 1, 2 * chi);",
        "FastDTW projection drops the right column of each 2x2 block",
    ),
    m(
        "fastdtw-base-case",
        DTW,
        "if (nx < radius + 2 || ny < radius + 2) {",
        "if (nx < radius + 1 || ny < radius + 1) {",
        "FastDTW recursion: exact solve below radius + 1 points, not radius + 2",
    ),
    m(
        "fastdtw-top-exact",
        DTW,
        "if (m < radius + 2 || n < radius + 2) return dtw_rolling",
        "if (m < radius + 3 || n < radius + 3) return dtw_rolling",
        "FastDTW top level: exact below radius + 3 points",
        equivalent="at radius + 2 points the projected window is the whole table for radius >= 1; for radius 0 "
        "(2 rows) it lacks only the cell (0, n-1), which no optimal path needs: the diagonal step from (0, n-2) "
        "costs no more (costs are >= 0)",
    ),
    # --- SIMD lanes (lanes_kernel.hpp: AVX2, AVX-512 and NEON share it)
    m(
        "lanes-strip-diag-zero",
        LANES,
        "Lanes::fill(st.s0 == 0 ? T(0) : inf_value)",
        "Lanes::fill(T(0))",
        "lanes: D(-1, s0-1) = 0 at every column strip, not only the first",
    ),
    m(
        "lanes-strip-edge",
        LANES,
        "    left.store(e);\n    diag = next_diag;\n}",
        "    left.store(e);\n    diag = left;\n}",
        "lanes: one-row sweep carries the strip's right edge as the next diagonal",
    ),
    m(
        "lanes-two-rows-diag",
        LANES,
        "Lanes::next(c2, left, v, left2)",
        "Lanes::next(c2, diag, v, left2)",
        "lanes: second row of a two-row sweep takes D(t-1, s-1) as its diagonal",
    ),
    m(
        "lanes-two-rows-up",
        LANES,
        "Lanes::next(c2, left, v, left2)",
        "Lanes::next(c2, left, up, left2)",
        "lanes: second row of a two-row sweep takes D(t-1, s) as its up",
    ),
    m(
        "lanes-ends-on",
        LANES,
        "if (p[l].n - 1 == t) return true;",
        "if (p[l].n == t) return true;",
        "lanes: a lane ending on row t swept with row t + 1 (its row overwritten before it is read)",
    ),
    m(
        "lanes-read-first-col",
        LANES,
        "p[l].m - 1 >= st.s0 && p[l].m - 1 < st.s1",
        "p[l].m - 1 > st.s0 && p[l].m - 1 < st.s1",
        "lanes: a result in a strip's first column never read",
    ),
    m(
        "lanes-read-row",
        LANES,
        "if (p[l].n == t && p[l].m",
        "if (p[l].n == t + 1 && p[l].m",
        "lanes: results read one row late",
    ),
    m(
        "lanes-two-rows-last",
        LANES,
        "V::template kRows<T> == 2 && t + 1 < N && !ends_on(t)",
        "V::template kRows<T> == 2 && t + 1 <= N && !ends_on(t)",
        "lanes: `<=` for `<` at the last row",
        equivalent="the longest lane has n == N, so ends_on(N - 1) already forces a one-row sweep of the last row",
    ),
    m(
        "lanes-strip-width",
        LANES,
        "std::max<lane_index_t>(16, kStripBytes / column_bytes)",
        "std::max<lane_index_t>(17, kStripBytes / column_bytes)",
        "lanes: minimum strip width 17, not 16",
        equivalent="the strip width only decides how the same cells are visited (every strip is exact); no "
        "dimension here makes kStripBytes / column_bytes < 17",
    ),
    m(
        "lanes-interleave-past-end",
        LANES,
        "at[l] = paths[l] + std::min(i, lengths[l] - 1) * dim;",
        "at[l] = paths[l] + std::min(i, lengths[l] - 2 < 0 ? 0 : lengths[l] - 2) * dim;",
        "lanes: interleave repeats the next-to-last point instead of the last",
    ),
    m(
        "lanes-cost-dim",
        LANES,
        "        for (int d = 1; d < dim; ++d) {\n            diff = V::sub(V::load(rrow + d * L)",
        "        for (int d = 1; d < dim - 1; ++d) {\n            diff = V::sub(V::load(rrow + d * L)",
        "lanes, run-time dimension: the last coordinate left out",
    ),
    # --- the AVX2 and AVX-512 vector types
    m(
        "avx2-double-hi-lost-left",
        AVX2,
        "_mm256_min_pd(_mm256_min_pd(diag.hi, up.hi), left.hi)",
        "_mm256_min_pd(diag.hi, up.hi)",
        "AVX2 double sums: lanes 4-7 lose the (t, s-1) term",
    ),
    m(
        "avx2-float-lost-up",
        AVX2,
        "_mm256_min_ps(_mm256_min_ps(diag.v, up.v), left.v)",
        "_mm256_min_ps(diag.v, left.v)",
        "AVX2 single sums: the up term lost",
    ),
    m("avx2-gather-lane", AVX2, "at[6][d], at[7][d]);", "at[6][d], at[6][d]);", "AVX2 gather: lane 7 reads lane 6"),
    m(
        "avx2-id-mask",
        AVX2,
        "_mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane)",
        "_mm256_cmpgt_epi32(_mm256_set1_epi32(left - 1), lane)",
        "AVX2 id copy: the mask drops the last id of a block",
    ),
    m(
        "avx2-id-limit",
        AVX2,
        "_mm256_set1_epi32(static_cast<int>(n_nodes));",
        "_mm256_set1_epi32(static_cast<int>(n_nodes) + 1);",
        "AVX2 id check: id == n_nodes passes",
    ),
    m(
        "avx512-hi-half",
        AVX512,
        "_mm512_extractf64x4_pd(_mm512_castps_pd(cost), 1)",
        "_mm512_extractf64x4_pd(_mm512_castps_pd(cost), 0)",
        "AVX-512 double sums: lanes 8-15 get lanes 0-7's costs",
    ),
    m(
        "avx512-lost-diag",
        AVX512,
        "_mm512_min_pd(_mm512_min_pd(diag.lo, up.lo), left.lo)",
        "_mm512_min_pd(up.lo, left.lo)",
        "AVX-512 double sums: lanes 0-7 lose the diagonal",
    ),
    m(
        "avx512-gather-lane",
        AVX512,
        "at[14][d], at[15][d]);",
        "at[14][d], at[14][d]);",
        "AVX-512 gather: lane 15 reads lane 14",
    ),
    # --- lane counts, batches, checks
    m(
        "lanes-count-avx2",
        LANESH,
        "        case Simd::kNeon:\n            return 8;",
        "        case Simd::kNeon:\n            return 16;",
        "AVX2 groups of 16 pairs for an 8-lane kernel",
    ),
    m(
        "lanes-count-avx512",
        LANESH,
        "        case Simd::kAvx512:\n            return 16;",
        "        case Simd::kAvx512:\n            return 8;",
        "AVX-512 groups of 8 pairs",
        equivalent="the kernel fills unused lanes with lane 0's pair and returns the first `count`: groups of 8 "
        "give the same values, only slower",
    ),
    m(
        "batch-lanes-order",
        BATCH,
        "for (int l = 0; l < count; ++l) out[ids[l]] = res[l];",
        "for (int l = 0; l < count; ++l) out[ids[l]] = res[count - 1 - l];",
        "lanes: a group's results stored in reverse",
    ),
    m(
        "batch-lanes-threshold",
        BATCH,
        "if (cells_per_pair >= 64.0) {",
        "if (cells_per_pair > 64.0) {",
        "batch: `>` for `>=` at the SIMD threshold",
        equivalent="the SIMD lanes and the scalar kernel return the same bits (tests pin this); only speed changes",
    ),
    m(
        "check-empty-path",
        BATCH,
        "if (set.length(i) <= 0) fail_empty_path(b, name, i);",
        "if (set.length(i) < 0) fail_empty_path(b, name, i);",
        "an empty path is not refused",
    ),
    m(
        "check-node-range",
        BATCH,
        "return static_cast<std::uint64_t>(static_cast<index_t>(id)) < static_cast<std::uint64_t>(n_nodes);",
        "return static_cast<std::uint64_t>(static_cast<index_t>(id)) <= static_cast<std::uint64_t>(n_nodes);",
        "node id == n_nodes accepted",
    ),
]


def run(cmd, timeout, **kw) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return -1, "timeout"


def configure() -> None:
    if not (BUILD / "build.ninja").exists():
        import pybind11

        subprocess.run(
            [
                "cmake",
                "-S",
                str(REPO / "tools" / "mutation"),
                "-B",
                str(BUILD),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG",
                f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
                f"-DPython_EXECUTABLE={sys.executable}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    shutil.rmtree(PKG, ignore_errors=True)
    shutil.copytree(REPO / "python" / "navdtw", PKG / "navdtw", ignore=shutil.ignore_patterns("__pycache__", "*.so"))


def link_core() -> None:
    """Puts the built extension beside the copy of the package. Only once it is built: on a clean
    tree there is nothing to link before the first build (a link made then pointed at nothing, and
    every judge failed on "module 'navdtw' has no attribute '_core'")."""
    so = BUILD / ("_core" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not so.is_file():
        sys.exit(f"the extension was not built: {so} is missing")
    link = PKG / "navdtw" / so.name
    link.unlink(missing_ok=True)
    link.symlink_to(so)


def build() -> tuple[int, str]:
    return run(["nice", "-n", "10", "ninja", "-C", str(BUILD), "-j1"], timeout=1200)


def judge(timeout: float) -> tuple[int, str]:
    # HYPOTHESIS_PROFILE=ci (tests/conftest.py): the same examples for every mutant and no example
    # database: a failing example saved under one mutant is not replayed against the next
    env = dict(os.environ, PYTHONPATH=str(PKG), PYTHONDONTWRITEBYTECODE="1", HYPOTHESIS_PROFILE="ci")
    env.pop("NAVDTW_SIMD", None)
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *JUDGES]
    return run(cmd, timeout=timeout, cwd=REPO, env=env)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="mutant ids")
    parser.add_argument("--sample", type=int, default=0, help="a seeded random sample of this many (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds of tests per mutant (then killed)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run of the unmutated build")
    parser.add_argument("--check", action="store_true", help="only check that every mutant applies (no build)")
    parser.add_argument(
        "--skip-equivalent", action="store_true", help="do not run the mutants marked equivalent (to check the claim)"
    )
    args = parser.parse_args(argv)
    chosen = MUTANTS
    if args.only:
        unknown = set(args.only) - {x["id"] for x in MUTANTS}
        if unknown:
            parser.error(f"unknown mutant ids: {sorted(unknown)}")
        chosen = [x for x in MUTANTS if x["id"] in args.only]
    elif args.sample:
        chosen = random.Random(args.seed).sample(MUTANTS, min(args.sample, len(MUTANTS)))
    for x in chosen:  # every mutant must still apply to the source as it is
        count = (REPO / x["file"]).read_text().count(x["old"])
        if count != 1:
            sys.exit(f"mutant {x['id']}: its old text occurs {count} times in {x['file']} (must be once)")
    if args.check:
        ids = [x["id"] for x in MUTANTS]
        if len(set(ids)) != len(ids):
            sys.exit("mutant ids must be unique")
        print(f"{len(chosen)} C++ mutants apply ({sum(bool(x['equivalent']) for x in chosen)} marked equivalent)")
        return 0
    configure()
    code, out = build()
    if code:
        sys.exit("the unmutated build fails:\n" + out[-3000:])
    link_core()
    if not args.no_baseline:
        code, out = judge(args.timeout)
        if code:
            sys.exit("the judging tests fail on the unmutated build:\n" + out[-3000:])

    original: dict[Path, str] = {}

    def restore(*_):
        for path, text in original.items():
            path.write_text(text)
        original.clear()

    signal.signal(signal.SIGTERM, lambda *a: (restore(), sys.exit(1)))
    results = []
    try:
        for x in chosen:
            if x["equivalent"] and args.skip_equivalent:
                results.append((x, "equivalent", 0.0))
                print(f"{x['id']:32s} {'equivalent (not run)':22s} {0:6.0f} s  {x['what']}", flush=True)
                continue
            path = REPO / x["file"]
            text = path.read_text()
            original[path] = text
            path.write_text(text.replace(x["old"], x["new"]))
            t0 = time.time()
            code, out = build()
            if code:
                outcome = "build error"
            else:
                code, out = judge(args.timeout)
                outcome = "killed" if code else "survived"
            restore()
            if x["equivalent"]:
                outcome = "equivalent" if outcome == "survived" else f"equivalent? ({outcome})"
            seconds = time.time() - t0
            results.append((x, outcome, seconds))
            print(f"{x['id']:32s} {outcome:22s} {seconds:6.0f} s  {x['what']}", flush=True)
    finally:
        restore()
        build()  # leave the build as the source is

    print()
    print("| file | mutants | killed | equivalent | survived | score |")
    print("| --- | --- | --- | --- | --- | --- |")
    worst = 100.0
    for file in [*sorted({x["file"] for x, _, _ in results}), "all"]:
        rows = [(x, o) for x, o, _ in results if file in ("all", x["file"])]
        killed = sum(o == "killed" or o.startswith("equivalent? (killed") for _, o in rows)
        equivalent = sum(o == "equivalent" for _, o in rows)
        survived = sum(o == "survived" for _, o in rows)
        score = 100.0 * killed / (killed + survived) if killed + survived else 100.0
        worst = min(worst, score)
        print(f"| {file} | {len(rows)} | {killed} | {equivalent} | {survived} | {score:.0f}% |")
    for x, o, _ in results:
        if o == "survived" or o.startswith("equivalent?") or o == "build error":
            print(f"{o}: {x['id']} ({x['file']}): {x['what']}")
    return 0 if worst >= 90.0 and not any(o == "build error" for _, o, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
