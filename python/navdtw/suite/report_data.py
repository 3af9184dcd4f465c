"""What ``report.html`` shows of a run: the results, the metrics' labels and units, every agent's
per-episode values and the maps of the episodes a reader is shown first (the ``data`` of
:func:`navdtw.report.render_report`). Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .config import Suite
from .marks import info_of
from .scoring import DatasetRun


def report_data(results: dict, runs: Sequence[DatasetRun], suite: Suite, max_scenes: int, report) -> dict[str, Any]:
    """The ``data`` dict of :func:`navdtw.report.render_report` for a run.

    Parameters
    ----------
    results:
        the run's ``results.json`` content.
    runs:
        the run's data sets.
    suite:
        the suite (its title).
    max_scenes:
        episodes per data set whose maps are embedded: all when there are no more, else those
        :func:`navdtw.report.scene_priority` puts first (where the agents differ most).
    report:
        the :mod:`navdtw.report` module.
    """
    metrics: dict[str, dict] = {}
    for ds in results["datasets"].values():
        names = [m for values in ds["agents"].values() for m in values] + list(ds["baseline"])
        names += list(ds.get("metrics", {}))  # a metric that failed for an agent too: its cell says so
        metrics.update({m: info_of(ds, m) for m in names if m not in metrics})
    episodes = {
        r.spec.name: {
            "ids": r.ids,
            "agents": {a: {m: v.tolist() for m, v in vals.items()} for a, vals in r.values.items()},
        }
        for r in runs
        if r.result and r.values
    }
    scans, sets, rules = _scenes(results, runs, max_scenes, report)
    return {
        "title": suite.title or "navdtw benchmark suite",
        "results": results,
        "metrics": metrics,
        "episodes": episodes,
        "scenes": {"scans": scans, "datasets": sets, "rules": rules},
    }


def _scenes(results: dict, runs: Sequence[DatasetRun], max_scenes: int, report):
    """The report's maps, for data sets on graphs: the reference, every agent's path and their DTW
    alignments, for every episode when there are at most ``max_scenes``, else for the
    ``max_scenes`` the page shows first (:func:`navdtw.report.scene_priority`)."""
    scans: dict[str, Any] = {}
    sets: dict[str, Any] = {}
    rules: dict[str, str] = {}
    for r in runs:
        if not r.result or not r.matched or not r.ids:
            continue
        first = next(iter(r.matched.values()))
        if first.graphs is None or first.env is None:
            continue
        graphs = first.graphs.graphs
        pos = {agent: {str(i): k for k, i in enumerate(m.ids)} for agent, m in r.matched.items()}
        if len(r.ids) <= max_scenes:
            keep = list(range(len(r.ids)))
        else:
            ds = results["datasets"][r.spec.name]
            order = report.scene_priority(r.ids, r.values, list(ds["agents"]), report.metric_names(ds))
            keep = order[:max_scenes]
            rules[r.spec.name] = "differences"
        scenes = {}
        for e in keep:
            eid = r.ids[e]
            k0 = pos[next(iter(pos))][eid]
            graph = graphs[int(first.env[k0])]
            paths = {agent: m.queries[pos[agent][eid]] for agent, m in r.matched.items()}
            scenes[eid] = report.episode_scene(graph, first.references[k0], paths)
            if graph.name not in scans:
                scans[graph.name] = report.scan_layout(graph)
        sets[r.spec.name] = scenes
    return scans, sets, rules
