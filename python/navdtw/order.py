"""A seeded, uniformly random order of a split's episodes, for an evaluation that may stop early.

``navdtw watch``'s confidence sequences are valid when the episodes are evaluated in a uniformly
random order fixed before any result is seen. :func:`write_order` draws that order and writes it in
the forms evaluators consume (docs/stopping.md):

* ``order.txt``: the episode ids, one per line, in order;
* ``order.json``: the same with the seed, the split file's name and SHA-256, the units, each
  unit's scene (where the split file names them) and the workers' assignment (what ``navdtw watch
  --order`` reads);
* a copy of the split file with its entries in that order (R2R-CE / RxR-CE ``{split}.json.gz``:
  ``{"episodes": [...]}``; R2R-family JSON: a list of path entries; the references of the
  ``positions`` kind: records with an ``episode_id``, JSON or JSON Lines as given), and with
  ``workers > 1`` one copy and one id list per worker.

The split is read by its data set kind (``navdtw.datasets.split_index``: the kind's own reader
says which episodes the file holds, and writes the copies in the file's form); this module draws
and writes the order, and reads no data set file itself. The unit of the order is an entry of the
split file: an episode of R2R-CE / RxR-CE, a path with its instructions in the R2R family (R2R,
R4R, REVERIE: the evaluator runs a path's instructions one after the other, so the order shuffles
paths and a path counts once all its instructions are in). Workers
take the order round-robin (worker ``r`` of ``k`` runs positions ``r, r + k, r + 2k, ...``), so
workers running at the same pace finish, as nearly as possible, a prefix of the order.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ._decisions import OFF_BY_ONE_MIN, OFF_BY_ONE_SHARE
from ._io import atomic_write_bytes, atomic_write_json, atomic_write_text, check_replaceable, output_folder
from ._typing import PathLike
from .datasets import SplitIndex, split_index
from .datasets._common import not_found, read_text

__all__ = ["Order", "load_order", "off_by_one", "random_order", "read_scenes", "write_order"]


@dataclass(frozen=True)
class Order:
    """A random order of a split's units (an episode, or a path with its instructions).

    Attributes
    ----------
    units:
        the episode ids of each unit, units in order.
    seed:
        the seed it was drawn with (None for a plain id list).
    source:
        the file it was read from, as messages name it.
    split:
        the name of the split file the order was drawn from (``order.json``; None for a plain id
        list), as messages name it.
    split_sha256:
        that split file's SHA-256 (``order.json``; None for a plain id list).
    scenes:
        each unit's scene (scan), units in order, or None when not known (an id list, an
        ``order.json`` written before navdtw recorded scenes, a split that names none): the check
        of the order tests the scenes' repeats when they are known (:mod:`navdtw.sequential`).
    scenes_from:
        where the scenes were read (the order file, or the split file or results column given
        with :meth:`with_scenes`), as messages name it; None without scenes.
    """

    units: tuple[tuple[str, ...], ...]
    seed: int | None = None
    source: str = "<order>"
    split: str | None = None
    split_sha256: str | None = None
    scenes: tuple[str, ...] | None = None
    scenes_from: str | None = None

    @property
    def ids(self) -> list[str]:
        """Every episode id, in order."""
        return [i for unit in self.units for i in unit]

    def __len__(self) -> int:
        return len(self.units)

    @property
    def scene_counts(self) -> dict[str, int] | None:
        """Units per scene (``{scene: count}``, summing to ``len(order)``), or None without scenes."""
        if self.scenes is None:
            return None
        counts: dict[str, int] = {}
        for s in self.scenes:
            counts[s] = counts.get(s, 0) + 1
        return counts

    def scenes_of(self, start: int, stop: int) -> list[str] | None:
        """The scenes of some units, in order.

        Parameters
        ----------
        start, stop : int
            Units ``start`` to ``stop - 1`` of the order.

        Returns
        -------
        list of str or None
            Their scenes, or None when the order has none.
        """
        return None if self.scenes is None else list(self.scenes[start:stop])

    def with_scenes(self, scenes: Mapping[str, str], source: str, units: Iterable[Sequence[str]] = ()) -> Order:
        """The order with each unit's scene taken from an episode -> scene map.

        Parameters
        ----------
        scenes : Mapping[str, str]
            Episode id -> its scene (the scans of a split file, or a column of the results).
        source : str
            Where they were read, as messages name it.
        units : sequence of tuple of str, optional
            The units of the file they were read from (:func:`read_scenes`): each unit of the
            order must be one of them. An id list of an R2R-family split lists a path's
            instructions one by one, together: taken as units of one episode, their scenes would
            repeat as no random order repeats them, so such an order takes no scenes.

        Returns
        -------
        Order
            A copy with :attr:`scenes` set (a unit's scene is its first episode's).

        Raises
        ------
        ValueError
            An episode of the order has no scene in ``scenes`` (naming it and ``source``), or a
            unit of the order is not one of ``units`` (naming it).
        """
        whole = {frozenset(u): tuple(u) for u in units}
        if whole:
            of = {i: u for u in whole.values() for i in u}
            for k, unit in enumerate(self.units):
                if frozenset(unit) not in whole and unit[0] in of:
                    raise ValueError(
                        f"{source}: unit {k} of the order {self.source} ({', '.join(unit)}) is part of the unit "
                        f"{', '.join(of[unit[0]])} there (a path's instructions listed one by one): its scenes would "
                        "repeat as a random order of the paths repeats them; give the order.json navdtw order wrote"
                    )
        out = []
        for k, unit in enumerate(self.units):
            scene = scenes.get(unit[0])
            if not scene:
                missing = sum(1 for u in self.units if not scenes.get(u[0]))
                raise ValueError(
                    f"{source}: no scene for episode {unit[0]!r} (unit {k} of the order {self.source}; "
                    f"{missing} of its {len(self.units)} units have none): give the split the order is of"
                )
            out.append(str(scene))
        return replace(self, scenes=tuple(out), scenes_from=source)


def random_order(n: int, seed: int) -> np.ndarray:
    """A uniformly random permutation of ``range(n)`` from ``seed`` (numpy's PCG64).

    Parameters
    ----------
    n : int
        How many units.
    seed : int
        A non-negative integer: the same seed gives the same order on every platform.

    Returns
    -------
    numpy.ndarray
        int64 ``[n]``: position ``k`` of the order is unit ``out[k]`` of the split file.

    Raises
    ------
    ValueError
        A negative ``n`` or ``seed``.
    """
    if n < 0 or seed < 0:
        raise ValueError(f"n and seed must be >= 0, got n={n}, seed={seed}")
    return np.random.default_rng(np.random.SeedSequence(seed)).permutation(n)


def write_order(
    split: PathLike, out: PathLike, *, seed: int, workers: int = 1, force: bool = False, kind: str | None = None
) -> dict[str, Path]:
    """Draws a random order of a split's episodes and writes it (the module's files) into ``out``.

    Parameters
    ----------
    split : str or Path
        The split file of any data set kind that has one (``navdtw.datasets.split_index``):
        R2R-CE / RxR-CE episodes (``val_unseen.json.gz``), an R2R-family JSON list of path entries
        (``R2R_val_unseen.json``), REVERIE, NDH, RxR guide lines, or records with an
        ``episode_id`` (the references of the ``positions`` kind, JSON or JSON Lines).
    out : str or Path
        The folder to write into (made if missing), by navdtw's output rules
        (the output folders of :doc:`the command </cli>`): the files are switched in together, with the folder's
        manifest; a file of the same name that navdtw did not write, or that was changed since, is
        an error naming it (a rerun replaces navdtw's own).
    seed : int
        The order's seed (write it down: the same seed gives the same order).
    workers : int
        ``k`` workers (ranks): with ``k > 1`` each gets a copy of the split and an id list of its
        round-robin share.
    force : bool, optional
        Replace files of the outputs' names that navdtw did not write or that were changed since
        (never a read-only one).
    kind : str, optional
        The data set kind whose split it is (a key of ``navdtw.datasets.DATASETS``); default: the
        kind recognised by the file's form.

    Returns
    -------
    dict[str, Path]
        What was written: ``{"order": order.txt, "json": order.json, "split": the copy, ...}``.

    Raises
    ------
    FileNotFoundError
        No such split file, or a folder.
    ValueError
        An unreadable split file (the message names it and the entry), ``workers < 1``, a negative
        seed, an unknown kind.
    ~navdtw.suite.OutputError
        An output file navdtw may not replace (named), or that cannot be written.
    """
    split, out = Path(split), Path(out)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    _need_file(split)
    index = split_index(split, kind)
    units, entries = index.units, index.entries
    perm = random_order(len(units), seed)
    ordered_units = [units[k] for k in perm]
    ordered_entries = [entries[k] for k in perm]
    names = {"order": out / "order.txt", "json": out / "order.json", "split": out / split.name}
    shares = [list(range(r, len(units), workers)) for r in range(workers)] if workers > 1 else []
    stem, suffix = _stem_suffix(split.name)
    for r in range(len(shares)):
        names[f"worker{r}"] = out / f"order.worker{r}of{workers}.txt"
        names[f"split{r}"] = out / f"{stem}.worker{r}of{workers}{suffix}"
    if any(_same_file(p, split) for p in names.values()):
        raise ValueError(f"{split.name}: the split's copy would replace the split itself: choose another --out")
    check_replaceable(out, [p.name for p in names.values()], force=force)  # before the work, as after it
    with output_folder(out, force=force) as stage:
        _write(stage, {k: stage / p.name for k, p in names.items()}, split, index, seed, ordered_units,
               ordered_entries, shares)  # fmt: skip
    return names


def _same_file(a: Path, b: Path) -> bool:
    return a.exists() and a.resolve() == b.resolve()


def _write(stage, names, split: Path, index: SplitIndex, seed, ordered_units, ordered_entries, shares) -> None:
    """The order's files (the module's list), written into the staging folder; the split's copies
    are written by its index, in the split file's own form."""
    ids = [i for unit in ordered_units for i in unit]
    scenes = unit_scenes(index)
    atomic_write_text(names["order"], "".join(i + "\n" for i in ids))
    atomic_write_json(
        names["json"],
        {
            "format": "navdtw order 1",
            "seed": seed,
            "split": split.name,
            "split_sha256": hashlib.sha256(split.read_bytes()).hexdigest(),
            "units": [list(u) for u in ordered_units],
            "scenes": None if scenes is None else [scenes[u[0]] for u in ordered_units],
            "workers": shares or None,
        },
        indent=None,
    )
    atomic_write_bytes(names["split"], index.copy(ordered_entries))
    for r, share in enumerate(shares):
        atomic_write_text(names[f"worker{r}"], "".join(i + "\n" for k in share for i in ordered_units[k]))
        atomic_write_bytes(names[f"split{r}"], index.copy([ordered_entries[k] for k in share]))


