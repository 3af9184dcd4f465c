"""CVDN / NDH (Navigation from Dialog History, Thomason et al. 2019): splits, results, matching, GP.

Evaluators reproduced (``navdtw.CONVENTIONS``): ``ndh`` (``mmurray/cvdn`` ``tasks/NDH/eval.py``,
the default) and navdtw's ``paper``. Node paths over the Matterport3D connectivity graphs
(:mod:`navdtw.datasets.matterport`).

* Split ``NDH_val_{seen,unseen}.json``: ``[{"inst_idx": int, "scan", "target", "start_pano":
  {"pano", "heading", "elevation"}, "nav_history", "dialog_history", "end_panos", "planner_path",
  "player_path", ...}]``. ``end_panos`` is the goal region; ``planner_path`` the next (at most
  five) steps toward it shown to the oracle; ``player_path`` the human navigator's whole path
  from this turn's start.
* Predictions: ``[{"inst_idx": int, "trajectory": [[viewpoint, heading, elevation], ...]}]``.

The reference of every episode is the **chosen path** (``goal=``): ``"planner"`` (the evaluator's
default) is ``planner_path``; ``"trusted"`` is ``player_path`` when the planner path's last
viewpoint occurs in it at an index >= 1, else ``planner_path`` (:func:`chosen_path`). Its first
node is the start and its last node the goal of SR, NE, OSR and SPL; nDTW, SDTW and CLS compare
the trajectory with the whole chosen path. GP (metric ``gp``, metres) = min over ``end_panos`` of
d(start, .) - min over ``end_panos`` of d(final viewpoint, .); it is the same for both goals.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._messages import few
from .._typing import PathLike
from ..baseline import score_random_walks
from ..graphs import GraphSet
from ..paths import Paths, collapse_repeats, first_start_mismatch
from ._common import (
    Document,
    MatchedEpisodes,
    SplitIndex,
    check_viewpoints,
    finite_real,
    is_int,
    is_path,
    list_of,
    make_split_index,
    source,
    trajectory_viewpoints,
)
from .base import Benchmark, DatasetKind, Option, SplitReader
from .matterport import load_scan_graphs
from .shapes import other_split, routed

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "GOALS",
    "NDH",
    "GoalRegions",
    "NDHBenchmark",
    "chosen_path",
    "load_matched",
    "load_ndh",
    "load_ndh_predictions",
    "load_split_graphs",
    "match_predictions",
]

#: The conventions (``navdtw.CONVENTIONS``) whose evaluators read these files.
CONVENTIONS: tuple[str, ...] = ("ndh", "paper")
#: The convention the command line uses for NDH unless told otherwise.
DEFAULT_CONVENTION = "ndh"
#: The goal choices: which path of an entry is the reference (``goal=``).
GOALS: tuple[str, ...] = ("planner", "trusted")

#: Conventions that score the ids as the evaluator does: an id not in the split and every later
#: duplicate of an id are ignored (with a warning naming them) instead of being an error.
_EVALUATOR_IDS = ("ndh",)

_REGION_START = "region_start_distance"
_REGION_FINAL = "region_final_distance"


# --------------------------------------------------------------------------------------------
# the split
# --------------------------------------------------------------------------------------------


def load_ndh(path_or_list, *, graphs: GraphSet | None = None) -> list[dict[str, Any]]:
    """Reads an NDH split (``NDH_val_unseen.json``): a list of dialog-turn entries.

    Each entry needs ``inst_idx`` (int, unique), ``scan`` (str), ``planner_path`` and
    ``player_path`` (non-empty lists of viewpoint ids) and ``end_panos`` (non-empty list of
    viewpoint ids, the goal region). When present, ``start_pano`` must be an object whose ``pano``
    is a viewpoint id, ``nav_history`` a list of viewpoint ids, ``dialog_history`` a list of
    objects and ``target`` a string. Other keys are kept as they are.

    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The split file (gzipped or not), or its parsed list.
    graphs : GraphSet, optional
        If given, every scan and viewpoint must exist in it.

    Returns
    -------
    list of dict
        New dicts (shallow copies, the viewpoint lists as new lists), in file order.

    Raises
    ------
    ValueError
        A malformed file or entry, naming the file and the entry: ``"NDH_val_unseen.json: entry 3
        (inst_idx 12): 'end_panos' is empty"``; with ``graphs``, an unknown scan or viewpoint.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_list)
    return _read_split(data, name, graphs)


