"""Mutation testing of navdtw's Python numbers with cosmic-ray (docs/development.md, "Mutation testing").

Each row of TARGETS is a module (or the functions of one; a module that has become a package is all
its files). The mutants are made by cosmic-ray (every operator it has) in a copy of the package under
build/mutation/pkg-py/navdtw, beside a copy of the installed extension (the package is installed
non-editable from python/navdtw, so the tests import that copy through PYTHONPATH); the source tree
is never touched. Each mutant is judged by `pytest -x` over the test files that use the row's
modules: derived from the tests, not kept by hand (`judges`: a file that imports one of the modules,
names a function defined in one, through a helper module of tests/ or as a dotted string given to a
call such as monkeypatch.setattr), so a
test moved to another file keeps judging its module; the files named after the module run first.
The judges run derandomized and without Hypothesis' example database (HYPOTHESIS_PROFILE=ci), so
no mutant is judged by an example another mutant saved. Mutants known to be equivalent are listed
in EQUIVALENT with the reason and counted apart, as are the incompetent ones: mutants that do not
compile (cosmic-ray turns the keyword-only `*` of a signature into `//`, or `==` into `is` before
a literal, a SyntaxWarning that the tests' warnings-as-errors make an error). They are found
before the run and not run: a test cannot notice them, so counting them killed would flatter the
score.

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

# row -> the modules mutated (dotted, under navdtw: a module file or a whole package, so a module
# turned into a package stays one row) with the functions/classes mutated (None: all of it less what
# other rows of the same file take), and the default sample size (0: all). The test files that judge a
# row are not listed here: they are derived from the tests themselves (judges: every test file that
# imports the row's modules or names one of their functions), so a test moved to a new file keeps
# judging its module.
TARGETS: dict[str, dict] = {
    "registry": {"modules": {"registry": None}, "sample": 50},
    "metrics": {"modules": {"metrics": None}, "sample": 20},
    "conventions": {
        "modules": {"metrics": ["Convention", "CONVENTIONS", "as_convention", "_spl_length"]},
        "sample": 0,
    },
    "stats": {"modules": {"stats": None}, "sample": 20},
    "matchers": {
        "modules": {
            "paths": ["start_mismatches", "first_start_mismatch", "collapse_repeats"],
            "datasets.r2r": ["match_predictions", "_instruction_index"],
            "datasets.vlnce": ["match_predictions"],
            "datasets.rxr": ["match_predictions"],
            "datasets.ndh": ["match_predictions", "_match"],
            "datasets.reverie": ["match_predictions"],
        },
        "sample": 25,
    },
}

_FILL = "a, b = np.where(f[..., None] > 0, a, 0.0), np.where(f[..., None] > 0, b, 0.0)"  # stats._runs

# (file, original line, mutated line) -> why the mutant cannot change any result. The lines are
# compared stripped, as cosmic-ray's diff shows them.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("registry.py", "both = np.isinf(start) & np.isinf(final)", "both = np.isinf(start) * np.isinf(final)"): (
        "the product of two numpy bool arrays is their logical and"
    ),
    (
        "registry.py",
        'if name == "success" and self.stopped is not None:',
        'if name >= "success" and self.stopped is not None:',
    ): (
        "Context._given_success is called with 'success' (sr) or 'oracle_success' (oracle success) only, and "
        "'oracle_success' >= 'success' is False, so >= and == agree (seed 20261129)"
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
    **{
        (
            "stats/_analysis.py",
            "d = np.where(joint, (a - b) * sign, 0.0)",
            f"d = np.where(joint, (a - b) * sign, {fill})",
        ): (
            "_improvement_columns: d's value where not joint is never read (the next line returns "
            "np.where(joint, 0.5 + 0.5 * np.sign(d), np.inf)); the fill only keeps d finite there (seed 20261129)"
        )
        for fill in ("1.0", "-1.0")
    },
    **{
        ("stats/_runs.py", _FILL, _FILL.replace(old, new)): (
            "the fill of the entries left out (episodes not finite in every run of both agents) is one "
            "constant in every run: each run mean of the agent shifts by the same amount, which the variance "
            "of the run means and the two-way residuals (where it cancels) do not see, and everything else "
            "is weighted by f, 0 there (the episode means, runs_improvement's kernel); any constant gives "
            "the same results up to rounding (runs_difference and runs_improvement with -1 and +1 fills of a "
            "and of b on 1,000 random draws with episodes left out: relative differences below 2e-13)"
        )
        for old, new in (
            ("a, 0.0)", "a, -1.0)"),
            ("a, 0.0)", "a, 1.0)"),
            ("b, 0.0)", "b, -1.0)"),
            ("b, 0.0)", "b, 1.0)"),
        )
    },
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


def module_files(module: str, root: Path) -> list[str]:
    """The files (relative to the package folder `root`) of a dotted module under navdtw: its .py file,
    or every .py file of the package it has become."""
    base = root.joinpath(*module.split("."))
    if base.with_suffix(".py").is_file():
        return [base.with_suffix(".py").relative_to(root).as_posix()]
    if (base / "__init__.py").is_file():
        return sorted(f.relative_to(root).as_posix() for f in base.rglob("*.py"))
    sys.exit(f"mutation: navdtw.{module} is neither a module nor a package under {root}")


def module_of(rel: str) -> str:
    """The dotted name of a file of the package: datasets/r2r.py -> navdtw.datasets.r2r."""
    name = "navdtw." + rel.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def within(name: str, module: str) -> bool:
    """Whether the dotted `name` is `module` or inside it (a submodule, or a name defined there)."""
    return name == module or name.startswith(module + ".")


def row_files(row: str, root: Path | None = None) -> dict[str, list[str] | None]:
    """The files a row mutates (relative to the package folder) and the names mutated in each (None:
    the whole file less what other rows take). A row names modules; a module that has become a
    package brings all its files, and named functions are looked for in each."""
    root = root or PKG / "navdtw"
    out: dict[str, list[str] | None] = {}
    for module, names in TARGETS[row]["modules"].items():
        for rel in module_files(module, root):
            if names is None or functions(root / rel, names):
                out[rel] = names
    return out


def taken_elsewhere(rel: str, row: str) -> list[tuple[int, int]]:
    """Ranges of `rel` that other rows name explicitly (a whole-file row leaves them out)."""
    ranges = []
    for other in TARGETS:
        names = row_files(other).get(rel) if other != row else None
        if names:
            ranges += functions(PKG / "navdtw" / rel, names)
    return ranges


def _references(path: Path) -> tuple[set[tuple[str, tuple[str, ...]]], set[str]]:
    """What a test file names of navdtw, as (module, attribute chain) pairs: `from navdtw.stats import
    x` is ("navdtw.stats", ("x",)), `navdtw.evaluate(...)` after `import navdtw` is ("navdtw",
    ("evaluate",)), a dotted string given to a call, monkeypatch.setattr("navdtw.cli.main", ...), is
    ("navdtw", ("cli", "main")) (a list of module names, as the docs and layer tests keep, is not a
    use); and the local modules of tests/ it imports (helpers such as naive_metrics)."""
    tree = ast.parse(path.read_text(), str(path))
    aliases: dict[str, tuple[str, tuple[str, ...]]] = {}  # local name -> (module, chain)
    refs: set[tuple[str, tuple[str, ...]]] = set()
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top == "navdtw":
                    refs.add((a.name, ()))
                    aliases[a.asname or "navdtw"] = (a.name, ()) if a.asname else ("navdtw", ())
                else:
                    local.add(top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] == "navdtw":
                for a in node.names:
                    refs.add((node.module, (a.name,)))
                    aliases[a.asname or a.name] = (node.module, (a.name,))
            else:
                local.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call):  # monkeypatch.setattr("navdtw.x.f", ...), import_module("navdtw.x")
            for arg in node.args:
                text = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
                if text.startswith("navdtw.") and all(part.isidentifier() for part in text.split(".")):
                    refs.add(("navdtw", tuple(text.split(".")[1:])))
    for node in ast.walk(tree):  # attribute chains from an alias: ns.paired_test, navdtw.suite.config.x
        if isinstance(node, ast.Attribute):
            chain = []
            inner = node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in aliases:
                module, first = aliases[inner.id]
                refs.add((module, first + tuple(reversed(chain))))
    return refs, local


_RESOLVE = """
import importlib, json, sys, types
out = []
for module, chain in json.load(sys.stdin):
    try:
        obj = importlib.import_module(module)
    except Exception:
        out.append(module)
        continue
    where = obj.__name__
    for part in chain:
        try:
            obj = getattr(obj, part)
        except Exception:
            break
        if isinstance(obj, types.ModuleType):
            where = obj.__name__
            continue
        home = getattr(obj, "__module__", None)
        if isinstance(home, str) and home.startswith("navdtw"):
            where = home
        break
    out.append(where)
