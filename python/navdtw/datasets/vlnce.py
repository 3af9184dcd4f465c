"""R2R-CE (VLN-CE): episodes, their ``*_gt`` ground truth, continuous predictions, and matching
them for scoring.

Evaluators reproduced (``navdtw.CONVENTIONS``): ``vlnce`` (VLN-CE's habitat measures, the
default) and navdtw's ``paper``. Paths are continuous positions (habitat coordinates, y up,
metres): the reference is the dense ``locations`` of the ``*_gt`` file, about 0.25 m apart.

* Episodes: ``{"episodes": [{"episode_id", "scene_id", "reference_path", "instruction":
  {"instruction_id", ...}, "info": {"geodesic_distance"}, ...}]}`` (gzipped or plain JSON).
* Ground truth: ``{str(episode_id): {"locations", "actions", "forward_steps"}}``.
* Predictions: ``{episode_id: [{"position": [x, y, z], ...}, ...]}`` (VLN-CE's inference output,
  whole or an episode a line), or records ``{"episode_id"|"instruction_id": ..., "path": [[x, y,
  z], ...]}`` as JSON lines or a JSON list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._messages import listed, named
from .._typing import PathLike
from ..baseline import score_random_positions
from ..paths import as_paths
from ._common import (
    Document,
    MatchedEpisodes,
    SplitIndex,
    Stop,
    finite_real,
    is_int,
    is_path,
    loads,
    make_split_index,
    malformed,
    points_array,
    read_text,
    source,
    stop_rule,
)
from .base import Benchmark, DatasetKind, Option, SplitReader
from .shapes import other_split, routed

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "R2R_CE",
    "VLNCEBenchmark",
    "load_matched",
    "load_predictions",
    "load_vlnce_episodes",
    "load_vlnce_gt",
    "match_predictions",
    "shortest_distances",
]

#: The conventions (``navdtw.CONVENTIONS``) whose evaluators read these files.
CONVENTIONS: tuple[str, ...] = ("vlnce", "paper")
#: The convention the command line uses for R2R-CE unless told otherwise.
DEFAULT_CONVENTION = "vlnce"


def load_vlnce_episodes(path) -> list[dict[str, Any]]:
    """Reads R2R-CE episodes (gzipped or plain JSON ``{"episodes": [...]}``).

    Returns the episodes in file order as new dicts, with ``reference_path`` a float64 ``[n, 3]``
    array (habitat coordinates, y up, metres) and an added ``scan`` taken from ``scene_id``
    (``"mp3d/<scan>/<scan>.glb"`` -> ``"<scan>"``) when present. ``episode_id`` must be unique.

    Parameters
    ----------
    path : str, os.PathLike or dict
        The episodes file (gzipped or not), or its parsed object.

    Returns
    -------
    list of dict
        The episodes, in file order.

    Raises
    ------
    ValueError
        A malformed file or episode (naming the file and the episode): no ``episodes`` list, a
        missing or duplicate ``episode_id``, a missing or malformed ``reference_path``.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path)
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise ValueError(f"{name}: expected an object with an 'episodes' list")
    out = []
    seen: dict[str, int] = {}
    for k, e in enumerate(data["episodes"]):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: episode {k}: expected an object, got {type(e).__name__}")
        eid = e.get("episode_id")
        if not (is_int(eid) or isinstance(eid, str)):
            raise ValueError(f"{name}: episode {k}: 'episode_id' must be an integer or a string")
        where = f"{name}: episode {k} (episode_id {named(eid)})"
        if str(eid) in seen:
            raise ValueError(f"{where}: duplicate episode_id (also episode {seen[str(eid)]})")
        seen[str(eid)] = k
        if "reference_path" not in e:
            raise ValueError(f"{where}: missing 'reference_path'")
        rec = dict(e)
        rec["reference_path"] = points_array(e["reference_path"], where, "reference_path")
        scene = e.get("scene_id")
        if isinstance(scene, str) and scene:
            rec.setdefault("scan", Path(scene).stem)
        out.append(rec)
    return out


