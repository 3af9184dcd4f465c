"""The documentation site documents every public name and every data set kind.

A public name is every name of every public module's ``__all__`` (a module of navdtw without a
leading underscore anywhere in its dotted name), found by walking the package, so a module added
later is checked without being listed here; a re-exported object counts as documented under any
of its public names.

The sources (docs/api/*.rst) are checked always; the built site's object inventory
(docs/_build/html/objects.inv, written by ``sphinx-build -W --keep-going -b html docs
docs/_build/html``, which CI runs before the tests) when it exists."""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
import types
import zlib

import pytest
from conftest import REPO

import navdtw

DOCS = REPO / "docs"
INVENTORY = DOCS / "_build" / "html" / "objects.inv"
# `.. autofunction:: navdtw.dtw`, `.. py:module:: navdtw.suite`, ...
DIRECTIVE = re.compile(r"^\.\. (?:auto\w+|py:\w+):: (?P<name>[\w.]+)(?P<options>(?:\n   :[\w-]+:.*)*)", re.M)


#: Public modules that import a framework navdtw does not depend on, and the packages whose absence
#: leaves them out here (their pages document them by hand: docs/api/habitat.rst). Where the
#: framework is installed (tools/check_habitat.sh's venv) they are checked like any other.
FRAMEWORK_MODULES = {"navdtw.habitat": ("habitat", "habitat_sim", "magnum", "corrade", "hydra", "omegaconf")}


