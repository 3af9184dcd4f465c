"""The compiled engine's reference from its type stubs, ``navdtw/_core.pyi``.

pybind11 writes signatures full of ``typing.Annotated[numpy.typing.ArrayLike, numpy.float32]``;
the stub says the same thing readably (``F32``, ``I64``) and is what type checkers see. This
extension

* replaces the signature autodoc reads from a ``navdtw._core`` function's docstring with the
  stub's (``autodoc-process-signature``), and
* adds the directive ``core-stub-types``, which declares the stub's type aliases and ``TypedDict``
  classes (each field with its trailing ``#`` comment), so the signatures' names resolve.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from sphinx.util.docutils import SphinxDirective

import navdtw

STUB = Path(navdtw.__file__).with_name("_core.pyi")
MODULE = "navdtw._core"


@functools.lru_cache(maxsize=1)
def parse_stub() -> dict:
    source = STUB.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    out: dict = {"functions": {}, "aliases": {}, "classes": {}}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = ast.unparse(node.args)
            out["functions"][node.name] = (f"({args})", ast.unparse(node.returns) if node.returns else None)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out["aliases"][node.targets[0].id] = ast.unparse(node.value)
        elif isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "TypedDict" for b in node.bases):
            # the stub's TypedDicts; a compiled class is documented by automodule from the module
            fields = []
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    line = lines[item.lineno - 1]
                    comment = line.split("#", 1)[1].strip() if "#" in line else ""
                    fields.append((item.target.id, ast.unparse(item.annotation), comment))
            out["classes"][node.name] = (ast.get_docstring(node) or "", fields)
    return out


def stub_signature(app, what, name, obj, options, signature, return_annotation):
    if what != "function" or not name.startswith(MODULE + "."):
        return None
    found = parse_stub()["functions"].get(name.rsplit(".", 1)[1])
    if found is None:
        raise ValueError(f"{name} is not in {STUB}: the stub and the compiled module disagree")
    return found


class CoreStubTypes(SphinxDirective):
    """Declares the stub's type aliases and TypedDicts in the current module (``navdtw._core``)."""

    def run(self):
        stub = parse_stub()
        rst = []
        for alias, value in stub["aliases"].items():
            rst += [f".. py:type:: {alias}", f"   :canonical: {value}", "", f"   ``{value}``", ""]
        for cls, (doc, fields) in stub["classes"].items():
            rst += [f".. py:class:: {cls}", "", f"   {doc}", ""]
            for field, annotation, comment in fields:
                rst += [f"   .. py:attribute:: {field}", f"      :type: {annotation}", "", f"      {comment}", ""]
        return self.parse_text_to_nodes("\n".join(rst))


def setup(app):
    app.connect("autodoc-process-signature", stub_signature)
    app.add_directive("core-stub-types", CoreStubTypes)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
