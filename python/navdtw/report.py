"""The benchmark-suite report: one self-contained HTML file (no server, no network, no CDN).

:func:`write_report` turns a suite's results, per-episode values and episode scenes into
``report.html``: a leaderboard per data set (means with confidence intervals, the best agent and
the agents that cannot be told apart from it marked), the distribution of every metric per agent,
and an episode explorer (a table sortable by any metric or by the difference between two agents,
and the scan's navigation graph from above with the reference path, the agents' paths and their
DTW alignments). The page is vanilla JavaScript, inline SVG and inline CSS; the data are embedded
as JSON in a ``<script type="application/json">`` tag.

The input, ``data``, is a plain dict (``results`` is required, the rest optional)::

    data = {
        "title": "R2R benchmark",              # optional page title
        "results": {                           # results.json of the suite run, as issue 14 fixes it
            "navdtw_version": "0.1.0",
            "settings": {"resamples": 10000, "seed": 0, "confidence": 0.95, ...},
            "datasets": {
                "r2r_unseen": {
                    "dataset": "r2r", "convention": "r2r", "n": 2349,
                    "threshold": 3.0,                              # optional: success ring on maps
                    "agents": {"mine": {"sr": {"mean": 0.57, "ci": [0.55, 0.59]},   # "left_out": k optional
                                        ...}, ...},
                    "baseline": {"sr": {"mean": 0.03}, ...},       # optional
                    "comparisons": [{"a": "mine", "b": "ablation", "metric": "sr", "diff": 0.02,
                                     "ci": [0.01, 0.03], "p": 0.001, "p_holm": 0.004,
                                     "test": "permutation"}, ...],  # "dropped", "p_method", "p_bounds" optional
                },
            },
            "failures": [...],                 # strings or dicts, shown as a warning list
            "warnings": [...],                 # optional, the same
            "provenance": {...},               # optional: command, suite_file, inputs (navdtw.suite)
        },
        "metrics": {                           # the metric registry, as a plain dict
            "sr": {"label": "SR", "unit": "", "rate": True, "higher_is_better": True},
            "ne": {"label": "NE", "unit": "m", "rate": False, "higher_is_better": False},
            "pl": {"label": "PL", "unit": "m", "rate": False, "higher_is_better": None},   # no direction
            ...                                # every metric of results needs an entry
        },
        "episodes": {                          # optional: per-episode values
            "r2r_unseen": {
                "ids": ["4332_0", ...],        # episode ids (str or int), one per episode
                "agents": {"mine": {"sr": [1.0, 0.0, ...], ...}, ...},   # aligned with ids
            },
        },
        "scenes": {                            # optional: what the maps draw (see scan_layout, episode_scene)
            "scans": {"<scan>": {"positions": [[x, y], ...],   # top-down, metres
                                 "edges": [[i, j], ...]}},
            "datasets": {
                "r2r_unseen": {
                    "4332_0": {"scan": "<scan>", "reference": [node, ...],
                               "agents": {"mine": {"path": [node, ...],
                                                   "alignment": [[i, j], ...]}}},   # alignment optional
                },
            },
        },
    }

Rates are fractions in the data and shown as percentages; other metrics are shown in their unit.
Per-episode values are embedded to 4 decimals; NaN or infinite values are shown as "n/a". At most
``max_scenes`` episodes per data set keep their map: with per-episode values, those a reader is
shown first (``scene_priority``: the first page of the episode table as it opens, sorted by the
difference of the first two agents at either end, then the episodes where any two agents differ
most), else an evenly spaced sample; the report says which and how many. ``scenes`` may carry
``"rules": {data set: "differences"}`` when the caller already chose its episodes that way.
Coordinates are rounded to centimetres and scans are stored once, however many episodes use them.
Alignments are embedded as step strings ('d' both advance, 'r' reference only, 'q' query only).

:func:`scan_layout` and :func:`episode_scene` build the ``scenes`` entries from navdtw graphs and
node paths (the alignment by :func:`navdtw.warping_path` over the scan's shortest-path distances).
"""

from __future__ import annotations

