"""Rules written once (issue 32): each is kept in one place that every caller uses, so a fix made
there reaches them all; the tests here hold each rule's one place to its callers.

* the optional dependencies: ``navdtw/_optional.py`` imports them and words what is missing;
* a user's name or path on one line: ``navdtw/_messages.py`` (one ellipsis);
* a data set option: ``Option.check``, called by the kinds, the suite file and the command line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

import navdtw
from navdtw._optional import EXTRAS, import_optional, install_hint, missing


def test_an_optional_module_is_imported_or_named_with_its_extra(monkeypatch):
    assert import_optional("json", "x").dumps([1]) == "[1]"
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError) as caught:
        import_optional("pyarrow.parquet", "p.parquet: reading Parquet")
    assert str(caught.value) == (
        'p.parquet: reading Parquet needs pyarrow: pip install "navdtw[dask]" (or pip install pyarrow)'
    )
    assert import_optional("pyarrow.parquet", "x", errors="ignore") is None
    # a module imported before whose package is made unimportable counts as missing (``import a.b``)
    monkeypatch.undo()
    pytest.importorskip("pyarrow.parquet")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert import_optional("pyarrow.parquet", "x", errors="ignore") is None
    # a module no extra brings is installed by its own name
    assert missing("pandas", "to_pandas") == "to_pandas needs pandas: pip install pandas"


def test_every_extra_named_is_one_of_the_package():
    try:
        import tomllib
    except ImportError:  # pragma: no cover - below 3.11
        import tomli as tomllib  # navdtw's own dependency below 3.11

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for module, extra in EXTRAS.items():
        # the extra brings the module, itself or as one of dask's (fsspec, distributed)
        assert any(req.startswith((module, "dask[")) for req in extras[extra]), (module, extra)
    assert install_hint("matplotlib.figure") == 'pip install "navdtw[plot]" (or pip install matplotlib)'


def test_the_callers_word_a_missing_dependency_as_the_helper(monkeypatch):
    from navdtw import distributed, metrics, plot

    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg", "pyarrow", "pyarrow.compute"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r'^a figure needs matplotlib: pip install "navdtw\[plot\]"'):
        plot.plot_alignment(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ImportError, match=r'^navdtw.distributed needs pyarrow: pip install "navdtw\[dask\]"'):
        distributed.to_arrow([np.zeros((2, 3))], [np.zeros((2, 3))])
    monkeypatch.setitem(sys.modules, "pandas", None)
    scores = metrics.evaluate([np.zeros((2, 3))], [np.zeros((2, 3))], threshold=3.0)
    with pytest.raises(ImportError, match=r"^to_pandas needs pandas: pip install pandas$"):
        scores.to_pandas()


# --------------------------------------------------------------------------------------------
# a data set option: Option.check, the one validator; each caller adds only its prefix
# --------------------------------------------------------------------------------------------

#: (suite key = value, the value given to Python and the command line, its flag, the message)
BAD_OPTIONS = [
    ('dataset_kind = "xyz"', "dataset_kind", "xyz", "--dataset-kind", "must be one of r2r, r4r, r2r-ce, reverie, "),
    ('columns = ["x"]', "columns", ["x"], "--column", "expected column mappings as NAME=VALUE, got 'x'"),
    ("id_column = 3", "id_column", 3, "--id-column", "expected a string, got int"),
    ("split = '{missing}'", "split", "{missing}", "--split", "file not found: {missing}"),
]


def _suite_error(tmp_path, line: str) -> str:
    from navdtw.suite import SuiteError, load_suite

    (tmp_path / "a.jsonl").write_text('{"episode_id": 1, "sr": 1}\n')
    (tmp_path / "suite.toml").write_text(f'[datasets.ce]\ndataset = "results"\n{line}\n[agents.a]\nce = "a.jsonl"\n')
    with pytest.raises(SuiteError) as caught:
        load_suite(tmp_path / "suite.toml")
    return str(caught.value)


@pytest.mark.parametrize(("line", "name", "value", "flag", "message"), BAD_OPTIONS)
def test_a_bad_option_reads_the_same_from_python_and_a_suite_file(tmp_path, line, name, value, flag, message):
    import navdtw

    missing = str(tmp_path / "missing.json")
    line, message = line.format(missing=missing), message.format(missing=missing)
    value = value.format(missing=missing) if isinstance(value, str) else value
    with pytest.raises((ValueError, FileNotFoundError)) as caught:
        navdtw.datasets.open("results", **{name: value})
    api = str(caught.value)
    assert api.startswith(f"{flag}: {message}")
    suite = _suite_error(tmp_path, line)
    assert suite.startswith(f"suite.toml: datasets.ce.{name}: {message}")
    assert api.removeprefix(f"{flag}: ") == suite.removeprefix(f"suite.toml: datasets.ce.{name}: ")


# --------------------------------------------------------------------------------------------
# a user's name or path on one line: navdtw._messages
# --------------------------------------------------------------------------------------------


def test_one_display_rule_for_names_and_one_ellipsis():
    from navdtw._messages import ELLIPSIS, clipped, few, listed, named, quoted

    assert [named(x) for x in ("7_1", 12, "a b")] == ["7_1", "12", "a b"]
    # quoted when it would break the line, vanish, or read as two names
    assert [named(x) for x in ("a\nb", "", " x", "a,b")] == ["'a\\nb'", "''", "' x'", "'a,b'"]
    assert few(["7_1", "9_0"]) == "7_1, 9_0 (2 in all)"
    assert few([str(i) for i in range(7)]) == f"0, 1, 2, 3, 4, {ELLIPSIS} (7 in all)"
    assert few(["a\nb"]) == "'a\\nb' (1 in all)"
    assert listed(["c0", "c1", "c2"], 2) == f"c0, c1, {ELLIPSIS} (1 more)"
    assert clipped([1.5, 2.5]) == "[1.5, 2.5]"
    long = clipped(list(range(30)))
    assert len(long) == 40 and long.endswith(ELLIPSIS)
    assert quoted("Oracle SR=osr") == "'Oracle SR=osr'"
    assert quoted("it's=osr") == '"it\'s=osr"' and quoted("a\nb=osr") == "'a\\nb=osr'"


def test_messages_imports_no_numpy_but_shows_its_scalars():
    import subprocess

    code = "import sys, navdtw._messages as m; print(m.named('x'), 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["x", "False"]
    from navdtw._messages import shown

    assert shown(np.int64(3)) == "3" and shown((np.float64(0.5), "a")) == "(0.5, 'a')"


@pytest.mark.parametrize(("line", "name", "value", "flag", "message"), [b for b in BAD_OPTIONS if b[1] != "id_column"])
def test_a_bad_option_reads_the_same_from_the_command_line(tmp_path, capsys, line, name, value, flag, message):
    """The command line gives the option's flag and the message Python gives (a command-line value
    is always text: the id column's 'expected a string' cannot arise there)."""
    import navdtw
    from navdtw.cli import main

    missing = str(tmp_path / "missing.json")
    value = value.format(missing=missing) if isinstance(value, str) else value
    with pytest.raises((ValueError, FileNotFoundError)) as caught:
        navdtw.datasets.open("results", **{name: value})
    (tmp_path / "a.jsonl").write_text('{"episode_id": 1, "sr": 1}\n')
    args = ["compare", str(tmp_path / "a.jsonl"), "--dataset", "results", "--no-progress"]
    for v in value if isinstance(value, list) else [value]:
        args += [flag, v]
    assert main(args) == 2
    assert capsys.readouterr().err == f"navdtw: error: {caught.value}\n"


# --------------------------------------------------------------------------------------------
# each rule written once: read from the source
# --------------------------------------------------------------------------------------------


def _strings(tree: ast.AST):
    """Every string constant and f-string part of a module but its docstrings."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.value


def _modules():
    root = Path(navdtw.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_only_the_helper_says_how_to_install_an_extra():
    said = [name for name, tree in _modules() if any("pip install" in s and "navdtw[" in s for s in _strings(tree))]
    assert said == ["_optional.py"], said


def test_only_the_display_rule_makes_a_name_one_line():
    """``isprintable()`` decides how a name shows in _messages only (positions refuses an id that
    is not printable: a check, not a display)."""
    found = [
        name
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "isprintable"
    ]
    assert sorted(set(found)) == ["_messages.py", "datasets/positions.py"], found