json.dump(out, sys.stdout)
"""


def references(tests: Path, pkg: Path) -> dict[str, set[str]]:
    """Each test file of `tests` -> the navdtw modules it uses: its own imports and names resolved to
    the module that defines them (by importing the copy of the package in `pkg`), with those of the
    helper modules of tests/ it imports."""
    raw, local = {}, {}
    for path in sorted(tests.glob("*.py")):
        raw[path.stem], local[path.stem] = _references(path)
    pairs = sorted({pair for refs in raw.values() for pair in refs})
    env = dict(os.environ, PYTHONPATH=str(pkg), PYTHONDONTWRITEBYTECODE="1")
    answer = subprocess.run(
        [sys.executable, "-c", _RESOLVE],
        input=json.dumps(pairs),
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
        env=env,
    ).stdout
    where = dict(zip(pairs, json.loads(answer)))
    direct = {stem: {where[pair] for pair in refs} | {m for m, _ in refs} for stem, refs in raw.items()}
    closed = {}
    for stem in direct:  # the helpers' modules too (naive_metrics, eval_writers, ...), transitively
        seen, todo = {stem}, [stem]
        while todo:
            for helper in local[todo.pop()]:
                if helper in direct and helper not in seen:
                    seen.add(helper)
                    todo.append(helper)
        closed[stem] = set().union(*(direct[h] for h in seen))
    return {f"{tests.name}/{stem}.py": mods for stem, mods in closed.items() if stem.startswith("test_")}


def judges(modules: list[str], refs: dict[str, set[str]]) -> list[str]:
    """The test files that use any of `modules` (dotted names), those named after one first (they
    kill most mutants, and pytest -x stops there), then by how many of their names are in them."""

    def uses(used: set[str]) -> int:
        return sum(any(within(name, m) for m in modules) for name in used)

    def named(test: str) -> bool:
        stem = Path(test).stem.removeprefix("test_") + "_"  # test_stats_runs.py for stats, not rxrce for rxr
        return any(stem.startswith(m.removeprefix("navdtw.").replace(".", "_") + "_") for m in modules)

    chosen = [test for test, used in refs.items() if uses(used)]
    return sorted(chosen, key=lambda t: (not named(t), -uses(refs[t]), t))


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
    """(file, config, session database) of each file of a row: the files recorded when the row's
    sessions were made (--resume and --report judge those), else the row's files now."""
    saved = OUT / f"{row}.json"
    files = json.loads(saved.read_text())["files"] if saved.is_file() else list(row_files(row))
    out = []
    for rel in files:
        stem = rel.replace("/", "_").removesuffix(".py")
        out.append((rel, OUT / f"{row}-{stem}.toml", OUT / f"{row}-{stem}.sqlite"))
    return out


