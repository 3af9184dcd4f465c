"""The package's import rules (docs/design.md), read from the source with ``ast``:

* imports run one way: a module imports only from its own layer or the layers below it (LAYERS),
  and the imports between navdtw's modules form no circle;
* no leading-underscore name crosses a module line: not imported (``from .x import _y``), not
  reached through another module's name (``x._y``, ``Paths._y``), not hidden under a private alias
  (``import y as _y``); internal modules (``_core``, ``_io``, ``datasets/_common``, ...) may be imported;
* nothing imports from the package's facade (``navdtw/__init__.py``) but ``__version__``;
* ``import navdtw`` imports no submodule until a name is touched (``navdtw.evaluate``,
  ``navdtw.suite.run(...)``: PEP 562 module ``__getattr__``), and ``navdtw --help`` imports neither
  numpy nor scipy: the command answers at once (benchmarks/bench_startup.py measures it).

Every import counts: at the top of a module, inside a function, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import navdtw

PACKAGE = Path(navdtw.__file__).resolve().parent

#: Every module's layer, lowest first; a module may import from its own layer and those below.
#: A name covers its submodules (``navdtw.datasets`` covers ``navdtw.datasets.r2r``). A new module
#: must be placed here (test_every_module_has_a_layer).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "navdtw._core",
            "navdtw._typing",
            "navdtw._io",
            "navdtw._html",
            "navdtw._config",
            "navdtw._messages",
            "navdtw._decisions",
            "navdtw._lazy",
            "navdtw._optional",
            "navdtw._dirwatch",
        ),
    ),
    ("engine", ("navdtw.paths", "navdtw.engine", "navdtw.anchored")),
    (
        "model",
        (
            "navdtw.registry",
            "navdtw._context",
            "navdtw._conventions",
            "navdtw.graphs",
            "navdtw.metrics",
            "navdtw.humanaware",
            "navdtw.instruction_errors",
            "navdtw.baseline",
            "navdtw.reward",
            "navdtw.synthetic",
            "navdtw.tours",
            "navdtw.subtasks",
        ),
    ),
    # what every reader shares, and the recognition of a file's shape that the readers' errors call
    ("readers' ground", ("navdtw.datasets._common", "navdtw.datasets.shapes")),
    ("readers", ("navdtw.datasets",)),
    (
        "analysis",
        (
            "navdtw.stats",
            "navdtw.sequential",
            "navdtw.order",
            "navdtw.watch",
            "navdtw._following",
            "navdtw._watch_view",
            "navdtw.suite",
            "navdtw.report",
            "navdtw.plot",
            "navdtw.distributed",
        ),
    ),
    # navdtw.habitat (a package): habitat-lab's measures (imports habitat; never imported by `import navdtw`)
    ("interface", ("navdtw.cli", "navdtw.__main__", "navdtw", "navdtw.habitat")),
]


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for k, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, rank = len(name), k
    return rank


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    line: int
    target: str  # the imported navdtw module
    names: tuple[str, ...]  # names taken from it (empty for ``import x``)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_module(name: str, root: Path) -> bool:
    """``navdtw.x.y`` is a module or package of the tree (``_core`` by its stub)."""
    rel = Path(*name.split(".")[1:]) if "." in name else Path()
    base = root / rel
    return base.is_dir() or any(base.with_suffix(s).is_file() for s in (".py", ".pyi"))


@functools.cache
def _parsed(text: str) -> ast.Module:
    """A module's source, parsed once per session: the test trees below are copies of the package
    that differ in one module, so only that one is parsed again."""
    return ast.parse(text)


@functools.cache
def modules(root: Path) -> dict[str, tuple[Path, ast.Module]]:
    """Every module of the tree at ``root``, parsed (once per tree and session)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" not in path.parts:
            out[module_name(path, root)] = (path, _parsed(path.read_text(encoding="utf-8")))
    return out


