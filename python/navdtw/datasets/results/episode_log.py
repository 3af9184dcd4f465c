"""navdtw's per-episode log: what an evaluation loop writes at the end of each episode, read back as
one run by ``navdtw compare --dataset results``, ``navdtw watch`` and ``--shards``.

A loop (habitat-lab's, or any other) opens one :class:`EpisodeLog` per process and calls
:meth:`EpisodeLog.write` with each finished episode's id and its metric values (habitat's ``info``
dict, or any mapping). Rank ``r`` of ``k`` processes writes, in its folder:

* ``{name}_r{r}_w{k}.jsonl``: one JSON line per finished episode, ``{"episode_id": "...", "success":
  1.0, "ndtw": 0.71, ...}`` (and ``"path": [[x, y, z], ...]`` when the positions are given), each
  line written with one ``write`` and synced to the disk (``os.fsync``) before :meth:`~EpisodeLog.write`
  returns, so a killed process loses at most the line it was writing;
* ``{name}_r{r}_w{k}.meta.json``: written once, atomically, before the first line: the split's name
  and SHA-256, the order's file, seed, length and digest (``navdtw order``), the convention, the
  success distance, navdtw's version, the rank and the number of ranks.

The names are the DDP rank files' names the results reader knows already
(:func:`navdtw.datasets.results.layouts.shard_of`, ETPNav's ``..._r{rank}_w{world}.json``): naming
one rank's file names every rank's, and a rank that is missing is named. A folder of logs is read
as one run too; the metadata files are not results and are passed over.

What a line holds: the scalar values of the mapping, as habitat-baselines reports them
(``habitat_baselines/utils/info_dict.py``, ``extract_scalars_from_info``): string keys only; a
nested mapping flattened to ``key.subkey``; a value with one element that is a number (a Python
or numpy number, a 0-d or one-element array, a bool as 0.0 / 1.0) kept; strings, sequences and
arrays of several elements (the trajectory, the top-down map) and None left out, and named in
:attr:`EpisodeLog.dropped`; habitat's ``top_down_map`` and ``collisions.is_collision`` always
left out. Non-finite values are written as they are given (JSON's ``NaN``, ``Infinity``): the
readers apply navdtw's one non-finite policy (docs/statistics.md) when they read the log, as for
every evaluator's results.

Reopening a log after a crash appends to it: a last line cut short (the one being written) is
cut off, or ended when it is whole; the episodes already logged are :attr:`EpisodeLog.done` (a
resumed loop skips them), and one logged again is an error. A log of another order, split,
convention or success distance in the same place is refused.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._io import atomic_write_bytes, output_error, sync_folder
from ..._messages import named
from ..._typing import PathLike
from .layouts import shard_of

__all__ = ["LOG_FORMAT", "NON_SCALAR", "EpisodeLog", "LogMeta", "log_meta", "order_digest"]

#: The ``format`` of a log's metadata file.
LOG_FORMAT = "navdtw episode log 1"
#: The log's extension, and its metadata's (after ``{name}_r{rank}_w{world}``).
LOG_SUFFIX = ".jsonl"
META_SUFFIX = ".meta.json"
#: Keys of habitat's ``info`` that are never written: habitat-baselines' ``NON_SCALAR_METRICS``.
NON_SCALAR = frozenset({"top_down_map", "collisions.is_collision"})
#: The keys a line gives itself: the id and the positions.
_RESERVED = ("episode_id", "path")


def order_digest(units: Sequence[Sequence[str]]) -> str:
    """The SHA-256 of an order's units (its episode ids, in order, grouped as the order groups
    them): two orders are the same order when their digests are equal.

    Parameters
    ----------
    units : sequence of sequence of str
        :attr:`navdtw.order.Order.units`.

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    text = json.dumps([[str(i) for i in u] for u in units], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LogMeta:
    """A log's metadata (its ``.meta.json`` file).

    Attributes
    ----------
    file:
        the metadata file.
    log:
        the log's file name.
    rank, world_size:
        the process that writes it, of how many.
    split, split_sha256:
        the split file's name and SHA-256 (None when the loop gave neither a split nor an order of one).
    order, order_seed, order_units, order_sha256:
        the order's file name, seed, number of units and :func:`order_digest` (None without an order).
    convention:
        the convention the loop's measures follow (None: not said).
    success_distance:
        the success distance in metres (None: not said).
    navdtw:
        the version of navdtw that wrote it.
    order_episodes:
        the order's number of episodes (its units' ids; None without an order, or in a log written
        before navdtw said it).
    """

    file: Path
    log: str
    rank: int
    world_size: int
    split: str | None = None
    split_sha256: str | None = None
    order: str | None = None
    order_seed: int | None = None
    order_units: int | None = None
    order_sha256: str | None = None
    convention: str | None = None
    success_distance: float | None = None
    navdtw: str = ""
    order_episodes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The metadata as its file holds it.

        Returns
        -------
        dict
        """
        return {
            "format": LOG_FORMAT,
            "log": self.log,
            "rank": self.rank,
            "world_size": self.world_size,
            "split": None if self.split is None else {"name": self.split, "sha256": self.split_sha256},
            "order": None
            if self.order_sha256 is None
            else {
                "file": self.order,
                "seed": self.order_seed,
                "units": self.order_units,
                "sha256": self.order_sha256,
                **({} if self.order_episodes is None else {"episodes": self.order_episodes}),
            },
            "convention": self.convention,
            "success_distance": self.success_distance,
            "navdtw": self.navdtw,
        }

    def same_run(self, other: LogMeta) -> bool:
        """The same split, order, convention and success distance (what a log is checked by).

        Parameters
        ----------
        other : LogMeta
            Another log's metadata.

        Returns
        -------
        bool
        """
        return self._identity() == other._identity()

    def _identity(self) -> tuple:
        return (self.split_sha256, self.order_sha256, self.convention, self.success_distance)

    def what(self) -> str:
        """The log's order and split in words: ``"the order order.json (seed 7, 1839 units) of
        val_unseen.json.gz"``.

        Returns
        -------
        str
        """
        of_split = f"the split {named(self.split)}" if self.split else "no split"
        if self.order_sha256 is None:
            return f"{of_split} (no order)"
        seed = "" if self.order_seed is None else f"seed {self.order_seed}, "
        split = f" of {named(self.split)}" if self.split else ""
        return f"the order {named(self.order)} ({seed}{self.order_units} units){split}"

    def against_order(self, order: Any) -> str | None:
        """Why this log is not a run of ``order``, or None.

        Parameters
        ----------
        order : navdtw.order.Order
            The order given (``navdtw watch --order``).

        Returns
        -------
        str or None
            One line naming the log, its split or order and the order's; None when it belongs to
            ``order`` (or says nothing to check it by).
        """
        given_sha = getattr(order, "split_sha256", None)
        given = getattr(order, "source", "the order")
        if self.split_sha256 and given_sha and self.split_sha256 != given_sha:
            return (
                f"{self.log}: a log of {_split_words(self.split, self.split_sha256)}, but {given} is an order of "
                f"{_split_words(getattr(order, 'split', None), given_sha)}: give the order of the split the loop runs"
            )
        if self.order_sha256 and self.order_sha256 != order_digest(order.units):
            seed = getattr(order, "seed", None)
            theirs = f"{given} ({'' if seed is None else f'seed {seed}, '}{len(order.units)} units)"
            return (
                f"{self.log}: a log of {self.what()}, not of the order given, {theirs}: "
                "give the order the loop runs (its order.json)"
            )
        return None

    def against_split(self, name: str, sha256: str, *, given: str = "the split given") -> str | None:
        """Why this log is not of the split ``name``, or None.

        Parameters
        ----------
        name : str
            The split file's name.
        sha256 : str
            Its SHA-256.
        given : str, optional
            What that split is, for the message (``"the split given"``).

        Returns
        -------
        str or None
            One line naming the log and both splits; None when it is of that split (or says no split).
        """
        if not self.split_sha256 or self.split_sha256 == sha256:
            return None
        return (
            f"{self.log}: a log of {_split_words(self.split, self.split_sha256)}, not of {given}, "
            f"{_split_words(name, sha256)}"
        )


def _split_words(name: str | None, sha256: str | None) -> str:
    digest = f"SHA-256 {sha256[:12]}..." if sha256 else "no SHA-256"
    return f"the split {named(name) if name else '(unnamed)'} ({digest})"


def meta_path(log: PathLike) -> Path | None:
    """Internal: the metadata file of a log file ``{name}_r{rank}_w{world}.jsonl``, or None (not a
    log's name)."""
    log = Path(log)
    shard = shard_of(log.name)
    if shard is None or shard[3] != LOG_SUFFIX:
        return None
    return log.with_name(log.name[: -len(LOG_SUFFIX)] + META_SUFFIX)


def is_meta_file(path: PathLike) -> bool:
    """Internal: a log's metadata file by its name (``{name}_r{rank}_w{world}.meta.json``): not
    results, passed over where a folder or a pattern names a run's files."""
    shard = shard_of(Path(path).name)
    return shard is not None and shard[3] == META_SUFFIX


def log_meta(log: PathLike) -> LogMeta | None:
    """The metadata written beside a log file, or None (not a log's name, or no metadata beside it).

    Parameters
    ----------
    log : str or os.PathLike
        A log file, ``{name}_r{rank}_w{world}.jsonl``.

    Returns
    -------
    LogMeta or None

    Raises
    ------
    ValueError
        A metadata file that is not a navdtw log's (the message names it).
    """
    path = meta_path(log)
    if path is None or not path.is_file():
        return None
    return _read_meta(path)


def _read_meta(path: Path) -> LogMeta:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != LOG_FORMAT:
            raise ValueError(f"its format is not {LOG_FORMAT!r}")
        split = doc.get("split") or {}
        order = doc.get("order") or {}
        distance = doc.get("success_distance")
        return LogMeta(
            path,
            str(doc["log"]),
            int(doc["rank"]),
            int(doc["world_size"]),
            split.get("name"),
            split.get("sha256"),
            order.get("file"),
            order.get("seed"),
            order.get("units"),
            order.get("sha256"),
            doc.get("convention"),
            None if distance is None else float(distance),
            str(doc.get("navdtw", "")),
            None if order.get("episodes") is None else int(order["episodes"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"{named(path)}: not the metadata of a navdtw episode log ({exc})") from None


def one_run(metas: Sequence[LogMeta]) -> str | None:
    """Internal: why the logs of several files are not one run (another split, order, convention
    or success distance), or None."""
    for meta in metas[1:]:
        if not meta.same_run(metas[0]):
            return (
                f"{metas[0].log} and {meta.log} are logs of different runs: {metas[0].log} of {metas[0].what()}, "
                f"{meta.log} of {meta.what()}"
                + (
                    ""
                    if (metas[0].split_sha256, metas[0].order_sha256) != (meta.split_sha256, meta.order_sha256)
                    else f" (convention {metas[0].convention} / {meta.convention}, success distance "
                    f"{metas[0].success_distance} / {meta.success_distance})"
                )
            )
    return None


def cut_tail(text: str) -> tuple[str, str]:
    """Internal: a log's text without a last line cut short (no newline yet, not a whole JSON
    value: being written, or lost when its writer was killed), and a note saying so (or "")."""
    if not text or text.endswith("\n"):
        return text, ""
    cut = text.rfind("\n") + 1
    tail = text[cut:]
    if not tail.strip() or _whole(tail.encode("utf-8")):
        return text, ""
    return text[:cut], f"its last line ({len(tail)} characters, no newline) is cut short: being written, not read"


def _whole(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _scalar(value: Any) -> float | int | None:
    """A value with one element that is a number, as a Python number (bool -> float); None otherwise."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if value is None or isinstance(value, (str, bytes, Mapping)):
        return None
    try:
        arr = np.asarray(value)
    except Exception:  # an object numpy cannot take (a tensor on a GPU, ...): not a number here
        return None
    if arr.size != 1 or arr.dtype.kind not in "biuf":
        return None
    item = arr.reshape(()).item()
    return float(item) if arr.dtype.kind in "bf" else int(item)


def scalars(info: Mapping[str, Any], prefix: str = "") -> tuple[dict[str, float | int], list[str]]:
    """Internal: the scalar values of a mapping, nested mappings flattened (``key.subkey``), and the
    keys left out (habitat-baselines' ``extract_scalars_from_info`` rule, the module's)."""
    kept: dict[str, float | int] = {}
    dropped: list[str] = []
    for key, value in info.items():
        if not isinstance(key, str):
            dropped.append(prefix + str(key))
            continue
        full = prefix + key
        if full in NON_SCALAR:
            dropped.append(full)
        elif isinstance(value, Mapping):
            inner, left = scalars(value, full + ".")
            kept.update(inner)
            dropped += left
        else:
            number = _scalar(value)
            if number is None:
                dropped.append(full)
            else:
                kept[full] = number
    return kept, dropped


def _positions(path: Any, episode_id: str) -> list[list[float]]:
    try:
        arr = np.asarray(path, dtype=np.float64)
    except (TypeError, ValueError):
        arr = np.empty((0, 0))
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] not in (2, 3):
        raise ValueError(f"episode {named(episode_id)}: path must be positions [[x, y, z], ...], got {_shape(path)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"episode {named(episode_id)}: path has a non-finite coordinate")
    return arr.tolist()


def _shape(value: Any) -> str:
    with contextlib.suppress(Exception):
        return f"shape {np.shape(value)}"
    return type(value).__name__


def _version() -> str:
    from ... import __version__

    return __version__


class EpisodeLog:
    """The per-episode log of one process of an evaluation loop (the module's files).

    Parameters
    ----------
    folder : str or os.PathLike
        The folder the log is written into (made if missing): every rank's log of a run goes into
        the same folder.
    rank : int, optional
        This process's rank (0).
    world_size : int, optional
        How many processes write the run's logs (1).
    name : str, optional
        The log's name (``"episodes"``): the files are ``{name}_r{rank}_w{world_size}.jsonl`` and
        ``.meta.json``.
    order : navdtw.order.Order, optional
        The order the loop runs the episodes in (:func:`navdtw.order.load_order` of the
        ``order.json`` of ``navdtw order``): its file, seed and digest, and its split's name and
        SHA-256, are written into the metadata, by which ``navdtw watch`` and ``navdtw compare``
        say when a log is not of the order or split they are given.
    split : str or os.PathLike, optional
        The split file the loop evaluates: its name and SHA-256 are written (with ``order``: they
        must be the order's split's).
    convention : str, optional
        The convention the loop's measures follow (``"vlnce"``), written for the readers to show.
    success_distance : float, optional
        The success distance in metres (3.0 in VLN-CE), written for the readers to show.

    Attributes
    ----------
    path : pathlib.Path
        The log file.
    meta : LogMeta
        Its metadata.
    done : set of str
        The ids of the episodes logged (those of an earlier process too, when the log was reopened).
    dropped : set of str
        The keys of the mappings given to :meth:`write` that were left out (not scalar numbers).

    Raises
    ------
    ValueError
        A bad rank, world size or name; a split that is not the order's; a log already there of
        another split, order, convention or success distance, a log file without its metadata, a
        malformed line in the log already there (the message names the file and the line); another
        process writing the same log.
    FileNotFoundError
        No such split file.
    navdtw.suite.OutputError
        The folder or the files cannot be written (a subclass of ``OSError``).

    Examples
    --------
    >>> import tempfile
    >>> from navdtw.datasets.results.episode_log import EpisodeLog
    >>> folder = tempfile.mkdtemp()
    >>> with EpisodeLog(folder, rank=0, world_size=2, success_distance=3.0) as log:
    ...     log.write("7", {"success": 1.0, "spl": 0.81, "ndtw": 0.74, "top_down_map": {"map": [[0]]}})
    ...     log.write("3", {"success": 0.0, "spl": 0.0, "distance_to_goal": float("inf")})
    >>> log.path.name, sorted(log.done), sorted(log.dropped)
    ('episodes_r0_w2.jsonl', ['3', '7'], ['top_down_map'])
    >>> print(log.path.read_text(), end="")
    {"episode_id": "7", "success": 1.0, "spl": 0.81, "ndtw": 0.74}
    {"episode_id": "3", "success": 0.0, "spl": 0.0, "distance_to_goal": Infinity}
    """

    def __init__(
        self,
        folder: PathLike,
        *,
        rank: int = 0,
        world_size: int = 1,
        name: str = "episodes",
        order: Any = None,
        split: PathLike | None = None,
        convention: str | None = None,
        success_distance: float | None = None,
    ) -> None:
        for what, v in (("rank", rank), ("world_size", world_size)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise ValueError(f"{what} must be an integer, got {v!r}")
        rank, world_size = int(rank), int(world_size)
        if world_size < 1 or not 0 <= rank < world_size:
            raise ValueError(f"rank must be in 0..world_size - 1, got rank {rank} of world_size {world_size}")
        log_name = f"{name}_r{rank}_w{world_size}{LOG_SUFFIX}" if isinstance(name, str) else ""
        if shard_of(log_name) != (name, rank, world_size, LOG_SUFFIX) or "/" in name or "\\" in name or not name:
            raise ValueError(f"name must be a plain file name without '/', got {name!r}")
        if success_distance is not None:
            success_distance = float(success_distance)
            if not (math.isfinite(success_distance) and success_distance > 0):
                raise ValueError(f"success_distance must be a finite number > 0, got {success_distance!r}")
        if convention is not None and not isinstance(convention, str):
            raise ValueError(f"convention must be a name (a string), got {convention!r}")
        folder = Path(folder)
        self.path = folder / log_name
        meta_file = folder / (log_name[: -len(LOG_SUFFIX)] + META_SUFFIX)
        self.meta = LogMeta(
            meta_file,
            log_name,
            rank,
            world_size,
            *_split_of(order, split),
            *_order_of(order),
            convention,
            success_distance,
            _version(),
            None if order is None else sum(len(u) for u in order.units),
        )
        self.done: set[str] = set()
        self.dropped: set[str] = set()
        self._in_order = None if order is None else frozenset(i for unit in order.units for i in unit)
        self._fd: int | None = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(folder, exc) from None
        self._check_meta(meta_file)
        self._open()

    # -- opening ------------------------------------------------------------------------------

    def _check_meta(self, meta_file: Path) -> None:
        """The metadata already there must be this log's (a resumed run); else it is written."""
        if meta_file.exists():
            old = _read_meta(meta_file)
            if not old.same_run(self.meta) or (old.rank, old.world_size) != (self.meta.rank, self.meta.world_size):
                raise ValueError(
                    f"{named(self.path)}: already a log of {old.what()} (convention {old.convention}, success "
                    f"distance {old.success_distance}); this loop runs {self.meta.what()} (convention "
                    f"{self.meta.convention}, success distance {self.meta.success_distance}): give another "
                    "folder or name, or move the old log away"
                )
            self.meta = old
            return
        if self.path.exists() and self.path.stat().st_size > 0:
            raise ValueError(
                f"{named(self.path)}: exists without its metadata ({meta_file.name}): not a navdtw episode log, "
                "or its metadata was removed; give another folder or name, or move it away"
            )
        data = json.dumps({**self.meta.as_dict(), "started": _now()}, indent=2) + "\n"
        atomic_write_bytes(meta_file, data.encode("utf-8"), durable=True)

    def _open(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as exc:
            raise output_error(self.path, exc) from None
        try:
            _lock(fd, self.path)
            self._repair(fd)
            sync_folder(self.path.parent)
        except OSError as exc:
            os.close(fd)
            raise output_error(self.path, exc) from None
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def _repair(self, fd: int) -> None:
        """The log already there: a last line cut short is cut off (or ended, when it is whole),
        and its episodes are :attr:`done`."""
        size = os.fstat(fd).st_size
        if not size:
            return
        os.lseek(fd, 0, os.SEEK_SET)
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                break
            data += chunk
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        if tail.strip() and not _whole(tail):
            os.ftruncate(fd, cut)  # the line being written when its writer stopped: never complete
            os.fsync(fd)
            data = data[:cut]
        elif tail.strip():
            _write_all(fd, b"\n")  # a whole last line without its newline: ended
            os.fsync(fd)
        kept = data.decode("utf-8", errors="replace")
        for k, line in enumerate(kept.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self.done.add(str(record["episode_id"]))
            except (ValueError, KeyError, TypeError, RecursionError):
                raise ValueError(
                    f"{named(self.path)}: line {k}: not a line of a navdtw episode log (malformed, or no "
                    "episode_id): the log was changed by hand? move it away"
                ) from None

    # -- writing ------------------------------------------------------------------------------

    def write(self, episode_id: str | int, info: Mapping[str, Any] | None = None, *, path: Any = None) -> dict:
        """Appends one finished episode: one JSON line, synced to the disk before it returns.

        Parameters
        ----------
        episode_id : str or int
            The episode's id (habitat's ``episode.episode_id``), written as a string.
        info : mapping, optional
            Its metric values: habitat's ``info`` at the episode's end, or any mapping of names to
            numbers; what is not a scalar number is left out (the module's rule, :attr:`dropped`).
        path : array_like, optional
            The agent's positions ``[[x, y, z], ...]`` (navdtw's ``trajectory`` measure), written as
            ``"path"``: the line is then also a trajectory that ``navdtw score`` reads.

        Returns
        -------
        dict
            The record written.

        Raises
        ------
        ValueError
            An id that is not a string or an integer, an episode already logged, an episode that
            is not in the log's order, an ``info`` whose ``episode_id`` is another, a malformed
            ``path``, a closed log.
        navdtw.suite.OutputError
            The line cannot be written (a full disk: the log holds the lines before it).
        """
        if self._fd is None:
            raise ValueError(f"{named(self.path)}: the log is closed")
        if isinstance(episode_id, bool) or not isinstance(episode_id, (str, numbers.Integral)):
            raise ValueError(f"episode_id must be a string or an integer, got {episode_id!r}")
        eid = str(episode_id)
        if eid in self.done:
            raise ValueError(
                f"{named(self.path)}: episode {named(eid)} is logged already; a resumed loop skips the episodes "
                "in log.done"
            )
        if self._in_order is not None and eid not in self._in_order:
            raise ValueError(
                f"{named(self.path)}: episode {named(eid)} is not an episode of {self.meta.what()}: "
                "the loop runs another split, or ids of another form?"
            )
        values, dropped = scalars(info or {})
        given = (info or {}).get("episode_id")
        if given is not None and str(given) != eid:
            raise ValueError(f"episode {named(eid)}: info['episode_id'] is {named(given)}, another episode")
        for key in _RESERVED:
            if key in values:
                del values[key]
                if key != "episode_id":
                    dropped.append(key)
        self.dropped.update(dropped)
        record: dict[str, Any] = {"episode_id": eid, **values}
        if path is not None:
            record["path"] = _positions(path, eid)
        line = (json.dumps(record, allow_nan=True) + "\n").encode("utf-8")
        try:
            _write_all(self._fd, line)
            os.fsync(self._fd)
        except OSError as exc:
            raise output_error(self.path, exc) from None
        self.done.add(eid)
        return record

    def close(self) -> None:
        """Closes the log (more lines need a new :class:`EpisodeLog`, which appends)."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._fd is None

    def __enter__(self) -> EpisodeLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __repr__(self) -> str:
        return f"EpisodeLog({str(self.path)!r}, {len(self.done)} episodes, {self.meta.what()})"


def _split_of(order: Any, split: PathLike | None) -> tuple[str | None, str | None]:
    """The split's name and SHA-256: the split file's, checked against the order's."""
    name = getattr(order, "split", None) if order is not None else None
    digest = getattr(order, "split_sha256", None) if order is not None else None
    if split is None:
        return name, digest
    path = Path(split)
    if not path.is_file():
        raise FileNotFoundError(f"split file not found: {named(path)}")
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if digest is not None and h.hexdigest() != digest:
        raise ValueError(
            f"split {named(path.name)}: not the split of the order {getattr(order, 'source', '')} "
            f"({_split_words(name, digest)})"
        )
    return path.name, h.hexdigest()


def _order_of(order: Any) -> tuple[str | None, int | None, int | None, str | None]:
    if order is None:
        return None, None, None, None
    units = getattr(order, "units", None)
    if units is None:
        raise ValueError(
            f"order must be a navdtw Order (navdtw.order.load_order('order.json')), got {type(order).__name__}"
        )
    return getattr(order, "source", None), getattr(order, "seed", None), len(units), order_digest(units)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _lock(fd: int, path: Path) -> None:
    """One writer per log: an exclusive lock held while the log is open (POSIX; none on Windows)."""
    try:
        import fcntl
    except ImportError:  # Windows
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ValueError(
            f"{named(path)}: another process is writing this log (each rank writes its own: rank= and world_size=)"
        ) from None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