def _viewpoints(value, where: str, key: str, *, empty_ok: bool = False) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{where}: {key!r} must be a list of viewpoint ids")
    if not value and not empty_ok:
        raise ValueError(f"{where}: {key!r} is empty")
    for j, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise ValueError(f"{where}: {key}[{j}] must be a viewpoint id string, got {v!r}")
    return list(value)


def _read_split(data, name: str, graphs: GraphSet | None) -> list[dict[str, Any]]:
    data = list_of(data, name, "NDH entries")
    out: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        if "inst_idx" not in e:
            raise ValueError(f"{name}: entry {k}: missing 'inst_idx'")
        iid = e["inst_idx"]
        if not is_int(iid):
            raise ValueError(f"{name}: entry {k}: 'inst_idx' must be an integer, got {iid!r}")
        where = f"{name}: entry {k} (inst_idx {iid})"
        if iid in seen:
            raise ValueError(f"{where}: duplicate inst_idx (also entry {seen[iid]})")
        seen[iid] = k
        scan = e.get("scan")
        if not isinstance(scan, str) or not scan:
            raise ValueError(f"{where}: 'scan' must be a non-empty string")
        rec = dict(e)
        for key in ("planner_path", "player_path", "end_panos"):
            if key not in e:
                raise ValueError(f"{where}: missing {key!r}")
            rec[key] = _viewpoints(e[key], where, key)
        if "nav_history" in e:
            rec["nav_history"] = _viewpoints(e["nav_history"], where, "nav_history", empty_ok=True)
        if "dialog_history" in e:
            dh = e["dialog_history"]
            if not isinstance(dh, list) or not all(isinstance(t, dict) for t in dh):
                raise ValueError(f"{where}: 'dialog_history' must be a list of {{nav_idx, role, message}} objects")
        if "target" in e and not isinstance(e["target"], str):
            raise ValueError(f"{where}: 'target' must be a string, got {e['target']!r}")
        if "start_pano" in e:
            sp = e["start_pano"]
            if not isinstance(sp, dict) or not isinstance(sp.get("pano"), str):
                raise ValueError(f"{where}: 'start_pano' must be an object with a viewpoint id 'pano'")
            for key in ("heading", "elevation"):
                if key in sp and not finite_real(sp[key]):
                    raise ValueError(f"{where}: start_pano[{key!r}] must be a finite number, got {sp[key]!r}")
        if graphs is not None:
            check_viewpoints(graphs, scan, {k: rec[k] for k in ("planner_path", "player_path", "end_panos")}, where)
            if "start_pano" in e and e["start_pano"]["pano"] not in graphs[scan].index:
                raise ValueError(f"{where}: start_pano {e['start_pano']['pano']!r} is not a viewpoint of scan {scan!r}")
        out.append(rec)
    return out


def split_index(document: Document, kind: str = "ndh") -> SplitIndex | None:
    """The index of an NDH split: one episode per entry (a dialog turn), its id ``inst_idx``.

    Parameters
    ----------
    document : Document
        The file, read (:func:`~navdtw.datasets._common.read_document`).
    kind : str, optional
        The kind reading it, recorded in the index.

    Returns
    -------
    SplitIndex or None
        The index; None when the file is not a list of entries with an ``inst_idx``.

    Raises
    ------
    ValueError
        An entry without an integer ``inst_idx`` (naming the file and the entry), or an id twice.
    """
    data, name = document.data, document.name
    first = data[0] if isinstance(data, list) and data else None
    if not (isinstance(first, dict) and "inst_idx" in first):
        return None
    for k, e in enumerate(data):
        if not (isinstance(e, dict) and is_int(e.get("inst_idx"))):
            raise ValueError(f"{name}: entry {k} has no integer 'inst_idx'")
    units = [(str(e["inst_idx"]),) for e in data]
    return make_split_index(document, kind, units, entries=data, scans=[str(e.get("scan", "")) for e in data])


