"""Sphinx configuration of navdtw's documentation site.

Build (from the repository root, after ``pip install ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The chapters are the Markdown files of this folder (MyST); the API reference is generated from the
installed package's docstrings (autodoc + napoleon) and, for the compiled engine, from
``python/navdtw/_core.pyi`` (``_ext/stubs.py``); the CLI reference from ``navdtw.cli.build_parser``
(sphinx-argparse). Every cross-reference must resolve (``nitpicky``): a broken one is a warning, and
``-W`` makes it an error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import navdtw
import navdtw._core

# The compiled module is imported here, before autodoc: `import navdtw` loads it lazily, and
# Sphinx >= 9 autodoc, importing a native module not yet in sys.modules, executes the `.pyi` stub
# installed beside it in its place (no values: `_core.STATS` missing for every module imported
# after). A wheel install has the stub beside the .so; an editable one does not, so only CI saw it.

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "navdtw"
author = "navdtw developers"
copyright = "navdtw developers, MIT licence"
release = navdtw.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "sphinx_copybutton",
    "stubs",  # _ext/stubs.py: navdtw._core's signatures from _core.pyi
    "home_refs",  # _ext/home_refs.py: a submodule's short references, to where the name is documented
    "readme_links",  # _ext/readme_links.py: the README's links to GitHub's pages, as the site's own
    "reexported_data",  # _ext/reexported_data.py: a re-exported constant's docstring, from its home
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Every reference must resolve. The site is built offline (no intersphinx inventories), so the
# targets that live in other projects' documentation are named here, and nothing of navdtw's is.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:(class|obj|data)", r"(numpy|np|numpy\.typing|npt|collections\.abc|typing|pathlib|os|pyarrow|pa|dask)\..+"),
    (r"py:(class|obj)", r"(ArrayLike|PathLike|Path|Sequence|Mapping|Iterable|Iterator|Callable|Generator)"),
    (r"py:class", r"(argparse\.\w+|matplotlib\..+|concurrent\.futures\..+|io\.\w+|pandas\..+|distributed\..+)"),
    # numpydoc's words in the types of Parameters sections ("array_like, optional")
    (r"py:class", r"(array_like|optional|sequence|mapping|iterable|collection|callable)"),
    # classes of navdtw's internal modules (``_common``, ...) named by a public class's annotated
    # fields: internal modules have no reference pages (docs/design.md), so these are not links
    (r"py:class", r"navdtw\.(\w+\.)*_\w+\.\w+"),
]

# MyST: headings get anchors (the pages link to "#sources" and the like), and a link to a missing
# page or anchor is a warning like any other reference.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence", "deflist"]

# API reference: signatures without types, the types beside each parameter; members in source
# order; only the public names (__all__).
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_typehints_format = "short"
autodoc_class_signature = "separated"
autodoc_preserve_defaults = True
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = True
napoleon_custom_sections = [("Cost modes", "notes"), ("Methods", "notes"), ("Precision", "notes")]

html_theme = "furo"
html_title = f"navdtw {release}"
html_static_path: list[str] = []
html_theme_options = {
    "source_repository": "https://github.com/navdtw/navdtw/",
    "source_branch": "main",
    "source_directory": "docs/",
}
pygments_style = "friendly"
pygments_dark_style = "monokai"
copybutton_prompt_text = r"\$ "
copybutton_prompt_is_regexp = True