def import_public(name: str):
    """The module, or None for a FRAMEWORK_MODULES module whose framework is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in FRAMEWORK_MODULES.get(name, ()):
            return None
        raise


def public_modules() -> list[str]:
    """navdtw and every module below it with no part of its name starting with ``_`` and with an
    ``__all__`` (a module without one exports nothing by name)."""
    found = ["navdtw", *(m.name for m in pkgutil.walk_packages(navdtw.__path__, "navdtw."))]
    return [
        name
        for name in found
        if not any(part.startswith("_") for part in name.split(".")) and hasattr(import_public(name), "__all__")
    ]


def public_names() -> dict[str, set[str]]:
    """Every name of every public ``__all__`` (``module.name``) -> the names it may be documented
    under: itself, the same object's name in any public module that exports it too, and for a
    class or function its home name (``__module__.__qualname__``), for a module its own."""
    exported: dict[str, list[tuple[str, object]]] = {}
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            exported.setdefault(name, []).append((module_name, getattr(module, name)))
    out = {}
    for name, places in exported.items():
        for module_name, obj in places:
            under = {f"{other}.{name}" for other, same in places if same is obj}
            if inspect.ismodule(obj):
                under.add(obj.__name__)
            elif inspect.isclass(obj) or inspect.isfunction(obj):
                under.add(f"{obj.__module__}.{obj.__qualname__}")
            out[f"{module_name}.{name}"] = under
    return out


def undocumented(documented: set[str]) -> list[str]:
    return sorted(name for name, under in public_names().items() if not under & documented)


def documented_in_sources() -> set[str]:
    """Names the API pages document: each directive's target, and the members (``__all__``) of an
    ``automodule`` with ``:members:``."""
    names = set()
    for page in sorted((DOCS / "api").glob("*.rst")):
        for m in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            module_option = re.search(r":module: ([\w.]+)", m["options"])
            names.add(f"{module_option[1]}.{m['name']}" if module_option else m["name"])
            if m.group(0).startswith(".. automodule::") and ":members:" in m["options"]:
                module = importlib.import_module(m["name"])
                members = getattr(module, "__all__", [n for n in dir(module) if not n.startswith("_")])
                names |= {f"{m['name']}.{member}" for member in members}
    return names


def inventory_names() -> set[str]:
    """Every Python object of the built site (objects.inv: four header lines, then zlib)."""
    raw = INVENTORY.read_bytes()
    body = raw.split(b"\n", 4)[4]
    lines = zlib.decompress(body).decode("utf-8").splitlines()
    return {line.split(" ", 1)[0] for line in lines if " py:" in line}


def test_api_sources_list_every_public_name():
    missing = undocumented(documented_in_sources())
    assert not missing, f"not in docs/api/*.rst: {missing}"


def test_built_site_lists_every_public_name():
    if not INVENTORY.is_file():
        pytest.skip("the site is not built (sphinx-build -W --keep-going -b html docs docs/_build/html)")
    missing = undocumented(inventory_names())
    assert not missing, f"not in the built site's objects.inv (rebuild it if it is stale): {missing}"


def test_source_check_can_fail(monkeypatch):
    """The source check sees a name that no page documents, in any public module, a new one too."""
    assert "navdtw.dtw" in documented_in_sources()
    assert "navdtw.no_such_function" not in documented_in_sources()
    modules = public_modules()
    assert {"navdtw", "navdtw.datasets.r2r", "navdtw.paths", "navdtw.suite.tables"} <= set(modules)
    assert not any("._" in m for m in modules)
    names = public_names()
    # a re-export is documented under its public names (here navdtw.datasets.match_predictions)
    assert "navdtw.datasets.match_predictions" in names["navdtw.datasets.r2r.match_predictions"]
    # a module that appears later, with a name of its own and a re-export of a documented one
    new = types.ModuleType("navdtw.paths_new")
    new.__all__ = ["fresh", "as_paths"]
    new.fresh = lambda: None
    new.as_paths = navdtw.paths.as_paths
    monkeypatch.setitem(sys.modules, "navdtw.paths_new", new)
    monkeypatch.setattr(pkgutil, "walk_packages", lambda path, prefix: [types.SimpleNamespace(name="navdtw.paths_new")])
    assert undocumented(documented_in_sources()) == ["navdtw.paths_new.fresh"]


def test_a_reexported_constant_shows_its_own_docstring(monkeypatch):
    """docs/_ext/reexported_data.py: ``.. autodata:: navdtw.stats.BLOCK`` (defined in
    ``navdtw.stats._resampling``, re-exported by the package) shows the docstring written beside
    the value, where Sphinx alone finds none and shows int's; a constant with a docstring where it
    is documented (``navdtw.datasets.DATASETS``) keeps the one Sphinx found."""
    pytest.importorskip("sphinx")
    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    import reexported_data

    lines = ["int([x]) -> integer"]
    reexported_data.fill(None, "data", "navdtw.stats.BLOCK", navdtw.stats.BLOCK, {}, lines)
    assert lines[0].startswith("The number of resamples per block"), lines
    lines = ["the registry"]
    reexported_data.fill(None, "data", "navdtw.datasets.DATASETS", navdtw.datasets.DATASETS, {}, lines)
    assert lines == ["the registry"]


def test_every_data_set_kind_has_a_page():
    """A new kind in navdtw.datasets.DATASETS needs docs/datasets/<kind>.md, listed in the index's
    toctree (HA-VLN, scored by navdtw.humanaware, has one too)."""
    index = (DOCS / "datasets" / "index.md").read_text(encoding="utf-8")
    (toctree,) = re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
    listed = {line.strip() for line in toctree.splitlines() if line.strip() and not line.startswith(":")}
    kinds = {*navdtw.datasets.DATASETS, "ha-vln"}
    assert kinds <= listed, f"kinds without a line in docs/datasets/index.md's toctree: {sorted(kinds - listed)}"
    for kind in sorted(listed):
        page = DOCS / "datasets" / f"{kind}.md"
        assert page.is_file(), f"{page} is missing"
        assert f"`{kind}`" in index, f"docs/datasets/index.md's table has no row for {kind}"


# --------------------------------------------------------------------------------------------
# numpydoc sections of the public API
# --------------------------------------------------------------------------------------------

#: Modules whose public names (their ``__all__``, and the public methods of public classes) must
#: carry numpydoc sections. A re-exported name is checked in the module that defines it, which
#: must be listed here or in NUMPYDOC_PENDING. To cover more of the package, move its modules
#: from NUMPYDOC_PENDING to here.
NUMPYDOC_MODULES = (
    "navdtw",
    "navdtw._config",
    "navdtw.anchored",
    "navdtw.baseline",
    "navdtw.cli",
    "navdtw.datasets",
    "navdtw.datasets.base",
    "navdtw.datasets.havln",
    "navdtw.datasets.layouts",
    "navdtw.datasets.matterport",
    "navdtw.datasets.ndh",
    "navdtw.datasets.positions",
    "navdtw.datasets.ivlnce",
    "navdtw.subtasks",
    "navdtw.datasets.r2r",
    "navdtw.datasets.results",
    "navdtw.datasets.results.episode_log",
    "navdtw.datasets.results.layouts",
    "navdtw.datasets.results.shards",
    "navdtw.datasets.reverie",
    "navdtw.datasets.rxr",
    "navdtw.datasets.rxrce",
    "navdtw.datasets.shards",
    "navdtw.datasets.vlnce",
    "navdtw.distributed",
    "navdtw.engine",
    "navdtw.graphs",
    "navdtw.habitat",
    "navdtw.humanaware",
    "navdtw.instruction_errors",
    "navdtw.metrics",
    "navdtw.paths",
    "navdtw.plot",
    "navdtw.registry",
    "navdtw.report",
    "navdtw.reward",
    "navdtw.order",
    "navdtw.sequential",
    "navdtw.stats",
    "navdtw.suite",
    "navdtw.suite.clusters",
    "navdtw.suite.config",
    "navdtw.suite.marks",
    "navdtw.suite.results",
    "navdtw.suite.runner",
    "navdtw.suite.tables",
    "navdtw.synthetic",
    "navdtw.tours",
    "navdtw.watch",
)
#: Modules (with their submodules) whose docstrings are not checked yet: none is left. A new
#: package whose docstrings are still to write can wait here, not in NUMPYDOC_MODULES.
NUMPYDOC_PENDING: tuple[str, ...] = ()
#: Public methods of a class checked besides those without a leading underscore.
CHECKED_DUNDERS = ("__call__",)
SECTION = re.compile(r"^(?P<indent> *)(?P<title>[A-Z][A-Za-z ]+)\n(?P=indent)-{3,}$", re.M)


def docstring_sections(doc: str | None) -> dict[str, str]:
    """A numpydoc docstring's sections, ``{title: body}`` (the body dedented)."""
    doc = inspect.cleandoc(doc or "")
    heads = list(SECTION.finditer(doc))
    out = {}
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(doc)
        out[m["title"]] = textwrap.dedent(doc[m.end() : end].strip("\n"))
    return out