def unit_scenes(index: SplitIndex) -> dict[str, str] | None:
    """Each episode's scene as the split file names it (``scene_id``'s scan of R2R-CE / RxR-CE,
    ``scan`` of the R2R family, REVERIE, NDH and RxR, ``scene`` of positions references), or None
    when some episode has none."""
    scenes = dict(zip(index.ids, index.scans))
    return scenes if all(scenes.values()) else None


def read_scenes(path: PathLike, kind: str | None = None) -> tuple[dict[str, str], list[tuple[str, ...]]]:
    """Each episode's scene, from a split file or from results that name every episode's scene.

    What ``navdtw watch --scenes`` reads when the order names no scenes (an id list, an
    ``order.json`` written before navdtw recorded them).

    Parameters
    ----------
    path : str or Path
        A split file of any kind ``navdtw order`` reads (R2R-CE's ``val_unseen.json.gz``: each
        ``scene_id``'s scan; the R2R family, REVERIE, NDH, RxR: ``scan``; positions references:
        ``scene``), or a results table with a scene column (``scan``, ``scene_id``, ``scene``)
        holding the whole split (another agent's complete results).
    kind : str, optional
        The split's data set kind (default: recognised by the file's form).

    Returns
    -------
    tuple
        ``(scenes, units)``: episode id -> its scene, and a split's units (its entries: an
        episode, or a path with its instructions), for :meth:`Order.with_scenes`; a results
        table says nothing of units (its path column may join episodes that an order keeps apart,
        R2R-CE's instructions of one path): ``[]``.

    Raises
    ------
    FileNotFoundError
        No such file, or a folder.
    ValueError
        A file that is neither, or that names no scene for some episode (the message names the
        file and the first such episode).
    """
    path = Path(path)
    _need_file(path)
    units: list[tuple[str, ...]] = []
    try:
        index = split_index(path, kind)
        scenes = dict(zip(index.ids, index.scans))
        units = list(index.units)
        why = ""
    except ValueError as exc:
        scenes, why = {}, str(exc)
    if not scenes or not all(scenes.values()):  # records with an episode_id read as a split: results?
        from .datasets.results import load_results

        try:
            table = load_results(path)
        except (ValueError, FileNotFoundError):
            if not scenes:
                raise ValueError(f"{path.name}: neither a split file nor results with a scene column ({why})") from None
        else:
            if all(table.scans) or not scenes:
                scenes, units = dict(zip(table.ids, table.scans)), []
    missing = [i for i, s in scenes.items() if not s]
    if missing:
        raise ValueError(
            f"{path.name}: no scene for {len(missing)} of its {len(scenes)} episodes (first: {missing[0]!r}); "
            "give the split file (its scene_id, scan or scene names each episode's scene)"
        )
    return scenes, units


