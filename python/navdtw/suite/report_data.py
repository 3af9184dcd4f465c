"""What ``report.html`` shows of a run: the results, the metrics' labels and units, every agent's
per-episode values and the maps of a sample of episodes (the ``data`` of
:func:`navdtw.report.write_report`). Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import Suite
from .marks import metric_info
from .scoring import DatasetRun


def report_data(results: dict, runs: Sequence[DatasetRun], suite: Suite, max_scenes: int, report) -> dict[str, Any]:
    """The ``data`` dict of :func:`navdtw.report.write_report` for a run.

    Parameters
    ----------
    results:
        the run's ``results.json`` content.
    runs:
        the run's data sets.
    suite:
        the suite (its title).
    max_scenes:
        episodes per data set whose maps are embedded (evenly spaced).
    report:
        the :mod:`navdtw.report` module (``scan_layout``, ``episode_scene``).
    """
    metrics: dict[str, None] = {}
    for ds in results["datasets"].values():
        for values in ds["agents"].values():
            metrics.update(dict.fromkeys(values))
        metrics.update(dict.fromkeys(ds["baseline"]))
    episodes = {
        r.spec.name: {
            "ids": r.ids,
            "agents": {a: {m: v.tolist() for m, v in vals.items()} for a, vals in r.values.items()},
        }
        for r in runs
        if r.result and r.values
    }
    return {
        "title": suite.title or "navdtw benchmark suite",
        "results": results,
        "metrics": {m: metric_info(m) for m in metrics},
        "episodes": episodes,
        "scenes": _scenes(runs, max_scenes, report),
    }


def _scenes(runs: Sequence[DatasetRun], max_scenes: int, report) -> dict[str, Any]:
    """The report's maps: for data sets on graphs, an evenly spaced sample of up to ``max_scenes``
    episodes with the reference, every agent's path and their DTW alignments."""
    scans: dict[str, Any] = {}
    sets: dict[str, Any] = {}
    for r in runs:
        if not r.result or not r.matched or not r.ids:
            continue
        first = next(iter(r.matched.values()))
        if first.graphs is None or first.env is None:
            continue
        graphs = first.graphs.graphs
        pos = {agent: {str(i): k for k, i in enumerate(m.ids)} for agent, m in r.matched.items()}
        keep = np.unique(np.linspace(0, len(r.ids) - 1, min(max_scenes, len(r.ids))).round().astype(int))
        scenes = {}
        for e in keep.tolist():
            eid = r.ids[e]
            k0 = pos[next(iter(pos))][eid]
            graph = graphs[int(first.env[k0])]
            paths = {agent: m.queries[pos[agent][eid]] for agent, m in r.matched.items()}
            scenes[eid] = report.episode_scene(graph, first.references[k0], paths)
            if graph.name not in scans:
                scans[graph.name] = report.scan_layout(graph)
        sets[r.spec.name] = scenes
    return {"scans": scans, "datasets": sets}