def chosen_path(entry: Mapping[str, Any], goal: str = "planner") -> list[str]:
    """The reference path of an NDH entry for ``goal``: ``"planner"`` -> ``planner_path``;
    ``"trusted"`` -> ``player_path`` if the planner path's last viewpoint occurs in ``player_path``
    at an index >= 1, else ``planner_path`` (cvdn ``Evaluation.__init__``, ``trusted_path``).

    Parameters
    ----------
    entry : mapping
        An entry of the split (:func:`~navdtw.datasets.load_ndh`).
    goal : str, optional
        ``"planner"`` (default) or ``"trusted"`` (``GOALS``).

    Returns
    -------
    list of str
        The reference path's viewpoints (a new list).

    Raises
    ------
    ValueError
        A ``goal`` not in ``GOALS``.
    """
    if goal not in GOALS:
        raise ValueError(f"goal must be one of {', '.join(GOALS)}, got {goal!r}")
    planner = entry["planner_path"]
    if goal == "trusted" and planner[-1] in entry["player_path"][1:]:
        return list(entry["player_path"])
    return list(planner)


def load_split_graphs(split, connectivity: PathLike) -> tuple[list[dict[str, Any]], GraphSet]:
    """Reads an NDH split and the connectivity graphs of its scans: ``(entries, graphs)``.

    Only the split's scans are loaded, in order of first appearance.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.

    Returns
    -------
    entries : list of dict
        The split's entries (:func:`load_ndh`).
    graphs : GraphSet
        The graphs of its scans.

    Raises
    ------
    ValueError
        A malformed or empty split, a scan without a connectivity file, a viewpoint that is not
        in its scan (naming the split file and the entry), a malformed connectivity file.
    FileNotFoundError
        A missing split file or connectivity folder.
    """
    data, name = source(split)
    entries = _read_split(data, name, None)
    if not entries:
        raise ValueError(f"{name}: the split is empty")
    graphs = load_scan_graphs(connectivity, entries, lambda k: f"{name}: entry {k} (inst_idx {entries[k]['inst_idx']})")
    return _read_split(data, name, graphs), graphs  # names viewpoints that are not in their scan


# --------------------------------------------------------------------------------------------
# predictions
# --------------------------------------------------------------------------------------------


def _inst_idx(value, where: str) -> int:
    """An ``inst_idx``: an int, or a string of decimal digits (normalised to the int)."""
    if is_int(value):
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        try:
            return int(value.strip())
        except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits())
            raise ValueError(f"{where}: 'inst_idx' has {len(value.strip())} digits, too many for an id") from None
    raise ValueError(f"{where}: 'inst_idx' must be an integer (or a string of digits), got {value!r}")