def resolve(source: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module name of a ``from ... import`` (relative or not)."""
    if not node.level:
        return node.module or ""
    base = source.split(".") if is_package else source.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(mods: dict[str, tuple[Path, ast.Module]], root: Path) -> list[Import]:
    out = []
    for source, (path, tree) in mods.items():
        package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out += [Import(source, node.lineno, a.name, ()) for a in node.names if a.name.split(".")[0] == "navdtw"]
            elif isinstance(node, ast.ImportFrom):
                target = resolve(source, package, node)
                if target.split(".")[0] != "navdtw":
                    continue
                plain = []
                for a in node.names:  # ``from . import x``: x may be a submodule
                    if is_module(f"{target}.{a.name}", root):
                        out.append(Import(source, node.lineno, f"{target}.{a.name}", ()))
                    else:
                        plain.append(a.name)
                if plain:
                    out.append(Import(source, node.lineno, target, tuple(plain)))
    return out


def layer_violations(root: Path) -> list[str]:
    mods = modules(root)
    bad = []
    for imp in imports(mods, root):
        if imp.target == "navdtw" and imp.source != "navdtw":
            if set(imp.names) - {"__version__"}:
                bad.append(f"{imp.source}:{imp.line}: imports {sorted(imp.names)} from the package facade (navdtw)")
            continue
        if layer_of(imp.target) > layer_of(imp.source):
            src, dst = LAYERS[layer_of(imp.source)][0], LAYERS[layer_of(imp.target)][0]
            bad.append(f"{imp.source}:{imp.line}: imports {imp.target} ({src} layer imports the {dst} layer above it)")
    return bad


def circles(root: Path) -> list[list[str]]:
    """Every circle of the import graph between navdtw's modules (``__version__`` reads left out)."""
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for imp in imports(mods, root):
        if imp.target in mods and imp.target != imp.source and imp.names != ("__version__",):
            edges[imp.source].add(imp.target)
    found, state, stack = [], {}, []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                found.append([*stack[stack.index(n) :], n])
            elif n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(mods):
        if m not in state:
            visit(m)
    return found


def private_name_violations(root: Path) -> list[str]:
    mods = modules(root)
    bad = []
    for source, (path, tree) in mods.items():
        package = path.name == "__init__.py"
        bound: dict[str, str] = {}  # local name -> the navdtw module it came from
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = resolve(source, package, node)
                if target.split(".")[0] != "navdtw":
                    continue
                for a in node.names:
                    internal_module = is_module(f"{target}.{a.name}", root)
                    if a.name.startswith("_") and not a.name.startswith("__") and not internal_module:
                        bad.append(f"{source}:{node.lineno}: imports the private name {a.name} from {target}")
                    if a.asname and a.asname.startswith("_") and not a.asname.startswith("__"):
                        bad.append(
                            f"{source}:{node.lineno}: imports {target}.{a.name} under a private alias {a.asname}"
                        )
                    bound[a.asname or a.name] = f"{target}.{a.name}" if internal_module else target
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "navdtw":
                        bound[a.asname or a.name.split(".")[0]] = a.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and bound[node.value.id] != source
            ):
                bad.append(f"{source}:{node.lineno}: reaches the private {node.value.id}.{node.attr} of another module")
    return bad


# --------------------------------------------------------------------------------------------
# the package as it is
# --------------------------------------------------------------------------------------------


def test_every_module_has_a_layer():
    unplaced = [m for m in modules(PACKAGE) if layer_of(m) < 0]
    assert not unplaced, f"place these modules in LAYERS (tests/test_import_rules.py) and docs/design.md: {unplaced}"


def test_imports_run_down_the_layers():
    assert layer_violations(PACKAGE) == []


def test_no_import_circles():
    assert circles(PACKAGE) == []


def test_no_private_name_crosses_a_module():
    assert private_name_violations(PACKAGE) == []


# --------------------------------------------------------------------------------------------
# the checks catch what they are for (a copy of the package with one bad import each)
# --------------------------------------------------------------------------------------------


