"""The results layouts of VLN projects, as data: one :class:`Layout` per file a project's evaluation
code writes (its name pattern, what it holds, its id key, column conventions, its summary record and
how the evaluator treats NaN and infinities when it averages). :mod:`navdtw.datasets.results` reads
every layout with one reader; a layout only says what the reader cannot see in the content.

Adding a project is adding an entry to :data:`LAYOUTS` (and a row to docs/datasets/results.md's
table, a writer and a test: docs/design.md, "Adding an evaluator layout"). :func:`recognise` finds
the layout of a file from its name and its first record; ``None`` means "no results layout": the
file is read as a generic table, and readers of other kinds (trajectories) may claim it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "LAYOUTS",
    "Layout",
    "Summary",
    "evaluator_mean",
    "layout",
    "policy_words",
    "recognise",
    "shard_of",
    "summary_layout",
]


@dataclass(frozen=True)
class Summary:
    """An evaluator's record of means.

    Attributes
    ----------
    keys:
        its key -> the metric it averages (``{"sucs_all": "sr"}``).
    length:
        the key of its episode count, or None.
    policy:
        metric -> how the evaluator averages non-finite values: ``"plain"`` (a NaN or an infinity
        makes the mean NaN or infinite), ``"nan_to_0"`` (NaN and infinities count as 0),
        ``"finite"`` (only the finite values are averaged); a metric it does not list is
        ``"plain"``.
    """

    keys: Mapping[str, str]
    length: str | None = None
    policy: Mapping[str, str] = field(default_factory=dict)

    def policy_of(self, metric: str) -> str:
        """The evaluator's policy for ``metric``.

        Parameters
        ----------
        metric : str
            A metric the summary averages.

        Returns
        -------
        str
            ``"plain"`` unless the summary says otherwise.
        """
        return self.policy.get(metric, "plain")


@dataclass(frozen=True)
class Layout:
    """One file layout a project's evaluation code writes.

    Attributes
    ----------
    name:
        what ``--layout`` (``layout = "..."``) calls it.
    project:
        the project (``"ETPNav"``).
    writer:
        the file and function of the project's code that writes it.
    pattern:
        the file name as the code makes it (``stats_ep_ckpt_{ckpt}_{split}_r{rank}_w{world}.json``).
    holds:
        ``"episodes"`` (one record per episode) or ``"means"`` (the evaluator's means only).
    keys:
        keys every record of the layout has: with the file name, how it is recognised.
    id_key:
        the id's key, or None where the ids are the keys of a JSON object.
    columns:
        column conventions: a column -> its target as ``--column`` takes it (``"-"``: kept under
        its own name, lower is better; ``"ignore"``).
    settings:
        per-row settings: a column -> the setting it gives (``"threshold"``, the success distance
        in metres); a setting is not a metric.
    summary:
        the shape of the evaluator's summary record (a trailing record of a per-episode file, or
        the whole of a means file), or None.
    nonfinite:
        how the evaluator treats NaN and infinities, in words (the docs' table, the notes).
    summary_last:
        True where the evaluator appends its summary record after the episodes once every rank has
        finished (StreamVLN): a file without one is of an unfinished evaluation, said in the notes.
    """

    name: str
    project: str
    writer: str
    pattern: str
    holds: str
    keys: frozenset[str]
    id_key: str | None = None
    columns: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, str] = field(default_factory=dict)
    summary: Summary | None = None
    nonfinite: str = ""
    summary_last: bool = False

    @property
    def regex(self):
        """A regular expression that matches the layout's file names (each ``{field}`` of
        ``pattern`` stands for any text without ``/``, ``{rank}`` and ``{world}`` for digits; a
        trailing ``.gz`` is allowed).

        Returns
        -------
        re.Pattern
        """
        parts = re.split(r"(\{\w+\})", self.pattern)
        out = "".join(
            (r"\d+" if p in ("{rank}", "{world}") else r"[^/]+") if p.startswith("{") else re.escape(p) for p in parts
        )
        return re.compile(out + r"(\.gz)?")


# Habitat's per-episode measures (VLN-CE's task config): the keys of its stats records.
_HABITAT = frozenset({"distance_to_goal", "success", "spl", "path_length", "oracle_success"})
# The means keys of VLN-CE-style evaluators (a mean of every numeric measure): plain means.
_HABITAT_MEANS = Summary(
    {
        "success": "sr",
        "spl": "spl",
        "oracle_success": "osr",
        "distance_to_goal": "ne",
        "path_length": "pl",
        "ndtw": "ndtw",
        "sdtw": "sdtw",
        "steps_taken": "steps",
    }
)
_PLAIN = "the per-episode values as habitat computes them; the means are plain sums over episodes / count"

#: Every layout navdtw knows, in the order :func:`recognise` tries them.
LAYOUTS: tuple[Layout, ...] = (
    Layout(
        "etpnav",
        "ETPNav",
        "vlnce_baselines/ss_trainer_ETP.py, RLTrainer._eval_checkpoint (json.dump of self.stat_eps, indent=2, "
        "one file per DDP rank; rank r evaluates every world-th trajectory)",
        "stats_ep_ckpt_{ckpt}_{split}_r{rank}_w{world}.json",
        "episodes",
        _HABITAT | {"steps_taken", "collisions", "ghost_cnt"},
        columns={"collisions": "-", "ghost_cnt": "-"},
        nonfinite="no NaN or infinity is written (distances come from the recorded path); `collisions` is a "
        "float: the collision count divided by the number of recorded positions",
    ),
    Layout(
        "etpnav-means",
        "ETPNav",
        "vlnce_baselines/ss_trainer_ETP.py, RLTrainer._eval_checkpoint (rank 0, json.dump indent=2 of the "
        "means gathered over ranks)",
        "stats_ckpt_{ckpt}_{split}.json",
        "means",
        _HABITAT | {"collisions", "ghost_cnt"},
        summary=Summary({**_HABITAT_MEANS.keys, "collisions": "collisions", "ghost_cnt": "ghost_cnt"}),
        nonfinite="plain means over every episode of every rank",
    ),
    Layout(
        "havln-means",
        "HA-VLN",
        "agent/VLN-CE/vlnce_baselines/common/base_il_trainer.py, BaseVLNCETrainer._eval_checkpoint "
        "(json.dump indent=4 of the means; TCR, CR and SR from HASimulator/metric.py)",
        "stats_ckpt_{ckpt}_{split}.json",
        "means",
        _HABITAT | {"TCR", "CR", "SR"},
        summary=Summary({**_HABITAT_MEANS.keys, "success": "success", "SR": "sr", "TCR": "tcr", "CR": "cr"}),
        nonfinite="plain means; `collisions` is the mean collision count; SR is success without a collision "
        "(the metric sr), `success` plain success",
    ),
    Layout(
        "havln-info",
        "HA-VLN",
        "agent/VLN-CE/vlnce_baselines/common/base_il_trainer.py, BaseVLNCETrainer._eval_checkpoint (json.dump "
        "indent=4 of the per-episode details taken out of the stats before the means: HASimulator/measures.py's "
        "distance_to_human and collisions_detail)",
        "stats_ckpt_{ckpt}_{split}_info.json",
        "episodes",
        frozenset({"collisions_detail"}),
        columns={"collisions_detail.count": "-", "collisions_detail.is_collision": "ignore"},
        nonfinite="none written; collisions_detail.count is every collision with a human (TCR subtracts the "
        "unavoidable ones, which this file does not hold); is_collision is the last step's flag only; "
        "distance_to_human holds [distance, angle] per human at the last step",
    ),
    Layout(
        "aerialvln",
        "AerialVLN",
        "src/vlnce_src/train.py, eval_vlnce (intermediate_results/: json.dump of stats_episodes, no indent; "
        "the rows are utils/env_vector.py's infos)",
        "stats_ckpt_{ckpt}_{split}.json",
        "episodes",
        _HABITAT - {"spl"} | {"trajectory", "SUCCESS_DISTANCE", "ndtw", "sdtw", "steps_taken"},
        columns={"trajectory": "ignore", "is_collisioned": "-"},
        settings={"SUCCESS_DISTANCE": "threshold"},
        nonfinite="no NaN or infinity; `done` and `is_collisioned` are JSON booleans; SUCCESS_DISTANCE (20 m) "
        "is the success threshold of every row",
    ),
    Layout(
        "aerialvln-every",
        "AerialVLN",
        "src/vlnce_src/train.py, eval_vlnce (intermediate_results_every/<time>/{ckpt}/: json.dump, no indent, "
        "of each episode's row as it ends: one file per episode)",
        "{episode_id}.json",
        "episodes",
        _HABITAT - {"spl"} | {"episode_id", "trajectory", "SUCCESS_DISTANCE", "ndtw", "sdtw", "steps_taken"},
        id_key="episode_id",
        columns={"trajectory": "ignore", "is_collisioned": "-"},
        settings={"SUCCESS_DISTANCE": "threshold"},
        nonfinite="as aerialvln: the same rows, one per file; the folder is one run",
    ),
    Layout(
        "aerialvln-means",
        "AerialVLN",
        "src/vlnce_src/train.py, eval_vlnce (results/: json.dump indent=4 of the means of every numeric field, "
        "booleans as 0/1)",
        "stats_ckpt_{ckpt}_{split}.json",
        "means",
        _HABITAT - {"spl"} | {"SUCCESS_DISTANCE", "ndtw", "sdtw"},
        summary=Summary(
            {**_HABITAT_MEANS.keys, "is_collisioned": "is_collisioned", "done": "done"},
        ),
        nonfinite="plain means; booleans averaged as 0/1; SUCCESS_DISTANCE is the threshold (20), not a metric",
    ),
    Layout(
        "vlnce-means",
        "VLN-CE",
        "vlnce_baselines/common/base_il_trainer.py, BaseVLNCETrainer._eval_checkpoint (json.dump indent=4 "
        "of the means; the per-episode stats_episodes are never written)",
        "stats_ckpt_{ckpt}_{split}.json",
        "means",
        _HABITAT,
        summary=_HABITAT_MEANS,
        nonfinite=_PLAIN,
    ),
    Layout(
        "streamvln",
        "StreamVLN",
        "streamvln/streamvln_eval.py, VLNEvaluator.eval_action (a json.dumps line per episode, every rank "
        "appending) and eval (rank 0 appends the summary without a newline)",
        "result.json",
        "episodes",
        frozenset({"episode_id", "success", "spl", "os", "ne"}),
        id_key="episode_id",
        columns={"episode_instruction": "ignore"},
        nonfinite="habitat's NaN SPL and Infinity distance are written as NaN / Infinity; the summary "
        "averages them as they are (torch sum / count), so one NaN SPL makes spls_all NaN and one unreachable "
        "goal makes ones_all Infinity",
        summary_last=True,
    ),
    Layout(
        "internnav",
        "InternNav",
        "internnav/habitat_extensions/vln/habitat_vln_evaluator.py, HabitatVLNEvaluator.eval_action "
        "(a json.dumps line per episode in <output>/progress.json, every rank appending; ndtw when measured)",
        "progress.json",
        "episodes",
        frozenset({"episode_id", "success", "spl", "os", "ne"}),
        id_key="episode_id",
        columns={"episode_instruction": "ignore"},
        nonfinite="NaN / Infinity as habitat gives them; the means (result.json) drop them (calc_metrics)",
    ),
    Layout(
        "internnav-means",
        "InternNav",
        "internnav/evaluator/distributed_base.py, DistributedEvaluator.eval (rank 0 appends a json.dumps line "
        "of calc_metrics' means to <output>/result.json)",
        "result.json",
        "means",
        frozenset({"sucs_all", "spls_all", "oss_all", "nes_all"}),
        summary=Summary(
            {"sucs_all": "sr", "spls_all": "spl", "oss_all": "osr", "nes_all": "ne", "ndtws_all": "ndtw"},
            length="length",
            policy={"spl": "nan_to_0", "ne": "finite"},
        ),
        nonfinite="calc_metrics sets NaN and infinite SPL to 0 and averages NE over the finite values only "
        "(divided by their count)",
    ),
    Layout(
        "streamvln-summary",
        "StreamVLN",
        "streamvln/streamvln_eval.py, eval (the summary record alone)",
        "result.json",
        "means",
        frozenset({"sucs_all", "spls_all", "oss_all", "ones_all"}),
        summary=Summary(
            {"sucs_all": "sr", "spls_all": "spl", "oss_all": "osr", "ones_all": "ne"},
            length="length",
        ),
        nonfinite="torch sum / count over every episode: NaN and Infinity propagate",
    ),
    Layout(
        "navid",
        "NaVid",
        "navid_agent.py, evaluate_agent (json.dump indent=4 of one episode's measures and its id; chunks of a "
        "run write into one log/ folder)",
        "stats_{id}.json",
        "episodes",
        _HABITAT | {"id"},
        id_key="id",
        nonfinite="NaN / Infinity as habitat gives them (no means are written)",
    ),
)

_BY_NAME = {lay.name: lay for lay in LAYOUTS}


def layout(name: str) -> Layout:
    """The layout called ``name`` (``--layout NAME``).

    Parameters
    ----------
    name : str
        A name of :data:`LAYOUTS`.

    Returns
    -------
    Layout

    Raises
    ------
    ValueError
        An unknown name (the message lists the known ones).
    """
    if name not in _BY_NAME:
        raise ValueError(f"unknown layout {name!r}; the layouts are {', '.join(_BY_NAME)}")
    return _BY_NAME[name]


def recognise(file_name: str, record: Mapping | None, holds: str | None = None) -> Layout | None:
    """The layout of a file, from its name and one of its records (for a JSON object keyed by id,
    one value; for a means file, the object), or None: no results layout fits (the file is read as
    a generic table; a reader of trajectories may claim it, ``navdtw.datasets.shapes``).

    Parameters
    ----------
    file_name : str
        The file's name (not its folder).
    record : mapping or None
        A record of the file; None: the name alone decides.
    holds : str, optional
        ``"episodes"`` or ``"means"``: what the content is (None: either).

    Returns
    -------
    Layout or None
    """
    keys = set(record) if isinstance(record, Mapping) else None
    for lay in LAYOUTS:
        if holds not in (None, lay.holds):
            continue
        if lay.regex.fullmatch(file_name) and (keys is None or lay.keys <= keys):
            return lay
    return None


def summary_layout(record: Mapping) -> Layout | None:
    """The means layout of an evaluator's summary record (a record without an episode id that has
    the layout's keys and an episode count), or None.

    Parameters
    ----------
    record : mapping
        The record.

    Returns
    -------
    Layout or None
    """
    keys = set(record)
    for lay in LAYOUTS:
        if lay.holds == "means" and lay.summary is not None and lay.summary.length and lay.keys <= keys:
            return lay
    return None


_SHARD = re.compile(r"(?P<stem>.*)_r(?P<rank>\d+)_w(?P<world>\d+)(?P<ext>\.[^/]*)?")


def shard_of(file_name: str) -> tuple[str, int, int, str] | None:
    """``(stem, rank, world, extension)`` of a file named ``<stem>_r{rank}_w{world}<ext>`` (one DDP
    rank's share of a run), or None.

    Parameters
    ----------
    file_name : str
        A file's name.

    Returns
    -------
    tuple of (str, int, int, str) or None
        The stem, the rank, the number of ranks and the extension; None for another name (or a
        rank not below the number of ranks).
    """
    m = _SHARD.fullmatch(file_name)
    if m is None:
        return None
    rank, world = int(m["rank"]), int(m["world"])
    if world < 1 or rank >= world:
        return None
    return m["stem"], rank, world, m["ext"] or ""


def evaluator_mean(values: np.ndarray, policy: str) -> float:
    """The mean an evaluator reports, under its policy for NaN and infinities (:class:`Summary`).

    Parameters
    ----------
    values : numpy.ndarray
        The per-episode values as the file holds them (NaN and infinities included).
    policy : str
        ``"plain"``, ``"nan_to_0"`` or ``"finite"``.

    Returns
    -------
    float
        The mean (NaN for no value).

    Raises
    ------
    ValueError
        An unknown policy.
    """
    v = np.asarray(values, dtype=np.float64)
    if policy == "nan_to_0":
        v = np.where(np.isfinite(v), v, 0.0)
    elif policy == "finite":
        v = v[np.isfinite(v)]
    elif policy != "plain":
        raise ValueError(f"unknown policy {policy!r}")
    if v.size == 0:
        return math.nan
    with np.errstate(invalid="ignore"):
        return float(v.sum() / v.size)


def policy_words(policy: str) -> str:
    """How an evaluator's policy (:class:`Summary`) averages, in words (the notes).

    Parameters
    ----------
    policy : str
        ``"plain"``, ``"nan_to_0"`` or ``"finite"``.

    Returns
    -------
    str
    """
    return {
        "plain": "averages every value as it is",
        "nan_to_0": "counts NaN and infinities as 0",
        "finite": "averages the finite values only",
    }[policy]
