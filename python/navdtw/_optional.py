"""Internal: navdtw's optional dependencies, imported by the functions that need them, with one
message naming the extra that brings each (pandas' ``import_optional_dependency`` is the model).

``import_optional("matplotlib.figure", "a figure")`` returns the module, or raises::

    ImportError: a figure needs matplotlib: pip install "navdtw[plot]" (or pip install matplotlib)
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Literal

#: The extra of navdtw (pyproject.toml's ``optional-dependencies``) that brings each optional
#: distribution; one not here is installed by its own name (pandas, which only ``to_pandas`` uses).
EXTRAS: dict[str, str] = {
    "matplotlib": "plot",
    "tqdm": "progress",
    "pyarrow": "dask",
    "dask": "dask",
    "distributed": "dask",
    "fsspec": "dask",
}


def install_hint(name: str) -> str:
    """How to install the distribution of module ``name``: ``pip install "navdtw[plot]" (or pip
    install matplotlib)``, or ``pip install pandas`` for one that no extra brings."""
    top = name.partition(".")[0]
    extra = EXTRAS.get(top)
    return f'pip install "navdtw[{extra}]" (or pip install {top})' if extra else f"pip install {top}"


def missing(name: str, needed_by: str) -> str:
    """The one-line message for module ``name`` not installed: ``"<needed_by> needs <its
    distribution>: <how to install it>"``."""
    return f"{needed_by} needs {name.partition('.')[0]}: {install_hint(name)}"


def import_optional(name: str, needed_by: str, *, errors: Literal["raise", "ignore"] = "raise") -> ModuleType | None:
    """Module ``name`` (``"pyarrow.parquet"``), imported.

    ``needed_by`` says what needs it, for the message (``"score_parquet"``, ``"p.parquet: reading
    Parquet"``). ``errors="ignore"`` returns None when it is not installed (an optional nicety
    such as a tqdm bar); ``"raise"`` raises ``ImportError`` with the message of :func:`missing`.
    """
    parts = name.split(".")
    try:  # each package on the way, as ``import a.b`` does: a package made unimportable stops it
        for k in range(1, len(parts) + 1):
            module = importlib.import_module(".".join(parts[:k]))
        return module
    except ImportError as exc:
        if errors == "ignore":
            return None
        raise ImportError(missing(name, needed_by)) from exc
