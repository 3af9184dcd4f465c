"""IVLN-CE (IR2R-CE) tours: an agent's path over whole tours of episodes, scored with tour nDTW
(t-nDTW, :func:`navdtw.tour_ndtw`) as ``scripts/t-ndtw.py`` of jacobkrantz/IVLN-CE scores it.

The files are the ones ``scripts/t-ndtw.py`` reads (IVLN-CE@6d06e2be):

* the agent's path (``--predictions``; ``--agent-path`` there, default ``agent_path.json``; the
  iterative trainer writes it as ``dtw_data_ckpt_{ckpt}_{split}.json``,
  ``ivlnce_baselines/common/base_il_trainer.py``, ``_eval_checkpoint_iterative``): a JSON object
  ``{tour_id: [step, ...]}``, every step ``{"episode_id", "phase", "position": [x, y, z]}`` as
  ``ivlnce_baselines/common/environments.py`` (``append_dtw_step``) records it, the oracle's
  steps between episodes (``"oracle_goal"``, ``"oracle_start"``) included;
* the ground truth (``--tours``; ``--gt-path`` there, default ``data/gt_ndtw.json``):
  ``{split: {tour_id: [step, ...]}}``, the split chosen by ``--split-name`` (``--split`` there,
  default ``val_unseen``).

The agent's tours must be the ground truth's (the evaluator: ``tours are different``). Each tour is
one row of the episode table (its t-nDTW, its constrained DTW, its weight in the split's score);
the summary's ``tndtw`` is the split's t-nDTW, the tours weighted as the convention weighs them
(the ``weight`` of its :class:`navdtw.registry.Metric` record). Conventions: ``ivln-ce`` (the evaluator as written, its
quirks included) and ``ivln-ce-corrected`` (:func:`navdtw.tour_ndtw`'s ``"corrected"``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._messages import clipped, few, named
from ..engine import MAX_COORDINATE
from ..metrics import Convention, Scores
from ..paths import as_paths
from ..registry import Metric
from ..tours import tour_ndtw
from ._common import INPUT, MatchedEpisodes, is_int, is_path, is_real, source
from .base import Benchmark, DatasetKind, Option
from .shapes import routed

__all__ = [
    "CONVENTIONS",
    "CONVENTION_RECORDS",
    "DEFAULT_CONVENTION",
    "DEFAULT_SPLIT",
    "IVLN_CE",
    "METRICS",
    "IvlnceBenchmark",
    "Tour",
    "load_tour_paths",
    "load_tours",
]

#: The kind's conventions, IVLN-CE's evaluator as written and the corrected definition
#: (:func:`navdtw.tour_ndtw`'s ``"ivln-ce"`` and ``"corrected"``).
CONVENTIONS: tuple[str, ...] = ("ivln-ce", "ivln-ce-corrected")
#: The default convention: IVLN-CE's evaluator as written.
DEFAULT_CONVENTION = "ivln-ce"
#: The split of the ground-truth file scored when none is named (``scripts/t-ndtw.py``'s default).
DEFAULT_SPLIT = "val_unseen"
_TOUR_CONVENTION = {"ivln-ce": "ivln-ce", "ivln-ce-corrected": "corrected"}
_SOURCE = "jacobkrantz/IVLN-CE habitat_extensions/tour_ndtw.py, compute_tour_ndtw"
#: The kind's conventions as :class:`navdtw.Convention` records (the scores carry them). They are not
#: in ``navdtw.CONVENTIONS``: they choose how a tour is aligned and weighted, which no other
#: kind's paths have; the distance choices are navdtw's (a straight line, exact DTW).
CONVENTION_RECORDS: dict[str, Convention] = {
    "ivln-ce": Convention("ivln-ce", False, "shortest", source=_SOURCE),
    "ivln-ce-corrected": Convention(
        "ivln-ce-corrected", False, "shortest", source=f"{_SOURCE}, corrected (docs/metrics.md, Tour nDTW)"
    ),
}

#: The per-tour values of the kind (:class:`navdtw.Scores` columns; not in the registry, as no
#: other kind computes them): ``tndtw`` (the tour's t-nDTW, averaged over tours weighted by
#: ``tour_weight``: the split's score), ``tour_dtw`` (metres) and ``tour_weight``.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "tndtw",
            "t-nDTW",
            lambda c: c.input("tndtw"),
            rate=True,
            higher_is_better=True,
            inputs=("tndtw",),
            weight="tour_weight",
            description="tour nDTW exp(-DTW_anchored / (|R_tour| d_th)); the split's: tours weighted by tour_weight",
        ),
        Metric(
            "tour_dtw",
            "tour DTW",
            lambda c: c.input("tour_dtw"),
            unit="m",
            higher_is_better=False,
            inputs=("tour_dtw",),
            description="DTW over the whole tour, through each episode's stop and start points",
        ),
        Metric(
            "tour_weight",
            "tour weight",
            lambda c: c.input("tour_weight"),
            inputs=("tour_weight",),
            description="the tour's weight in the split's t-nDTW: its episode changes k - 1 (ivln-ce) or k",
        ),
    )
}


class Tour(NamedTuple):
    """One tour's steps as a file holds them (:func:`load_tour_paths`).

    Attributes
    ----------
    positions : numpy.ndarray
        float64 ``[n, 3]``, metres.
    episodes : list
        The ``episode_id`` of each step (strings or integers, as written).
    phases : list of str
        The ``phase`` of each step (``"agent"``, ``"oracle_goal"``, ``"oracle_start"``).
    """

    positions: np.ndarray
    episodes: list
    phases: list


def _step(step: Any, where: str) -> tuple[Any, str, list]:
    if not isinstance(step, dict):
        raise ValueError(f"{where}: expected a step {{episode_id, phase, position}}, got {clipped(step)}")
    for key in ("episode_id", "phase", "position"):
        if key not in step:
            raise ValueError(f"{where}: missing {key!r} (a step is {{episode_id, phase, position}})")
    eid, phase, pos = step["episode_id"], step["phase"], step["position"]
    if not (is_int(eid) or isinstance(eid, str)):
        raise ValueError(f"{where}: 'episode_id' must be a string or an integer, got {clipped(eid)}")
    if not isinstance(phase, str):
        raise ValueError(f"{where}: 'phase' must be a string ('agent', 'oracle_goal', ...), got {clipped(phase)}")
    if not (isinstance(pos, list) and len(pos) == 3 and all(is_real(x) for x in pos)):
        raise ValueError(f"{where}: 'position' must be [x, y, z] (3 numbers), got {clipped(pos)}")
    try:
        ok = all(abs(float(x)) <= MAX_COORDINATE for x in pos)  # NaN compares False
    except OverflowError:
        ok = False
    if not ok:
        raise ValueError(f"{where}: 'position' is not finite (or beyond +-{MAX_COORDINATE:g} m)")
    return eid, phase, pos


def _tours(data: Any, name: str, what: str) -> dict[str, Tour]:
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected an object keyed by tour id ({what}), got {type(data).__name__}")
    if not data:
        raise ValueError(f"{name}: no tours ({what})")
    out: dict[str, Tour] = {}
    for tid, steps in data.items():
        at = f"{name}: tour {named(tid)}"
        if not isinstance(steps, list) or not steps:
            got = "empty" if isinstance(steps, list) else f"a {type(steps).__name__}"
            raise ValueError(f"{at}: expected a non-empty list of steps {{episode_id, phase, position}}, got {got}")
        eps, phases, pos = [], [], []
        for k, s in enumerate(steps):
            e, p, x = _step(s, f"{at} step {k}")
            eps.append(e)
            phases.append(p)
            pos.append(x)
        if "agent" not in phases:
            raise ValueError(f"{at}: no step of phase 'agent' (only agent steps are scored)")
        out[str(tid)] = Tour(np.array(pos, dtype=np.float64), eps, phases)
    return out


def load_tour_paths(path_or_obj) -> dict[str, Tour]:
    """Reads an agent's path over its tours: ``{tour_id: [{episode_id, phase, position}, ...]}``
    (IVLN-CE's ``agent_path.json``, its trainer's ``dtw_data_ckpt_{ckpt}_{split}.json``).

    Parameters
    ----------
    path_or_obj : str, os.PathLike or dict
        A JSON file (gzipped or not), or parsed JSON.

    Returns
    -------
    dict[str, Tour]
        Tour id -> its steps, in file order.

    Raises
    ------
    ValueError
        Naming the file, the tour and the step: not an object of tours, an empty tour, a step
        without ``episode_id``, ``phase`` or ``position``, a position that is not 3 finite
        numbers, a tour without an agent-phase step.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_obj)
    return _tours(data, name, "IVLN-CE's agent_path.json: {tour_id: [{episode_id, phase, position}, ...]}")