def split_index(document: Document, kind: str = "r2r-ce") -> SplitIndex | None:
    """The index of VLN-CE episodes (R2R-CE, RxR-CE: ``{"episodes": [...]}``): one episode per
    entry, its id ``episode_id``; the scan from ``scene_id``, the path ``trajectory_id``, the
    ``instruction``'s ``instruction_id`` as another id and its ``language``, where given.

    Reads what the index needs: the reference paths may be withheld (a test split).

    Parameters
    ----------
    document : Document
        The file, read (:func:`~navdtw.datasets._common.read_document`).
    kind : str, optional
        The kind reading it, recorded in the index.

    Returns
    -------
    SplitIndex or None
        The index; None when the file is not an object with an ``episodes`` list.

    Raises
    ------
    ValueError
        An episode without ``episode_id`` (naming the file and the episode), or an id twice.
    """
    data, name = document.data, document.name
    if not (isinstance(data, dict) and isinstance(data.get("episodes"), list)):
        return None
    episodes = data["episodes"]
    for k, e in enumerate(episodes):
        if not isinstance(e, dict) or "episode_id" not in e:
            raise ValueError(f"{name}: episodes[{k}] has no 'episode_id'")
    ids = [str(e["episode_id"]) for e in episodes]
    paths = [str(e["trajectory_id"]) for e in episodes] if all("trajectory_id" in e for e in episodes) else None
    other, langs = {}, []
    for e, i in zip(episodes, ids):
        ins = e.get("instruction")
        if isinstance(ins, dict):
            if "instruction_id" in ins:
                other[str(ins["instruction_id"])] = i
            langs.append(str(ins.get("language", "")))
    groups = {"language": langs} if len(langs) == len(ids) and any(langs) else {}
    scans = [_scan(e) for e in episodes]
    return make_split_index(
        document, kind, [(i,) for i in ids], entries=episodes, key="episodes", scans=scans, paths=paths,
        groups=groups, other_ids=other,
    )  # fmt: skip


def _scan(episode: dict[str, Any]) -> str:
    """An episode's scan: its ``scan``, else the name of its ``scene_id`` (``"mp3d/<scan>/<scan>.glb"``)."""
    if "scan" in episode:
        return str(episode["scan"])
    scene = episode.get("scene_id")
    return Path(scene).stem if isinstance(scene, str) and scene else ""


