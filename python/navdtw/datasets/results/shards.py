"""One run's results from several files: which files a source names, and whether they are one run.

A source is one file, a folder (its files; its subfolders' only when asked), a glob pattern, or a
list of files. A file named ``<stem>_r{rank}_w{world}<ext>`` is one DDP rank's share of a run (ETPNav
writes one per rank): the run is every rank's file, so naming one rank names them all, and a missing
rank is an error that names it. navdtw's own per-episode log
(:mod:`~navdtw.datasets.results.episode_log`) is named so; the metadata file beside each rank's log
(``..._r{rank}_w{world}.meta.json``) is not results, and a folder or a pattern passes over it.
"""

from __future__ import annotations

import glob
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..._messages import named, quoted
from ..._typing import PathLike
from .episode_log import is_meta_file
from .layouts import LAYOUTS, recognise, shard_of

__all__ = ["Files", "files_of", "one_run_as_agents"]  # Listing: internal (navdtw watch)

_GLOB = re.compile(r"[*?[]")
#: one rank's store, ``<stem>{rank}.lmdb`` (VLN-PE's ``sample_data{rank}.lmdb``)
_RANK_STORE = re.compile(r"(?P<stem>.*?)(?P<rank>\d+)\.lmdb")


def is_store(path: Path) -> bool:
    """Internal: an LMDB environment (a folder holding ``data.mdb``): one file of a run."""
    return path.is_dir() and (path / "data.mdb").is_file()


def _run_store(path: Path) -> bool:
    """A store of a layout (VLN-PE's ``sample_data{rank}.lmdb``; not its training ``sample_data.lmdb``)."""
    return is_store(path) and any(lay.store and lay.regex.fullmatch(path.name) for lay in LAYOUTS)


@dataclass(frozen=True)
class Files:
    """The files of one run.

    Attributes
    ----------
    paths:
        the files, in reading order.
    label:
        how messages name the run: the file, the folder, the pattern, or ``stem_r{0..3}_w4.json``.
    how:
        a note: ``"4 shards of one run (ranks 0-3 of 4)"``, or ``""`` for one file.
    """

    paths: tuple[Path, ...]
    label: str
    how: str = ""


def files_of(source: PathLike | Sequence[PathLike], *, recursive: bool = False) -> Files:
    """The files a source names (the module's forms), checked: every rank of a sharded run present,
    no file twice, at least one file.

    Parameters
    ----------
    source : str, os.PathLike or list
        One file, a folder, a glob pattern (``"eval/stats_ep_ckpt_6_val_unseen_r*_w4.json"``) or
        a list of files, as one run.
    recursive : bool, optional
        Read a folder's subfolders too (default: its own files only).

    Returns
    -------
    Files

    Raises
    ------
    ValueError
        A missing file, a pattern or folder without files, a file named twice, a rank of a sharded
        run that is missing (named), or ranks of different world sizes in one run.
    """
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        path = Path(text)
        if is_store(path):
            return Files((path,), path.name)
        if path.is_dir():
            found = sorted(
                p
                for p in (path.rglob("*") if recursive else path.iterdir())
                if _run_store(p) or (_visible_file(p, path) and not is_store(p.parent) and not is_meta_file(p))
            )
            if not found:
                more = "" if recursive else " (its subfolders are read with --recursive)"
                raise ValueError(f"{named(path)}: a folder without files{more}")
            return _checked(tuple(found), f"{path.name}/", f"{len(found)} files of one run (the folder {path.name})")
        if _GLOB.search(text) and not path.exists():
            found = sorted(
                Path(p)
                for p in glob.glob(text, recursive=recursive)
                if (Path(p).is_file() and not is_meta_file(p)) or is_store(Path(p))
            )
            if not found:
                raise ValueError(f"no file matches {named(text)}")
            return _checked(tuple(found), path.name, f"{len(found)} files of one run ({path.name})")
        if not path.is_file():
            raise FileNotFoundError(f"{named(path)}: no such file")
        shard = shard_of(path.name)
        if shard is None:
            return Files((path,), path.name)
        stem, _, world, ext = shard
        ranks = tuple(path.with_name(f"{stem}_r{r}_w{world}{ext}") for r in range(world))
        present = tuple(p for p in ranks if p.is_file())  # a missing one is named by _checked
        return _checked(present, f"{stem}_r{{0..{world - 1}}}_w{world}{ext}", "")
    paths = [Path(p) for p in source]
    if not paths:
        raise ValueError("an empty list of files")
    for p in paths:
        if not (p.is_file() or is_store(p)):
            raise FileNotFoundError(f"{named(p)}: no such file")
    return _checked(tuple(paths), f"{paths[0].name} and {len(paths) - 1} more" if len(paths) > 1 else paths[0].name, "")


