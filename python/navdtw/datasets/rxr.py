"""RxR (Room-Across-Room, Ku et al. 2020): guide annotations, predictions, matching, per-language scores.

RxR publishes no evaluation code (``google-research-datasets/RxR`` holds the annotation schemas in
its README only); the public evaluation is VLN-HAMT's (``cshizhe/VLN-HAMT``
``finetune_src/r2r/env.py``, ``R2RBatch._eval_item`` / ``eval_metrics``), the same rules as its R2R
evaluation: navdtw's ``duet`` convention (success ``<`` 3 m, SPL's l = PL(R), DTW on the raw
viewpoint lists), the default here. nDTW is RxR's headline metric.

* Guide annotations ``rxr_{split}_guide.jsonl.gz``: JSON Lines (gzipped or not), one instruction
  per line with ``instruction_id`` (int, unique), ``path_id`` (int; paths are shared), ``scan``,
  ``path`` (viewpoints), ``heading``, ``language`` (``en-IN``, ``en-US``, ``hi-IN``, ``te-IN``),
  ``instruction``, ``annotator_id``, ``timed_instruction``, ``edit_distance``, ...
* Episode ids as VLN-HAMT forms them (``construct_instrs`` in ``finetune_src/r2r/data_utils.py``):
  ``instr_id = "%d_%d" % (path_id, instruction_id)``, or ``str(instruction_id)`` on lines without
  a ``path_id`` (the test splits).
* Predictions: VLN-HAMT's ``submit_<split>.json`` (``[{"instr_id": "<path_id>_<instruction_id>",
  "trajectory": [[viewpoint, heading, elevation], ...]}]``), or JSON Lines of
  ``{"instruction_id": int, "path": [viewpoint, ...]}`` as the RxR follower annotations are
  written (``rxr_{split}_follower.jsonl.gz``; extra keys such as ``metrics`` are ignored).

Scores carry the guide's ``language`` per episode: ``scores.summary(by="language")``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._messages import named
from .._typing import PathLike
from ..baseline import score_random_walks
from ..graphs import GraphSet
from . import r2r
from ._common import (
    INPUT,
    Document,
    MatchedEpisodes,
    SplitIndex,
    check_viewpoints,
    finite_real,
    is_int,
    is_path,
    loads,
    make_split_index,
    read_text,
    trajectory_viewpoints,
)
from .base import Benchmark, DatasetKind, IdShape, Option, SplitReader
from .matterport import load_scan_graphs
from .shapes import routed

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "LANGUAGES",
    "RXR",
    "RxRBenchmark",
    "instr_id",
    "load_rxr_guide",
    "load_rxr_predictions",
    "match_predictions",
]

#: The conventions (``navdtw.CONVENTIONS``) RxR is scored with: VLN-HAMT's rules first.
CONVENTIONS: tuple[str, ...] = ("duet", "paper")
#: VLN-HAMT's RxR evaluation (the only public one): ``<`` 3 m, l = PL(R), DTW on raw viewpoints.
DEFAULT_CONVENTION = "duet"
#: The languages of RxR's guide annotations.
LANGUAGES: tuple[str, ...] = ("en-IN", "en-US", "hi-IN", "te-IN")


def instr_id(line: Mapping[str, Any]) -> str:
    """VLN-HAMT's episode id of a guide line.

    Parameters
    ----------
    line : mapping
        A guide line, with an integer ``instruction_id`` (and ``path_id``, when present).

    Returns
    -------
    str
        ``"<path_id>_<instruction_id>"``, or ``"<instruction_id>"`` without a ``path_id``.
    """
    if "path_id" in line:
        return f"{line['path_id']:d}_{line['instruction_id']:d}"
    return str(line["instruction_id"])


# --------------------------------------------------------------------------------------------
# JSON Lines
# --------------------------------------------------------------------------------------------


def _json_lines(path_or_list, what: str) -> tuple[list[tuple[str, Any]], str]:
    """``([(where, parsed object), ...], name)`` of a JSON Lines file (blank lines skipped; a line
    that is not JSON -> ``ValueError`` naming the file and line) or of an already parsed list."""
    if not is_path(path_or_list):
        if not isinstance(path_or_list, list):
            raise ValueError(f"{INPUT}: expected a list of {what}, got {type(path_or_list).__name__}")
        return [(f"{INPUT}: entry {k}", e) for k, e in enumerate(path_or_list)], INPUT
    name = Path(path_or_list).name
    out = []
    for n, text in enumerate(read_text(path_or_list).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            out.append((f"{name}: line {n}", loads(text, f"{name}: line {n}")))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: line {n} is not JSON (column {exc.colno}: {exc.msg})") from None
    return out, name


# --------------------------------------------------------------------------------------------
# guide annotations
# --------------------------------------------------------------------------------------------


def load_rxr_guide(path_or_list, *, graphs: GraphSet | None = None) -> list[dict[str, Any]]:
    """Reads RxR guide annotations: one record per instruction, in file order.

    Each line needs ``instruction_id`` (int, unique), ``scan`` (str), ``path`` (non-empty list of
    viewpoint ids) and ``language`` (str); ``path_id`` (int) when present, ``heading`` a finite
    number when present. Every record is a copy of its line plus ``instr_id`` (:func:`~navdtw.datasets.rxr.instr_id`).
    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The guide file (JSON Lines, gzipped or not), or its parsed lines.
    graphs : GraphSet, optional
        If given, every scan and viewpoint must exist in it.

    Returns
    -------
    list of dict
        One record per instruction, in file order.

    Raises
    ------
    ValueError
        A malformed line, naming the file and the line (``"rxr_val_unseen_guide.jsonl.gz: line 12
        (instruction_id 41): 'path' is empty"``); with ``graphs``, an unknown scan or viewpoint.
    FileNotFoundError
        A file name that does not exist.
    """
    return _read_guide(_json_lines(path_or_list, "guide annotations")[0], graphs)


def _read_guide(lines: list[tuple[str, Any]], graphs: GraphSet | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: dict[int, str] = {}
    for at, e in lines:
        if not isinstance(e, dict):
            raise ValueError(f"{at}: expected a JSON object, got {type(e).__name__}")
        iid = e.get("instruction_id")
        if not is_int(iid):
            raise ValueError(f"{at}: 'instruction_id' must be an integer, got {iid!r}")
        where = f"{at} (instruction_id {iid})"
        if iid in seen:
            raise ValueError(f"{where}: duplicate instruction_id (also {seen[iid].split(': ', 1)[1]})")
        seen[iid] = at
        if "path_id" in e and not is_int(e["path_id"]):
            raise ValueError(f"{where}: 'path_id' must be an integer, got {e['path_id']!r}")
        scan = e.get("scan")
        if not isinstance(scan, str) or not scan:
            raise ValueError(f"{where}: 'scan' must be a non-empty string")
        path = e.get("path")
        if not isinstance(path, list) or not all(isinstance(v, str) for v in path):
            raise ValueError(f"{where}: 'path' must be a list of viewpoint ids")
        if not path:
            raise ValueError(f"{where}: 'path' is empty")
        if not isinstance(e.get("language"), str):
            raise ValueError(f"{where}: 'language' must be a string such as 'en-US'")
        if "heading" in e and not finite_real(e["heading"]):
            raise ValueError(f"{where}: 'heading' must be a finite number, got {e['heading']!r}")
        if graphs is not None:
            check_viewpoints(graphs, scan, {"path": path}, where)
        rec = dict(e)
        rec["path"] = list(path)
        rec["instr_id"] = instr_id(e)
        out.append(rec)
    return out


def split_index(document: Document, kind: str = "rxr") -> SplitIndex | None:
    """The index of RxR guide annotations (JSON Lines): one episode per line, its id VLN-HAMT's
    ``<path_id>_<instruction_id>`` (:func:`instr_id`), the followers' ``instruction_id`` as another
    id, its path and language. RxR-CE episodes (VLN-CE's ``{"episodes": [...]}``) are read as
    :func:`navdtw.datasets.vlnce.split_index` reads them.

    Parameters
    ----------
    document : Document
        The file, read (:func:`~navdtw.datasets._common.read_document`).
    kind : str, optional
        The kind reading it, recorded in the index.

    Returns
    -------
    SplitIndex or None
        The index; None when the file is neither guide lines nor VLN-CE episodes.

    Raises
    ------
    ValueError
        A line without an integer ``instruction_id`` (or with a ``path_id`` that is not one),
        naming the file and the line; an id twice.
    """
    from .vlnce import split_index as episodes_index

    data, name = document.data, document.name
    if isinstance(data, dict) and "episodes" in data:
        return episodes_index(document, kind)
    lines = data if isinstance(data, list) else [data]
    first = lines[0] if lines else None
    if not (isinstance(first, dict) and "instruction_id" in first and ("scan" in first or "path_id" in first)):
        return None
    for k, e in enumerate(lines):
        ok = isinstance(e, dict) and is_int(e.get("instruction_id")) and is_int(e.get("path_id", 0))
        if not ok:
            raise ValueError(f"{name}: line {k + 1} has no integer 'instruction_id' (and 'path_id')")
    ids = [instr_id(e) for e in lines]
    return make_split_index(
        document, kind, [(i,) for i in ids], entries=lines, scans=[str(e.get("scan", "")) for e in lines],
        paths=[str(e.get("path_id", i)) for e, i in zip(lines, ids)],
        groups={"language": [str(e.get("language", "")) for e in lines]},
        other_ids={str(e["instruction_id"]): i for e, i in zip(lines, ids)},
    )  # fmt: skip


def load_guide_graphs(guide, connectivity: PathLike) -> tuple[list[dict[str, Any]], GraphSet]:
    """Reads guide annotations and the connectivity graphs of their scans: ``(records, graphs)``.

    An empty file, a scan without a connectivity file or a viewpoint that is not in its scan raise
    ``ValueError`` naming the guide file and line.
    """
    lines, name = _json_lines(guide, "guide annotations")
    records = _read_guide(lines, None)
    if not records:
        raise ValueError(f"{name}: no guide annotations")
    graphs = load_scan_graphs(
        connectivity, records, lambda k: f"{lines[k][0]} (instruction_id {records[k]['instruction_id']})"
    )
    return _read_guide(lines, graphs), graphs  # names viewpoints that are not in their scan


# --------------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------------


def load_rxr_predictions(path_or_list) -> dict[str, list[str]]:
    """Reads RxR predictions -> ``{id: [viewpoint, ...]}`` in file order, viewpoints as listed.

    Accepts VLN-HAMT's ``submit_<split>.json`` (a JSON list of ``{"instr_id", "trajectory"}``;
    the id is kept as written, ``"<path_id>_<instruction_id>"``) and JSON Lines (or a list) of
    follower-style ``{"instruction_id": int, "path": [viewpoint, ...]}`` objects, keyed by
    ``str(instruction_id)``; :func:`match_predictions` accepts either key for an instruction.
    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        A predictions file (JSON or JSON Lines, gzipped or not), or its parsed entries.

    Returns
    -------
    dict[str, list of str]
        id -> viewpoints, in file order.

    Raises
    ------
    ValueError
        A duplicated id or a malformed entry, naming the file and the line or entry.
    FileNotFoundError
        A file name that does not exist.
    """
    if is_path(path_or_list) and read_text(path_or_list).lstrip().startswith("["):
        return r2r.load_predictions(path_or_list)  # one JSON document: HAMT's submit file
    entries, _ = _json_lines(path_or_list, "predictions")
    out: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for at, e in entries:
        if not isinstance(e, dict):
            raise ValueError(f"{at}: expected a JSON object, got {type(e).__name__}")
        if "instr_id" in e:
            key = e["instr_id"]
            if not (isinstance(key, str) or is_int(key)):
                raise ValueError(f"{at}: 'instr_id' must be a string, got {key!r}")
            key, where = str(key), f"{at} (instr_id {named(key)})"
            vps = trajectory_viewpoints(e.get("trajectory"), where)
        elif "instruction_id" in e:
            key = e["instruction_id"]
            if not is_int(key):
                raise ValueError(f"{at}: 'instruction_id' must be an integer, got {key!r}")
            key, where = str(key), f"{at} (instruction_id {key})"
            path = e.get("path")
            if not isinstance(path, list) or not all(isinstance(v, str) for v in path):
                raise ValueError(f"{where}: 'path' must be a list of viewpoint ids")
            if not path:
                raise ValueError(f"{where}: 'path' is empty")
            vps = list(path)
        else:
            raise ValueError(f"{at}: needs 'instr_id' and 'trajectory' (VLN-HAMT) or 'instruction_id' and 'path'")
        if key in first:
            raise ValueError(f"{where}: duplicate id (also {first[key].split(': ', 1)[1]})")
        first[key] = at
        out[key] = vps
    return out


# --------------------------------------------------------------------------------------------
# matching
# --------------------------------------------------------------------------------------------


def match_predictions(
    guide, predictions, graphs: GraphSet, *, strict: bool = False, collapse_repeats: bool = True
) -> MatchedEpisodes:
    """Pairs every guide instruction with its predicted trajectory and encodes both.

    ``guide``: records from :func:`load_rxr_guide` (or a guide file name); ``predictions``: a dict
    from :func:`load_rxr_predictions` or a predictions file name / parsed list. A prediction is
    found under the instruction's ``instr_id`` (VLN-HAMT's ``"<path_id>_<instruction_id>"``) or
    ``str(instruction_id)`` (follower files). Every instruction needs exactly one prediction and
    every prediction an instruction (errors name the entry, as :func:`navdtw.datasets.r2r.match_predictions`).
    ``collapse_repeats``: merge consecutive repeated viewpoints (False for the ``duet`` convention,
    whose ``cal_dtw`` reads the raw list).

    Parameters
    ----------
    guide : str, os.PathLike or list of dict
        Records from :func:`load_rxr_guide`, guide lines, or a guide file name.
    predictions : dict, str, os.PathLike or list
        ``{id: viewpoints}`` (:func:`load_rxr_predictions`), or a predictions file name or list.
    graphs : GraphSet
        The graphs of the guide's scans.
    strict : bool, optional
        Require every trajectory to start at its reference's start (default False).
    collapse_repeats : bool, optional
        Merge consecutive repeated viewpoints (default True).

    Returns
    -------
    MatchedEpisodes
        With ``id_name="instr_id"`` (HAMT's ids) and ``groups={"language": [...]}``.

    Raises
    ------
    ValueError
        An empty guide, an instruction with two predictions (under both ids), or the errors of
        :func:`navdtw.datasets.r2r.match_predictions`, naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    records = list(guide) if not is_path(guide) else load_rxr_guide(guide)
    if records and "instr_id" not in records[0]:  # guide lines rather than records
        records = load_rxr_guide(records)
    if not records:
        raise ValueError("match_predictions: the guide is empty")
    src = Path(predictions).name if is_path(predictions) else "predictions"
    if not isinstance(predictions, Mapping):
        predictions = load_rxr_predictions(predictions)
    # Re-key follower-style ids (instruction_id) to HAMT's instr_id; the R2R matcher does the rest.
    by_instruction = {str(r["instruction_id"]): r["instr_id"] for r in records}
    keyed: dict[str, Any] = {}
    for key, traj in predictions.items():
        key = str(key)
        iid = by_instruction.get(key, key)
        if iid in keyed:
            raise ValueError(f"{src}: instruction {iid} has two predictions (under {iid} and {key})")
        keyed[iid] = traj
    matched = r2r.match_predictions(
        [{"instr_id": r["instr_id"], "scan": r["scan"], "path": r["path"]} for r in records],
        keyed,
        graphs,
        strict=strict,
        collapse_repeats=collapse_repeats,
        name=src,
    )
    return replace(matched, groups={"language": [r["language"] for r in records]})


class RxRBenchmark(Benchmark):
    """RxR guide annotations with the graphs of their scans, ready to score agents.

    Parameters
    ----------
    split : str, os.PathLike or list
        The guide file (JSON Lines), or its parsed lines.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.

    Raises
    ------
    ValueError
        A malformed or empty guide, a scan without a connectivity file, a viewpoint not in its
        scan (naming the guide file and the line).
    FileNotFoundError
        A missing guide file or connectivity folder.
    """

    def __init__(self, split, connectivity) -> None:
        self.records, self.graphs = load_guide_graphs(split, connectivity)

    @property
    def n(self) -> int:
        return len(self.records)

    def match(self, predictions, *, convention: str | None = None, strict: bool = False) -> MatchedEpisodes:
        from ..metrics import CONVENTIONS as ALL

        conv = ALL[self.kind.check_convention(convention)]
        with routed(predictions, self.kind):
            return match_predictions(
                self.records, predictions, self.graphs, strict=strict, collapse_repeats=conv.collapse_repeats
            )

    def paths(self) -> list[dict[str, Any]]:
        """One R2R-style entry per path, in order of first appearance: the references of the random
        baseline.

        Returns
        -------
        list of dict
            ``{"path_id", "scan", "path", "num_instructions"}`` per path.
        """
        out: dict[Any, dict[str, Any]] = {}
        for r in self.records:
            key = r.get("path_id", r["instr_id"])
            if key in out:
                out[key]["num_instructions"] += 1
            else:
                out[key] = {"path_id": key, "scan": r["scan"], "path": r["path"], "num_instructions": 1}
        return list(out.values())

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        """Means of every metric over ``n`` random walks from the starts of the guide's paths (each
        path once, however many instructions it has).

        Parameters
        ----------
        n : int
            Number of random walks, >= 1.
        seed : int, optional
            The walks depend only on the seed (default 0).
        convention : str, optional
            One of the kind's conventions (default: its default convention).
        **kwargs
            Passed to :func:`navdtw.baseline.score_random_walks` (``threshold``, ``chunk``,
            ``workers``, ``progress``, ``metrics``).

        Returns
        -------
        dict[str, float]
            Metric name -> mean over the walks, rates as fractions.

        Raises
        ------
        ValueError, TypeError
            A convention that does not apply, or the bad options of
            :func:`navdtw.baseline.score_random_walks`.
        """
        conv = self.kind.check_convention(convention)
        refs = self.paths()
        scans, paths = [e["scan"] for e in refs], [e["path"] for e in refs]
        return score_random_walks(self.graphs, scans, paths, n, seed=seed, convention=conv, **kwargs)


RXR = DatasetKind(
    "rxr",
    "RxR",
    (
        Option(
            "split", "RxR guide annotations: rxr_{split}_guide.jsonl.gz (JSON Lines)", shapes=("rxr-guide", "r2r-split")
        ),
        Option("connectivity", "folder of <scan>_connectivity.json (Matterport3D navigation graphs)", kind="dir"),
    ),
    CONVENTIONS,
    DEFAULT_CONVENTION,
    RxRBenchmark,
    description="Room-Across-Room (Ku et al. 2020): multilingual instructions on Matterport3D graph paths",
    split_reader=SplitReader("split", split_index),
    predictions=("r2r-trajectories", "duet-trajectories", "reverie-trajectories", "rxr-follower"),
    id_shape=IdShape("<path_id>_<k>", r"\d+_\d+", lambda i: i.rsplit("_", 1)[0]),  # VLN-HAMT's ids
)
