"""Internal to :mod:`navdtw.watch`: a run read as it grows (issue 36, item 4). The
:class:`~navdtw.watch.Follower`'s looks that read only what was written since the last one: the
lines appended to each JSON Lines file (by byte offset), the files added to a folder
(:class:`~navdtw.datasets.results.shards.Listing`), put into the follower's copies and read by the
results reader that follows them (``ResultsBenchmark.follow``), or, for trajectories, matched and
scored on their own and joined to the run's episodes; a file truncated or rewritten is read whole,
as a look that reads everything reads it (the reference ``tests/test_watch_incremental.py`` checks
them against)."""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .datasets.results.layouts import shard_of

__all__ = ["Growing", "files_base", "lines_as_list", "stamp_changed", "whole_json"]


def stamp_changed(seen: dict[Path, tuple[int, int, int]], f: Path) -> bool:
    """Whether ``f`` changed since ``seen`` last recorded it (its modification time, size and
    inode), recording it now; False for a file that is gone (looked at again at the next look)."""
    try:
        st = f.stat()
    except OSError:
        return False
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    if seen.get(f) == stamp:
        return False
    seen[f] = stamp
    return True


def files_base(files: Sequence[Path], folder: Path | None) -> Path:
    """The folder a run's files are named under: the folder given, or their common parent."""
    return (folder or Path(os.path.commonpath([str(f.parent.resolve()) for f in files]))).resolve()


def lines_as_list(part: bytes) -> bytes:
    """JSON Lines as a JSON list of the same records (the readers of trajectories take lists)."""
    with contextlib.suppress(ValueError, RecursionError):
        json.loads(part)
        return part  # a whole document already
    return b"[" + b",\n".join(line for line in part.split(b"\n") if line.strip()) + b"]"


def whole_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


