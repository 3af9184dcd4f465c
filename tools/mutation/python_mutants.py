"""Mutation testing of navdtw's Python numbers with cosmic-ray (docs/development.md, "Mutation testing").

Each row of TARGETS is a module (or the functions of one) and the test files that judge it. The
mutants are made by cosmic-ray (every operator it has) in a copy of the package under
build/mutation/pkg-py/navdtw, beside a copy of the installed extension (the package is installed
non-editable from python/navdtw, so the tests import that copy through PYTHONPATH); the source tree
is never touched. Each mutant is judged by `pytest -x` over the row's test files only, so it costs
seconds, not the whole suite. Mutants known to be equivalent are listed in EQUIVALENT with the reason
and counted apart, as are the incompetent ones: mutants that do not compile (cosmic-ray turns the
keyword-only `*` of a signature into `//`, or `==` into `is` before a literal, a SyntaxWarning that
the tests' warnings-as-errors make an error). They are found before the run and not run: a test
cannot notice them, so counting them killed would flatter the score.

    python tools/mutation/python_mutants.py                 # every row, the sample sizes below
    python tools/mutation/python_mutants.py --rows stats --sample 0   # all of stats/'s mutants

Needs `pip install cosmic-ray==8.7.0` and an installed navdtw (pip install .). Prints the table and
writes each row's survivors (with their diffs) to build/mutation/<row>-survivors.txt.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "mutation"
PKG = OUT / "pkg-py"

# row -> files (relative to python/navdtw) with the functions/classes mutated (None: the whole file
# less what other rows of the same file take), the judging test files, the default sample size
# (0: all).
TARGETS: dict[str, dict] = {
    "registry": {
        "files": {"registry.py": None},
        "tests": ["tests/test_registry.py", "tests/test_metrics.py"],
        "sample": 50,
    },
    "metrics": {
        "files": {"metrics.py": None},
        "tests": ["tests/test_metrics.py", "tests/test_evaluator_quirks.py"],
        "sample": 20,
    },
    "conventions": {
        "files": {"metrics.py": ["Convention", "CONVENTIONS", "as_convention", "_spl_length"]},
        "tests": ["tests/test_metrics.py", "tests/test_evaluator_quirks.py"],
        "sample": 0,
    },
    "stats": {
        "files": {
            f"stats/{name}.py": None for name in ("_types", "_resampling", "_paired", "_runs", "_best", "_analysis")
        },
        "tests": ["tests/test_stats.py"],
        "sample": 20,
    },
    "matchers": {
        "files": {
            "paths.py": ["start_mismatches", "first_start_mismatch", "collapse_repeats"],
            "datasets/r2r.py": ["match_predictions", "_instruction_index"],
            "datasets/vlnce.py": ["match_predictions"],
            "datasets/rxr.py": ["match_predictions"],
            "datasets/ndh.py": ["match_predictions", "_match"],
            "datasets/reverie.py": ["match_predictions"],
        },
        "tests": [
            "tests/test_datasets_r2r.py",
            "tests/test_datasets_vlnce.py",
            "tests/test_datasets_rxr.py",
            "tests/test_datasets_ndh.py",
            "tests/test_datasets_reverie.py",
            "tests/test_evaluator_quirks.py",
        ],
        "sample": 25,
    },
}

# (file, original line, mutated line) -> why the mutant cannot change any result. The lines are
# compared stripped, as cosmic-ray's diff shows them.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("registry.py", "both = np.isinf(start) & np.isinf(final)", "both = np.isinf(start) * np.isinf(final)"): (
        "the product of two numpy bool arrays is their logical and"
    ),
    (
        "stats/_analysis.py",
        'xj = jackknife(xs) if method == "bca" else None',
        'xj = jackknife(xs) if method <= "bca" else None',
    ): "method is checked to be 'percentile' or 'bca' before; 'percentile' <= 'bca' is False, so <= and == agree",
    (
        "stats/_resampling.py",
        "bits = np.unpackbits(np.frombuffer(rng.bytes((rows * g + 7) // 8), dtype=np.uint8), count=rows * g)",
        "bits = np.unpackbits(np.frombuffer(rng.bytes((rows * g + 7) // 7), dtype=np.uint8), count=rows * g)",
    ): (
        "more random bytes than needed: the first ones are the same (Generator.bytes draws in order) and only "
        "count=rows * g bits are read; each block's generator draws once and is dropped (draws)"
    ),
    (
        "metrics.py",
        'raise ValueError(f"shortest_distance[{int(np.argmax(np.isnan(sd) | (sd < 0)))}] is negative or NaN")',
        'raise ValueError(f"shortest_distance[{int(np.argmax(np.isnan(sd) + (sd < 0)))}] is negative or NaN")',
    ): "the sum of two numpy bool arrays is their logical or",
    ("metrics.py", 'if conv.spl_length == "reference_length":', 'if conv.spl_length <= "reference_length":'): (
        "spl_length is start_goal (returned before), shortest or reference_length (Convention checks it since "
        "this pass found it unchecked), and 'shortest' <= 'reference_length' is False"
    ),
    ("metrics.py", 'if conv.spl_length == "start_goal":', 'if conv.spl_length >= "start_goal":'): (
        "spl_length is start_goal, shortest or reference_length (checked by Convention), and only start_goal is "
        ">= 'start_goal'"
    ),
    (
        "metrics.py",
        'raise ValueError(f"shortest_distance[{int(np.argmax(np.isnan(sd) | (sd < 0)))}] is negative or NaN")',
        'raise ValueError(f"shortest_distance[{int(np.argmax(np.isnan(sd) ^ (sd < 0)))}] is negative or NaN")',
    ): "a NaN is never < 0, so the two masks never hold together and xor is or",
    ("metrics.py", "spl_floor: float = 0.0", "spl_floor: float = -1.0"): (
        "SPL divides by max(pl, l, spl_floor) with pl, l >= 0: a floor of -1 or of 0 gives the same maximum"
    ),
    (
        "datasets/r2r.py",
        'predictions, entry, dropped = _read_predictions(data, file_name, "first" if id_set == "r2r" else "error")',
        'predictions, entry, dropped = _read_predictions(data, file_name, "first" if id_set >= "r2r" else "error")',
    ): "id_set is checked to be 'all' or 'r2r' first; 'all' >= 'r2r' is False, so >= and == agree",
    (
        "datasets/vlnce.py",
        'more = f" ({extra} such entries)" if extra > 1 else ""',
        'more = f" ({extra} such entries)" if extra != 1 else ""',
    ): "extra counts the entry being reported, so it is at least 1, where != 1 and > 1 agree",
}


def functions(path: Path, names) -> list[tuple[int, int]]:
    """Line ranges of the functions, classes and module-level assignments called one of `names`."""
    tree = ast.parse(path.read_text())
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            spans.append((node.lineno, node.end_lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                spans.append((node.lineno, node.end_lineno))
    return spans


def annotations(path: Path) -> list[tuple[int, int, int, int]]:
    """(start row, start col, end row, end col) of every annotation: the package is written with
    ``from __future__ import annotations``, so they are never evaluated and a mutant inside one
    (``X | None`` to ``X ^ None``) is equivalent by construction."""
    tree = ast.parse(path.read_text())
    spans = []
    for node in ast.walk(tree):
        found = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
            found = [a.annotation for a in every if a is not None and a.annotation is not None]
            found += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        spans += [(a.lineno, a.col_offset, a.end_lineno, a.end_col_offset) for a in found]
    return spans


def inside(spans, row: int, col: int) -> bool:
    return any((a, b) <= (row, col) < (c, d) for a, b, c, d in spans)


def taken_elsewhere(rel: str, row: str) -> list[tuple[int, int]]:
    """Ranges of `rel` that other rows name explicitly (a whole-file row leaves them out)."""
    ranges = []
    for other, spec in TARGETS.items():
        names = spec["files"].get(rel)
        if other != row and names:
            ranges += functions(PKG / "navdtw" / rel, names)
    return ranges


def make_package() -> None:
    """A fresh copy of python/navdtw with the installed extension beside it."""
    so = subprocess.run(
        [sys.executable, "-c", "import navdtw._core as c; print(c.__file__)"],
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shutil.rmtree(PKG, ignore_errors=True)
    shutil.copytree(REPO / "python" / "navdtw", PKG / "navdtw", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy2(so, PKG / "navdtw")


def mutated_source(module: Path, operator: str, occurrence: int) -> str:
    """The source of `module` with one mutation applied (by cosmic-ray itself, to a copy: cosmic-ray
    may live in another virtualenv than this script, as in CI)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / module.name
        shutil.copy2(module, copy)
        subprocess.run(["cosmic-ray", "apply", str(copy), operator, str(occurrence)], check=True, capture_output=True)
        return copy.read_text()