def _read_predictions(predictions) -> tuple[str, list[tuple[int, int, list[str]]]]:
    """``(name for messages, [(entry index, inst_idx, viewpoints), ...])`` in file order, duplicates
    kept. A mapping ``{inst_idx: trajectory}`` is read in its order (named ``predictions``)."""
    if isinstance(predictions, Mapping):
        name = "predictions"
        items = list(predictions.items())
        out = []
        keys: dict[int, Any] = {}
        for k, (key, traj) in enumerate(items):
            iid = _inst_idx(key, f"{name}: key {key!r}")
            if iid in keys:
                raise ValueError(f"{name}: inst_idx {iid} appears twice (as {keys[iid]!r} and {key!r})")
            keys[iid] = key
            out.append((k, iid, trajectory_viewpoints(traj, f"{name}: inst_idx {iid}")))
        return name, out
    data, name = source(predictions)
    data = list_of(data, name, "predictions")
    out = []
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        if "inst_idx" not in e:
            raise ValueError(f"{name}: entry {k}: missing 'inst_idx'")
        iid = _inst_idx(e["inst_idx"], f"{name}: entry {k}")
        where = f"{name}: entry {k} (inst_idx {iid})"
        if "trajectory" not in e:
            raise ValueError(f"{where}: missing 'trajectory'")
        out.append((k, iid, trajectory_viewpoints(e["trajectory"], where)))
    return name, out


def load_ndh_predictions(path_or_list, *, duplicates: str = "error") -> dict[int, list[str]]:
    """Reads NDH results: ``[{"inst_idx": int, "trajectory": [[viewpoint, heading, elevation],
    ...]}, ...]`` -> ``{inst_idx: [viewpoint, ...]}`` in file order.

    ``inst_idx`` may be an int or a string of digits (as some tools write it); both become the
    int (the official evaluator compares the raw value, so a string id would be ignored there and
    then reported missing). Viewpoints are kept as listed, repeats included; a step may also be a
    bare viewpoint string. ``duplicates``: ``"error"`` (default) raises on a repeated
    ``inst_idx``; ``"first"`` keeps the first, as the evaluator scores it.

    Parameters
    ----------
    path_or_list : str, os.PathLike, list or mapping
        The results file (gzipped or not), its parsed list, or ``{inst_idx: trajectory}``.
    duplicates : str, optional
        ``"error"`` (default) or ``"first"``.

    Returns
    -------
    dict[int, list of str]
        ``inst_idx`` -> viewpoints, in file order.

    Raises
    ------
    ValueError
        A malformed entry (naming the file and the entry): a missing or non-integer ``inst_idx``,
        a missing or malformed trajectory, a repeated ``inst_idx`` (with ``duplicates="error"``);
        a ``duplicates`` other than ``"error"`` or ``"first"``.
    FileNotFoundError
        A file name that does not exist.
    """
    if duplicates not in ("error", "first"):
        raise ValueError(f"duplicates must be 'error' or 'first', got {duplicates!r}")
    name, items = _read_predictions(path_or_list)
    out: dict[int, list[str]] = {}
    entry: dict[int, int] = {}
    for k, iid, vps in items:
        if iid in out:
            if duplicates == "error":
                raise ValueError(f"{name}: entry {k} (inst_idx {iid}): duplicate inst_idx (also entry {entry[iid]})")
            continue
        out[iid] = vps
        entry[iid] = k
    return out


# --------------------------------------------------------------------------------------------
# goal regions: distances to end_panos, vectorized
# --------------------------------------------------------------------------------------------


