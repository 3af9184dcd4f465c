"""The size of the house (issue 32): no module of the Python layer over 900 lines, and no function
over 100 lines of code, a docstring, blank lines and comment lines aside (docs/design.md, "Sizes").

A function that must be longer is named in ``LONG`` with the reason docs/design.md gives for it;
a name there whose function is short again, or gone, fails too, so the list stays honest.
"""

from __future__ import annotations

import ast
from pathlib import Path

import navdtw

PACKAGE = Path(navdtw.__file__).resolve().parent
# the source tree (docs/), not the installed package: the suite tests an installed wheel
REPO = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 900
MAX_FUNCTION_LINES = 100

#: ``"module.path:qualified.name"`` of the functions allowed over MAX_FUNCTION_LINES; each with
#: its reason in docs/design.md's "Sizes" section.
LONG: frozenset[str] = frozenset()

#: Modules over MAX_MODULE_LINES not split yet, each named in docs/design.md's "Sizes" section with
#: what is to move out; an entry fails once the module is short again, so the list only shrinks.
TO_SPLIT: frozenset[str] = frozenset()


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """The lines of code of a function: its body without the docstring, blank lines and comment
    lines (its signature and decorators not counted)."""
    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]
    if not body:
        return 0
    text = lines[body[0].lineno - 1 : node.end_lineno]
    return sum(1 for line in text if line.strip() and not line.strip().startswith("#"))


def functions(tree: ast.Module):
    """``(qualified name, node)`` of every function and method of a module, nested ones too."""

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child
                yield from walk(child, name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def modules() -> dict[str, Path]:
    return {
        str(path.relative_to(PACKAGE.parent)): path
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def test_no_module_over_900_lines():
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    over = {k: v for k, v in long.items() if k not in TO_SPLIT}
    assert not over, f"modules over {MAX_MODULE_LINES} lines (split them by concern): {over}"
    assert not TO_SPLIT - set(long), f"TO_SPLIT names modules that are short now: {sorted(TO_SPLIT - set(long))}"


def test_no_function_over_100_lines_of_code():
    found = {}
    for name, path in modules().items():
        text = path.read_text("utf-8")
        lines = text.splitlines()
        for qualname, node in functions(ast.parse(text)):
            n = code_lines(node, lines)
            if n > MAX_FUNCTION_LINES:
                found[f"{name}:{qualname}"] = n
    too_long = {k: v for k, v in found.items() if k not in LONG}
    assert not too_long, f"functions over {MAX_FUNCTION_LINES} lines of code (break them into named steps): {too_long}"
    stale = sorted(LONG - set(found))
    assert not stale, f"LONG names functions that are short again (or gone): {stale}"


def test_the_long_functions_are_explained_in_the_design_page():
    design = (REPO / "docs" / "design.md").read_text("utf-8")
    assert "## Sizes" in design
    for name in LONG | TO_SPLIT:
        assert f"`{name}`" in design, f"docs/design.md does not say why {name} is long"


def test_code_lines_leave_out_the_docstring_blank_lines_and_comments():
    source = 'def f(x):\n    """Doc.\n\n    More."""\n\n    # a comment\n    y = x\n    return y\n'
    tree = ast.parse(source)
    assert code_lines(tree.body[0], source.splitlines()) == 2
    nested = "class A:\n    def m(self):\n        def inner():\n            pass\n        return inner\n"
    assert [name for name, _ in functions(ast.parse(nested))] == ["A.m", "A.m.inner"]