def _tree_with(tmp_path: Path, module: str, code: str) -> Path:
    root = tmp_path / "navdtw"
    for path in PACKAGE.rglob("*.py*"):
        if "__pycache__" not in path.parts and path.suffix in (".py", ".pyi"):
            dest = root / path.relative_to(PACKAGE)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(path.read_bytes())
    target = root / Path(*module.split(".")[1:]).with_suffix(".py")
    target.write_text(target.read_text(encoding="utf-8") + "\n" + textwrap.dedent(code), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("module", "code", "check", "expected"),
    [
        ("navdtw.graphs", "from .datasets import load_r2r\n", layer_violations, "model layer imports the readers"),
        ("navdtw.metrics", "def f():\n    from .suite import run\n", layer_violations, "imports navdtw.suite"),
        ("navdtw.stats._analysis", "from .. import evaluate\n", layer_violations, "from the package facade"),
        ("navdtw.baseline", "from .metrics import _check_inputs\n", private_name_violations, "private name"),
        (
            "navdtw.plot",
            "from . import engine\nengine._nonneg_int(None, None)\n",
            private_name_violations,
            "engine._nonneg_int",
        ),
        ("navdtw.reward", "from .paths import Paths\nPaths._x\n", private_name_violations, "Paths._x"),
        ("navdtw.datasets.r2r", "from ..paths import as_paths as _as\n", private_name_violations, "a private alias"),
    ],
)
def test_a_bad_import_is_caught(tmp_path, module, code, check, expected):
    found = check(_tree_with(tmp_path, module, code))
    assert len(found) == 1 and expected in found[0] and found[0].startswith(module + ":"), found


def test_a_circle_is_caught(tmp_path):
    # engine imports paths; paths importing engine back (inside a function) closes a circle
    found = circles(_tree_with(tmp_path, "navdtw.paths", "def f():\n    from .engine import dtw\n"))
    assert any(set(c) == {"navdtw.engine", "navdtw.paths"} for c in found), found


# --------------------------------------------------------------------------------------------
# lazy submodules
# --------------------------------------------------------------------------------------------

LAZY = (
    "navdtw.suite",
    "navdtw.stats",
    "navdtw.distributed",
    "navdtw.plot",
    "navdtw.report",
    "navdtw.cli",
    "navdtw.habitat",
)
OPTIONAL = ("matplotlib", "dask", "pyarrow", "tqdm", "pandas", "habitat", "habitat_sim")


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_navdtw_leaves_the_optional_parts_unimported():
    out = _python(
        f"""
        import sys
        import navdtw
        print(sorted(m for m in {LAZY + OPTIONAL!r} if m in sys.modules))
        """
    )
    assert out.strip() == "[]"


def test_submodules_are_attributes_when_touched():
    out = _python(
        """
        import sys
        import navdtw
        assert "navdtw.suite" not in sys.modules
        assert callable(navdtw.suite.run) and callable(navdtw.suite.compare) and callable(navdtw.suite.load_suite)
        assert "navdtw.suite" in sys.modules and "navdtw.distributed" not in sys.modules
        assert callable(navdtw.stats.analyze) and callable(navdtw.distributed.score_arrow)
        assert "suite" in dir(navdtw) and "stats" in dir(navdtw)
        import navdtw.suite
        assert navdtw.suite is sys.modules["navdtw.suite"]
        print("ok")
        """
    )
    assert out.strip() == "ok"
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        navdtw.nonexistent  # noqa: B018


HEAVY = ("numpy", "scipy", "navdtw._core")


def test_import_navdtw_and_help_import_no_numpy():
    """``import navdtw``, ``navdtw --help``, ``--version`` and a mistyped command load neither numpy,
    scipy nor the compiled engine (what makes them answer at once); ``navdtw score --help`` needs the
    metric registry and the data set kinds (numpy), but not scipy; ``navdtw compare --help`` not the
    statistics (scipy.stats) either."""
    out = _python(
        f"""
        import contextlib, io, sys
        import navdtw
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        from navdtw.cli import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            codes = [main(["--help"]), main(["--version"]), main(["bogus"]), main(["--bogus"])]
        print(codes, sorted(m for m in {HEAVY!r} if m in sys.modules))
        with contextlib.redirect_stdout(io.StringIO()) as text:
            code = main(["score", "--help"])
        print(code, "--predictions" in text.getvalue(), sorted(m for m in sys.modules if m.split(".")[0] == "scipy"))
        with contextlib.redirect_stdout(io.StringIO()) as text:
            code = main(["compare", "--help"])
        print(code, "--latex" in text.getvalue(), "scipy.stats" in sys.modules, "navdtw.suite.runner" in sys.modules)
        """
    )
    assert out.splitlines() == ["[]", "[0, 0, 2, 2] []", "0 True []", "0 True False False"]