class GoalRegions:
    """The goal region (``end_panos``) of every episode as node sets, for distances to it.

    ``env``: int64 ``[B]`` scan index into ``graphs.graphs``; ``indptr`` / ``nodes``: a CSR list of
    every episode's region nodes (local ids in its scan); ``start_distance``: float64 ``[B]``
    min over the region of d(start, .), start = the first node of each episode's chosen path.

    Parameters
    ----------
    entries : sequence of dict
        The split's entries (:func:`load_ndh`).
    graphs : GraphSet
        The graphs of their scans.
    starts : numpy.ndarray
        int ``[B]``: each episode's start node (local id in its scan).

    Raises
    ------
    ValueError
        An ``end_panos`` viewpoint or scan that ``graphs`` does not hold (naming the ``inst_idx``).
    """

    def __init__(self, entries, graphs: GraphSet, starts: np.ndarray) -> None:
        self.graphs = graphs
        env, regions = graphs.encode(
            [e["scan"] for e in entries],
            [e["end_panos"] for e in entries],
            names=[f"inst_idx {e['inst_idx']}, end_panos" for e in entries],
        )
        self.env = np.asarray(env, dtype=np.int64)
        self.indptr = np.asarray(regions.offsets, dtype=np.int64)
        self.nodes = np.asarray(regions.values, dtype=np.int64)
        self.start_distance = self.distance(np.arange(len(entries), dtype=np.int64), starts)

    def __len__(self) -> int:
        return len(self.env)

    def distance(self, episode: np.ndarray, node: np.ndarray) -> np.ndarray:
        """min over the region of episode ``episode[i]`` of d(node[i], .), for every i:
        ``np.minimum.reduceat`` over the CSR list.

        Parameters
        ----------
        episode : numpy.ndarray
            int ``[n]`` episode indices.
        node : numpy.ndarray
            int ``[n]`` nodes, local ids in each episode's scan.

        Returns
        -------
        numpy.ndarray
            float64 ``[n]`` distances (metres; inf where the region is unreachable).
        """
        episode = np.asarray(episode, dtype=np.int64)
        node = np.asarray(node, dtype=np.int64)
        out = np.empty(len(episode), dtype=np.float64)
        env = self.env[episode]
        for k in np.unique(env):
            sel = np.flatnonzero(env == k)
            ep = episode[sel]
            counts = self.indptr[ep + 1] - self.indptr[ep]  # >= 1: end_panos is never empty
            first = np.zeros(len(sel), dtype=np.int64)
            np.cumsum(counts[:-1], out=first[1:])
            flat = np.repeat(self.indptr[ep] - first, counts) + np.arange(int(counts.sum()), dtype=np.int64)
            d = self.graphs.graphs[int(k)].distances[np.repeat(node[sel], counts), self.nodes[flat]]
            out[sel] = np.minimum.reduceat(d, first).astype(np.float64)
        return out


# --------------------------------------------------------------------------------------------
# matching
# --------------------------------------------------------------------------------------------


def _edge_violation(graphs: GraphSet, env: np.ndarray, paths: Paths) -> tuple[int, int]:
    """The first ``(path, position j)`` whose step j -> j + 1 joins two different nodes that are
    not graph neighbours, or ``(-1, -1)``."""
    v = paths.values
    if len(v) < 2:
        return -1, -1
    path_of = np.repeat(np.arange(len(paths), dtype=np.int64), paths.lengths)
    a, b = v[:-1], v[1:]
    step = (path_of[:-1] == path_of[1:]) & (a != b)
    bad = np.zeros(len(a), dtype=bool)
    step_env = env[path_of[:-1]]
    for k in np.unique(env):
        sel = np.flatnonzero(step & (step_env == k))
        if not len(sel):
            continue
        g = graphs.graphs[int(k)]
        indptr, indices = g.csr
        n = np.int64(g.num_nodes)
        edge_keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)) * n + indices  # sorted
        keys = a[sel].astype(np.int64) * n + b[sel]
        pos = np.minimum(np.searchsorted(edge_keys, keys), max(len(edge_keys) - 1, 0))
        bad[sel] = (edge_keys[pos] != keys) if len(edge_keys) else True
    if not bad.any():
        return -1, -1
    i = int(np.argmax(bad))
    p = int(path_of[i])
    return p, i - int(paths.offsets[p])