def section_entries(body: str) -> list[str]:
    """The entry lines of a Parameters / Raises section: those at the section's own indentation
    (the descriptions below them are indented)."""
    return [line.strip() for line in body.splitlines() if line.strip() and not line[0].isspace()]


def documented_params(sections: dict[str, str], *titles: str) -> set[str]:
    """The names in those sections: ``x : int``, ``x:``, ``x, y : float``, ``*args``."""
    names = set()
    for title in titles:
        for entry in section_entries(sections.get(title, "")):
            head = re.split(r"\s*:(?!\S)\s*|\s+:\s*", entry, maxsplit=1)[0]
            names |= {n.strip().lstrip("*") for n in head.split(",") if n.strip()}
    return names


def raised_types(sections: dict[str, str]) -> list[str]:
    """The exception names of a Raises section (``TypeError, ValueError``, ``~navdtw.x.Error``)."""
    names = []
    for entry in section_entries(sections.get("Raises", "")):
        names += [re.sub(r"^:\w+:`~?|`$|^~", "", n.strip()) for n in entry.split(",") if n.strip()]
    return names


def home_module(obj) -> str:
    return getattr(obj, "__module__", None) or ""


def is_pending(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in NUMPYDOC_PENDING)


def is_internal(module: str) -> bool:
    """An internal module (``navdtw._io``, ``navdtw.datasets._common``): it has no ``__all__`` of
    its own, so what a public module re-exports from it is checked there, under its home name."""
    return any(part.startswith("_") for part in module.split(".")) and module not in NUMPYDOC_MODULES