def _stem_suffix(name: str) -> tuple[str, str]:
    for suffix in (".json.gz", ".jsonl.gz", ".json", ".jsonl"):
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def load_order(path: PathLike) -> Order:
    """Reads an order: ``order.json`` (written by :func:`write_order`) or a plain id list.

    Parameters
    ----------
    path : str or Path
        ``order.json``, or a text file with one episode id per line (each id its own unit).

    Returns
    -------
    Order
        The units in order.

    Raises
    ------
    FileNotFoundError
        No such file, or a folder.
    ValueError
        A malformed file (a split file given as the order, say), an empty order or an id listed
        twice (the message names the file and the line or unit).
    """
    path = Path(path)
    what = "an order file is the order.json navdtw order writes, or a text file of episode ids, one per line"
    _need_file(path)
    try:
        text = read_text(path)  # gzipped or not
    except ValueError as exc:
        raise ValueError(f"{exc}: {what}") from None
    seed = split = digest = scenes = None
    if text.lstrip()[:1] in ("{", "["):
        try:
            doc = json.loads(text)
            units = tuple(tuple(str(i) for i in u) for u in doc["units"])
            seed, split, digest = doc.get("seed"), doc.get("split"), doc.get("split_sha256")
            scenes = doc.get("scenes")  # absent from orders written before navdtw recorded scenes
        except (ValueError, KeyError, TypeError, IndexError, RecursionError, AttributeError):
            raise ValueError(f"{path.name}: not an order written by navdtw order; {what}") from None
    else:
        units = tuple((line.strip(),) for line in text.splitlines() if line.strip())
        _not_a_share(path, [u[0] for u in units])
    if not units or any(not u for u in units):
        raise ValueError(f"{path.name}: the order is empty or has an empty unit")
    seen: set[str] = set()
    for k, unit in enumerate(units):
        for i in unit:
            if i in seen:
                raise ValueError(f"{path.name}: episode id {i!r} appears twice (unit {k})")
            seen.add(i)
    if scenes is not None and not (
        isinstance(scenes, list) and len(scenes) == len(units) and all(isinstance(x, str) and x for x in scenes)
    ):
        raise ValueError(f"{path.name}: 'scenes' must be a scene name for each of its {len(units)} units")
    split = split if isinstance(split, str) else None
    return Order(units, seed, path.name, split, digest, None if scenes is None else tuple(scenes),
                 None if scenes is None else path.name)  # fmt: skip