class Growing:
    """The looks of a :class:`~navdtw.watch.Follower` that read a run as it grows (its base class;
    its state is the follower's; the follower gives ``_Episodes`` and ``_complete_part``, the
    episodes' type and :func:`~navdtw.watch.complete_part`)."""

    def _start_growing(self, incremental: bool, restat: int) -> None:
        self.added: Any = None
        self._grow = incremental  # read as the run grows
        self._backlog: dict[Path, bytes] = {}  # trajectories: lines appended, not scored yet
        self._owner: dict[str, Path] | None = None  # trajectories: each episode's file, as joined
        self._notes: dict[str, None] = {}  # trajectories: the notes of the parts joined, in order
        self._joined_files: list[Path] = []  # trajectories: the files joined, in reading order
        self._joined_counts: list[int] = []  # ... and their episodes
        self._file_ids: dict[Path, set[str]] = {}  # trajectories: each file's episodes scored
        self._joined_ordered = False
        self.restat = max(1, int(restat))
        self._listing: Any = None  # a folder's files, listed as they are added (shards.Listing)
        self._tails: dict[Path, Any] = {}  # JSON Lines files read by offset: their Tail
        self._pending: set[Path] = set()  # a folder's files with nothing complete yet
        self._copies: list[Path] = []  # the folder's mirrored files, sorted
        self._turn = 0  # where the next look's re-check of a folder's files starts
        self._growing: Any = None  # GrowingResults of the mirror
        self._base: Any = None  # (files, the folder mirrored, what the mirror is read as)

    def _files_grown(self) -> tuple[list[Path] | tuple[Path, ...], Path | None] | None:
        """The run's files, a folder's listed as files are added (:class:`~.datasets.results.shards.Listing`)."""
        from .datasets.results.shards import Listing

        folder = Path(self.source)
        recursive = bool(getattr(self.bench, "options", {}).get("recursive"))
        if recursive or not folder.is_dir() or (folder / "data.mdb").is_file():
            return self._files()
        if self._listing is None:
            self._listing = Listing(folder)
        try:
            files = self._listing.files()
        except (ValueError, OSError) as exc:
            self.waiting = " ".join(str(exc).split())
            self.missing = False
            return None
        self.missing = False
        return files.paths, folder

    def _looked_at(self, files: Sequence[Path], folder: Path | None) -> list[Path]:
        """The files whose change this look can see: every file of a few; of a folder's, the files
        added, those still being written, JSON Lines files read by offset, and ``restat`` others
        in turn."""
        if folder is None or self._listing is None or len(files) <= self.restat:
            return list(files)
        look = dict.fromkeys([*self._listing.added, *self._pending, *self._tails])
        start = self._turn % len(files)
        look.update(dict.fromkeys(files[start : start + self.restat]))
        self._turn = start + self.restat
        return list(look)

    def _poll_grown(self) -> bool:
        """:meth:`poll` of a results table read as it grows: the complete lines appended to each
        file since the last look, and the files added, put into the mirror (appended), and the
        mirror read by :class:`~.datasets.results.GrowingResults`; a file rewritten is mirrored
        whole and the run read whole."""
        import bisect

        from .datasets.results._readers import Reread, Tail, read_appended

        found = self._files_grown()
        if found is None:
            return False
        files, folder = found
        if self._base is None or self._base[0] != files:  # the folder the mirror copies, as named
            base = files_base(files, folder)
            self._base = (files, base, self._mirror_source(files, folder, base))
        base = self._base[1]
        changed, rewritten, new_copy = [], False, False
        scores = self.bench.kind.reads_scores
        whole: dict[Path, bytes] = {}  # trajectories: files scored whole
        for f in self._looked_at(files, folder):
            if not stamp_changed(self._seen, f):
                continue
            copy = self._mirror.get(f) or self._root / base.name / f.resolve().relative_to(base)
            tail = self._tails.get(f)
            if tail is not None and f in self._mirror:
                try:
                    after, data, pending = read_appended(f, tail)
                except Reread:
                    pass  # truncated or rewritten: mirrored whole below
                else:
                    whole_tail = bool(pending.strip()) and whole_json(pending)  # complete_part takes it
                    self._note_unfinished(
                        f,
                        f"a last line being written ({len(pending)} bytes, no newline yet)"
                        if pending.strip() and not whole_tail
                        else "",
                    )  # as unfinished() says it of the whole file
                    if scores and not whole_tail:
                        self._tails[f] = after
                        if data:
                            with open(copy, "ab") as out:
                                out.write(data)
                            changed.append(copy)
                        continue
                    more = self._appended_part(f, tail, data + (pending if whole_tail else b"")) if not scores else None
                    if more is not None:  # trajectories: matched and scored on their own, below
                        self._tails[f] = after
                        if more:
                            self._backlog[f] = self._backlog.get(f, b"") + more
                            changed.append(copy)
                        continue
            data = f.read_bytes()
            part = self._complete_part(data)
            self._note_unfinished(f, self._unfinished_of(data, part))
            if part is None:
                self._tails.pop(f, None)
                if f not in self._mirror:
                    self._pending.add(f)
                continue  # nothing complete yet, or being rewritten: its last complete copy stays
            self._pending.discard(f)
            # trajectories: a file of one JSON value is read as that value, not as a list of lines
            tail = Tail.of(part) if data[:2] != b"\x1f\x8b" and (scores or not whole_json(part)) else None
            if tail is None:
                self._tails.pop(f, None)
            else:
                self._tails[f] = tail
            if not scores:
                self._backlog.pop(f, None)
                copy.parent.mkdir(parents=True, exist_ok=True)
                self._mirror[f] = copy
                if self._taken.get(f) != part:
                    whole[f] = part
                    changed.append(copy)
                continue
            if f in self._mirror and copy.read_bytes() == part:
                continue
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(part)
            if f in self._mirror:
                rewritten = True
            else:
                self._mirror[f] = copy
                bisect.insort(self._copies, copy)
                new_copy = True
            changed.append(copy)
        special = self._listing is None or self._listing.special
        pending = [f for f in files if f not in self._mirror and shard_of(f.name) is not None] if special else []
        if pending:  # one rank's file is one run with its siblings: all of them, or none
            self.waiting = f"{pending[0].name}: nothing complete yet"
            return False
        self.waiting = self._written_now(files) or ("" if self._mirror else "nothing complete yet")
        if not scores:
            return self._scored_grown(files, base, whole) if changed and self._mirror else False
        if not self._mirror or not (changed or self._growing is None):
            return False
        return self._read_grown(files, folder, base, changed, rewritten, new_copy)

    def _note_unfinished(self, f: Path, note: str) -> None:
        """A file's part still being written (the follower's ``_unfinished`` keeps only those: few)."""
        if note:
            self._unfinished[f] = note
        else:
            self._unfinished.pop(f, None)

    def _written_now(self, files: Sequence[Path]) -> str:
        """``_being_written`` of the files read as they grow, in the files' order: of a folder's
        (sorted), only those with a part being written looked at."""
        busy = [f for f, note in self._unfinished.items() if note]
        if busy and self._listing is not None and len(files) > 1:
            files = sorted(f for f in busy if self._listing.holds(f))
        return self._being_written(files) if busy else ""

    def _read_grown(
        self,
        files: Sequence[Path],
        folder: Path | None,
        base: Path,
        changed: list[Path],
        rewritten: bool,
        new_copy: bool,
    ) -> bool:
        """Results: the copies read by the results reader that follows them (what was appended or
        added to them; a copy rewritten: the run read whole), the episodes added said in ``added``."""
        from .datasets.results.shards import Files

        if new_copy:  # a list of files names the copies
            self._base = (files, base, self._mirror_source(files, folder, base))
        source = self._base[2]
        if self._growing is None or source != self._growing.path:  # a list of files: one more shard
            self._growing = self.bench.follow(source)
        mirror_files = None
        if folder is not None and self._listing is not None and not self._listing.special:
            n, name = len(self._copies), base.name
            mirror_files = Files(tuple(self._copies), f"{name}/", f"{n} files of one run (the folder {name})")
        if rewritten:
            self._growing.reset()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # a part of the split: that is the point
                matched = self.bench.match_grown(self._growing, mirror_files, changed)
                added, rows = self._growing.added, self._growing.rows
                table = self._episodes(matched)
        except ValueError as exc:  # the copies' folder named as the run's own
            self._growing.reset()
            raise ValueError(str(exc).replace(str(self._root / base.name), str(base))) from None
        fresh = None
        if added is not None and self.table is not None:
            if not added:
                return False  # nothing new
            idx = np.asarray(rows, dtype=np.intp)
            fresh = self._Episodes(
                table.source,
                [table.ids[r] for r in rows],
                {m: v[idx] for m, v in table.values.items()},
                table.rates,
                table.unscored,
                table.notes,
            )
        self.table, self.added = table, fresh
        return True

    def _scored_grown(self, files: Sequence[Path], base: Path, whole: dict[Path, bytes]) -> bool:
        """Trajectories read as they grow: the files changed whole scored whole, the lines appended
        matched and scored on their own (an error, or an episode of the file's earlier lines: the
        file scored whole), and the episodes joined to the run's (:meth:`_join_more`)."""
        from .datasets.results._readers import Tail

        fresh: list[tuple[Path, Any]] = []
        rejoin = self.table is None or self._owner is None
        if self._listing is not None:  # a file removed from the folder: its episodes go
            rejoin |= self._listing.removed
            self._listing.removed = False
        elif not rejoin:
            rejoin = not set(self._joined_files) <= set(files)
        try:
            for f, part in whole.items():
                rejoin |= f in self._parts  # scored before: its episodes may have changed
                self._score_file(f, part)  # as a whole look scores it (its lines appended on their own)
                self._file_ids.pop(f, None)
                fresh.append((f, self._parts[f][0]))
            for f, data in list(self._backlog.items()):
                del self._backlog[f]
                chunk = self._score_more(f, data)
                if chunk is not None:
                    fresh.append((f, chunk))
                    continue
                part = self._complete_part(f.read_bytes()) or b""
                tail = Tail.of(part) if not whole_json(part) else None
                if tail is None:
                    self._tails.pop(f, None)
                else:
                    self._tails[f] = tail
                self._score_whole(f, part)
                rejoin = True
            table, added = (self._joined(files), None) if rejoin else self._join_more(files, fresh)
        except ValueError as exc:  # the copies' folder named as the run's own
            raise ValueError(str(exc).replace(str(self._root / base.name), str(base))) from None
        self.table, self.added = table, added
        return True

    def _appended_part(self, f: Path, tail: Any, suffix: bytes) -> bytes | None:
        """Trajectories: what a whole look would score on its own of a file read up to ``tail``
        whose complete part now ends with ``suffix`` (the lines appended, and a last line without
        its newline that is a whole JSON value): the part beyond the one scored so far, or None
        when that part is not a prefix of the file's (the file is scored whole)."""
        taken = self._taken.get(f, b"")
        if len(taken) < tail.offset or not suffix.startswith(taken[tail.offset :]):
            return None
        more = suffix[len(taken) - tail.offset :]
        if not isinstance(taken, bytearray):
            taken = self._taken[f] = bytearray(taken)
        taken += more  # the file's complete part taken, as a whole look compares it
        return more

    def _score_whole(self, f: Path, part: bytes) -> None:
        """Trajectories: a file matched and scored whole (JSON Lines given as a list)."""
        copy = self._mirror[f]
        copy.write_bytes(lines_as_list(part) if not whole_json(part) else part)
        self._parts[f] = [self._read(str(copy))]
        self._taken[f] = bytearray(part)  # grows with the lines appended (_score_more)
        self._file_ids.pop(f, None)

    def _score_more(self, f: Path, data: bytes) -> Any:
        """Trajectories: the lines appended to a file matched and scored on their own; None when
        they cannot be (an error: the file is read whole, whose message numbers its entries; an
        episode of the file's earlier lines)."""
        copy = self._mirror[f]
        copy.write_bytes(lines_as_list(data))
        try:
            chunk = self._read(str(copy))
        except ValueError:
            return None
        if f not in self._parts or not self._ids_of(f).isdisjoint(chunk.ids):
            return None
        self._parts[f].append(chunk)
        self._file_ids[f].update(chunk.ids)
        return chunk

    def _ids_of(self, f: Path) -> set[str]:
        if f not in self._file_ids:
            self._file_ids[f] = {i for p in self._parts.get(f, ()) for i in p.ids}
        return self._file_ids[f]

    def _join_more(self, files: Sequence[Path], fresh: list[tuple[Path, Any]]) -> tuple[Any, Any]:
        """Trajectories: the run's episodes with the parts scored at this look put in their files'
        places, when that is what :meth:`_joined` gives (the same metrics, rates and notes, no
        episode twice); else :meth:`_joined` (which names an episode in two files)."""
        from bisect import bisect_left

        table = self.table
        assert table is not None and self._owner is not None
        if not fresh:
            return table, self._Episodes(self.name, [], {m: v[:0] for m, v in table.values.items()}, table.rates)
        keys, new_ids = set(table.values), set()
        for _, chunk in fresh:
            if (
                not keys <= set(chunk.values)
                or not chunk.rates <= table.rates
                or any(n not in self._notes for n in chunk.notes)
                or not new_ids.isdisjoint(chunk.ids)
                or any(i in self._owner for i in chunk.ids)
            ):
                return self._joined(files), None
            new_ids.update(chunk.ids)
        ordered = self._joined_ordered
        cuts: list[tuple[int, int]] = []
        parts: Any = []
        for f, chunk in sorted(fresh, key=lambda fc: self._place(fc[0], files, ordered)):
            if ordered:
                k = bisect_left(self._joined_files, f)
            else:
                k = next((j for j, g in enumerate(self._joined_files) if g == f), -1)
            if not (0 <= k < len(self._joined_files) and self._joined_files[k] == f):
                j = bisect_left(files, f) if ordered else -1
                if not (0 <= j < len(files) and files[j] == f):  # the files not in order: joined whole
                    return self._joined(files), None
                self._joined_files.insert(k, f)
                self._joined_counts.insert(k, 0)
            cuts.append((sum(self._joined_counts[: k + 1]), len(chunk.ids)))  # a row of the table before
            parts.append((f, chunk))
        for f, chunk in parts:  # counted once every cut is placed
            k = bisect_left(self._joined_files, f) if ordered else self._joined_files.index(f)
            self._joined_counts[k] += len(chunk.ids)
            for i in chunk.ids:
                self._owner[i] = f
        parts = [chunk for _, chunk in parts]
        from .datasets.results._table import spliced

        ids = [i for c in parts for i in c.ids]
        values = {m: np.concatenate([c.values[m] for c in parts]) for m in table.values}
        unscored = table.unscored.union(*(c.unscored for c in parts))
        joined = self._Episodes(
            self.name,
            spliced(table.ids, cuts, ids),
            {m: spliced(v, cuts, values[m]) for m, v in table.values.items()},
            table.rates,
            unscored,
            table.notes,
        )
        return joined, self._Episodes(self.name, ids, values, table.rates, unscored, table.notes)

    def _place(self, f: Path, files: Sequence[Path], ordered: bool) -> Any:
        return f if ordered else list(files).index(f)

    def _mirror_source(self, files: Sequence[Path], folder: Path | None, base: Path) -> Any:
        """What the mirror is read as: its folder, its one file (one rank's names its siblings, as
        in compare), or the list of its files."""
        if folder is not None:
            return str(self._root / base.name)
        if Path(self.source).is_file():
            return str(self._root / base.name / Path(self.source).resolve().relative_to(base))
        return [str(self._mirror[f]) for f in files if f in self._mirror]

    def _joined(self, files: list[Path]) -> Any:
        """Trajectories: the episodes of every file, joined (an episode in two files is an error)."""
        owner: dict[str, Path] = {}
        self._owner = None
        parts = [(f, p) for f in files for p in self._parts.get(f, ())]
        if not parts:
            return self._Episodes(self.name, [], {}, frozenset())
        for f, part in parts:
            for i in part.ids:
                if i in owner:
                    raise ValueError(f"{self.name}: episode {i!r} is in both {owner[i].name} and {f.name}")
                owner[i] = f
        self._owner, self._notes = owner, dict.fromkeys(n for _, p in parts for n in p.notes)
        self._joined_files = [f for f in files if f in self._parts]
        self._joined_counts = [sum(len(p.ids) for p in self._parts[f]) for f in self._joined_files]
        self._joined_ordered = self._joined_files == sorted(self._joined_files)  # a folder's, a glob's
        self._file_ids = {}
        common = set.intersection(*(set(p.values) for _, p in parts))
        return self._Episodes(
            self.name,
            [i for _, p in parts for i in p.ids],
            {m: np.concatenate([p.values[m] for _, p in parts]) for m in common},
            frozenset(m for _, p in parts for m in p.rates),
            frozenset(i for _, p in parts for i in p.unscored),
            tuple(dict.fromkeys(n for _, p in parts for n in p.notes))[:5],
        )

    def _score_file(self, f: Path, part: bytes) -> None:
        """Trajectories of one file: the JSON lines added since the last look matched and scored on
        their own (each episode once); a whole document, a file rewritten otherwise, or lines that
        repeat an episode of the earlier ones, read again whole (as ``navdtw compare`` reads it)."""
        copy = self._mirror[f]
        before = self._taken.get(f, b"")
        lines = not whole_json(part)
        if lines and before and part.startswith(before) and not whole_json(before):
            copy.write_bytes(lines_as_list(part[len(before) :]))
            try:
                chunk = self._read(str(copy))
            except ValueError:
                chunk = None  # read whole below: its message numbers the entries as the file does
            seen = {i for p in self._parts[f] for i in p.ids}
            if chunk is not None and not seen & set(chunk.ids):
                self._parts[f].append(chunk)
                self._taken[f] = part
                return
        copy.write_bytes(lines_as_list(part) if lines else part)
        self._parts[f] = [self._read(str(copy))]
        self._taken[f] = part