import html
import json
import math
import re
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["MAX_SCENES", "PAGE", "episode_scene", "scan_layout", "write_report"]

#: Default limit on the episodes per data set whose map is embedded (about 0.4 kB each per agent).
MAX_SCENES = 3000

#: Rows of the episode table shown at first (and per "Show more").
PAGE = 200

_MOVES = {(1, 1): "d", (1, 0): "r", (0, 1): "q"}  # alignment steps: diagonal, reference only, query only


def scan_layout(graph) -> dict:
    """A scan's entry of the report's ``scenes["scans"]``: its graph seen from above.

    Parameters
    ----------
    graph : NavGraph
        The scan's graph.

    Returns
    -------
    dict
        ``{"positions": [[x, y], ...], "edges": [[i, j], ...]}``: the first two coordinates of
        every node (metres) and every edge, as plain lists.
    """
    pos = np.asarray(graph.positions, dtype=np.float64)[:, :2]
    return {"positions": pos.tolist(), "edges": np.asarray(graph.edges).tolist()}


def episode_scene(graph, reference, paths: dict) -> dict:
    """One episode's scene: the reference and each agent's node path with its DTW alignment.

    Parameters
    ----------
    graph : NavGraph
        The scan's graph (its ``name`` is the scan id).
    reference : array_like
        The reference's node indices.
    paths : dict
        Agent name -> node path (node indices of the same scan).

    Returns
    -------
    dict
        ``{"scan", "reference", "agents": {agent: {"path", "alignment"}}}``: an entry of the
        report's ``scenes["datasets"][data set]``, the alignment being
        :func:`navdtw.warping_path` over ``graph.distances``.

    Raises
    ------
    ValueError
        An empty path or a node index outside the graph (as :func:`navdtw.warping_path`).
    """
    from .engine import warping_path

    ref = np.asarray(reference, dtype=np.int64)
    agents = {}
    for agent, path in paths.items():
        q = np.asarray(path, dtype=np.int64)
        _, pairs = warping_path(ref, q, distances=graph.distances)
        agents[agent] = {"path": q.tolist(), "alignment": pairs.tolist()}
    return {"scan": graph.name, "reference": ref.tolist(), "agents": agents}


def natural_key(text: str) -> list:
    """Internal: the sort key of the page's natural order of episode ids: runs of ASCII digits compared as
    numbers (then the shorter spelling first: ``9`` before ``009``), other runs as text, a digit
    run against a text run by their first characters; ``report.js``'s ``natural`` compares alike."""
    key = []
    for run in re.findall(r"[0-9]+|[^0-9]+", str(text)):
        if run[0] in "0123456789":
            digits = run.lstrip("0")
            key.append((0x30, len(digits), digits, len(run)))
        else:
            key.append((ord(run[0]), run))
    return key


def explore_view(values: dict, agents: list, metrics: list) -> dict:
    """Internal: the episode explorer as it opens, for a data set whose ``agents`` and ``metrics``
    (leaderboard order) have per-episode ``values`` (agent -> metric -> values)."""
    have = [a for a in agents if values.get(a)]
    # the difference needs the metric of both A and B: a metric that failed for one of them (its
    # column only) would open an empty Δ column
    pair = have[:2]
    return explore_defaults(have, [m for m in metrics if all(m in values[a] for a in pair)])


def explore_defaults(agents: list[str], metrics: list[str]) -> dict:
    """Internal: the episode explorer as it opens: agents A and B (the first two with per-episode
    values) and the metric of the difference (``metrics``: those both have; nDTW when there, else
    the first)."""
    return {
        "a": agents[0] if agents else None,
        "b": agents[1] if len(agents) > 1 else None,
        "metric": "ndtw" if "ndtw" in metrics else (metrics[0] if metrics else None),
    }