def match_predictions(
    entries,
    predictions,
    graphs: GraphSet,
    *,
    goal: str = "planner",
    convention: str = DEFAULT_CONVENTION,
    strict: bool = False,
) -> MatchedEpisodes:
    """Pairs every entry of an NDH split with its predicted trajectory and encodes both.

    ``entries``: the split as :func:`load_ndh` returns it (or a split file name); ``predictions``:
    a results file name, its parsed list, or a mapping ``{inst_idx: trajectory}``. ``goal``:
    ``"planner"`` or ``"trusted"`` (:func:`chosen_path`), the reference of every episode.

    ``convention`` decides what the evaluator's rules add (``navdtw.CONVENTIONS``):

    * ``"ndh"`` (cvdn ``tasks/NDH/eval.py``): ids as the evaluator reads them: a prediction whose
      ``inst_idx`` is not in the split and every later duplicate of an ``inst_idx`` are ignored
      (a ``UserWarning`` names them); every trajectory must start at its chosen path's start and
      every step between two different viewpoints must be a graph edge (each violation: a
      ``ValueError`` naming the predictions file, the entry, the ``inst_idx`` and the viewpoints).
    * ``"paper"`` (navdtw): an extra or duplicated ``inst_idx`` is an error; trajectories are
      scored as they are (steps that are not edges count their shortest distance; ``strict=True``
      requires the start, as under ``ndh``).

    Under every convention a split entry without a prediction is an error, and consecutive repeats
    of a viewpoint are merged as the convention's ``collapse_repeats`` says (they add 0 m to PL).

    Parameters
    ----------
    entries : str, os.PathLike or list of dict
        The split (:func:`load_ndh`), or a split file name.
    predictions : str, os.PathLike, list or mapping
        A results file name, its parsed list, or ``{inst_idx: trajectory}``.
    graphs : GraphSet
        The graphs of the split's scans.
    goal : str, optional
        ``"planner"`` (default) or ``"trusted"`` (:func:`chosen_path`).
    convention : str, optional
        ``"ndh"`` (default) or ``"paper"``.
    strict : bool, optional
        Require every trajectory to start at its chosen path's start (default False).

    Returns
    -------
    MatchedEpisodes
        ``ids`` the ``inst_idx`` ints in split order, ``id_name="inst_idx"``, the chosen paths as
        references, ``shortest_distance`` = d(start, goal) of the chosen path, and ``extra``
        holding the goal-region distances that metric ``gp`` reads: ``region_start_distance``
        (from the chosen path's start) and ``region_final_distance`` (from the trajectory's last
        viewpoint).

    Raises
    ------
    ValueError
        An empty split, a bad ``goal`` or convention, a split entry without a prediction, an extra
        or duplicated ``inst_idx`` (``paper``), an unknown viewpoint, a wrong start or a step that
        is not an edge (``ndh``); each naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    if is_path(entries):
        entries = load_ndh(entries, graphs=graphs)
    entries = list(entries)
    if not entries:
        raise ValueError("match_predictions: the split is empty")
    paths = [chosen_path(e, goal) for e in entries]
    scans = [e["scan"] for e in entries]
    env, refs = graphs.encode(scans, paths, names=[f"inst_idx {e['inst_idx']}, {goal} path" for e in entries])
    regions = GoalRegions(entries, graphs, refs.first())
    return _match(entries, paths, env, refs, regions, predictions, graphs, convention=convention, strict=strict)


def _match(
    entries, paths, env, refs, regions: GoalRegions, predictions, graphs: GraphSet, *, convention: str, strict: bool
) -> MatchedEpisodes:
    from ..metrics import as_convention

    conv = as_convention(convention)
    if conv.name not in CONVENTIONS:
        raise ValueError(f"convention {conv.name!r} does not apply to NDH data; choose one of {', '.join(CONVENTIONS)}")
    evaluator_ids = conv.name in _EVALUATOR_IDS
    src, items = _read_predictions(predictions)
    ids = [int(e["inst_idx"]) for e in entries]
    known = set(ids)
    wrong = other_split(src, [iid for _, iid, _ in items], "the split", ids, "inst_idx")
    if wrong:
        raise ValueError(wrong)

    def where(k: int, iid: int) -> str:
        return f"{src}: entry {k} (inst_idx {iid})"

    chosen: dict[int, tuple[int, list[str]]] = {}
    extra, repeated = [], []
    for k, iid, vps in items:
        if iid not in known:
            if not evaluator_ids:
                raise ValueError(f"{where(k, iid)}: no such inst_idx in the split")
            extra.append(str(iid))
        elif iid in chosen:
            if not evaluator_ids:
                raise ValueError(f"{where(k, iid)}: duplicate inst_idx (also entry {chosen[iid][0]})")
            repeated.append(str(iid))
        else:
            chosen[iid] = (k, vps)
    missing = [str(i) for i in ids if i not in chosen]
    if missing:
        raise ValueError(f"{src}: no prediction for inst_idx {few(missing)}; the split has {len(ids)} entries")
    if extra or repeated:
        parts = []
        if extra:
            parts.append(f"{len(extra)} with an inst_idx not in the split ({few(extra)})")
        if repeated:
            parts.append(f"{len(repeated)} repeating an earlier inst_idx ({few(repeated)})")
        warnings.warn(
            f"{src}: ignored {' and '.join(parts)}, as the {conv.name} evaluator does", UserWarning, stacklevel=3
        )

    entry_of = [chosen[i][0] for i in ids]
    queries_vp = [chosen[i][1] for i in ids]
    scans = [e["scan"] for e in entries]
    try:
        _env_q, raw = graphs.encode(scans, queries_vp)
    except ValueError:
        for i, (iid, scan, q) in enumerate(zip(ids, scans, queries_vp)):
            index = graphs[scan].index
            for j, v in enumerate(q):
                if v not in index:
                    raise ValueError(
                        f"{where(entry_of[i], iid)}: unknown viewpoint {v!r} (trajectory[{j}]) in scan {scan!r}"
                    ) from None
        raise
    checks = set(conv.checks) | ({"start"} if strict else set())
    if "start" in checks:
        i = first_start_mismatch(refs, raw)
        if i >= 0:
            raise ValueError(
                f"{where(entry_of[i], ids[i])}: trajectory starts at {queries_vp[i][0]!r}, but its path "
                f"starts at {paths[i][0]!r} ("
                + (
                    f"the {conv.name} convention requires the path's start)"
                    if "start" in conv.checks
                    else "strict=True)"
                )
            )
    if "edges" in checks:
        i, j = _edge_violation(graphs, env, raw)
        if i >= 0:
            a, b = queries_vp[i][j], queries_vp[i][j + 1]
            raise ValueError(
                f"{where(entry_of[i], ids[i])}: the step trajectory[{j}] -> trajectory[{j + 1}] from {a!r} to {b!r} "
                f"is not a graph edge of scan {scans[i]!r} (the {conv.name} convention requires every step to be "
                "an edge; the paper convention scores it as the shortest distance)"
            )
    qrys = collapse_repeats(raw) if conv.collapse_repeats else raw

    start, goal_node = refs.first(), refs.last()
    shortest = graphs.pair_distances(env, start, goal_node)
    episodes = np.arange(len(ids), dtype=np.int64)
    return MatchedEpisodes(
        ids=ids,
        scans=scans,
        env=env,
        references=refs,
        queries=qrys,
        shortest_distance=shortest,
        graphs=graphs,
        id_name="inst_idx",
        extra={_REGION_START: regions.start_distance, _REGION_FINAL: regions.distance(episodes, raw.last())},
    )


def load_matched(
    split,
    connectivity: PathLike,
    predictions,
    *,
    goal: str = "planner",
    convention: str = DEFAULT_CONVENTION,
    strict: bool = False,
) -> MatchedEpisodes:
    """Everything the scorer needs from NDH files: reads the split and the graphs of its scans
    (:func:`load_split_graphs`) and the predictions, and matches them (:func:`match_predictions`).

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.
    predictions : str, os.PathLike, list or mapping
        As :func:`match_predictions`.
    goal, convention : str, optional
        As :func:`match_predictions` (defaults ``"planner"``, ``"ndh"``).
    strict : bool, optional
        As :func:`match_predictions` (default False).

    Returns
    -------
    MatchedEpisodes
        The episodes to score.

    Raises
    ------
    ValueError
        The errors of :func:`load_split_graphs` and :func:`match_predictions`.
    FileNotFoundError
        A missing file or folder.
    """
    entries, graphs = load_split_graphs(split, connectivity)
    return match_predictions(entries, predictions, graphs, goal=goal, convention=convention, strict=strict)


# --------------------------------------------------------------------------------------------
# the data set kind
# --------------------------------------------------------------------------------------------


class NDHBenchmark(Benchmark):
    """An NDH split with the graphs of its scans and the chosen goal, ready to score agents.

    Parameters
    ----------
    split : str, os.PathLike or list
        The split file, or its parsed list.
    connectivity : str or os.PathLike
        The folder of ``<scan>_connectivity.json``.
    goal : str, optional
        ``"planner"`` (default) or ``"trusted"``.

    Raises
    ------
    ValueError
        A ``goal`` not in ``GOALS``, or the errors of :func:`load_split_graphs`.
    FileNotFoundError
        A missing split file or connectivity folder.
    """

    def __init__(self, split, connectivity, goal: str = "planner") -> None:
        if goal not in GOALS:
            raise ValueError(f"goal must be one of {', '.join(GOALS)}, got {goal!r}")
        self.goal = goal
        self.entries, self.graphs = load_split_graphs(split, connectivity)
        self.paths = [chosen_path(e, goal) for e in self.entries]
        self._env, self._refs = self.graphs.encode([e["scan"] for e in self.entries], self.paths)
        self.regions = GoalRegions(self.entries, self.graphs, self._refs.first())

    @property
    def n(self) -> int:
        return len(self.entries)

    def match(self, predictions, *, convention: str | None = None, strict: bool = False) -> MatchedEpisodes:
        conv = NDH.check_convention(convention)
        with routed(predictions, self.kind):
            return _match(
                self.entries,
                self.paths,
                self._env,
                self._refs,
                self.regions,
                predictions,
                self.graphs,
                convention=conv,
                strict=strict,
            )

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        """The nDTW paper's random walker from every chosen path's start (steps drawn from the
        chosen paths' step counts), GP included: the means of every metric over ``n`` walks.

        Parameters
        ----------
        n : int
            Number of random walks, >= 1.
        seed : int, optional
            The walks depend only on the seed (default 0).
        convention : str, optional
            ``"ndh"`` (default) or ``"paper"``.
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
            A convention NDH does not name, or the bad options of
            :func:`navdtw.baseline.score_random_walks`.
        """
        conv = NDH.check_convention(convention)
        regions = self.regions

        def inputs(walks, ref_of):
            return {
                _REGION_START: regions.start_distance[ref_of],
                _REGION_FINAL: regions.distance(ref_of, walks.last()),
            }

        scans = [e["scan"] for e in self.entries]
        return score_random_walks(
            self.graphs, scans, self.paths, n, seed=seed, convention=conv, inputs=inputs, **kwargs
        )


NDH = DatasetKind(
    "ndh",
    "CVDN/NDH",
    (
        Option(
            "split",
            "the NDH split: a JSON list of {inst_idx, scan, end_panos, planner_path, player_path, ...}",
            shapes=("r2r-split", "rxr-guide"),
        ),
        Option("connectivity", "folder of <scan>_connectivity.json (Matterport3D navigation graphs)", kind="dir"),
        Option(
            "goal",
            "the reference path: planner (planner_path, the evaluator's default) or trusted (player_path "
            "when it reaches the planner's goal)",
            kind="choice",
            required=False,
            choices=GOALS,
            default="planner",
        ),
    ),
    CONVENTIONS,
    DEFAULT_CONVENTION,
    NDHBenchmark,
    id_name="inst_idx",
    description="Navigation from Dialog History (Thomason et al. 2019, CVDN): goal progress toward a goal region",
    split_reader=SplitReader("split", split_index),
    predictions=("ndh-trajectories",),
)
