"""Scoring every agent of a suite on one data set: matching each predictions file, every metric per
episode, and the episodes the agents are compared on.

:class:`DatasetRun` is one data set's state while a suite runs; :mod:`navdtw.suite.runner` fills it
stage by stage (open, :func:`score_agents`, baseline, statistics) and the outputs read it.
Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .config import DatasetSpec, Suite


@dataclass
class DatasetRun:
    """One data set of a suite run.

    Attributes
    ----------
    spec: the data set's checked table.
    bench: the open :class:`navdtw.datasets.Benchmark` (None until opened, or when it failed).
    ids: the episode ids every agent is compared on (the shared ones), in split order.
    scans: the scan of each of ``ids`` (empty when the data set has none).
    matched: agent -> :class:`navdtw.datasets.MatchedEpisodes` (all the agent's episodes).
    values: agent -> metric -> float64 values aligned with ``ids``.
    metrics: the metrics every agent has, in registry order.
    baseline: the random-walk baseline's means (empty without one).
    result: this data set's entry of ``results.json`` (empty when it failed).
    """

    spec: DatasetSpec
    bench: Any = None
    ids: list[str] = field(default_factory=list)
    scans: list[str] = field(default_factory=list)
    matched: dict[str, Any] = field(default_factory=dict)
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=list)
    baseline: dict[str, float] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)


def failure_record(agent: str | None, dataset: str, file: Path | None, exc: BaseException) -> dict[str, Any]:
    """One entry of ``results.json``'s ``failures``: who (agent, or None for the data set itself),
    where, which file, and the error as one line."""
    msg = " ".join((str(exc) or type(exc).__name__).split())
    return {"agent": agent, "dataset": dataset, "file": None if file is None else str(file), "error": msg}


def score_agents(run: DatasetRun, suite: Suite, failures: list, step: Callable[[str], None]) -> None:
    """Matches and scores every agent that has predictions for ``run``'s data set, then keeps the
    episodes all of them have.

    A predictions file that cannot be read or matched becomes a :func:`failure_record` in
    ``failures`` and the other agents go on. ``step(text)`` is called once per agent (progress).
    """
    spec = run.spec
    workers = suite.settings["workers"]
    ids_of: dict[str, list[str]] = {}
    for agent, files in suite.agents.items():
        if spec.name not in files:
            continue
        file = files[spec.name]
        try:
            matched = run.bench.match(file, convention=spec.convention)
            scores = run.bench.evaluate(matched, convention=spec.convention, threshold=spec.threshold, workers=workers)
        except (ValueError, KeyError, OSError) as exc:
            failures.append(failure_record(agent, spec.name, file, exc))
        else:
            run.matched[agent] = matched
            run.values[agent] = {k: np.asarray(scores[k], dtype=np.float64) for k in scores}
            ids_of[agent] = [str(i) for i in matched.ids]
            if not run.scans:
                run.scans = list(matched.scans)
        step(f"{agent} on {spec.name}")
    if not ids_of:
        return
    first = next(iter(ids_of.values()))
    if all(ids == first for ids in ids_of.values()):
        run.ids = first
    else:  # agents are compared on the episodes they all have
        common = set(first).intersection(*ids_of.values())
        run.ids = [i for i in first if i in common]
        scan_of = dict(zip(first, run.scans))
        run.scans = [scan_of[i] for i in run.ids]
        for agent, ids in ids_of.items():
            pos = {i: k for k, i in enumerate(ids)}
            take = np.array([pos[i] for i in run.ids], dtype=np.intp)
            run.values[agent] = {k: v[take] for k, v in run.values[agent].items()}
    keys: dict[str, None] = {}
    for v in run.values.values():
        keys.update(dict.fromkeys(v))
    run.metrics = [m for m in keys if all(m in v for v in run.values.values())]