def checked_objects() -> dict[str, object]:
    """Every function, class and public method to check, by qualified name; re-exports once, under
    their home module (a re-export from an internal module: where it is re-exported)."""
    out: dict[str, object] = {}
    for module_name in NUMPYDOC_MODULES:
        module = import_public(module_name)
        if module is None:
            continue
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue  # submodules and data
            home = home_module(obj)
            if home != module_name and not is_internal(home):
                assert home in NUMPYDOC_MODULES or is_pending(home), (
                    f"{module_name}.{name} comes from {home}: add that module to NUMPYDOC_MODULES or NUMPYDOC_PENDING"
                )
                continue
            out[f"{home}.{name}"] = obj
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_") and attr not in CHECKED_DUNDERS:
                        continue
                    if isinstance(value, (classmethod, staticmethod)):
                        value = value.__func__
                    if inspect.isfunction(value):
                        out[f"{home}.{name}.{attr}"] = value
    return out


def signature_params(obj) -> list[inspect.Parameter]:
    """The parameters a docstring must name: a class's are its constructor's (documented in the
    class docstring, as autodoc shows them); not ``self`` / ``cls``, nor a private keyword
    (``_scans``: for navdtw's own calls)."""
    if inspect.isclass(obj):
        if dataclasses.is_dataclass(obj):
            return list(inspect.signature(obj).parameters.values())
        init = vars(obj).get("__init__")
        if init is None:
            return []  # inherited constructor (exceptions, Enum): nothing of its own to document
        obj = init
    params = list(inspect.signature(obj).parameters.values())
    if params and params[0].name in ("self", "cls") and "." in obj.__qualname__:
        params = params[1:]
    return [p for p in params if not p.name.startswith("_")]


def own_code(obj) -> list[tuple[object, ast.AST]]:
    """``(function, syntax tree)`` of the function, or of the class's constructor (a dataclass:
    its ``__post_init__``); empty without source."""
    funcs = [vars(obj).get(name) for name in ("__init__", "__post_init__")] if inspect.isclass(obj) else [obj]
    out = []
    for func in funcs:
        try:
            out.append((func, ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]))
        except (OSError, TypeError):
            continue  # None, or generated (a dataclass's __init__)
    return out


def own_nodes(tree: ast.AST):
    """The nodes of a function's body, not of the functions and classes defined inside it."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def called_functions(func, tree: ast.AST) -> list:
    """navdtw functions (and constructors) the function calls by a name of its module, ``self.x``
    or ``module.x``: where its input checks may live."""
    scope = dict(getattr(func, "__globals__", {}))
    owner = None
    if "." in func.__qualname__:
        owner = scope.get(func.__qualname__.split(".")[0])
    out = []
    for node in own_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        f, target = node.func, None
        if isinstance(f, ast.Name):
            target = scope.get(f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            base = owner if f.value.id in ("self", "cls") else scope.get(f.value.id)
            target = inspect.getattr_static(base, f.attr, None) if base is not None else None
            if isinstance(target, (classmethod, staticmethod)):
                target = target.__func__
        if (inspect.isfunction(target) or inspect.isclass(target)) and home_module(target).startswith("navdtw"):
            out.append(target)
    return out


def validates(obj, seen=None) -> bool:
    """Whether calling ``obj`` can raise on bad input: its own code raises, or a navdtw function it
    calls does (followed through the package, e.g. ``ndtw`` -> ``dtw`` -> the path checks)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    for func, tree in own_code(obj):
        if any(isinstance(node, ast.Raise) for node in own_nodes(tree)):
            return True
        if any(validates(f, seen) for f in called_functions(func, tree)):
            return True
    return False


def returns_value(obj) -> bool:
    """Whether the function returns something (a context manager: yields it)."""
    if inspect.isclass(obj) or not own_code(obj):
        return False
    ((_, tree),) = own_code(obj)
    if isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(d, ast.Name) and d.id == "contextmanager" for d in tree.decorator_list
    ):
        return True
    return any(isinstance(n, ast.Return) and n.value is not None for n in own_nodes(tree))


