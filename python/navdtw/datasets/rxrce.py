"""RxR-CE (VLN-CE's ``RxR_VLNCE_v0``, the RxR-Habitat challenge data): episodes, the guide ground
truth, continuous predictions, matching them, per-language scores.

The files are VLN-CE's (``jacobkrantz/VLN-CE``: ``habitat_extensions/task.py``,
``RxRVLNCEDatasetV1``; ``habitat_extensions/config/rxr_vlnce_*_task.yaml``), read as R2R-CE's
(:mod:`navdtw.datasets.vlnce`) plus the instruction's language:

* Episodes ``{split}_guide.json.gz``: ``{"episodes": [{"episode_id", "trajectory_id", "scene_id",
  "start_position", "start_rotation", "goals", "reference_path", "instruction":
  {"instruction_id", "language", "instruction_text", "annotator_id", "edit_distance",
  "timed_instruction", ...}, "info": {"role": "guide", ...}}, ...]}``. Ids are strings in VLN-CE's
  files (integers are read too); ``episode_id`` and ``instruction_id`` are each unique, and the
  two may share values.
* Guide ground truth ``{split}_guide_gt.json.gz``: ``{str(episode_id): {"locations", "actions",
  "forward_steps"}}``; ``locations`` is the dense reference (about 0.25 m apart).
* Predictions, VLN-CE's inference output in either of its formats (``INFERENCE.FORMAT``,
  ``vlnce_baselines/common/base_il_trainer.py`` ``inference``): ``"rxr"``, the RxR-Habitat
  leaderboard's JSON Lines ``{"instruction_id": int, "path": [[x, y, z], ...]}``; or ``"r2r"``,
  ``{episode_id: [{"position": [x, y, z], "heading", "stop"}, ...]}``; also records
  ``{"episode_id", "path"}`` as a JSON list or JSON Lines.

The ``vlnce`` convention (the default) is VLN-CE's measures with the RxR configuration: success and
oracle success ``NE < 3.0`` m (``SUCCESS.SUCCESS_DISTANCE`` and ``ORACLE_SUCCESS.SUCCESS_DISTANCE``
of ``rxr_vlnce_english_task.yaml``), nDTW = exp(-FastDTW(Q, locations) / (number of locations x 3.0))
(``NDTW.update_metric``, ``FDTW = True``, ``NDTW.SUCCESS_DISTANCE: 3.0``) with a predicted position
equal to the previous one dropped, SDTW = SR x nDTW; SPL's l is ``info["geodesic_distance"]``
where an episode has it, else the straight line from the ground truth's start to its end (VLN-CE
measures the geodesic distance in the simulator; the released RxR-CE episodes do not store it).
Scores carry each episode's ``language``: ``scores.summary(by="language")``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .._messages import named
from ._common import INPUT, MatchedEpisodes, finite_real, is_int, is_path
from .base import DatasetKind, Option, SplitReader
from .shapes import routed
from .vlnce import (
    CONVENTIONS,
    DEFAULT_CONVENTION,
    PREDICTIONS,
    VLNCEBenchmark,
    instruction_ids,
    load_vlnce_episodes,
    load_vlnce_gt,
    read_predictions,
    split_index,
)
from .vlnce import match_predictions as match_vlnce

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "LANGUAGES",
    "LANGUAGE_SETS",
    "RXR_CE",
    "RxRCEBenchmark",
    "load_rxrce_episodes",
    "match_predictions",
]

#: The languages of RxR's guide annotations (``RxRVLNCEDatasetV1.languages``).
LANGUAGES: tuple[str, ...] = ("en-US", "en-IN", "hi-IN", "te-IN")
#: The ``languages`` option's values: which episodes are scored. ``en`` is VLN-CE's English task
#: (``rxr_vlnce_english_task.yaml``: ``LANGUAGES: [en-US, en-IN]``); ``all`` every episode.
LANGUAGE_SETS: dict[str, tuple[str, ...] | None] = {
    "all": None,
    "en": ("en-US", "en-IN"),
    **{lang: (lang,) for lang in LANGUAGES},
}


def load_rxrce_episodes(path) -> list[dict[str, Any]]:
    """Reads RxR-CE episodes (gzipped or plain JSON ``{"episodes": [...]}``), as
    :func:`navdtw.datasets.load_vlnce_episodes` does, and checks RxR's instruction fields.

    Every episode needs an ``instruction`` object with ``instruction_id`` (an integer or a string,
    unique in the file) and ``language`` (a non-empty string); each record gains ``language``.
    Parameters
    ----------
    path : str, os.PathLike or dict
        The episodes file (gzipped or not), or its parsed object.

    Returns
    -------
    list of dict
        The episodes, in file order, each with ``language``.

    Raises
    ------
    ValueError
        A malformed file or episode, naming the file and the episode
        (``"val_unseen_guide.json.gz: episode 4 (episode_id 12): 'instruction' has no
        'language'"``); the errors of :func:`navdtw.datasets.load_vlnce_episodes`.
    FileNotFoundError
        A file name that does not exist.
    """
    name = Path(path).name if is_path(path) else INPUT
    episodes = load_vlnce_episodes(path)
    seen: dict[str, int] = {}
    for k, e in enumerate(episodes):
        where = f"{name}: episode {k} (episode_id {named(e['episode_id'])})"
        ins = e.get("instruction")
        if not isinstance(ins, dict):
            raise ValueError(f"{where}: missing the 'instruction' object")
        iid = ins.get("instruction_id")
        if not (is_int(iid) or (isinstance(iid, str) and iid)):
            raise ValueError(f"{where}: 'instruction' has no 'instruction_id' (an integer or a string)")
        if str(iid) in seen:
            raise ValueError(f"{where}: duplicate instruction_id {named(iid)} (also episode {seen[str(iid)]})")
        seen[str(iid)] = k
        lang = ins.get("language")
        if not isinstance(lang, str) or not lang.strip():
            raise ValueError(f"{where}: 'instruction' has no 'language' (such as 'en-US')")
        e["language"] = lang
    return episodes


def match_predictions(
    episodes,
    gt,
    predictions,
    *,
    languages: str = "all",
    names: tuple[str, str, str] | None = None,
    convention: str = DEFAULT_CONVENTION,
    partial: bool = False,
) -> MatchedEpisodes:
    """Pairs every episode of the chosen languages with its ground truth and its predicted path.

    ``episodes``: from :func:`navdtw.datasets.load_rxrce_episodes` (or its file); ``gt``: from
    :func:`navdtw.datasets.load_vlnce_gt` (or its file); ``predictions``: a predictions file (or
    the dict of :func:`navdtw.datasets.load_vlnce_predictions`, whose ids are then taken as episode
    ids first). ``languages``: a key of :data:`LANGUAGE_SETS` (default ``"all"``).

    Predictions for episodes of the other languages are left aside, with a note; any other id
    that is not an episode, a second prediction for an episode and a missing one are errors
    naming the file and entry (as ``navdtw.datasets.vlnce.match_predictions``).

    Returns :class:`~navdtw.datasets.MatchedEpisodes` (``id_name="episode_id"``) with ``groups={"language": [...]}``
    and a note when some episodes have no ``info["geodesic_distance"]`` (SPL's l is then the
    straight line from the ground truth's start to its end).

    Parameters
    ----------
    episodes : str, os.PathLike or list of dict
        The episodes (:func:`~navdtw.datasets.load_rxrce_episodes`), or their file.
    gt : str, os.PathLike or dict
        The ground truth (:func:`navdtw.datasets.load_vlnce_gt`), or its file.
    predictions : str, os.PathLike or dict
        The predictions file, or the dict of :func:`navdtw.datasets.load_vlnce_predictions`.
    languages : str, optional
        A key of :data:`LANGUAGE_SETS` (default ``"all"``).
    names : (str, str, str), optional
        The episodes, ground-truth and predictions names for messages.
    convention : str, optional
        The convention scored (default ``"vlnce"``: an episode whose ``r2r``-format steps never
        stop has no success, as ``navdtw.datasets.vlnce.match_predictions``).
    partial : bool, optional
        Match the episodes that have a prediction and leave the others (an evaluation still
        running; default False: a missing prediction is an error).

    Returns
    -------
    MatchedEpisodes
        The episodes of the chosen languages, with ``groups={"language": [...]}``.

    Raises
    ------
    ValueError
        An unknown ``languages``, no episodes (of those languages), or the errors of
        ``navdtw.datasets.vlnce.match_predictions``, naming the file and the entry.
    FileNotFoundError
        A file name that does not exist.
    """
    default = ["episodes", "ground truth", "predictions"]
    for k, arg in enumerate((episodes, gt, predictions)):
        if is_path(arg):
            default[k] = Path(arg).name
    ep_name, gt_name, pred_name = names if names is not None else default
    if languages not in LANGUAGE_SETS:
        raise ValueError(f"languages must be one of {', '.join(LANGUAGE_SETS)}, got {languages!r}")
    if is_path(episodes) or not (isinstance(episodes, list) and all("language" in e for e in episodes)):
        episodes = load_rxrce_episodes(episodes)
    if is_path(gt):
        gt = load_vlnce_gt(gt)
    id_keys: dict[str, str] = {}
    stops = {}
    if is_path(predictions):
        predictions, id_keys, stops = read_predictions(predictions)
    if not episodes:
        raise ValueError(f"{ep_name}: no episodes")
    wanted = LANGUAGE_SETS[languages]
    kept = [e for e in episodes if wanted is None or e["language"] in wanted]
    notes = []
    if len(kept) < len(episodes):
        if not kept:
            raise ValueError(f"{ep_name}: no episode in {', '.join(wanted)} (--languages {languages})")
        aside = _other_language_ids(episodes, kept, predictions, id_keys)
        predictions = {k: v for k, v in predictions.items() if str(k) not in aside}
        notes.append(
            f"languages {languages}: {len(kept)} of the {len(episodes)} episodes of {ep_name} scored"
            + (f"; {len(aside)} predictions for the other languages left aside" if aside else "")
        )
    names = (ep_name, gt_name, pred_name)
    matched = match_vlnce(
        kept, gt, predictions, names=names, id_keys=id_keys, stops=stops, convention=convention, partial=partial
    )
    if partial:
        scored = set(matched.ids)
        kept = [e for e in kept if str(e["episode_id"]) in scored]
    no_geodesic = sum(1 for e in kept if not _has_geodesic(e))
    if no_geodesic:
        notes.append(
            f"{no_geodesic} of the {len(kept)} episodes have no info.geodesic_distance: SPL's l is the "
            "straight line from the ground truth's start to its end (VLN-CE measures the geodesic distance)"
        )
    groups = {"language": [e["language"] for e in kept]}
    return replace(matched, groups=groups, notes=(*notes, *matched.notes))


def _has_geodesic(episode) -> bool:
    info = episode.get("info")
    g = info.get("geodesic_distance") if isinstance(info, dict) else None
    return finite_real(g) and g >= 0


def _other_language_ids(episodes, kept, predictions, id_keys) -> set[str]:
    """The prediction ids that name an episode left out by the language choice."""
    kept_ids = {str(e["episode_id"]) for e in kept}
    all_ids = {str(e["episode_id"]) for e in episodes}
    instr = instruction_ids(episodes)
    out = set()
    for key in map(str, predictions):
        how = id_keys.get(key)
        if how == "instruction_id":
            eid = instr.get(key)
        elif how == "episode_id":
            eid = key if key in all_ids else None
        else:
            eid = key if key in all_ids else instr.get(key)
        if eid is not None and eid not in kept_ids:
            out.add(key)
    return out


class RxRCEBenchmark(VLNCEBenchmark):
    """RxR-CE guide episodes with their dense ground truth, ready to score agents, by language.

    Parameters
    ----------
    rxrce_episodes : str or os.PathLike
        The guide episodes file (:func:`load_rxrce_episodes`).
    rxrce_gt : str or os.PathLike
        The ground-truth file (:func:`navdtw.datasets.load_vlnce_gt`).
    languages : str, optional
        A key of :data:`LANGUAGE_SETS` (default ``"all"``).

    Raises
    ------
    ValueError
        An unknown ``languages``, no episode in those languages, or a malformed file (naming the
        file and the entry).
    FileNotFoundError
        A file that does not exist.
    """

    def __init__(self, rxrce_episodes, rxrce_gt, languages: str = "all") -> None:  # the RXR_CE option names
        self.names = (Path(rxrce_episodes).name, Path(rxrce_gt).name)
        self.all_episodes = load_rxrce_episodes(rxrce_episodes)
        self.gt = load_vlnce_gt(rxrce_gt)
        if languages not in LANGUAGE_SETS:
            raise ValueError(f"--languages must be one of {', '.join(LANGUAGE_SETS)}, got {languages!r}")
        self.languages = languages
        wanted = LANGUAGE_SETS[languages]
        self.episodes = [e for e in self.all_episodes if wanted is None or e["language"] in wanted]
        if not self.episodes:
            raise ValueError(f"{self.names[0]}: no episode in {', '.join(wanted or ())} (--languages {languages})")

    def match(
        self, predictions, *, convention: str | None = None, strict: bool = False, partial: bool = False
    ) -> MatchedEpisodes:
        """Reads ``predictions`` and pairs them with the split's episodes as ``convention``'s
        evaluator does (:meth:`Benchmark.match`).

        Parameters
        ----------
        predictions : str, os.PathLike or dict
            A predictions file, or :func:`navdtw.datasets.load_vlnce_predictions`' dict.
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
            return match_predictions(
                self.all_episodes,
                self.gt,
                predictions,
                languages=self.languages,
                names=names,
                convention=conv,
                partial=partial,
            )

    def cluster_of(self, ids) -> list[str]:
        """The path of every episode (its ``trajectory_id``): RxR's instructions share paths.

        Parameters
        ----------
        ids : sequence
            Episode ids of the chosen languages.

        Returns
        -------
        list of str
            Each episode's ``trajectory_id`` (its own id without one).
        """
        traj = {str(e["episode_id"]): str(e.get("trajectory_id", e["episode_id"])) for e in self.episodes}
        return [traj[str(i)] for i in ids]


RXR_CE = DatasetKind(
    "rxr-ce",
    "RxR-CE",
    (
        Option("rxrce_episodes", "RxR-CE guide episodes ({split}_guide.json.gz)", shapes=("vlnce-episodes",)),
        Option("rxrce_gt", "RxR-CE guide ground truth ({split}_guide_gt.json.gz)", shapes=("vlnce-gt",)),
        Option(
            "languages",
            "the episodes scored: all (default), en (en-US and en-IN, VLN-CE's English task) or one language",
            kind="choice",
            required=False,
            choices=tuple(LANGUAGE_SETS),
            default="all",
        ),
    ),
    CONVENTIONS,
    DEFAULT_CONVENTION,
    RxRCEBenchmark,
    id_name="episode_id",
    description="Room-Across-Room in continuous environments (VLN-CE's RxR_VLNCE_v0): habitat positions",
    split_reader=SplitReader("rxrce_episodes", split_index),
    predictions=PREDICTIONS,
)