def scene_priority(ids: list, values: dict, agents: list, metrics: list, page: int = PAGE) -> list[int]:
    """Internal: the order in which episodes get a map when not all can (``ids``: the episode ids;
    ``values``: agent -> metric -> per-episode values, as the page holds them; ``agents`` and
    ``metrics``: the data set's, in the leaderboard's order).

    First the rows the episode table shows as it opens (:func:`explore_defaults`): the ``page``
    largest differences A - B on its metric, then the ``page`` smallest (the other end, one click
    away); then every episode by its largest difference between any two agents on that metric;
    with one agent, the table's first page in id order, then its lowest values. Values are
    rounded to 4 decimals as on the page, ties broken by the page's natural id order, and episodes
    without a value come last, so the page's own sort shows exactly these rows first."""
    n = len(ids)
    view = explore_view(values, agents, metrics)
    m = view["metric"]
    have = [a for a in agents if m in values[a]]
    if m is None or not have:
        return list(range(n))
    order_id = sorted(range(n), key=lambda k: natural_key(ids[k]))
    rank = np.empty(n, dtype=np.int64)
    rank[order_id] = np.arange(n)
    v = {a: np.round(np.asarray(values[a][m], dtype=np.float64), 4) for a in have}
    v = {a: np.where(np.isfinite(x), x, np.nan) for a, x in v.items()}

    def by(key: np.ndarray) -> list[int]:
        """Episodes by ``key`` descending (NaN last), ties in natural id order."""
        k = np.where(np.isnan(key), -np.inf, key)
        return np.lexsort((rank, np.isnan(key), -k)).tolist()

    out: list[int] = []
    if view["b"] is not None and view["b"] in v and view["a"] in v:
        d = v[view["a"]] - v[view["b"]]
        out += by(d)[:page] + by(-d)[:page]
        spread = np.nanmax(np.stack(list(v.values())), axis=0) - np.nanmin(np.stack(list(v.values())), axis=0)
        out += by(spread)
    else:
        out += order_id[:page] + by(-v[have[0]])
    return list(dict.fromkeys(out + list(range(n))))


def write_report(path, data: dict, *, max_scenes: int = MAX_SCENES) -> None:
    """Writes the self-contained HTML report of ``data`` to ``path``, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The HTML file to write; its folder is created.
    data : dict
        The report's input: ``results`` (the suite's ``results.json``), and optionally
        ``title``, ``metrics``, ``episodes`` and ``scenes`` (the module docstring has the
        layout).
    max_scenes : int, optional
        At most this many episodes per data set keep their map (default :data:`MAX_SCENES`).

    Raises
    ------
    ValueError
        ``data`` that does not follow the layout (``"report data: <where>: <what>"``, naming the
        entry): no ``results`` dict, a metric without an entry in ``metrics``, an interval that
        is not ``[lo, hi]``, per-episode values that are not a 1-D list of numbers, a node out
        of its scan's range, an alignment that is not a monotone path, ...
    ~navdtw.suite.OutputError
        ``path`` cannot be written (an ``OSError`` naming it).
    """
    from ._io import atomic_write_text

    atomic_write_text(path, render_report(data, max_scenes=max_scenes))