def compile_error(source: str, name: str) -> str | None:
    """Why `source` does not compile under the tests' warnings-as-errors (pyproject's
    filterwarnings = ["error"]), or None when it does."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            compile(source, name, "exec", dont_inherit=True)
        except (SyntaxError, SyntaxWarning, ValueError) as error:
            return f"{type(error).__name__}: {error}"
    return None


def diff_lines(diff: str) -> tuple[str, str]:
    old = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    new = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return " / ".join(old), " / ".join(new)


def sessions_of(row: str) -> list[tuple[str, Path, Path]]:
    """(file, config, session database) of each file of a row."""
    out = []
    for rel in TARGETS[row]["files"]:
        stem = rel.replace("/", "_").removesuffix(".py")
        out.append((rel, OUT / f"{row}-{stem}.toml", OUT / f"{row}-{stem}.sqlite"))
    return out


def init_row(row: str, sample: int, seed: int, timeout: float) -> None:
    """cosmic-ray's sessions of a row, cut down to the mutants of its functions and to the sample."""
    spec = TARGETS[row]
    tests = " ".join(spec["tests"])
    command = (
        f"env PYTHONPATH={PKG} PYTHONDONTWRITEBYTECODE=1 {sys.executable} -m pytest -q -x -p no:cacheprovider {tests}"
    )
    candidates = []  # (session, job_id)
    in_annotations = 0
    for rel, cfg, db in sessions_of(row):
        names = spec["files"][rel]
        module = PKG / "navdtw" / rel
        cfg.write_text(
            "[cosmic-ray]\n"
            f'module-path = "{module}"\n'
            f"timeout = {timeout}\n"
            "excluded-modules = []\n"
            f'test-command = "{command}"\n\n'
            '[cosmic-ray.distributor]\nname = "local"\n'
        )
        db.unlink(missing_ok=True)
        subprocess.run(["cosmic-ray", "init", str(cfg), str(db)], check=True)
        keep = functions(module, names) if names else None
        skip = taken_elsewhere(rel, row) if not names else []
        notes = annotations(module)
        with sqlite3.connect(db) as con:
            query = "SELECT job_id, start_pos_row, start_pos_col, operator_name, occurrence FROM mutation_specs"
            for job_id, line, col, operator, occurrence in con.execute(query):
                wanted = keep is None or any(a <= line <= b for a, b in keep)
                if wanted and not any(a <= line <= b for a, b in skip):
                    if inside(notes, line, col):
                        in_annotations += 1
                    else:
                        # the job ids are random: the sample is drawn in an order of the source
                        candidates.append((rel, line, col, operator, occurrence, str(db), job_id))
    chosen = {c[-2:] for c in candidates}
    if sample and sample < len(candidates):
        chosen = {c[-2:] for c in random.Random(seed).sample(sorted(candidates), sample)}
    for _, _, db in sessions_of(row):
        with sqlite3.connect(db) as con:
            jobs = [j for (j,) in con.execute("SELECT job_id FROM work_items")]
            drop = [(j,) for j in jobs if (str(db), j) not in chosen]
            con.executemany("DELETE FROM mutation_specs WHERE job_id = ?", drop)
            con.executemany("DELETE FROM work_items WHERE job_id = ?", drop)
    mark_incompetent([c for c in candidates if c[-2:] in chosen])
    info = {"mutants": len(chosen), "of": len(candidates), "annotations": in_annotations, "seed": seed}
    (OUT / f"{row}.json").write_text(json.dumps(info))