def _visible_file(p: Path, root: Path) -> bool:
    return p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)


def _checked(paths: tuple[Path, ...], label: str, how: str) -> Files:
    resolved = [p.resolve() for p in paths]
    twice = [p for p, n in Counter(resolved).items() if n > 1]  # counted once each: a folder may hold thousands
    if twice:
        raise ValueError(f"{named(twice[0])} is named twice")
    groups: dict[tuple[Path, str, str], dict[int, int]] = {}
    for p in paths:
        shard = shard_of(p.name)
        if shard is not None:
            stem, rank, world, ext = shard
            groups.setdefault((p.parent, stem, ext), {})[rank] = world
    for (folder, stem, ext), ranks in groups.items():
        worlds = sorted(set(ranks.values()))
        if len(worlds) > 1:
            raise ValueError(
                f"{stem}_r*_w*{ext}: ranks of runs over {' and '.join(map(str, worlds))} processes: "
                "one run has one world size"
            )
        world = worlds[0]
        missing = [r for r in range(world) if r not in ranks]
        if missing:
            name = f"{stem}_r{missing[0]}_w{world}{ext}"
            raise ValueError(
                f"{named(folder / name)}: missing: rank {missing[0]} of the {world} ranks of this run "
                f"({len(missing)} missing); a run's results are every rank's file"
            )
    stores: dict[tuple[Path, str], set[int]] = {}
    for p in paths:
        m = _RANK_STORE.fullmatch(p.name)
        if m is not None and is_store(p):
            stores.setdefault((p.parent, m["stem"]), set()).add(int(m["rank"]))
    for (folder, stem), ranks in stores.items():
        missing = [r for r in range(max(ranks) + 1) if r not in ranks]
        if missing:
            raise ValueError(
                f"{named(folder / f'{stem}{missing[0]}.lmdb')}: missing: rank {missing[0]} of the ranks 0-{max(ranks)} "
                f"of this run ({len(missing)} missing); a run's results are every rank's store"
            )
    if len(stores) == 1 and len(paths) == len(next(iter(stores.values()))) > 1:
        n = len(paths)
        how = f"{n} stores of one run (ranks 0-{n - 1}; a missing last rank shows only against the means' count)"
    if len(groups) == 1 and len(paths) == len(next(iter(groups.values()))):
        world = next(iter(next(iter(groups.values())).values()))
        how = f"{world} shards of one run (ranks 0-{world - 1} of {world})" if world > 1 else ""
    return Files(paths, label, how)


def one_run_as_agents(paths: Sequence[PathLike]) -> str | None:
    """The message for files given one per agent that are the shards of one run: a shell glob
    expanded to the rank files of one run (``*_r{rank}_w{world}.json``), or to the one-file-per-episode
    files of a folder (NaVid's ``log/stats_{id}.json``: 1,839 files would be 1,839 agents); None
    otherwise.

    Parameters
    ----------
    paths : sequence of str or os.PathLike
        The files, one per agent.

    Returns
    -------
    str or None
        ``"<file>, <file> (and N more): ... of one run; give ..."``, or None.
    """
    files = [Path(p) for p in paths]
    by_folder: dict[Path, list[Path]] = {}
    for p in files:
        by_folder.setdefault(p.parent, []).append(p)
    for folder, group in by_folder.items():
        if len(group) < 2:
            continue
        ranks = [shard_of(p.name) for p in group]
        stems = {(r[0], r[2], r[3]) for r in ranks if r is not None}
        if any(sum(r is not None and (r[0], r[2], r[3]) == st for r in ranks) > 1 for st in stems):
            what, fix = "the rank files of one run", f"give one of them (every rank is read): {named(group[0])}"
        elif _per_episode(group[0]) and _per_episode(group[1]):
            what = "one file per episode of one run"
            fix = f"give the folder ({named(folder)}) or --shards NAME={quoted(str(folder / '*'))} (quoted)"
        else:
            continue
        more = f" and {len(group) - 2} more" if len(group) > 2 else ""
        return f"{named(group[0])}, {named(group[1])}{more}: {what}, given as {len(group)} agents; {fix}"
    return None