def write_configs(row: str, timeout: float, refs: dict[str, set[str]]) -> list[str]:
    """Writes cosmic-ray's configuration of each session of a row, its tests the files that use the
    row's modules now (`judges`: also on --resume, so tests added since are run), and returns them."""
    tests = judges(sorted({module_of(rel) for rel, _, _ in sessions_of(row)}), refs)
    if not tests:
        sys.exit(f"mutation: no test file uses the modules of row {row}")
    # HYPOTHESIS_PROFILE=ci (tests/conftest.py): the same examples for every mutant and no example
    # database, so a failing example saved under one mutant is never replayed against the next
    command = (
        f"env PYTHONPATH={PKG} PYTHONDONTWRITEBYTECODE=1 HYPOTHESIS_PROFILE=ci "
        f"{sys.executable} -m pytest -q -x -p no:cacheprovider {' '.join(tests)}"
    )
    for rel, cfg, _ in sessions_of(row):
        cfg.write_text(
            "[cosmic-ray]\n"
            f'module-path = "{PKG / "navdtw" / rel}"\n'
            f"timeout = {timeout}\n"
            "excluded-modules = []\n"
            f'test-command = "{command}"\n\n'
            '[cosmic-ray.distributor]\nname = "local"\n'
        )
    print(f"{row}: judged by {' '.join(tests)}", flush=True)
    return tests


def init_row(row: str, sample: int, seed: int, timeout: float, refs: dict[str, set[str]]) -> None:
    """cosmic-ray's sessions of a row, cut down to the mutants of its functions and to the sample,
    judged by the test files that use the row's modules (`judges`)."""
    files = row_files(row)
    (OUT / f"{row}.json").unlink(missing_ok=True)
    tests = write_configs(row, timeout, refs)
    candidates = []  # (session, job_id)
    in_annotations = 0
    for rel, cfg, db in sessions_of(row):
        names = files[rel]
        module = PKG / "navdtw" / rel
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
    info = {
        "mutants": len(chosen),
        "of": len(candidates),
        "annotations": in_annotations,
        "seed": seed,
        "files": list(files),
        "judges": tests,
    }
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


def equivalent(rel: str, old: str, new: str) -> str | None:
    """Why the mutant `old` -> `new` of file `rel` is equivalent (EQUIVALENT), or None. A listed
    file stands for its module: the entry still holds once the module has become a package."""
    for (file, o, n), reason in EQUIVALENT.items():
        if o == old and n == new and within(module_of(rel), module_of(file)):
            return reason
    return None


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
        reason = equivalent(rel, old, new)
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
    refs = None if args.report else references(REPO / "tests", PKG)
    table = []
    for row in args.rows:
        if not (args.resume or args.report):
            sample = TARGETS[row]["sample"] if args.sample is None else args.sample
            init_row(row, sample, args.seed, args.timeout, refs)
        elif args.resume:  # the tests that use the row's modules now, new files included
            info = json.loads((OUT / f"{row}.json").read_text())
            info["judges"] = write_configs(row, args.timeout, refs)
            (OUT / f"{row}.json").write_text(json.dumps(info))
        if not args.report:
            t0 = time.time()
            exec_row(row, rejudge=args.resume)
            print(f"{row}: {time.time() - t0:.0f} s", flush=True)
        c = tally_row(row)
        judged = c["killed"] + c["survived"]
        score = 100.0 * c["killed"] / judged if judged else 100.0
        table.append((row, c, score))
        shown = {k: v for k, v in c.items() if k not in ("files", "judges")}
        print(f"{row}: {shown} score {score:.1f}%", flush=True)
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
