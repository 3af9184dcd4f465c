"""The docstring of a constant documented under a module that re-exports it.

``.. autodata:: navdtw.stats.BLOCK`` documents a constant that ``navdtw/stats/__init__.py``
imports from ``navdtw.stats._resampling``, where its docstring (the string after the assignment)
is written. Sphinx reads a constant's docstring from the source of the module it is documented
under, where a re-export has none, and falls back to the docstring of the value's type (``int``).
This extension (``autodoc-process-docstring``) reads it where the name is imported from instead,
following re-exports of re-exports, so the text is written once, beside the value.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect

from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer


def attribute_docs(module_name: str) -> dict[tuple[str, str], list[str]]:
    try:
        return ModuleAnalyzer.for_module(module_name).find_attr_docs()
    except PycodeError:
        return {}


def imported_from(module_name: str, name: str) -> tuple[str, str] | None:
    """``(module, name there)`` that ``module_name``'s source imports ``name`` from, or None."""
    module = importlib.import_module(module_name)
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    source = "." * node.level + (node.module or "")
                    return importlib.util.resolve_name(source, module.__package__), alias.name
    return None


def home_docstring(module_name: str, name: str) -> list[str] | None:
    """The lines of ``name``'s docstring in the module that defines it (None: none found)."""
    for _ in range(10):  # a re-export of a re-export ...; never a circle in a finite package
        docs = attribute_docs(module_name)
        if ("", name) in docs:
            return list(docs["", name])
        found = imported_from(module_name, name)
        if found is None:
            return None
        module_name, name = found
    return None


def fill(app, what, name, obj, options, lines) -> None:
    if what != "data":
        return
    module_name, _, attr = name.rpartition(".")
    if ("", attr) in attribute_docs(module_name):
        return  # defined here: Sphinx has its docstring already
    found = home_docstring(module_name, attr)
    if found:
        lines[:] = found


def setup(app):
    app.connect("autodoc-process-docstring", fill)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
