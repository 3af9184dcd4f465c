"""Atomic file output: write to a temporary file in the target folder, then rename over. A write
that fails raises :class:`OutputError` naming the real output, never the temporary file."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._typing import PathLike


class OutputError(OSError):
    """An output file could not be written. ``str()`` is one line naming the output (the
    ``navdtw`` command exits with status 3)."""

    def __str__(self) -> str:
        return str(self.strerror or super().__str__())


def output_error(path: PathLike, exc: OSError, more: str = "") -> OutputError:
    """An :class:`OutputError` for ``path`` from the OSError that stopped writing it."""
    return OutputError(exc.errno, f"{path}: cannot write: {exc.strerror or exc}{more}")


def _plain_permissions(tmp: str) -> None:
    """mkstemp creates 0600; give the file the permissions a plain open() would have."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)


@contextlib.contextmanager
def atomic_target(path: PathLike) -> Iterator[str]:
    """For a writer that takes a file name (pyarrow): yields a temporary file name in ``path``'s
    folder (which must exist), renamed over ``path`` when the block ends and removed when it
    raises, so ``path`` is either the old file or the whole new one. An ``OSError`` (the block's or
    the rename's) becomes :class:`OutputError` naming ``path``."""
    path = Path(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        yield tmp
        _plain_permissions(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise output_error(path, exc) from None
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def atomic_write_bytes(path: PathLike, data: bytes) -> Path:
    """Writes ``data`` to ``path`` so readers never see a partial file (temp file + rename);
    :class:`OutputError` naming ``path`` when it cannot be written."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(path, exc) from None
    with atomic_target(path) as tmp:
        Path(tmp).write_bytes(data)
    return path


def atomic_write_text(path: PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: PathLike, obj: Any, *, indent: int = 2) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=False) + "\n")
