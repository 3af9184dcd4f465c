"""Internal: a package's names imported on first touch (PEP 562), for ``navdtw`` and ``navdtw.suite``.

``import navdtw`` then costs no numpy, scipy or compiled engine, so ``navdtw --help`` answers at
once; a name is imported from its module when first used and bound in the package, so later
look-ups are plain attribute reads."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    namespace: dict[str, Any], names: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package whose ``globals()`` is ``namespace``.

    ``names`` maps each lazy name to the module that defines it, absolute (``"navdtw._io"``) or
    relative to the package (``".config"``). Any other name is tried as a submodule of the package
    (public or not, as when the package imported them all); a name that is neither is an
    ``AttributeError``. ``dir()`` lists the package's globals, ``names`` and ``submodules``."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(import_module(names[name], package), name)
            namespace[name] = value  # later look-ups are plain
            return value
        try:  # a submodule: the import binds it in the package too
            return import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names) | set(submodules))

    return __getattr__, __dir__