def mark_incompetent(chosen: list[tuple]) -> None:
    """Records the chosen mutants that do not compile as judged incompetent, so `cosmic-ray exec`
    leaves them alone (it runs only the mutants without a result)."""
    for rel, _line, _col, operator, occurrence, db, job_id in chosen:
        module = PKG / "navdtw" / rel
        original = module.read_text()
        mutated = mutated_source(module, operator, occurrence)
        why = compile_error(mutated, str(module))
        if why is None:
            continue
        lines = difflib.unified_diff(original.split("\n"), mutated.split("\n"), "a/" + rel, "b/" + rel, lineterm="")
        diff = "\n".join(["--- mutation diff ---", *lines])
        with sqlite3.connect(db) as con:
            con.execute(
                "INSERT INTO work_results (worker_outcome, output, test_outcome, diff, job_id) VALUES (?, ?, ?, ?, ?)",
                ("NORMAL", why, "INCOMPETENT", diff, job_id),
            )


def results_of(rel: str, db: Path) -> list[tuple]:
    """(job id, outcome, reason, line, operator, old, new) of every judged mutant of a session."""
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT r.job_id, r.worker_outcome, r.test_outcome, r.diff, m.operator_name, m.start_pos_row "
            "FROM work_results r JOIN mutation_specs m ON r.job_id = m.job_id"
        ).fetchall()
    out = []
    for job, worker, test, diff, operator, line in rows:
        old, new = diff_lines(diff or "")
        reason = EQUIVALENT.get((rel, old, new))
        if test == "SURVIVED" or (worker == "NORMAL" and test is None):
            outcome = "equivalent" if reason else "survived"
        elif test == "INCOMPETENT":
            outcome = "incompetent"  # does not compile (found before the run), or cosmic-ray failed to apply it
        else:
            outcome = "killed"  # the tests failed, or timed out
        out.append((job, outcome, reason, line, operator, old, new))
    return out