_SHARE = re.compile(r"\.worker(\d+)of(\d+)\.txt(\.gz)?$")


def _not_a_share(path: Path, ids: list[str]) -> None:
    """One worker's id list (``order.worker{r}of{k}.txt`` of :func:`write_order`, or a list equal to
    a share of the ``order.json`` beside it) is refused as an order: it is part of the split, and a
    watch of it would decide on that part as if it were the split."""
    found = _SHARE.search(path.name)
    if found is None:
        sibling = path.with_name("order.json")
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
            doc = json.loads(read_text(sibling)) if sibling.is_file() and sibling != path else {}
            units = [[str(i) for i in u] for u in doc.get("units", [])]
            shares = doc.get("workers") or []
            for r, share in enumerate(shares):
                if ids == [i for k in share for i in units[k]]:
                    found = (r, len(shares))
                    break
        if found is None:
            return
    else:
        found = (int(found[1]), int(found[2]))
    raise ValueError(
        f"{path.name}: one worker's share of the order (worker {found[0]} of {found[1]}), not the split's "
        f"order: give order.json (or the split's full order.txt) to --order"
    )


def _need_file(path: Path) -> None:
    """A missing file or a folder, worded as every command words it."""
    if not path.is_file():
        raise FileNotFoundError(not_found(path, "file"))