def _per_episode(path: Path) -> bool:
    """A file of a one-file-per-episode layout (its pattern names the episode: NaVid, AerialVLN)."""
    import json

    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    lay = recognise(path.name, record, "episodes") if isinstance(record, dict) else None
    return lay is not None and any(f in lay.pattern for f in ("{id}", "{episode_id}", "{index}"))


class Listing:
    """Internal (``navdtw watch``): a folder's files, as :func:`files_of` gives them (its own files,
    not its subfolders'), kept up to date as files are added: the folder is listed again only when
    its modification time changed (or is too recent to trust: a file added in the same clock
    tick), and only the names added are looked at. A file removed lists the folder whole again.

    Attributes
    ----------
    added:
        the files added at the last :meth:`files` (all of them at the first).
    removed:
        True once a file was removed (the files are then listed whole).
    special:
        how many of its files are a rank's file, a store, or a second name of a file: with any,
        the files are checked as :func:`files_of` checks them, all of them at every change.
    """

    #: a folder modified less than this many nanoseconds before it was listed is listed again
    RACY = 2_000_000_000

    def __init__(self, folder: PathLike) -> None:
        self.folder = Path(folder)
        self._stamp: tuple[int, int] | None = None
        self._names: set[str] = set()
        self._paths: list[Path] = []
        self._files: Files | None = None
        self.special = 0  # rank files, stores and links to one file: checked as files_of checks them
        self._resolved: set[Path] = set()
        self.added: list[Path] = []
        self.removed = False

    def files(self) -> Files:
        """The folder's files now (as :func:`files_of` gives them).

        Returns
        -------
        Files

        Raises
        ------
        ValueError
            As :func:`files_of`: a folder without files, a missing rank.
        OSError
            The folder cannot be listed.
        """
        import bisect
        import time

        st = os.stat(self.folder)
        stamp = (st.st_mtime_ns, st.st_ino)
        self.added = []
        if stamp == self._stamp and self._files is not None:
            return self._files
        names = set(os.listdir(self.folder))
        if not self._names <= names:
            self.removed = True
            self._names, self._paths, self.special = set(), [], 0  # a file removed: from the start
            self._resolved = set()
        for name in sorted(names - self._names):
            self._names.add(name)
            p = self.folder / name
            if _run_store(p) or (not name.startswith(".") and p.is_file() and not is_store(self.folder)):
                bisect.insort(self._paths, p)
                self.added.append(p)
                self.special += shard_of(name) is not None or _RANK_STORE.fullmatch(name) is not None
                real = p.resolve()
                self.special += real in self._resolved  # a second name of one file: _checked names it
                self._resolved.add(real)
        racy = time.time_ns() - st.st_mtime_ns < self.RACY
        self._stamp = None if racy else stamp
        if not self._paths:
            self._files = None
            raise ValueError(f"{named(self.folder)}: a folder without files (its subfolders are read with --recursive)")
        paths = tuple(self._paths)
        name = self.folder.name
        if self.special:
            self._files = _checked(paths, f"{name}/", f"{len(paths)} files of one run (the folder {name})")
        else:  # no rank and no store: nothing for _checked to find but a file named twice (a link)
            self._files = Files(paths, f"{name}/", f"{len(paths)} files of one run (the folder {name})")
        return self._files