def numpydoc_problems(qualname: str, obj) -> list[str]:
    # inspect.getdoc: a method without a docstring of its own shows its base class's (as autodoc
    # renders it: autodoc_inherit_docstrings), so that one must fit it
    sections = docstring_sections(inspect.getdoc(obj))
    params = signature_params(obj)
    named = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    documented = documented_params(sections, "Parameters", "Attributes" if dataclasses.is_dataclass(obj) else "")
    problems = []
    if named and "Parameters" not in sections and not (dataclasses.is_dataclass(obj) and "Attributes" in sections):
        problems.append("no Parameters section")
    else:
        missing = [n for n in named if n not in documented]
        if missing:
            problems.append(f"Parameters lacks {missing}")
        stale = sorted(documented - {p.name for p in params})
        if stale and not dataclasses.is_dataclass(obj):
            problems.append(f"Parameters names {stale}, which the signature does not have")
    if params and validates(obj) and "Raises" not in sections:
        problems.append("validates its input but has no Raises section")
    for name in raised_types(sections):
        exc = getattr(builtins, name, None)
        if exc is None and "." in name:
            module, _, attr = name.rpartition(".")
            exc = getattr(importlib.import_module(module), attr, None)
        if exc is None:
            exc = getattr(inspect.getmodule(obj), name, None)
        if not (inspect.isclass(exc) and issubclass(exc, BaseException)):
            problems.append(f"Raises names {name!r}, which is not an exception class")
    if not inspect.isclass(obj) and returns_value(obj) and not {"Returns", "Yields"} & sections.keys():
        problems.append("returns a value but has no Returns section")
    return [f"{qualname}: {p}" for p in problems]


def test_public_api_has_numpydoc_sections():
    """Every function and method of NUMPYDOC_MODULES that takes parameters names each in a
    Parameters section (a class: its constructor's, in the class docstring), documents its errors
    in a Raises section when it (or a navdtw function it calls) raises, names only real exception
    types there, and has a Returns section when it returns a value: the API pages render these
    sections; prose alone renders as a bare signature."""
    problems = [p for qualname, obj in checked_objects().items() for p in numpydoc_problems(qualname, obj)]
    assert not problems, "numpydoc gaps:\n" + "\n".join(problems)


def test_numpydoc_check_can_fail():
    """The check sees a missing parameter, a missing Raises section and an exception type that
    does not exist."""

    def scale(x, factor, *, check=True):
        """Scales.

        Parameters
        ----------
        x : float
            The value.
        check:
            Whether to check.

        Raises
        ------
        ValueError
            A negative factor.
        NoSuchError
            Never.
        """
        if factor < 0:
            raise ValueError("negative")
        return x * factor

    problems = numpydoc_problems("scale", scale)
    assert "scale: Parameters lacks ['factor']" in problems
    assert "scale: Raises names 'NoSuchError', which is not an exception class" in problems
    assert "scale: returns a value but has no Returns section" in problems

    def unchecked(x):  # raises through a navdtw function it calls
        """Parameters
        ----------
        x, y : int
            The values.

        Returns
        -------
        int
        """
        return navdtw.ndtw([0], [0], distances=[[0]], threshold=x)  # ndtw checks the threshold

    assert numpydoc_problems("unchecked", unchecked) == [
        "unchecked: Parameters names ['y'], which the signature does not have",
        "unchecked: validates its input but has no Raises section",
    ]


def test_in_the_loop_states_the_python_floor():
    """VLN-CE's documented environment is Python 3.6 (habitat 0.1.7): the yacs section must say
    which Python navdtw needs, the floor of pyproject.toml, so a VLN-CE user knows before trying."""
    floor = re.search(r'requires-python = ">=([\d.]+)"', (REPO / "pyproject.toml").read_text("utf-8")).group(1)
    text = (DOCS / "in-the-loop.md").read_text("utf-8")
    yacs = text.split("## A VLN-CE-style trainer", 1)[1].split("\n## ", 1)[0]
    assert f"Python >= {floor}" in yacs and "Python 3.6" in yacs