def render_report(data: dict, *, max_scenes: int = MAX_SCENES) -> str:
    """The report's HTML text (what :func:`write_report` writes)."""
    payload = _payload(data, max_scenes)
    text = json.dumps(payload, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    # Inside <script>, "</script" or "<!--" would end or confuse the element: escape every "<"
    # (and ">", "&") as a JSON unicode escape, which JSON.parse reads back unchanged.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    assets = resources.files("navdtw") / "_report"
    page = (assets / "report.html").read_text(encoding="utf-8")
    title = html.escape(payload["title"])
    for key, value in (
        ("/*CSS*/", (assets / "report.css").read_text(encoding="utf-8")),
        ("/*JS*/", (assets / "report.js").read_text(encoding="utf-8")),
        ("/*DATA*/", text),
        ("<!--TITLE-->", title),
    ):
        page = page.replace(key, value, 1)
    return page


# --------------------------------------------------------------------------------------------
# checking and packing the data
# --------------------------------------------------------------------------------------------


def _fail(where: str, msg: str) -> ValueError:
    return ValueError(f"report data: {where}: {msg}")


def _finite(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def metric_names(dataset: dict) -> list[str]:
    """Internal: the metrics of one data set of ``results.json``, in the leaderboard's order; not
    the weights of pooled ratios (their ``weight``: LH-VLN's subtasks), which are not metrics."""
    names: dict[str, None] = {}
    for values in dataset.get("agents", {}).values():
        names.update(dict.fromkeys(values))
    names.update(dict.fromkeys(dataset.get("baseline", {})))
    infos = (dataset.get("metrics") or {}).values()
    weights = {i.get("weight") for i in infos if isinstance(i, dict)}
    return [n for n in names if n not in weights]


def _values(seq, where: str) -> list:
    """Per-episode values rounded to 4 decimals (enough for percent with one decimal and for 0.1 mm), NaN -> null."""
    arr = np.asarray(seq, dtype=np.float64)
    if arr.ndim != 1:
        raise _fail(where, f"expected a 1-D list of numbers, got shape {arr.shape}")
    out = np.round(arr, 4).tolist()
    for k in np.flatnonzero(~np.isfinite(arr)).tolist():
        out[k] = None
    return out


def _as_list(seq) -> list:
    return seq.tolist() if isinstance(seq, np.ndarray) else list(seq) if seq is not None else []


def _nodes(seq, n: int, where: str) -> list[int]:
    # plain Python: these lists are short and there is one per agent and episode
    nodes = _as_list(seq)
    if not nodes or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in nodes):
        raise _fail(where, "expected a non-empty list of integer node indices")
    for k, v in enumerate(nodes):
        if not 0 <= v < n:
            raise _fail(where, f"node {v} at position {k} is out of range for the scan's {n} nodes")
    return [int(v) for v in nodes]


def _moves(alignment, len_ref: int, len_query: int, where: str) -> str:
    """A monotone alignment from (0, 0) to (|R|-1, |Q|-1) as a step string ('d', 'r', 'q')."""
    pairs = [tuple(p) for p in _as_list(alignment)]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise _fail(where, "alignment must be a [K, 2] list of (reference, query) index pairs")
    if pairs[0] != (0, 0) or pairs[-1] != (len_ref - 1, len_query - 1):
        raise _fail(where, f"alignment must run from (0, 0) to ({len_ref - 1}, {len_query - 1})")
    steps = []
    for k in range(1, len(pairs)):
        d = (pairs[k][0] - pairs[k - 1][0], pairs[k][1] - pairs[k - 1][1])
        step = _MOVES.get(d)
        if step is None:
            raise _fail(where, f"alignment step {k - 1} -> {k} is {d}; steps must be (1, 1), (1, 0) or (0, 1)")
        steps.append(step)
    return "".join(steps)


def _metric_info(metrics: dict, name: str) -> dict:
    info = metrics.get(name)
    if not isinstance(info, dict):
        raise _fail(f"metrics[{name!r}]", "missing; each metric needs label, unit, rate, higher_is_better")
    return {
        "label": str(info.get("label", name.upper())),
        "unit": str(info.get("unit", "") or ""),
        "rate": bool(info.get("rate", False)),
        "hib": None if info.get("higher_is_better", True) is None else bool(info["higher_is_better"]),
    }


def _unmarked(ds: dict, names: list, board: dict) -> dict[str, str]:
    """Why each metric of a data set's table that gets no marks gets none (the caption under the
    table says only these): no direction, staying at the start wins, or fewer than two agents."""
    from .suite.marks import info_of, unmarked_reason

    out = {}
    for m in names:
        why = unmarked_reason(info_of(ds, m))
        if why is None and sum(1 for row in board.values() if (row.get(m) or [None])[0] is not None) < 2:
            why = "fewer than two agents measured"
        if why is not None:
            out[m] = why
    return out


def _payload(data: dict, max_scenes: int) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise _fail("data", "expected a dict with a 'results' dict (the suite's results.json)")
    results = data["results"]
    metrics = data.get("metrics") or {}
    datasets = results.get("datasets")
    if not isinstance(datasets, dict):
        raise _fail("results['datasets']", "expected a dict of data set name -> results")
    settings = results.get("settings") or {}
    confidence = _finite(settings.get("confidence")) or 0.95
    alpha = _finite(settings.get("alpha")) or 0.05
    from .suite.marks import mark_notes

    episodes = data.get("episodes") or {}
    scenes = data.get("scenes") or {}
    scans_in = scenes.get("scans") or {}

    used: dict[str, None] = {}
    out_sets = []
    scans_used: dict[str, None] = {}
    for name, ds in datasets.items():
        entry, names = _dataset_entry(name, ds, results, metrics, alpha, used)
        if name in episodes:
            entry["episodes"] = _pack_episodes(episodes[name], f"episodes[{name!r}]")
            entry["explore"] = explore_view(entry["episodes"]["values"], entry["agents"], names)
        if name in (scenes.get("datasets") or {}):
            _add_scenes(entry, names, scenes, max_scenes)
            scans_used.update(dict.fromkeys(s[0] for s in entry["scenes"].values()))
        out_sets.append(entry)

    order = dict.fromkeys(metrics)
    for m in used:
        order.setdefault(m, None)
    shown = [m for m in order if m in used]
    # a failed metric keeps its agent in the tables (its cell says "failed"); a failed run does not
    failed = results.get("failures", [])
    return {
        "title": str(data.get("title") or "navdtw benchmark report"),
        "version": str(results.get("navdtw_version", "")),
        "settings": {k: v for k, v in settings.items() if isinstance(v, (str, int, float, bool)) or v is None},
        "confidence": confidence,
        "alpha": alpha,
        "mark_notes": mark_notes(alpha),
        "max_scenes": int(max_scenes),
        "page": PAGE,
        "failures": [_failure(f) for f in failed if not (isinstance(f, dict) and f.get("metric"))],
        "failed_cells": [_failure(f) for f in failed if isinstance(f, dict) and f.get("metric")],
        "warnings": [_failure(w) for w in results.get("warnings", [])],
        "provenance": _provenance(results.get("provenance") or {}),
        "order": shown,
        "metrics": {m: _metric_info(metrics, m) for m in shown},
        "datasets": out_sets,
        "scans": {s: _pack_scan(scans_in[s], f"scenes['scans'][{s!r}]") for s in scans_used},
    }


def _dataset_entry(
    name, ds, results: dict, metrics: dict, alpha: float, used: dict[str, None]
) -> tuple[dict[str, Any], list[str]]:
    """The page's entry of one data set of ``results`` (without its episodes and scenes), and its
    metrics' names; the metrics it shows are added to ``used``."""
    from .suite.marks import leaderboard_marks

    where = f"results['datasets'][{name!r}]"
    if not isinstance(ds, dict):
        raise _fail(where, "expected a dict")
    names = metric_names(ds)
    used.update(dict.fromkeys(names))
    board = _board(ds, where)
    for f in results.get("failures") or []:  # one failure, one cell: "failed", with its reason
        if isinstance(f, dict) and f.get("dataset") == name and f.get("metric") and f.get("agent") in board:
            board[f["agent"]][str(f["metric"])] = [None, None, None, 0, str(f.get("error", ""))]
            used.setdefault(str(f["metric"]), None)
    runs = {
        agent: {m: [*map(_finite, v["runs"]), _finite(v.get("runs_sd"))] for m, v in values.items() if v.get("runs")}
        for agent, values in ds.get("agents", {}).items()
    }
    entry: dict[str, Any] = {
        "name": str(name),
        "dataset": str(ds.get("dataset", "")),
        "convention": str(ds.get("convention", "")),
        "n": ds.get("n"),
        "threshold": _finite(ds.get("threshold", (results.get("settings") or {}).get("threshold"))),
        "agents": list(ds.get("agents", {})),
        "board": board,
        "baseline": {m: _finite(v.get("mean")) for m, v in (ds.get("baseline") or {}).items()},
        "marks": leaderboard_marks(ds, alpha, metrics=metrics),
        "unmarked": _unmarked(ds, names, board),
        "comparisons": [_comparison(c) for c in ds.get("comparisons", [])],
        "reported": [
            _reported(agent, m, row) for agent, rows in (ds.get("reported") or {}).items() for m, row in rows.items()
        ],
        "runs": {a: r for a, r in runs.items() if r},
        "summaries": _summaries(ds, used),
        "episodes": None,
        "scenes": {},
        "scenes_total": 0,
        "scenes_rule": "none",
        "explore": explore_defaults([], []),
    }
    return entry, names


def _board(ds: dict, where: str) -> dict[str, dict[str, list]]:
    """Agent -> metric -> ``[mean, ci low, ci high, left out]`` of one data set."""
    board = {}
    for agent, values in ds.get("agents", {}).items():
        row = {}
        for m, v in values.items():
            ci = v.get("ci") or [None, None]
            if len(ci) != 2:
                raise _fail(f"{where}['agents'][{agent!r}][{m!r}]['ci']", "expected [lo, hi]")
            row[m] = [_finite(v.get("mean")), _finite(ci[0]), _finite(ci[1]), int(v.get("left_out") or 0)]
        board[agent] = row
    return board


def _comparison(c: dict) -> dict[str, Any]:
    """One pairwise comparison of ``results.json`` as the page reads it."""
    improvement = c.get("p_improvement") or {}
    return {
        "a": c["a"],
        "b": c["b"],
        "metric": c["metric"],
        "diff": _finite(c.get("diff")),
        "ci": [_finite(x) for x in (c.get("ci") or [None, None])],
        "p": _finite(c.get("p")),
        "p_holm": _finite(c.get("p_holm")),
        "test": str(c.get("test", "")),
        "p_method": str(c.get("p_method", "")),
        "dropped": int(c.get("dropped") or 0),
        "over": str(c.get("over", "")),
        "p_improvement": [_finite(improvement.get("value"))]
        + [_finite(x) for x in (improvement.get("ci") or [None, None])],
    }


def _reported(agent, metric, row: dict) -> dict[str, Any]:
    """One reported-versus-measured row of ``results.json`` as the page reads it."""
    return {
        "agent": str(agent),
        "metric": str(metric),
        "reported": _finite(row.get("reported")),
        "measured": _finite(row.get("measured")),
        "ci": [_finite(x) for x in (row.get("ci") or [None, None])],
        "gap": _finite(row.get("gap")),
        "verdict": str(row.get("verdict", "")),
    }


def _summaries(ds: dict, used: dict) -> list[dict[str, Any]]:
    """The evaluators' own summaries in the agents' files (``evaluator_summaries``: StreamVLN's
    last line), one row per metric: the evaluator's figure beside navdtw's mean (metrics added
    to ``used``)."""
    rows = []
    for agent, records in (ds.get("evaluator_summaries") or {}).items():
        for rec in records if isinstance(records, list) else []:
            for metric, c in (rec.get("checks") or {}).items() if isinstance(rec, dict) else ():
                used.setdefault(str(metric), None)
                rows.append(
                    {
                        "agent": str(agent),
                        "metric": str(metric),
                        "source": str(rec.get("source", "")),
                        "evaluator": _finite(c.get("evaluator")),
                        "nonfinite": c.get("nonfinite"),
                        "navdtw": _finite(c.get("navdtw")),
                        "agrees": bool(c.get("agrees")),
                    }
                )
    return rows


def _add_scenes(entry: dict[str, Any], names: list[str], scenes: dict, max_scenes: int) -> None:
    """The scenes (maps) of one data set into its ``entry``: at most ``max_scenes``, those with the
    largest differences first when there are more, and the rule that chose them."""
    name = entry["name"]
    given = scene_sets = scenes["datasets"][name]
    ep = entry["episodes"]
    ranked = ep is not None and len(given) > max_scenes
    if ranked:  # more scenes than the limit: those the page shows first
        priority = scene_priority(ep["ids"], ep["values"], entry["agents"], names)
        place = {ep["ids"][k]: r for r, k in enumerate(priority)}
        given = dict(sorted(given.items(), key=lambda kv: place.get(str(kv[0]), len(place))))
    scans_in = scenes.get("scans") or {}
    entry["scenes"], kept = _pack_scenes(given, scans_in, max_scenes, f"scenes['datasets'][{name!r}]", ranked=ranked)
    entry["scenes_total"] = len(ep["ids"]) if ep is not None else len(scene_sets)
    rule = (scenes.get("rules") or {}).get(name)
    if len(entry["scenes"]) >= entry["scenes_total"]:
        rule = "all"
    elif rule is None:
        rule = "given" if kept == len(scene_sets) else "differences" if ranked else "even"
    entry["scenes_rule"] = rule


def _provenance(prov: dict) -> dict[str, Any]:
    """The command, the suite file and the inputs (with their SHA-256) a run records."""
    return {
        "command": " ".join(map(str, prov["command"])) if prov.get("command") else "",
        "suite_file": (prov.get("suite_file") or {}).get("path", ""),
        "inputs": [
            [
                str(i.get("dataset") or ""),
                str(i.get("agent") or ""),
                str(i.get("option") or ""),
                str(i.get("path")),
                str(i.get("sha256") or ""),
            ]
            for i in prov.get("inputs", [])
            if isinstance(i, dict)
        ],
    }


def _failure(f) -> str:
    """A failure or warning of results.json as one line: "agent on data set (metric): error" for
    the usual dict."""
    if isinstance(f, dict) and ("error" in f or "message" in f):
        who = " on ".join(str(f[k]) for k in ("agent", "dataset") if f.get(k) is not None)
        who += f" ({f['metric']})" if f.get("metric") else ""
        text = str(f.get("error", f.get("message")))
        return f"{who}: {text}" if who else text
    return f if isinstance(f, str) else json.dumps(f, default=str)


def _pack_episodes(ep: dict, where: str) -> dict:
    ids = ep.get("ids")
    if ids is None:
        raise _fail(where, "missing 'ids'")
    ids = [str(i) for i in ids]
    values = {}
    for agent, per_metric in (ep.get("agents") or {}).items():
        row = {}
        for m, seq in per_metric.items():
            w = f"{where}['agents'][{agent!r}][{m!r}]"
            v = _values(seq, w)
            if len(v) != len(ids):
                raise _fail(w, f"{len(v)} values for {len(ids)} episode ids")
            row[m] = v
        values[agent] = row
    return {"ids": ids, "values": values}


def _pack_scan(scan: dict, where: str) -> dict:
    pos = np.asarray(scan.get("positions"), dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] < 2 or len(pos) == 0:
        raise _fail(where, f"positions must be a non-empty [V, 2] list, got shape {pos.shape}")
    pos = pos[:, :2]
    if not np.isfinite(pos).all():
        raise _fail(where, f"positions[{int(np.argmin(np.isfinite(pos).all(axis=1)))}] is not finite")
    edges = np.asarray(scan.get("edges", []), dtype=np.int64).reshape(-1, 2)
    if ((edges < 0) | (edges >= len(pos))).any():
        k = int(np.argmax(((edges < 0) | (edges >= len(pos))).any(axis=1)))
        raise _fail(where, f"edges[{k}] = {edges[k].tolist()} is out of range for {len(pos)} nodes")
    return {"p": np.round(pos, 2).ravel().tolist(), "e": edges.ravel().tolist()}


def _pack_scenes(episodes: dict, scans: dict, max_scenes: int, where: str, ranked: bool = False) -> tuple[dict, int]:
    """The sampled episodes' scenes, checked and packed: ``{id: [scan, reference, {agent: [path, moves]}]}``,
    and how many were kept: the first ``max_scenes`` when ``ranked`` (given in priority order),
    else an evenly spaced sample.

    Paths and alignments of all episodes are checked and encoded in a few vectorised passes (a
    suite has tens of thousands of them); only when something is wrong are they checked one by one,
    for the message naming the entry.
    """
    keys = list(episodes)
    total = len(keys)
    if total > max_scenes and ranked:
        keys = keys[: max(max_scenes, 0)]
    elif total > max_scenes:
        keep = np.unique(np.linspace(0, total - 1, max(max_scenes, 0)).round().astype(int))
        keys = [keys[k] for k in keep]
    sizes: dict[str, int] = {}
    paths: list[list] = []  # every reference and agent path, in order
    limits: list[int] = []  # the node count of its scan
    names: list[tuple] = []  # (episode, agent or None) of each path, for messages
    aligns: list[tuple[int, int, list]] = []  # (reference path index, agent path index, pairs)
    layout = []
    for key in keys:
        ep = episodes[key]
        scan = ep.get("scan")
        if scan not in scans:
            raise _fail(f"{where}[{key!r}]", f"scan {scan!r} is not in scenes['scans']")
        n = sizes.setdefault(scan, len(scans[scan].get("positions", [])))
        ref = len(paths)
        paths.append(_as_list(ep.get("reference")))
        limits.append(n)
        names.append((key, None))
        agents = []
        for agent, a in (ep.get("agents") or {}).items():
            agents.append((agent, len(paths), len(aligns) if a.get("alignment") is not None else None))
            if a.get("alignment") is not None:
                aligns.append((ref, len(paths), _as_list(a["alignment"])))
            paths.append(_as_list(a.get("path")))
            limits.append(n)
            names.append((key, agent))
        layout.append((key, scan, ref, agents))

    def name(k: int, what: str) -> str:
        key, agent = names[k]
        return f"{where}[{key!r}]" + (f"['agents'][{agent!r}]['{what}']" if agent is not None else "['reference']")

    nodes = _node_lists(paths, limits, name)
    moves = _move_strings(aligns, [len(p) for p in nodes], name)
    out = {}
    for key, scan, ref, agents in layout:
        out[str(key)] = [scan, nodes[ref], {a: [nodes[p], None if m is None else moves[m]] for a, p, m in agents}]
    return out, len(keys)


def _split(flat: list, lengths: np.ndarray) -> list[list]:
    ends = np.cumsum(lengths).tolist()
    return [flat[e - n : e] for e, n in zip(ends, lengths.tolist())]


def _node_lists(paths: list[list], limits: list[int], name) -> list[list[int]]:
    lengths = np.fromiter(map(len, paths), dtype=np.int64, count=len(paths))
    flat = np.array([v for p in paths for v in p])
    ok = len(paths) == 0 or (
        lengths.min() > 0
        and flat.ndim == 1
        and flat.dtype.kind in "iu"
        and bool(((flat >= 0) & (flat < np.repeat(np.asarray(limits, dtype=np.int64), lengths))).all())
    )
    if not ok:
        for k, (p, n) in enumerate(zip(paths, limits)):
            _nodes(p, n, name(k, "path"))  # raises, naming the first bad one
    return _split(flat.tolist() if len(paths) else [], lengths)


def _move_strings(aligns: list[tuple[int, int, list]], path_lengths: list[int], name) -> list[str]:
    """Each alignment as its step string (see :func:`_moves`), all at once."""
    if not aligns:
        return []
    lengths = np.fromiter((len(a[2]) for a in aligns), dtype=np.int64, count=len(aligns))
    flat = np.array([pair for a in aligns for pair in a[2]])
    ok = lengths.min() > 0 and flat.ndim == 2 and flat.shape[1] == 2 and flat.dtype.kind in "iu"
    if ok:
        last = np.cumsum(lengths) - 1
        first = last - lengths + 1
        ends = np.array([(path_lengths[r] - 1, path_lengths[q] - 1) for r, q, _ in aligns], dtype=np.int64)
        ok = bool((flat[first] == 0).all() and (flat[last] == ends).all())
    if ok:
        step = np.diff(flat, axis=0)
        code = step[:, 0] * 2 + step[:, 1]  # (0, 1) -> 1 'q', (1, 0) -> 2 'r', (1, 1) -> 3 'd'
        code[last[:-1]] = 0  # the jumps from one alignment to the next are not steps
        good = ((step == 0) | (step == 1)).all(axis=1) & (code > 0)
        good[last[:-1]] = True
        ok = bool(good.all())
    if not ok:
        for r, q, pairs in aligns:
            _moves(pairs, path_lengths[r], path_lengths[q], name(q, "alignment"))  # raises
    text = np.frombuffer(b"?qrd", dtype=np.uint8)[code].tobytes().decode("ascii")
    return [text[f:l] for f, l in zip(first.tolist(), last.tolist())]
