"""Cross-references written in a submodule's docstrings, resolved where the object is documented.

A docstring refers to its neighbours by their short names (``:func:`load_ndh``` in
``navdtw.datasets.ndh``, ``:meth:`evaluate``` in a subclass of ``Benchmark``), while the reference
documents each object once, under the name users import (``navdtw.datasets.load_ndh``,
``navdtw.datasets.Benchmark.evaluate``). Sphinx looks a short name up in the docstring's own
module and class only, so documenting ``navdtw.datasets.ndh.NDHBenchmark`` would leave such
references broken. When Sphinx finds no target, this extension (``missing-reference``) imports
what the name means where it is written and links to the one documented name of the same object;
failing that (an attribute without a value on its class), to the one documented object of a
fitting type whose dotted name ends with the reference's. None, or more than one, and the
reference stays broken (a warning, an error under ``-W``): nothing is guessed.
"""

from __future__ import annotations

import importlib

from sphinx.util.nodes import make_refnode

_MISSING = object()


def lookup(dotted: str):
    """The object a dotted name means (the longest importable module, then attributes), or _MISSING."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:  # not a module: a shorter prefix
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def resolve(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    domain = env.get_domain("py")
    types = set(domain.objtypes_for_role(node["reftype"]) or ())
    fitting = {
        name: obj
        for name, obj in domain.objects.items()
        if obj.objtype in types and not obj.aliased and name.rsplit(".", 1)[-1] == target.rsplit(".", 1)[-1]
    }
    module, cls = node.get("py:module"), node.get("py:class")
    contexts = [f"{module}.{cls}", module, None] if cls else [module, None]
    meant = _MISSING
    for context in contexts:
        if context is not None or target.count("."):
            meant = lookup(f"{context}.{target}" if context else target)
            if meant is not _MISSING:
                break
    found = [name for name in fitting if meant is not _MISSING and lookup(name) is meant]
    if len(found) != 1:
        found = [name for name in fitting if name == target or name.endswith("." + target)]
    if len(found) != 1:
        return None
    obj = fitting[found[0]]
    return make_refnode(app.builder, node["refdoc"], obj.docname, obj.node_id, contnode, found[0])


def setup(app):
    app.connect("missing-reference", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