def positions(order: Order) -> dict[str, int]:
    """Each episode id's unit position in the order."""
    return {i: k for k, unit in enumerate(order.units) for i in unit}


def off_by_one(order: Order, ids, *, done: int = 0) -> str | None:
    """Whether a run that follows ``order`` writes its episode ids shifted by one (a 0-based
    counter written as a 1-based id, or the reverse): then its results are another episode's, yet
    with the ranges overlapping (ids 2..N+1 for an order of 1..N) nearly every id is an episode of
    the order. A run that follows the order holds mostly the order's first episodes; shifted by
    one, its ids are mostly *not* among them, while each id minus (or plus) one is.

    Judged on integer ids only, and only where it can be: at least 20 ids and fewer than the whole
    order (a complete run's ids, shifted or not, cover the same range). The prefix looked at is
    the order's first ``1.25 n + 10`` episodes (workers finish out of order). It says so when at
    least 80% of the ids shifted by one fall in that prefix and fewer than half as many as written
    do (false alarms on real runs: ``benchmarks/bench_off_by_one.py``).

    Parameters
    ----------
    order : Order
        The order the run follows.
    ids : iterable of str
        The run's episode ids so far.
    done : int, optional
        The units of the order the run has finished as a prefix: when they are half its ids or
        more, most of it is in order and nothing is looked at (the cheap case of every look).

    Returns
    -------
    str or None
        What was found (``"its ids look off by one: 57 of its 60 ids, each minus 1, are among
        the order's first 85 episodes, against 3 as written; ..."``), or None.
    """
    ids = list(ids)
    if 2 * done >= len(ids):
        return None
    present = [int(i) for i in map(str, ids) if _is_int(i)]
    every = order.ids
    n = len(present)
    if n < OFF_BY_ONE_MIN or n >= len(every) or not all(_is_int(i) for i in every[: min(len(every), 50)]):
        return None
    m = min(len(every), int(1.25 * n) + 10)
    prefix = {int(i) for i in every[:m] if _is_int(i)}
    as_written = sum(1 for i in present if i in prefix)
    for d in (1, -1):
        shifted = sum(1 for i in present if i - d in prefix)
        if shifted >= OFF_BY_ONE_SHARE * n and as_written < 0.5 * shifted:
            return (
                f"its ids look off by one: {shifted} of its {n} ids, each {'minus' if d > 0 else 'plus'} 1, are "
                f"among the order's first {m} episodes, against {as_written} as written; results written under "
                "the next (or previous) episode's id would be decided on the wrong episodes: fix the ids the "
                "evaluator writes (a 0-based counter against 1-based ids?)"
            )
    return None


def _is_int(text: str) -> bool:
    return isinstance(text, str) and text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")
