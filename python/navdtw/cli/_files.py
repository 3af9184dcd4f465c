"""Internal to :mod:`navdtw.cli`: the files a command line names, checked before any work: inputs
that must exist, and an output folder that must be neither an input nor a place that would
overwrite one."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ._status import UserError


def need_file(path: str | None, option: str) -> Path:
    """Internal: the file ``path`` given to ``option``; :class:`UserError` when missing or a folder."""
    if not path:
        raise UserError(f"{option} is required")
    p = Path(path)
    if p.is_dir():
        raise UserError(f"{option} {path}: is a folder, not a file")
    if not p.is_file():
        raise UserError(f"{option} {path}: no such file")
    return p


def need_dir(path: str | None, option: str) -> Path:
    """Internal: the folder ``path`` given to ``option``; :class:`UserError` when missing."""
    if not path:
        raise UserError(f"{option} is required")
    p = Path(path)
    if not p.is_dir():
        raise UserError(f"{option} {path}: no such folder")
    return p


def need_path(text: str, option: str) -> Path:
    """Internal: a folder, or a file that exists (:func:`need_file`)."""
    path = Path(text)
    return path if path.is_dir() else need_file(text, option)


def same(a: Path, b: Path) -> bool:
    """Internal: whether two paths name the same file or folder."""
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:  # pragma: no cover
        return False


def check_out(out: Path, outputs: Sequence[str], inputs: Sequence[Path]) -> None:
    """Internal: refuses an output folder that is, or would overwrite, an input."""
    for p in inputs:
        if same(out, p):
            raise UserError(f"--out {out}: is an input ({p}); choose another output folder")
        for name in outputs:
            if same(out / name, p):
                raise UserError(f"--out {out}: writing {name} there would overwrite the input {p}")
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a folder")