def exec_row(row: str, rejudge: bool) -> None:
    """Runs the row's pending mutants; with `rejudge`, its survivors again first (after new tests)."""
    for rel, cfg, db in sessions_of(row):
        if rejudge:
            again = [(job,) for job, outcome, *_ in results_of(rel, db) if outcome == "survived"]
            with sqlite3.connect(db) as con:
                con.executemany("DELETE FROM work_results WHERE job_id = ?", again)
        subprocess.run(["nice", "-n", "10", "cosmic-ray", "exec", str(cfg), str(db)], check=True)


def tally_row(row: str) -> dict:
    counts = json.loads((OUT / f"{row}.json").read_text())
    counts.update(killed=0, incompetent=0, equivalent=0, survived=0, pending=0)
    survivors = []
    for rel, _, db in sessions_of(row):
        judged = results_of(rel, db)
        for _, outcome, _reason, line, operator, old, new in judged:
            counts[outcome] += 1
            if outcome == "survived":
                survivors.append(f"{rel}:{line} {operator}\n  - {old}\n  + {new}\n")
        with sqlite3.connect(db) as con:
            counts["pending"] += con.execute("SELECT COUNT(*) FROM mutation_specs").fetchone()[0] - len(judged)
    (OUT / f"{row}-survivors.txt").write_text("".join(survivors))
    return counts


def main(argv=None) -> int:
    global OUT, PKG
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="*", default=list(TARGETS), choices=list(TARGETS))
    parser.add_argument("--sample", type=int, default=None, help="mutants per row (0: all; default: the row's own)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant before it counts as killed")
    parser.add_argument(
        "--resume", action="store_true", help="judge the rows' pending mutants and their survivors again (new tests)"
    )
    parser.add_argument("--report", action="store_true", help="only print the table of the rows' sessions")
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the sessions (default build/mutation)")
    args = parser.parse_args(argv)
    OUT, PKG = args.out.resolve(), args.out.resolve() / "pkg-py"
    OUT.mkdir(parents=True, exist_ok=True)
    os.chdir(REPO)
    if not (args.resume or args.report):
        make_package()
    table = []
    for row in args.rows:
        if not (args.resume or args.report):
            sample = TARGETS[row]["sample"] if args.sample is None else args.sample
            init_row(row, sample, args.seed, args.timeout)
        if not args.report:
            t0 = time.time()
            exec_row(row, rejudge=args.resume)
            print(f"{row}: {time.time() - t0:.0f} s", flush=True)
        c = tally_row(row)
        judged = c["killed"] + c["survived"]
        score = 100.0 * c["killed"] / judged if judged else 100.0
        table.append((row, c, score))
        print(f"{row}: {c} score {score:.1f}%", flush=True)
    # "of": every mutant of the row less those inside annotations (equivalent by construction, not run);
    # the score is killed / (killed + survived): the incompetent and the equivalent are left out
    print(
        "| module | mutants drawn (of) | in annotations | incompetent | killed | equivalent | survived | pending "
        "| score |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row, c, score in table:
        print(
            f"| {row} | {c['mutants']} (of {c['of']}) | {c['annotations']} | {c['incompetent']} | {c['killed']} "
            f"| {c['equivalent']} | {c['survived']} | {c['pending']} | {score:.1f}% |"
        )
    return 0 if all(score >= 90.0 for _, _, score in table) else 1


if __name__ == "__main__":
    sys.exit(main())
