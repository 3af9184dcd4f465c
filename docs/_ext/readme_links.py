"""The README's links to these pages, as links between the site's pages.

The README is the package's index page on PyPI, where a relative ``docs/...`` link leads nowhere, so
it links to the pages on GitHub (``https://github.com/navdtw/navdtw/blob/main/docs/...``). The site's
home page includes the README (``docs/index.md``, ``:relative-docs: docs/``): there those links are
turned back into ``docs/...`` before MyST reads the file (Sphinx's ``include-read`` event), so the
site links to its own pages, checked like any other reference, and never to GitHub.
"""

from __future__ import annotations

#: Where the README's links to the documentation pages point.
PAGES = "https://github.com/navdtw/navdtw/blob/main/docs/"


def local_links(text: str) -> str:
    """``text`` with every link to a page of ``PAGES`` made relative (``docs/...``)."""
    return text.replace(f"]({PAGES}", "](docs/")


def _include_read(app, relative_path, parent_docname, content) -> None:
    if str(relative_path).replace("\\", "/").endswith("README.md"):
        content[0] = local_links(content[0])


def setup(app):
    app.connect("include-read", _include_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
