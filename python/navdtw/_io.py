"""Atomic file output: write to a temporary file in the target folder, then rename over. A write
that fails raises :class:`OutputError` naming the real output, never the temporary file.

Output folders (every command with ``--out``: :func:`output_folder`, and the suite's outputs in
:mod:`navdtw.suite.outputs`) share one guarantee: a file may be replaced only when the folder's
manifest (:data:`MANIFEST`) says navdtw wrote it and its SHA-256 still matches
(:func:`check_replaceable`; ``force`` waives this), never a read-only or immutable one; and the new
files are switched in as one step (:func:`commit_outputs`), so that after any failure the folder
holds the earlier files, unchanged. A switch cut short by a kill or a power cut is undone by the
next command that writes there (:func:`recover_switch`, from the journal :data:`JOURNAL`)."""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import os
import secrets
import shutil
import stat
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._typing import PathLike


class OutputWarning(UserWarning):
    """Something an output folder held that navdtw put right (an earlier switch cut short and
    undone); the ``navdtw`` command prints it as ``navdtw: warning: ...``."""


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


def atomic_write_bytes(path: PathLike, data: bytes, *, durable: bool = False) -> Path:
    """Writes ``data`` to ``path`` so readers never see a partial file (temp file + rename);
    :class:`OutputError` naming ``path`` when it cannot be written. ``durable``: the file's bytes
    and then its folder's entry are synced to the disk (``os.fsync``) before it returns, so a power
    cut after it leaves the whole new file (a file a running loop writes beside its log)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise output_error(path, exc) from None
    with atomic_target(path) as tmp, open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    if durable:
        try:
            sync_folder(path.parent)
        except OSError as exc:
            raise output_error(path, exc) from None
    return path


def sync_folder(folder: PathLike) -> None:
    """Syncs a folder's entries to the disk (a file created or renamed in it survives a power cut);
    a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except (PermissionError, IsADirectoryError):  # Windows opens no folder
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: PathLike, obj: Any, *, indent: int = 2) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=False) + "\n")


#: The manifest of an output folder: the files navdtw last wrote there and their SHA-256.
MANIFEST = ".navdtw-outputs.json"


def check_replaceable(out: Path, names: Sequence[str], *, force: bool = False) -> None:
    """Refuses to replace a file the user owns: of ``names`` (and the manifest), a file that
    exists in ``out`` must be listed in the manifest with its current SHA-256 (navdtw wrote it and
    nobody changed it since; ``force`` waives this) and must not be read-only (no write permission,
    or immutable: the user protected it, whatever ``force`` says).

    Raises
    ------
    OutputError
        naming the first such file and what to do.

    Warns
    -----
    OutputWarning
        when an earlier switch into ``out`` was cut short and is undone first (:func:`recover_switch`).
    """
    note = recover_switch(out)
    if note:
        warnings.warn(note, OutputWarning, stacklevel=2)
    listed = read_manifest(out)
    for name in [MANIFEST, *names]:
        path = out / name
        if not path.is_file():
            continue
        why = protected(path)
        if why:
            raise OutputError(
                errno.EACCES,
                f"{path}: cannot replace: it is {why}; navdtw never replaces a file protected against writing "
                "(make it writable, or move it away)",
            )
        if force:
            continue
        if name == MANIFEST:
            if listed is None:
                raise OutputError(
                    errno.EEXIST, f"{path}: not navdtw's manifest; navdtw replaces only its own outputs: {_FORCE}"
                )
            continue
        if name not in (listed or {}):
            raise OutputError(
                errno.EEXIST,
                f"{path}: not written by navdtw (no record in {MANIFEST}); navdtw replaces only its own "
                f"outputs: {_FORCE}",
            )
        if sha256_of(path) != listed[name]:
            raise OutputError(
                errno.EEXIST,
                f"{path}: changed since navdtw wrote it (its SHA-256 is not the one in {MANIFEST}), so it is "
                f"yours now; navdtw replaces only its own outputs: {_FORCE}",
            )