def load_vlnce_gt(path) -> dict[str, dict[str, Any]]:
    """Reads an R2R-CE ``*_gt.json(.gz)``: ``{str(episode_id): {"locations", "actions",
    "forward_steps"}}`` -> the same keys with ``locations`` a float64 ``[n, 3]`` array (dense
    ground-truth positions, about 0.25 m apart), ``actions`` an int64 array (habitat action ids:
    0 stop, 1 forward, 2 left, 3 right) and ``forward_steps`` an int.

    Parameters
    ----------
    path : str, os.PathLike or dict
        The ground-truth file (gzipped or not), or its parsed object.

    Returns
    -------
    dict[str, dict]
        Episode id -> its ground truth, in file order.

    Raises
    ------
    ValueError
        A malformed file or entry, naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path)
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected an object keyed by episode id, got {type(data).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for k, (eid, e) in enumerate(data.items()):
        where = f"{name}: entry {k} (episode_id {named(eid)})"
        if not isinstance(e, dict):
            raise ValueError(f"{where}: expected an object, got {type(e).__name__}")
        if "locations" not in e:
            raise ValueError(f"{where}: missing 'locations'")
        rec = dict(e)
        rec["locations"] = points_array(e["locations"], where, "locations")
        if "actions" in e:
            acts = e["actions"]
            if not isinstance(acts, list) or not all(is_int(a) and 0 <= a < 2**63 for a in acts):
                raise ValueError(f"{where}: 'actions' must be a list of integers in [0, 2**63)")
            rec["actions"] = np.array(acts, dtype=np.int64)
        if "forward_steps" in e:
            fs = e["forward_steps"]
            if not is_int(fs) or fs < 0:
                raise ValueError(f"{where}: 'forward_steps' must be an integer >= 0")
            rec["forward_steps"] = int(fs)
        out[str(eid)] = rec
    return out


def load_predictions(path: PathLike) -> dict[str, np.ndarray]:
    """Reads R2R-CE predictions -> ``{episode or instruction id (str): float64 [n, 3] positions}``.

    Accepted: ``{episode_id: [{"position": [x, y, z], ...}, ...]}`` (VLN-CE's inference output; a
    step may also be a bare ``[x, y, z]``), whole or written an episode a line (JSON Lines, or a
    list, of ``{episode_id: [steps]}``), or records ``{"episode_id"|"instruction_id": ...,
    "path": [[x, y, z], ...]}`` as JSON lines or as a JSON list. Errors name the file and entry.

    The dict does not say whether a record's id is an episode id or an instruction id;
    :func:`match_predictions` given the file name knows (the two may overlap, as in RxR-CE).

    Parameters
    ----------
    path : str or os.PathLike
        The predictions file (JSON or JSON Lines, gzipped or not).

    Returns
    -------
    dict[str, numpy.ndarray]
        id -> float64 ``[n, 3]`` positions, in file order.

    Raises
    ------
    ValueError
        A malformed file or record, naming the file and the entry: a missing id or path, an empty
        path, a point that is not three finite numbers, a duplicate id.
    FileNotFoundError
        ``path`` does not exist.
    """
    return read_predictions(path)[0]


def read_predictions(path: PathLike) -> tuple[dict[str, np.ndarray], dict[str, str], dict[str, Stop]]:
    """Internal: :func:`load_predictions`, for the ids of records the key they came under:
    ``"episode_id"`` or ``"instruction_id"`` (VLN-CE's ``rxr`` inference format), and for the
    ids whose steps carry VLN-CE's ``stop`` flag (its ``r2r`` format: the simulator's
    ``is_stop_called`` after each step) whether the agent stopped and how many points came after
    the first stop (left out of the path). The keys of the object form are not listed in the
    second: they are episode ids, or instruction ids where no episode has that id, as before."""
    name = Path(path).name
    text = read_text(path)
    records: list[tuple[str, Any, str, str]] = []  # (id, steps, where, id key)
    try:
        data = loads(text, name)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise malformed(name, exc) from None
        data = None  # JSON lines
    if data is None:
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rec = loads(line, f"{name}: line {lineno}")
            except json.JSONDecodeError as exc:
                raise ValueError(f"{name}: line {lineno}: malformed JSON at column {exc.colno}: {exc.msg}") from None
            records += _records(rec, f"{name}: line {lineno}")
    elif isinstance(data, dict) and "path" in data and ("episode_id" in data or "instruction_id" in data):
        records.append(_record(data, f"{name}: line 1"))
    elif isinstance(data, dict):
        for k, (eid, steps) in enumerate(data.items()):
            records.append((str(eid), steps, f"{name}: entry {k} (episode_id {named(eid)})", ""))
    elif isinstance(data, list):
        for k, rec in enumerate(data):
            records += _records(rec, f"{name}: entry {k}")
    else:
        raise ValueError(f"{name}: expected an object keyed by episode id, a list or JSON lines of records")
    out: dict[str, np.ndarray] = {}
    keys: dict[str, str] = {}
    stops: dict[str, Stop] = {}
    first: dict[str, str] = {}
    for key, steps, where, id_key in records:
        if key in out:
            raise ValueError(f"{where}: duplicate id {named(key)} (also {first[key]})")
        first[key] = where.split(": ", 1)[1]
        if id_key:
            keys[key] = id_key
        if not isinstance(steps, list) or not steps:
            raise ValueError(f"{where}: expected a non-empty list of steps")
        if isinstance(steps[0], dict):
            pts = []
            flagged = False
            for j, s in enumerate(steps):
                if not isinstance(s, dict) or "position" not in s:
                    raise ValueError(f"{where}: step {j} has no 'position'")
                pts.append(s["position"])
                if "stop" in s:
                    if not isinstance(s["stop"], bool):
                        raise ValueError(f"{where}: step {j}: 'stop' must be true or false, got {s['stop']!r}")
                    flagged = True
                    if s["stop"]:  # the episode ended here: VLN-CE writes no step after a stop
                        stops[key] = Stop(True, len(steps) - j - 1)
                        break
            if flagged and key not in stops:
                stops[key] = Stop(False, 0)
            steps = pts
        out[key] = points_array(steps, where, "path")
    return out, keys, stops


def _records(rec, where: str) -> list[tuple[str, Any, str, str]]:
    """(id, steps, where, id key) of one line of JSON Lines or one entry of a list: a record
    ``{"episode_id"|"instruction_id", "path"}``, or VLN-CE's own form ``{episode_id: [steps]}``
    written an episode a line (its inference writes the whole object at the end; an evaluator
    that appends as it goes writes each episode's part of it)."""
    keyed = isinstance(rec, dict) and rec and not {"episode_id", "instruction_id", "path"} & rec.keys()
    if keyed and all(isinstance(steps, list) for steps in rec.values()):
        return [(str(eid), steps, f"{where} (episode_id {named(eid)})", "") for eid, steps in rec.items()]
    return [_record(rec, where)]


def _record(rec, where: str) -> tuple[str, Any, str, str]:
    """(id, steps, where, id key) of one prediction record."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: expected an object, got {type(rec).__name__}")
    id_key = "instruction_id" if "instruction_id" in rec else "episode_id"
    key = rec.get(id_key)
    if key is None or isinstance(key, (bool, dict, list)):
        raise ValueError(
            f"{where}: needs 'episode_id' or 'instruction_id' and 'path', or VLN-CE's "
            '{"<episode_id>": [{"position": [x, y, z], "stop": false}, ...]}'
        )
    if "path" not in rec:
        raise ValueError(f"{where} (id {named(key)}): missing 'path'")
    return str(key), rec["path"], f"{where} (id {named(key)})", id_key


def shortest_distances(episodes, references) -> np.ndarray:
    """SPL's l per episode: the episode's ``info["geodesic_distance"]`` (VLN-CE's value) when it is
    a finite number >= 0, else the straight-line distance from the reference's start to its end.

    Parameters
    ----------
    episodes : sequence of dict
        The episodes (:func:`load_vlnce_episodes`).
    references : sequence of numpy.ndarray
        Each episode's reference positions ``[n, 3]``, in the same order.

    Returns
    -------
    numpy.ndarray
        float64 ``[len(episodes)]`` distances (metres).
    """
    out = np.empty(len(episodes))
    for k, (e, r) in enumerate(zip(episodes, references)):
        info = e.get("info")
        g = info.get("geodesic_distance") if isinstance(info, dict) else None
        if finite_real(g) and g >= 0:
            out[k] = float(g)
        else:
            out[k] = float(np.linalg.norm(r[-1] - r[0]))
    return out


def match_predictions(
    episodes,
    gt,
    predictions,
    *,
    names: tuple[str, str, str] | None = None,
    id_keys: Mapping[str, str] | None = None,
    stops: Mapping[str, Stop] | None = None,
    convention: str = DEFAULT_CONVENTION,
    partial: bool = False,
) -> MatchedEpisodes:
    """Pairs every episode with its ground truth and its predicted path.

    ``episodes``: from :func:`load_vlnce_episodes` (or its file); ``gt``: from
    :func:`load_vlnce_gt` (or its file); ``predictions``: from :func:`load_predictions` (or its
    file), keyed by episode id or by the episode's ``instruction["instruction_id"]``. Read from a
    file, an id is looked up under the key it was written with (a record's ``instruction_id`` is
    an instruction id, never an episode id); ``id_keys`` says the same for a dict (``{id:
    "episode_id" | "instruction_id"}``); an id not in it is taken as an episode id first.

    Every episode needs exactly one prediction and a ground truth; a prediction for no episode, a
    second prediction for an episode, a missing prediction or ground truth raise ``ValueError``
    naming the file (``names``: the episodes, ground-truth and predictions file names for
    messages; taken from the arguments when they are files) and the entry.

    Parameters
    ----------
    episodes : str, os.PathLike or list of dict
        The episodes (:func:`load_vlnce_episodes`), or their file.
    gt : str, os.PathLike or dict
        The ground truth (:func:`load_vlnce_gt`), or its file.
    predictions : str, os.PathLike or dict
        The predictions (:func:`load_predictions`), or their file.
    names : (str, str, str), optional
        The episodes, ground-truth and predictions names for messages.
    id_keys : mapping, optional
        ``{id: "episode_id" | "instruction_id"}`` for a dict of predictions.
    stops : mapping, optional
        For a dict of predictions, the stop flags of the ids that have them (read from a file:
        its steps' ``stop`` flags). A path ends at its first stop (a note counts the points after
        it); under ``vlnce`` an episode whose steps never stop has no success, as VLN-CE's
        ``Success`` measure requires ``is_stop_called`` (the ``stopped`` of the result).
    convention : str, optional
        The convention scored (default ``"vlnce"``); the others count every episode as stopped.
    partial : bool, optional
        Match the episodes that have a prediction and leave the others (an evaluation still
        running; default False: a missing prediction is an error).

    Returns
    -------
    MatchedEpisodes
        ``id_name="episode_id"``, coordinate paths: references the gt ``locations``,
        ``shortest_distance`` from :func:`shortest_distances`, no graphs.

    Raises
    ------
    ValueError
        No episodes, a prediction for no episode, a second prediction for an episode, a missing
        prediction or ground truth, or a malformed file, naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    default = ["episodes", "ground truth", "predictions"]
    for k, arg in enumerate((episodes, gt, predictions)):
        if is_path(arg):
            default[k] = Path(arg).name
    ep_name, gt_name, pred_name = names if names is not None else default
    if is_path(episodes):
        episodes = load_vlnce_episodes(episodes)
    if is_path(gt):
        gt = load_vlnce_gt(gt)
    if is_path(predictions):
        predictions, id_keys, stops = read_predictions(predictions)
    id_keys = id_keys or {}
    stops = stops or {}
    if not episodes:
        raise ValueError(f"{ep_name}: no episodes")
    ids = [str(e["episode_id"]) for e in episodes]
    instr = instruction_ids(episodes)
    known = set(ids)

    def episode_of(key: str) -> str | None:
        how = id_keys.get(key)
        if how == "instruction_id":
            return instr.get(key)
        if how == "episode_id":
            return key if key in known else None
        return key if key in known else instr.get(key)

    if all(episode_of(str(p)) is None for p in predictions):
        wrong = other_split(pred_name, list(predictions), ep_name, ids, "id")
        if wrong:
            raise ValueError(wrong)
    keyed: dict[str, np.ndarray] = {}
    stop_of: dict[str, Stop] = {}
    for k, (key, pts) in enumerate(predictions.items()):
        key = str(key)
        eid = episode_of(key)
        if eid is None:
            extra = sum(1 for p in predictions if episode_of(str(p)) is None)
            more = f" ({extra} such entries)" if extra > 1 else ""
            what = "instruction_id" if id_keys.get(key) == "instruction_id" else "id"
            raise ValueError(f"{pred_name}: entry {k} ({what} {named(key)}): no such episode in {ep_name}{more}")
        if eid in keyed:
            raise ValueError(f"{pred_name}: entry {k} (id {named(key)}): a second prediction for episode {named(eid)}")
        keyed[eid] = pts
        if key in stops:
            stop_of[eid] = stops[key]
    missing = [i for i in ids if i not in keyed]
    if missing and partial:
        episodes = [e for e, i in zip(episodes, ids) if i in keyed]
        ids = [i for i in ids if i in keyed]
    elif missing:
        raise ValueError(
            f"{pred_name}: no prediction for episode_id {listed(missing, 5)} ({len(missing)} of the "
            f"{len(ids)} episodes of {ep_name})"
        )
    refs = ground_truth(episodes, gt, gt_name, ep_name)
    after = sum(s.after for s in stop_of.values())
    stopped, notes = stop_rule(ids, stop_of, pred_name, convention)
    if after:
        notes = (f"{pred_name}: {after} points after a stop left out (the episode ends at its stop)", *notes)
    return MatchedEpisodes(
        ids=ids,
        scans=[str(e.get("scan", "")) for e in episodes],
        env=None,
        references=as_paths(refs, "references"),
        queries=as_paths([keyed[i] for i in ids], "queries"),
        shortest_distance=shortest_distances(episodes, refs),
        id_name="episode_id",
        notes=notes,
        stopped=stopped,
    )


def ground_truth(episodes, gt, gt_name: str, ep_name: str) -> list[np.ndarray]:
    """Internal: the dense ``locations`` of every episode, in order; an episode without ground
    truth is a ``ValueError`` naming the files and the first few ids."""
    ids = [str(e["episode_id"]) for e in episodes]
    no_gt = [i for i in ids if i not in gt]
    if no_gt:
        raise ValueError(
            f"{gt_name}: no ground truth for episode_id {listed(no_gt, 5)} "
            f"({len(no_gt)} of the {len(ids)} episodes of {ep_name})"
        )
    return [gt[i]["locations"] for i in ids]


def instruction_ids(episodes) -> dict[str, str]:
    """Internal: ``{str(instruction["instruction_id"]): str(episode_id)}`` of the episodes that
    have one."""
    out = {}
    for e in episodes:
        ins = e.get("instruction")
        if isinstance(ins, dict) and "instruction_id" in ins:
            out[str(ins["instruction_id"])] = str(e["episode_id"])
    return out


def load_matched(episodes: PathLike, gt: PathLike, predictions: PathLike) -> MatchedEpisodes:
    """Everything the scorer needs from R2R-CE files: reads the episodes, their ground truth and
    the predictions, and matches them (:func:`match_predictions`).

    Parameters
    ----------
    episodes, gt, predictions : str or os.PathLike
        The episodes, ground-truth and predictions files.

    Returns
    -------
    MatchedEpisodes
        The episodes to score.

    Raises
    ------
    ValueError
        The errors of the readers and of :func:`match_predictions`, naming the file and the entry.
    FileNotFoundError
        A file that does not exist.
    """
    return match_predictions(episodes, gt, predictions)


class VLNCEBenchmark(Benchmark):
    """R2R-CE episodes with their dense ground truth, ready to score agents' continuous paths.

    Parameters
    ----------
    vlnce_episodes : str or os.PathLike
        The episodes file (:func:`load_vlnce_episodes`).
    vlnce_gt : str or os.PathLike
        The ground-truth file (:func:`load_vlnce_gt`).

    Raises
    ------
    ValueError
        A malformed file or entry, naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """

    def __init__(self, vlnce_episodes, vlnce_gt) -> None:  # the R2R_CE option names
        self.names = (Path(vlnce_episodes).name, Path(vlnce_gt).name)
        self.episodes = load_vlnce_episodes(vlnce_episodes)
        self.gt = load_vlnce_gt(vlnce_gt)

    @property
    def n(self) -> int:
        return len(self.episodes)

    matches_partial = True

    def match(
        self, predictions, *, convention: str | None = None, strict: bool = False, partial: bool = False
    ) -> MatchedEpisodes:
        """Reads ``predictions`` and pairs them with the split's episodes as ``convention``'s
        evaluator does (:meth:`Benchmark.match`).

        Parameters
        ----------
        predictions : str, os.PathLike or dict
            A predictions file, or :func:`load_predictions`' dict.
        convention : str, optional
            One of the kind's conventions (default: its default convention).
        strict : bool, optional
            Not used: continuous paths are not checked for their start.
        partial : bool, optional
            Match the episodes that have a prediction and leave the others (an evaluation still
            running: ``navdtw watch``; default False: a missing prediction is an error).

        Returns
        -------
        MatchedEpisodes
            The episodes to score.

        Raises
        ------
        ValueError
            Bad input, naming the file and the entry; a convention the kind does not name.
        """
        conv = self.kind.check_convention(convention)
        names = (*self.names, Path(predictions).name if is_path(predictions) else "predictions")
        with routed(predictions, self.kind):
            return match_predictions(self.episodes, self.gt, predictions, names=names, convention=conv, partial=partial)

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        """Means over ``n`` random walks over the extent of each episode's dense ground truth
        (:class:`navdtw.baseline.PositionWalker`: its start, its number of points, its mean step,
        its bounding box), SPL's l as for agents (:func:`shortest_distances`).

        Parameters
        ----------
        n : int
            Number of random walks, >= 1.
        seed : int, optional
            The walks depend only on the seed (default 0).
        convention : str, optional
            One of the kind's conventions (default: its default convention).
        **kwargs
            Passed to :func:`navdtw.baseline.score_random_positions` (``threshold``, ``chunk``,
            ``workers``, ``progress``, ``metrics``).

        Returns
        -------
        dict[str, float]
            Metric name -> mean over the walks, rates as fractions.

        Raises
        ------
        ValueError, TypeError
            A convention that does not apply, no episodes, an episode without ground truth, or the
            bad options of :func:`navdtw.baseline.score_random_positions`.
        """
        conv = self.kind.check_convention(convention)
        if not self.episodes:
            raise ValueError(f"{self.names[0]}: no episodes")
        refs = ground_truth(self.episodes, self.gt, self.names[1], self.names[0])
        length = shortest_distances(self.episodes, refs)
        return score_random_positions(refs, n, seed=seed, convention=conv, shortest_distance=length, **kwargs)


#: The shapes of the agents' files R2R-CE and RxR-CE read.
PREDICTIONS = ("vlnce-predictions", "rxrce-predictions", "positions")

R2R_CE = DatasetKind(
    "r2r-ce",
    "R2R-CE",
    (
        Option("vlnce_episodes", "R2R-CE episodes ({split}.json.gz)", shapes=("vlnce-episodes",)),
        Option("vlnce_gt", "R2R-CE dense ground truth ({split}_gt.json.gz)", shapes=("vlnce-gt",)),
    ),
    CONVENTIONS,
    DEFAULT_CONVENTION,
    VLNCEBenchmark,
    id_name="episode_id",
    description="R2R in continuous environments (Krantz et al. 2020): habitat positions",
    split_reader=SplitReader("vlnce_episodes", split_index),
    predictions=PREDICTIONS,
)
