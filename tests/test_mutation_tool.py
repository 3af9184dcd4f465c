"""tools/mutation/python_mutants.py's judging: a mutant that does not compile under the tests'
warnings-as-errors is incompetent, counted apart from the killed ones (docs/development.md,
"Mutation testing")."""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest
from conftest import REPO

TOOL = REPO / "tools" / "mutation" / "python_mutants.py"
if not TOOL.is_file():  # the sdist and CI's copies of tests/ leave the developer tools out
    pytest.skip("tools/mutation is not here (not a source checkout)", allow_module_level=True)
spec = importlib.util.spec_from_file_location("python_mutants", TOOL)
pm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pm)

ORIGINAL = 'def f(a, *, b):\n    return a == "x"\n'


@pytest.mark.parametrize(
    "mutant",
    [
        'def f(a, // , b):\n    return a == "x"\n',  # cosmic-ray's * of a signature turned into //
        'def f(a, ^, b):\n    return a == "x"\n',
        'def f(a, *, b):\n    return a is "x"\n',  # a SyntaxWarning, an error under filterwarnings = error
    ],
)
def test_a_mutant_that_does_not_compile_is_incompetent(mutant):
    assert pm.compile_error(ORIGINAL, "m.py") is None
    assert pm.compile_error(mutant, "m.py").startswith("SyntaxError")


def test_incompetent_mutants_are_counted_apart(tmp_path):
    db = tmp_path / "row.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE mutation_specs (job_id, operator_name, start_pos_row)")
        con.execute("CREATE TABLE work_results (job_id, worker_outcome, test_outcome, diff)")
        outcomes = {"a": "KILLED", "b": "SURVIVED", "c": "INCOMPETENT", "d": "KILLED"}
        for job, test in outcomes.items():
            con.execute("INSERT INTO mutation_specs VALUES (?, 'op', 1)", (job,))
            diff = "--- mutation diff ---\n--- a/x.py\n+++ b/x.py\n-    y = 1\n+    y = 2"
            con.execute("INSERT INTO work_results VALUES (?, 'NORMAL', ?, ?)", (job, test, diff))
    judged = {job: outcome for job, outcome, *_ in pm.results_of("x.py", db)}
    assert judged == {"a": "killed", "b": "survived", "c": "incompetent", "d": "killed"}


# --- which test files judge a row: derived from the tests, not kept by hand (issue 36, item 15)


def _real_references():
    import navdtw

    return pm.references(REPO / "tests", Path(navdtw.__file__).resolve().parents[1])


def _judges_of(row, refs):
    import navdtw

    files = pm.row_files(row, Path(navdtw.__file__).resolve().parent)
    return pm.judges(sorted({pm.module_of(rel) for rel in files}), refs)


def test_every_row_is_judged_by_each_test_file_named_after_its_modules():
    # the regression: stats was judged by test_stats.py alone while the tests of several runs and
    # of the best had moved to test_stats_runs.py and test_stats_best.py
    refs = _real_references()
    tests = sorted(p.name for p in (REPO / "tests").glob("test_*.py"))
    for row, spec in pm.TARGETS.items():
        judged = _judges_of(row, refs)
        stems = [module.replace(".", "_") for module in spec["modules"]]
        named = {f"tests/{t}" for t in tests if any(f"{t[5:-3]}_".startswith(f"{s}_") for s in stems)}
        assert named and set(judged[: len(named)]) == named, (row, judged)  # and first: pytest -x stops early
    assert {"tests/test_stats_runs.py", "tests/test_stats_best.py"} <= set(_judges_of("stats", refs))
    # the files the hand-kept lists held still judge their rows
    assert {"tests/test_registry.py", "tests/test_metrics.py"} <= set(_judges_of("registry", refs))
    assert "tests/test_evaluator_quirks.py" in _judges_of("conventions", refs)
    assert "tests/test_evaluator_quirks.py" in _judges_of("matchers", refs)


def test_judges_follow_imports_names_helpers_and_dotted_strings(tmp_path):
    import navdtw

    tests = tmp_path / "tests"
    tests.mkdir()
    files = {
        "test_a.py": "from navdtw import stats as ns\n\ndef test_x():\n    ns.bootstrap\n",
        "test_b.py": "import navdtw\n\ndef test_x():\n    navdtw.evaluate\n",  # a name of the package
        "helper.py": "from navdtw.registry import Metric\n",
        "test_c.py": "import helper\n",  # through a helper module of tests/
        "test_d.py": 'def test_x(monkeypatch):\n    monkeypatch.setattr("navdtw.datasets.r2r.match_predictions", 1)\n',
        "test_e.py": "import numpy\n",
        "test_f.py": "def test_x():\n    from navdtw.datasets import load_r2r\n",  # defined in datasets.r2r
    }
    for name, text in files.items():
        (tests / name).write_text(text)
    refs = pm.references(tests, Path(navdtw.__file__).resolve().parents[1])
    assert pm.judges(["navdtw.stats"], refs) == ["tests/test_a.py"]
    assert pm.judges(["navdtw.metrics"], refs) == ["tests/test_b.py"]
    assert pm.judges(["navdtw.registry"], refs) == ["tests/test_c.py"]
    assert pm.judges(["navdtw.datasets.r2r"], refs) == ["tests/test_d.py", "tests/test_f.py"]
    assert "tests/helper.py" not in refs  # helpers are not test files