def test_watch_help_imports_no_numpy():
    """``navdtw watch --help`` answers as ``navdtw --help`` does (issue 36 item 14: it took 0.28 s,
    importing every data set kind and the metrics for its options): neither numpy, scipy nor the
    compiled engine; the command itself still reads every data set option."""
    out = _python(
        f"""
        import contextlib, io, sys
        from navdtw.cli import main
        with contextlib.redirect_stdout(io.StringIO()) as text:
            code = main(["watch", "--help"])
        print(code, "--order" in text.getvalue(), sorted(m for m in {HEAVY!r} if m in sys.modules))
        with contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(["watch", "run.jsonl", "--order", "o.json", "--width", "0.1", "--dataset", "r2r"])
        print(code, "--dataset r2r needs --split" in err.getvalue())
        """
    )
    assert out.splitlines() == ["0 True []", "2 True"]


def test_score_compare_and_baseline_help_import_no_numpy():
    """``navdtw score --help``, ``compare --help`` and ``baseline --help`` (0.15-0.5 s: their
    options are the data set kinds' and the metrics') answer from the record of their options
    (navdtw.cli._help_snapshot) without numpy, scipy or the engine, and show what the parser the
    command builds shows (the record is checked in tests/test_cli_help_snapshot.py)."""
    out = _python(
        f"""
        import contextlib, io, os, sys
        os.environ["COLUMNS"] = "100"
        from navdtw.cli import main
        shown = {{}}
        for command in ("score", "compare", "baseline"):
            with contextlib.redirect_stdout(io.StringIO()) as text:
                code = main([command, "--help"])
            shown[command] = text.getvalue()
            print(command, code, sorted(m for m in {HEAVY!r} if m in sys.modules))
        from navdtw.cli._parser import build_parser
        for command in ("score", "compare", "baseline"):
            with contextlib.redirect_stdout(io.StringIO()) as text:
                try:
                    build_parser().parse_args([command, "--help"])
                except SystemExit:
                    pass
            print(command, text.getvalue() == shown[command], "--dataset" in shown[command])
        """
    )
    assert out.splitlines() == [
        "score 0 []",
        "compare 0 []",
        "baseline 0 []",
        "score True True",
        "compare True True",
        "baseline True True",
    ]


def test_every_public_name_resolves():
    """``__all__`` and ``dir()`` list the lazy names of ``navdtw`` and ``navdtw.suite``, and each one
    is the object its module defines (a name added to ``__all__`` without its module in ``_NAMES``
    fails here)."""
    out = _python(
        """
        import navdtw
        assert set(navdtw.__all__) <= set(dir(navdtw)), set(navdtw.__all__) - set(dir(navdtw))
        from navdtw import *  # noqa: F403
        import navdtw.engine, navdtw.metrics
        assert navdtw.evaluate is navdtw.metrics.evaluate and navdtw.dtw is navdtw.engine.dtw
        assert all(getattr(navdtw, name) is not None for name in navdtw.__all__)
        assert set(navdtw._NAMES) <= set(navdtw.__all__)
        import navdtw.suite, navdtw.suite.runner
        assert set(navdtw.suite.__all__) <= set(dir(navdtw.suite))
        assert all(getattr(navdtw.suite, name) is not None for name in navdtw.suite._NAMES)
        assert navdtw.suite.run is navdtw.suite.runner.run
        print("ok")
        """
    )
    assert out.strip() == "ok"