def load_tours(path_or_obj, split: str = DEFAULT_SPLIT) -> dict[str, Tour]:
    """Reads one split of IVLN-CE's ground-truth tours: ``{split: {tour_id: [{episode_id, phase,
    position}, ...]}}`` (``data/gt_ndtw.json``).

    Parameters
    ----------
    path_or_obj : str, os.PathLike or dict
        A JSON file (gzipped or not), or parsed JSON.
    split : str, optional
        The split (default ``"val_unseen"``, as ``scripts/t-ndtw.py``).

    Returns
    -------
    dict[str, Tour]
        Tour id -> its ground-truth steps, in file order.

    Raises
    ------
    ValueError
        A file that is not an object of splits, a split it does not hold (naming those it does), or
        the errors of :func:`load_tour_paths` in the split's tours.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_obj)
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(
            f"{name}: expected IVLN-CE's ground-truth tours {{split: {{tour_id: [steps]}}}}, got "
            + (type(data).__name__ if not isinstance(data, dict) else "an object whose values are not objects of tours")
        )
    if split not in data:
        held = ", ".join(named(x) for x in data) or "none"
        raise ValueError(f"{name}: no split {named(split)} (it holds {held}); choose --split-name")
    return _tours(data[split], f"{name}: split {named(split)}", "ground-truth tours")


class IvlnceBenchmark(Benchmark):
    """One split of IVLN-CE's ground-truth tours read once, ready to score agents' paths
    (:data:`IVLN_CE`).

    Parameters
    ----------
    tours : str, os.PathLike or dict
        The ground-truth tours of every split (:func:`load_tours`).
    split_name : str, optional
        The split scored (default ``"val_unseen"``).

    Raises
    ------
    ValueError
        The errors of :func:`load_tours`.
    FileNotFoundError
        A file name that does not exist.
    """

    def __init__(self, tours, split_name: str = DEFAULT_SPLIT) -> None:  # the option names
        self.name = Path(tours).name if is_path(tours) else INPUT
        self.split_name = split_name
        self.tours = load_tours(tours, split_name)
        self.ids = list(self.tours)

    @property
    def n(self) -> int:
        return len(self.tours)

    def match(self, predictions, *, convention: str | None = None, strict: bool = False) -> MatchedEpisodes:
        """Pairs the split's tours with the agent's (every tour of one is a tour of the other, as
        the evaluator requires).

        Parameters
        ----------
        predictions : str, os.PathLike or dict
            The agent's path (:func:`load_tour_paths`).
        convention : str, optional
            One of :data:`CONVENTIONS` (checked; the matching is the same for both).
        strict : bool, optional
            Not used.

        Returns
        -------
        MatchedEpisodes
            One row per tour, in the ground truth's order: its agent-phase positions as the
            reference and the query, the tours' steps in ``extra`` (``"tours"``).

        Raises
        ------
        ValueError
            A convention that does not apply, tours in one file and not the other (naming them), or
            the errors of :func:`load_tour_paths`.
        FileNotFoundError
            A file name that does not exist.
        """
        self.kind.check_convention(convention)
        pred_name = Path(predictions).name if is_path(predictions) else INPUT
        with routed(predictions, self.kind):
            agent = load_tour_paths(predictions)
        extra = [t for t in agent if t not in self.tours]
        missing = [t for t in self.ids if t not in agent]
        if extra or missing:
            where = f"{self.name}'s split {named(self.split_name)}"
            parts = [f"tours not in {where}: {few(extra)}"] if extra else []
            parts += [f"no path for tours of {where}: {few(missing)}"] if missing else []
            raise ValueError(f"{pred_name}: {'; '.join(parts)} (IVLN-CE's evaluator: 'tours are different')")
        pairs = [(agent[t], self.tours[t]) for t in self.ids]

        def agent_phase(tour: Tour) -> np.ndarray:
            return tour.positions[[p == "agent" for p in tour.phases]]

        return MatchedEpisodes(
            ids=list(self.ids),
            scans=[""] * len(self.ids),
            env=None,
            references=as_paths([agent_phase(g) for _, g in pairs], "references"),
            queries=as_paths([agent_phase(a) for a, _ in pairs], "queries"),
            shortest_distance=np.full(len(pairs), math.nan),
            id_name="tour_id",
            extra={"tours": pairs},
        )

    def evaluate(self, matched: MatchedEpisodes, *, convention: str | None = None, **kwargs) -> Scores:
        """Each tour's t-nDTW (:func:`navdtw.tour_ndtw`), DTW and weight.

        Parameters
        ----------
        matched : MatchedEpisodes
            What :meth:`match` returned.
        convention : str, optional
            One of :data:`CONVENTIONS` (default ``"ivln-ce"``).
        **kwargs
            ``threshold`` (the success distance, default 3.0 m) and ``workers``; ``metrics`` (a
            subset of :data:`METRICS`); others (``strict``) do not apply.

        Returns
        -------
        navdtw.Scores
            ``tndtw``, ``tour_dtw`` and ``tour_weight`` per tour; ``summary()["tndtw"]`` is the
            split's t-nDTW.

        Raises
        ------
        ValueError
            A convention that does not apply, a metric the kind does not compute, or the errors of
            :func:`navdtw.tour_ndtw` naming the tour (episode orders that differ, and under
            ``ivln-ce`` a tour whose window leaves no warping path).
        """
        conv = self.kind.check_convention(convention)
        threshold = kwargs.get("threshold")
        threshold = 3.0 if threshold is None else threshold
        wanted = kwargs.get("metrics") or tuple(METRICS)
        unknown = [m for m in wanted if m not in METRICS]
        if unknown:
            gives = ", ".join(METRICS)
            raise ValueError(f"metric {unknown[0]!r} is not computed for {self.kind.name} (it gives {gives})")
        pairs = matched.extra["tours"]
        s = tour_ndtw(
            [a.positions for a, _ in pairs],
            [a.episodes for a, _ in pairs],
            [g.positions for _, g in pairs],
            [g.episodes for _, g in pairs],
            agent_phases=[a.phases for a, _ in pairs],
            gt_phases=[g.phases for _, g in pairs],
            tour_ids=matched.ids,
            threshold=threshold,
            convention=_TOUR_CONVENTION[conv],
            workers=kwargs.get("workers", -1),
        )
        values = {"tndtw": s.ndtw, "tour_dtw": s.dtw, "tour_weight": s.weights}
        keep = [m for m in METRICS if m in wanted]
        if "tndtw" in keep and "tour_weight" not in keep:
            keep.append("tour_weight")  # the summary's weights
        return Scores(
            {m: values[m] for m in keep},
            threshold=float(threshold),
            convention=CONVENTION_RECORDS[conv],
            ids=matched.ids,
            records={m: METRICS[m] for m in keep},
        )


IVLN_CE = DatasetKind(
    "ivln-ce",
    "IVLN-CE",
    (
        Option(
            "tours",
            "IVLN-CE's ground-truth tours {split: {tour_id: [{episode_id, phase, position}]}} (data/gt_ndtw.json)",
            shapes=("ivlnce-gt",),
        ),
        Option(
            "split_name",
            f"the split of --tours scored (default {DEFAULT_SPLIT})",
            kind="text",
            required=False,
            default=DEFAULT_SPLIT,
        ),
    ),
    CONVENTIONS,
    DEFAULT_CONVENTION,
    IvlnceBenchmark,
    id_name="tour_id",
    description="IVLN-CE / IR2R-CE tours: tour nDTW over whole tours of episodes",
    predictions=("ivlnce-tours",),
)