def test_a_module_turned_into_a_package_stays_one_row(tmp_path, monkeypatch):
    root = tmp_path / "navdtw"
    (root / "stats").mkdir(parents=True)
    for name in ("__init__.py", "_intervals.py", "_tests.py"):
        (root / "stats" / name).write_text("x = 1\n")
    (root / "metrics.py").write_text("x = 1\n")
    assert pm.module_files("stats", root) == ["stats/__init__.py", "stats/_intervals.py", "stats/_tests.py"]
    assert pm.module_files("metrics", root) == ["metrics.py"]
    assert pm.module_of("stats/__init__.py") == "navdtw.stats"
    assert pm.module_of("stats/_intervals.py") == "navdtw.stats._intervals"
    assert pm.module_of("datasets/r2r.py") == "navdtw.datasets.r2r"
    import navdtw

    for file, _, _ in pm.EQUIVALENT:  # every listed entry names a file of the package as it is
        assert (Path(navdtw.__file__).resolve().parent / file).is_file(), file
    # an equivalent mutant listed under stats.py stays listed once the line lives in stats/_x.py,
    # and one listed under stats/_runs.py holds there only
    monkeypatch.setattr(pm, "EQUIVALENT", {("stats.py", "x = 1", "x = 2"): "why", ("stats/_runs.py", "y", "z"): "so"})
    assert pm.equivalent("stats/_intervals.py", "x = 1", "x = 2") == "why"
    assert pm.equivalent("stats.py", "x = 1", "x = 2") == "why"
    assert pm.equivalent("statsx.py", "x = 1", "x = 2") is None
    assert pm.equivalent("metrics.py", "x = 1", "x = 2") is None
    assert pm.equivalent("stats/_runs.py", "y", "z") == "so"
    assert pm.equivalent("stats/_best.py", "y", "z") is None


def _cpp_tool():
    path = REPO / "tools" / "mutation" / "cpp_mutants.py"
    spec = importlib.util.spec_from_file_location("cpp_mutants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpp_pass_links_the_extension_only_once_built(tmp_path, monkeypatch):
    # a clean tree: nothing built yet. The link used to be made before the first build, to a file
    # of the wrong name, and every judge failed with "module 'navdtw' has no attribute '_core'"
    import sysconfig

    cpp = _cpp_tool()
    monkeypatch.setattr(cpp, "BUILD", tmp_path / "build")
    monkeypatch.setattr(cpp, "PKG", tmp_path / "pkg")
    cpp.BUILD.mkdir()
    (cpp.BUILD / "build.ninja").write_text("")  # configured already: cmake is not run
    cpp.configure()
    assert not [p for p in (cpp.PKG / "navdtw").iterdir() if p.is_symlink()]  # nothing linked yet
    with pytest.raises(SystemExit, match="not built"):
        cpp.link_core()
    built = cpp.BUILD / ("_core" + sysconfig.get_config_var("EXT_SUFFIX"))
    built.write_bytes(b"")  # as the first build leaves it
    cpp.link_core()
    link = cpp.PKG / "navdtw" / built.name
    assert link.is_symlink() and link.resolve() == built.resolve()


def test_mutants_are_judged_derandomized_without_an_example_database(tmp_path, monkeypatch):
    # an earlier mutant's failing example must not judge the next mutant
    import hypothesis

    import navdtw

    profile = hypothesis.settings.get_profile("ci")
    assert profile.derandomize and profile.database is None
    cpp = _cpp_tool()
    seen = {}
    monkeypatch.setattr(cpp, "run", lambda cmd, timeout, **kw: seen.update(kw) or (0, ""))
    cpp.judge(1.0)
    assert seen["env"]["HYPOTHESIS_PROFILE"] == "ci"
    monkeypatch.setattr(pm, "OUT", tmp_path)
    monkeypatch.setattr(pm, "PKG", Path(navdtw.__file__).resolve().parents[1])
    tests = pm.write_configs("stats", 10.0, _real_references())
    config = next(tmp_path.glob("stats-*.toml")).read_text()
    assert "HYPOTHESIS_PROFILE=ci " in config and " ".join(tests) in config