def check_writable(out: Path, names: Sequence[str] = (), *, force: bool = False, files: Sequence[str] = ()) -> None:
    """Creates ``out`` (and its parents) and proves that a file can be created in it, that none of
    ``names`` and ``files`` is a folder there, and that every file of ``names`` (and the manifest)
    that exists there may be replaced (:func:`check_replaceable`): before a command spends its time.

    Raises
    ------
    OutputError
        naming the folder or the file.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".navdtw-probe.", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(exc.errno, f"{out}: cannot write into the output folder: {exc.strerror or exc}") from None
    for name in dict.fromkeys([*files, *names]):
        if (out / name).exists() and not (out / name).is_file():
            raise OutputError(errno.EISDIR, f"{out / name}: cannot write: it exists and is not a file")
    check_replaceable(out, names, force=force)


_FORCE = "move it away, or replace it with --force (Python: force=True)"


def protected(path: Path) -> str:
    """Why ``path`` is protected against writing ("read-only (mode 0444)", "immutable"), or ""."""
    mode = path.stat().st_mode
    if not mode & stat.S_IWUSR:
        return f"read-only (mode {stat.S_IMODE(mode):04o})"
    if not os.access(path, os.W_OK):  # root may write a 0444 file, but not an immutable one
        return "not writable (immutable, or another user's)"
    return ""


def read_manifest(out: Path) -> dict[str, str] | None:
    """The manifest's ``{name: SHA-256}``; ``{}`` when there is none, None when the file there is
    not a manifest navdtw wrote."""
    path = out / MANIFEST
    if not path.exists():
        return {}
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))["files"]
        return {str(k): str(v) for k, v in listed.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: While outputs are switched in: the journal of the switch (the names it replaces, where each old
#: file is kept, the new files' SHA-256), removed when the switch is done or undone. A journal left
#: behind means the switch was cut short (a kill, a power cut): :func:`recover_switch` undoes it.
JOURNAL = ".navdtw-switch.json"


# Why a rollback and not a staged folder renamed into place: the output folder may hold the user's
# own files (and the baseline cache), which must stay where they are; POSIX cannot rename a folder
# over a non-empty one, and swapping two folders (renameat2's RENAME_EXCHANGE) is Linux-only. So
# each old file is first kept under a second name (a hard link: nothing is copied, and an immutable
# file refuses it before anything changed), then the new files are renamed over the old ones, the
# manifest last; a failure on the way renames every kept file back and removes the new ones. The
# journal, written before anything changes, lets the next run do the same after a kill.
def commit_outputs(out: Path, data: dict[str, bytes], remove: Sequence[str] = ()) -> list[Path]:
    """Switches ``data`` (name -> bytes, the manifest last) into ``out`` and removes ``remove``, as
    one step: on any failure (a write, a rename, an interruption) ``out`` is left as it was, and
    the :class:`OutputError` names the real output; after a kill, the next call of
    :func:`check_replaceable` on ``out`` puts it back (:data:`JOURNAL`)."""
    umask = os.umask(0)
    os.umask(umask)
    token = secrets.token_hex(4)  # in the names of this switch's temporary files: .NAME.TOKEN.*.tmp
    temps: dict[str, str] = {}
    kept = {name: out / f".{name}.{token}.old" for name in [*data, *remove] if (out / name).exists()}
    journal = {
        "token": token,
        "new": {name: hashlib.sha256(blob).hexdigest() for name, blob in data.items()},
        "kept": {name: p.name for name, p in kept.items()},
    }
    done = undone = False
    switched: list[str] = []  # names replaced, created or removed so far
    try:
        try:
            atomic_write_json(out / JOURNAL, journal)
        except OutputError as exc:
            raise OutputError(exc.errno, f"{exc}; nothing was changed") from None
        for name, blob in data.items():
            try:
                fd, temps[name] = tempfile.mkstemp(prefix=f".{name}.{token}.", suffix=".tmp", dir=out)
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                os.chmod(temps[name], 0o666 & ~umask)  # mkstemp creates 0600; as a plain open() would
            except OSError as exc:
                raise output_error(out / name, exc, "; nothing was changed") from None
        for name, second in kept.items():
            try:
                _keep(out / name, second)
            except OSError as exc:
                raise OutputError(
                    exc.errno, f"{out / name}: cannot replace: {exc.strerror or exc}; nothing was changed"
                ) from None
        for name in [*remove, *data]:
            try:
                if name in data:
                    os.replace(temps[name], out / name)
                else:
                    os.unlink(out / name)
            except OSError as exc:
                raise output_error(out / name, exc, "; nothing was changed (the earlier files are back)") from None
            switched.append(name)
        done = True
        return [out / name for name in data]
    except BaseException:  # OutputError, and an interruption half-way: put the old files back
        undone = _rollback(out, switched, dict(kept), data)
        raise
    finally:
        for path in [*temps.values(), *(kept.values() if done else ())]:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if done or undone:  # else the journal stays, for recover_switch to finish the rollback
            with contextlib.suppress(OSError):
                os.unlink(out / JOURNAL)


def _keep(path: Path, second: Path) -> None:
    """Gives the file at ``path`` the second name ``second`` in its folder (a hard link; renamed
    where the file system has no hard links), so that it can be put back."""
    try:
        os.link(path, second)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        os.rename(path, second)  # an immutable file refuses this too


def _rollback(out: Path, switched: list[str], kept: dict[str, Path], data: Mapping[str, bytes]) -> bool:
    """Undoes the switch: every kept old file renamed back, every new file without one removed.
    False when a step failed (the journal then stays for :func:`recover_switch`)."""
    ok = True
    for name in reversed(switched):
        try:
            if name in kept:
                os.replace(kept.pop(name), out / name)
            elif name in data:
                os.unlink(out / name)
        except OSError:
            ok = False
    for name, second in kept.items():  # kept but not yet switched: the original is in place
        try:
            if not second.exists():
                continue  # not kept yet
            if (out / name).exists():
                os.unlink(second)
            else:
                os.replace(second, out / name)
        except OSError:
            ok = False
    return ok


def recover_switch(out: Path) -> str:
    """Finishes a switch into ``out`` that was cut short (a kill or a power cut during
    :func:`commit_outputs` left its :data:`JOURNAL`): when the new manifest is in place the switch
    was complete and only its leftovers go; otherwise every old file is put back and the new files
    the switch created are removed, so that ``out`` is the earlier run again. Returns what was done
    ("" when there was nothing to do).

    Raises
    ------
    OutputError
        when the journal cannot be read or a file cannot be put back (naming it).
    """
    path = out / JOURNAL
    if not path.is_file():
        return ""
    try:
        journal = json.loads(path.read_text(encoding="utf-8"))
        new = {str(k): str(v) for k, v in journal["new"].items()}
        kept = {str(k): out / Path(str(v)).name for k, v in journal["kept"].items()}
        token = str(journal["token"])
        temps = [t for name in new for t in out.glob(f".{glob.escape(name)}.{glob.escape(token)}.*.tmp")]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise OutputError(
            errno.EINVAL,
            f"{path}: the journal of an earlier run's switch cannot be read ({exc}); check the folder's files "
            "and move the journal away",
        ) from None
    complete = (out / MANIFEST).is_file() and sha256_of(out / MANIFEST) == new.get(MANIFEST)
    try:
        if not complete:
            for name, second in kept.items():  # put back (the old file, or a second name of it)
                if second.exists():
                    os.replace(second, out / name)
            for name, digest in new.items():  # remove what the switch created
                if name not in kept and (out / name).is_file() and sha256_of(out / name) == digest:
                    os.unlink(out / name)
        for leftover in [*temps, *kept.values()]:
            if leftover.exists():
                os.unlink(leftover)
        os.unlink(path)
    except OSError as exc:
        raise OutputError(
            exc.errno, f"{path}: cannot undo an earlier run's switch that was cut short: {exc.strerror or exc}"
        ) from None
    if complete:
        return f"{out}: an earlier run was cut short after switching its outputs in; its leftover files are removed"
    return f"{out}: an earlier run was cut short while switching its outputs in; its files are put back as they were"


@contextlib.contextmanager
def output_folder(out: PathLike, *, force: bool = False) -> Iterator[Path]:
    """For a command that writes files into the folder ``out``: yields an empty staging folder (a
    hidden one inside ``out``) to write them into; when the block ends they are checked
    (:func:`check_replaceable`) and switched into ``out`` in one step with the manifest
    (:func:`commit_outputs`). The new manifest also keeps the earlier entries of files this run
    does not write that are still unchanged. When the block raises, ``out`` is untouched. Raises
    :class:`OutputError` naming the first file that may not be replaced, or that cannot be written."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".navdtw-stage.", dir=out))
    except OSError as exc:
        raise OutputError(exc.errno, f"{out}: cannot write into the output folder: {exc.strerror or exc}") from None
    try:
        yield stage
        names = sorted(p.name for p in stage.iterdir() if p.is_file() and p.name != MANIFEST)
        check_replaceable(out, names, force=force)
        data = {n: (stage / n).read_bytes() for n in names}
        files = {
            n: h
            for n, h in (read_manifest(out) or {}).items()
            if n not in data and (out / n).is_file() and sha256_of(out / n) == h
        }
        files.update({n: hashlib.sha256(b).hexdigest() for n, b in data.items()})
        from . import __version__

        manifest = {"navdtw_version": __version__, "files": files}
        data[MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()
        commit_outputs(out, data)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
