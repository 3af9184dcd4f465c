"""Scoring every agent of a suite on one data set: matching each predictions file, every metric per
episode under the non-finite policy, the warnings of the matchers, and the episodes the agents are
compared on.

:class:`DatasetRun` is one data set's state while a suite runs; :mod:`navdtw.suite.runner` fills it
stage by stage (open, :func:`score_agents`, baseline, statistics) and the outputs read it.
Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

import re
import warnings
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
    ids: the episode ids every agent is compared on, in split order.
    scans: the scan of each of ``ids`` (empty when the data set has none).
    matched: agent -> :class:`navdtw.datasets.MatchedEpisodes` (all the agent's episodes).
    values: agent -> metric -> float64 values aligned with ``ids`` (infinite distances kept: the
        statistics leave them out); an agent lacks a metric whose values failed the non-finite
        policy (a failure names it).
    metrics: every metric some agent has or failed (one failure, one column), in scoring order.
    runs: agent -> metric -> float64 [episodes, runs] for an agent scored in several runs (seeds);
        its ``values`` are then the per-episode means over the runs.
    files: agent -> its predictions files, one per run.
    info: metric -> ``{"label", "unit", "rate", "higher_is_better", "staying_wins"}`` (the
        registry's, or a results table's column: its name and the direction given).
    read_as: (agent, run) -> (the files read, the results layout or None), where a reader says
        (a results table: every shard of the run; provenance).
    summaries: agent -> the evaluator's summary records found in its runs' files, each checked
        against the rows (:func:`summary_record`; ``results.json``'s ``evaluator_summaries``).
    baseline: the random-walk baseline's means (empty without one).
    result: this data set's entry of ``results.json`` (empty when it failed).
    tables: the (agent, file) of every results table read.
    lacking: a column mapped by ``columns`` -> the (agent, file, table) of the tables that lack it
        (:attr:`navdtw.datasets.results.ResultsTable.unmapped`).
    """

    spec: DatasetSpec
    bench: Any = None
    ids: list[str] = field(default_factory=list)
    scans: list[str] = field(default_factory=list)
    matched: dict[str, Any] = field(default_factory=dict)
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=list)
    runs: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    files: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    read_as: dict[tuple[str, int], tuple[tuple[str, ...], str | None]] = field(default_factory=dict)
    summaries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    baseline: dict[str, float] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    tables: list[tuple[str, Path]] = field(default_factory=list)
    lacking: dict[str, list[tuple[str, Path, Any]]] = field(default_factory=dict)


def one_line(text: str) -> str:
    """Whitespace (newlines, tabs) folded to single spaces: a message is one line everywhere."""
    return " ".join(str(text).split())


def failure_record(
    agent: str | None, dataset: str, file: Path | None, exc: BaseException, metric: str | None = None
) -> dict[str, Any]:
    """One entry of ``results.json``'s ``failures``: who (agent, or None for the data set itself),
    where, which file, which metric (None: every metric), and the error as one line."""
    return {
        "agent": agent,
        "dataset": dataset,
        "file": None if file is None else str(file),
        "metric": metric,
        "error": one_line(str(exc) or type(exc).__name__),
    }


def warning_record(agent: str | None, dataset: str | None, file: Path | None, message: str) -> dict[str, Any]:
    """One entry of ``results.json``'s ``warnings``: who, where, which file, and the message as one line."""
    return {
        "agent": agent,
        "dataset": dataset,
        "file": None if file is None else str(file),
        "message": one_line(message),
    }


def score_agents(run: DatasetRun, suite: Suite, failures: list, warned: list, step: Callable[[str], None]) -> None:
    """Matches and scores every agent that has predictions for ``run``'s data set, every run
    (seed) of it, then checks that they cover the same episodes.

    A predictions file that cannot be read or matched becomes a :func:`failure_record` in
    ``failures`` and the agent's other runs are not used (the other agents go on); so does a
    metric whose values break the non-finite policy (:func:`navdtw.registry.nonfinite_policy`:
    that agent's column only). The runs of one agent must cover the same episodes (else it fails,
    naming the file and the ids). An agent's ``values`` are its per-episode means over its runs
    (an episode with a left-out value in any run is left out); ``runs`` keeps each run's values.
    What the matchers say becomes a :func:`warning_record` in ``warned``. ``step(text)`` is
    called once per run file (progress).
    """
    from .._messages import few

    spec = run.spec
    ids_of: dict[str, list[str]] = {}
    scans_of: dict[str, list[str]] = {}
    for agent, files in suite.agents.items():
        if spec.name not in files:
            continue
        scored = []
        for k, file in enumerate(files[spec.name]):
            one = _score_file(run, suite, agent, file, failures, warned)
            step(f"{agent} on {spec.name}")
            if one is not None and getattr(one[1], "sources", ()):
                run.read_as[(agent, k)] = (tuple(one[1].sources), one[1].layout)
            if one is not None and getattr(one[1], "summary", None) is not None:
                run.summaries.setdefault(agent, []).append(summary_record(k, one[1]))
            if one is None:
                for _ in files[spec.name][k + 1 :]:
                    step(f"{agent} on {spec.name}")
                break
            scored.append(one)
        else:
            first_file, matched, ids, values, scans = scored[0]
            order = {i: k for k, i in enumerate(ids)}
            per_run = [values]
            for file, _, other, v, _ in scored[1:]:
                have = set(other)
                missing = [i for i in ids if i not in have]
                extra = [i for i in other if i not in order]
                if missing or extra:
                    what = (
                        f"no row for {few(missing)}, which {first_file.name} has"
                        if missing
                        else f"episodes {few(extra)}, which {first_file.name} has not"
                    )
                    message = f"{file.name}: {what}; the runs of agent {agent} must score the same episodes"
                    failures.append(failure_record(agent, spec.name, file, ValueError(message)))
                    break
                pos = {i: k for k, i in enumerate(other)}
                take = np.fromiter((pos[i] for i in ids), dtype=np.intp, count=len(ids))
                per_run.append({m: x[take] for m, x in v.items()})
            else:
                common = [m for m in per_run[0] if all(m in v for v in per_run)]
                run.matched[agent] = matched
                run.files[agent] = tuple(files[spec.name])
                if len(per_run) == 1:
                    run.values[agent] = per_run[0]
                else:
                    stacked = {m: np.stack([v[m] for v in per_run], axis=1) for m in common}
                    run.runs[agent] = stacked
                    run.values[agent] = {m: _mean_over_runs(x) for m, x in stacked.items()}
                ids_of[agent] = ids
                scans_of[agent] = scans
    _unmapped(run, suite, ids_of, scans_of, failures, warned)
    if ids_of:
        _align(run, suite, ids_of, scans_of, failures, warned)
    keys: dict[str, None] = {}
    for v in run.values.values():
        keys.update(dict.fromkeys(v))
    # a metric that failed for an agent still scored keeps its column: the cell shows the failure
    keys.update(
        (f["metric"], None) for f in failures if f["dataset"] == spec.name and f["metric"] and f["agent"] in run.values
    )
    run.metrics = [k for k in run.info if k in keys] + [k for k in keys if k not in run.info]


def coverage_unchecked(run: DatasetRun, suite: Suite, warned: list) -> None:
    """One warning for a results data set whose coverage of the split nothing checks: no split given
    and agents whose files state no episode count (no summary ``length``, no means file's count),
    so a run over part of the split (a rank or chunk lost, ETPNav's ``fast_eval``) would read as a
    whole."""
    from .._messages import listed

    if not run.spec.kind.reads_scores or getattr(run.bench, "split", None) is not None:
        return
    unknown = [
        agent
        for agent, table in run.matched.items()
        if getattr(table, "expected", None) is None
        and getattr(suite.reported_from.get(agent, {}).get(run.spec.name), "length", None) is None
        and not _log_coverage(agent, run, table, warned)
    ]
    if unknown:
        warned.append(
            warning_record(
                None,
                run.spec.name,
                None,
                f"coverage of the split not checked for {listed(unknown, 5)}: no split is given and their files "
                "state no episode count, so results over part of the split would read as the whole; give the split "
                "(--split FILE --dataset-kind KIND; split and dataset_kind in a suite file)",
            )
        )


def _log_coverage(agent: str, run: DatasetRun, table: Any, warned: list) -> bool:
    """Whether a run's navdtw episode logs say how many episodes their order has (their metadata):
    a run over fewer is said to be partial (a warning: the means are of those episodes only)."""
    from ..datasets.results.episode_log import log_meta

    try:
        metas = [m for m in map(log_meta, getattr(table, "sources", ())) if m is not None and m.order_units]
    except ValueError:  # pragma: no cover - the reader refused such metadata already
        return False
    if not metas:
        return False
    meta = metas[0]
    from .._messages import named

    n, total = len(table), meta.order_episodes or meta.order_units
    if n < total:  # a unit has one episode or more: fewer rows than units is partial too
        of = (
            f"{n:,} of the order's {total:,} episodes"
            if meta.order_episodes
            else (f"{n:,} episodes, fewer than the order's {total:,} units")
        )
        warned.append(
            warning_record(
                agent,
                run.spec.name,
                None,
                f"PARTIAL RUN: {of} ({named(meta.order)}, as its navdtw "
                "episode log's metadata says): the means are of those episodes only, not the agent's figure on "
                "the split",
            )
        )
    return True


def summary_record(k: int, table) -> dict[str, Any]:
    """One entry of ``results.json``'s ``evaluator_summaries``: the evaluator's summary record in run
    ``k``'s file (StreamVLN's last line) checked against the run's rows, per metric: its figure
    (``nonfinite`` says ``"NaN"`` or ``"Infinity"`` where it is not a number), the same mean
    recomputed from the rows with the evaluator's NaN / inf policy, navdtw's mean, and whether the
    figure is the recomputed one (``agrees``: else the summary averaged other episodes)."""

    def number(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    def word(x: float) -> str | None:
        return None if np.isfinite(x) else "NaN" if np.isnan(x) else "Infinity" if x > 0 else "-Infinity"

    checks = {
        c["metric"]: {
            "key": c["key"],
            "evaluator": number(c["evaluator"]),
            "nonfinite": word(c["evaluator"]),
            "recomputed": number(c["recomputed"]),
            "navdtw": number(c["navdtw"]),
            "policy": c["policy"],
            "agrees": bool(c["agrees"]),
        }
        for c in table.checks
    }
    return {
        "run": k,
        "source": table.source,
        **table.summary,
        "episodes": len(table),
        "agrees": all(c["agrees"] for c in checks.values()),
        "checks": checks,
    }


def _mean_over_runs(x: np.ndarray) -> np.ndarray:
    """Per-episode mean over the runs ([episodes, runs]); +inf (left out) where any run is not finite."""
    finite = np.isfinite(x).all(axis=1)
    return np.where(finite, np.where(finite[:, None], x, 0.0).mean(axis=1), np.inf)


def _score_file(run: DatasetRun, suite: Suite, agent: str, file: Path, failures: list, warned: list):
    """One predictions file matched and scored under the non-finite policy: ``(file, matched, ids,
    values, scans)``, or None (a failure recorded) when it cannot be read or matched."""
    from ..registry import nonfinite_policy
    from .marks import metric_info

    spec = run.spec
    broken: dict[str, str] = {}  # metric -> why its values fail the non-finite policy: that column only
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            # a results table's reader applies the policy itself: it leaves a failing column out
            column_errors = {"errors": broken} if spec.kind.reads_scores else {}
            matched = run.bench.match(file, convention=spec.convention, **column_errors)
            means = suite.reported_from.get(agent, {}).get(spec.name)
            if means is not None and means.length is not None and spec.kind.reads_scores:
                # InternNav's result.json counts the episodes it averaged: fewer rows is partial
                run.bench.check_coverage(matched, means.length, f"its means file {means.source} says were evaluated")
            scores = run.bench.evaluate(
                matched, convention=spec.convention, threshold=spec.threshold, workers=suite.settings["workers"]
            )
    except (ValueError, KeyError, OSError) as exc:
        failures.append(failure_record(agent, spec.name, file, exc))
        return None
    if spec.kind.reads_scores:
        run.tables.append((agent, file))
        for col in getattr(matched, "unmapped", ()):
            run.lacking.setdefault(col, []).append((agent, file, matched))
    notes = [*matched.notes, *(str(w.message) for w in caught if issubclass(w.category, UserWarning))]
    if suite.path is not None:
        notes = [_in_suite_words(n, spec.kind) for n in notes]
    start = matched.start_note(file.name)
    notes += [start] if start else []
    warned.extend(warning_record(agent, spec.name, file, n) for n in dict.fromkeys(notes))
    ids = [str(i) for i in matched.ids]
    values = nonfinite_policy({k: scores[k] for k in scores}, ids=ids, source=file.name, errors=broken)
    _unweighted_ratios(values, agent, file, broken)
    for k, message in broken.items():
        failures.append(failure_record(agent, spec.name, file, ValueError(message), metric=k))
    for k in [*scores, *broken]:  # the failed ones too: their column shows the failure
        if k not in run.info:
            run.info[k] = metric_info(k) if k in _registry_names() or k not in scores else record_info(scores.metric(k))
    return file, matched, ids, values, list(matched.scans)


def _unweighted_ratios(values: dict[str, np.ndarray], agent: str, file: Path, broken: dict[str, str]) -> None:
    """A pooled ratio (a registry record with a ``weight``: LH-VLN's ISR over ``subtasks``) whose
    weight column this agent's file lacks fails for that agent (its column shows the failure, as a
    column that breaks the non-finite policy): the rows' plain mean would be another figure under
    the same name, compared with the other agents' ratios."""
    from .. import registry

    names = registry.names()
    for k in list(values):
        weight = registry.get(k).weight if k in names else None
        if weight is not None and weight not in values:
            del values[k]
            broken[k] = (
                f"{agent}'s {file.name} has {k!r}, a pooled ratio weighted by {weight!r}, but no {weight!r} column: "
                f"the evaluator's ratio cannot be computed, and the rows' plain mean of {k!r} is another figure; "
                f"add the {weight!r} column" + (f" ({registry.get(weight).description})" if weight in names else "")
            )


def _unmapped(run: DatasetRun, suite: Suite, ids_of: dict, scans_of: dict, failures: list, warned: list) -> None:
    """The ``columns`` mappings applied where a table has the column: the tables that lack one are
    said once per column (a warning); a column that no table read has fails the data set, once,
    naming the first table's columns (its agents are not scored)."""
    from .._messages import listed, named

    spec = run.spec
    if not run.lacking:
        return
    option = "columns" if suite.path is not None else "--column"  # a suite file's key, or the option
    none = [c for c, where in run.lacking.items() if len(where) == len(run.tables)]
    if none:
        agent, file, table = run.lacking[none[0]][0]
        have = [*table.columns, *table.ignored]
        more = f" (nor {listed(none[1:])})" if len(none) > 1 else ""
        message = (
            f"{option}: no table has the column {named(none[0])}{more}; {agent}'s {file.name} has {listed(have, 12)}"
        )
        failures.append(failure_record(None, spec.name, None, ValueError(message)))
        for agent in list(run.values):  # nothing is compared on a mapping that applies nowhere
            for d in (run.values, run.matched, run.files, run.runs, ids_of, scans_of):
                d.pop(agent, None)
        return
    for col, where in run.lacking.items():
        names = [f"{agent} ({file.name})" for agent, file, _ in where]
        warned.append(
            warning_record(
                None,
                spec.name,
                None,
                f"{option}: the column {named(col)} is mapped in the tables that have it; {len(where)} of the "
                f"{len(run.tables)} tables lack it: {listed(names, 5)}",
            )
        )


def _in_suite_words(note: str, kind) -> str:
    """A reader's note as a suite file's user reads it: the readers name their choices as the
    command line does (``--distance geodesic``); a suite file sets them as keys of the data set's
    table (``distance = "geodesic"``)."""
    for opt in kind.options:
        if opt.kind == "choice":
            words = "|".join(re.escape(c) for c in opt.choices)
            note = re.sub(rf"{re.escape(opt.flag)} ({words})\b", rf'{opt.name} = "\1"', note)
    return note


def record_info(rec) -> dict[str, Any]:
    """The ``results.json`` metric info of a :class:`navdtw.registry.Metric` record (a results
    table's own column: its label, and the direction given with ``--column NAME=+``)."""
    out = {
        "label": rec.label,
        "unit": rec.unit,
        "rate": bool(rec.rate),
        "higher_is_better": rec.higher_is_better,
        "staying_wins": bool(rec.staying_wins),
    }
    if rec.weight is not None:
        out["weight"] = rec.weight
    return out


def _registry_names() -> tuple[str, ...]:
    from .. import registry

    return registry.names()


def _align(run: DatasetRun, suite: Suite, ids_of: dict, scans_of: dict, failures: list, warned: list) -> None:
    """Every agent's values on the same episodes. An agent that misses episodes the others have
    fails, naming the count and the first ids, unless ``settings.episodes = "shared"``: then all are
    compared on the episodes every agent has, with a warning per agent that lost some."""
    from .._messages import few

    spec = run.spec
    first = next(iter(ids_of.values()))
    if all(ids == first for ids in ids_of.values()):
        run.ids, run.scans = first, scans_of[next(iter(ids_of))]
        return
    union: dict[str, str] = {}
    for agent, ids in ids_of.items():
        union.update((i, s) for i, s in zip(ids, scans_of[agent]) if i not in union)
    shared = suite.settings["episodes"] == "shared"
    have = {agent: set(ids) for agent, ids in ids_of.items()}
    if not shared:
        for agent in list(ids_of):
            missing = [i for i in union if i not in have[agent]]
            if missing:
                file = run.files[agent][0]
                failures.append(
                    failure_record(
                        agent,
                        spec.name,
                        file,
                        ValueError(
                            f"{file.name}: covers {len(have[agent])} of the {len(union)} episodes the agents of "
                            f"{spec.name} have; missing {few(missing)}. Agents are compared on the same "
                            'episodes: add the missing ones, or set episodes = "shared" in [settings] '
                            "(--shared-episodes) to compare every agent on the episodes all of them have"
                        ),
                    )
                )
                del ids_of[agent], run.values[agent], run.matched[agent]
                run.runs.pop(agent, None)
        if not ids_of:
            return
    keep = set.intersection(*(set(ids) for ids in ids_of.values()))
    run.ids = [i for i in union if i in keep]
    run.scans = [union[i] for i in run.ids]
    for agent, ids in ids_of.items():
        if shared and len(ids) > len(run.ids):
            left = [i for i in ids if i not in keep]
            file = run.files[agent][0]
            warned.append(
                warning_record(
                    agent,
                    spec.name,
                    file,
                    f"{file.name}: {len(left)} of its {len(ids)} episodes are not compared ({few(left)}): "
                    f'episodes = "shared" compares the {len(run.ids)} episodes every agent has',
                )
            )
        pos = {i: k for k, i in enumerate(ids)}
        take = np.array([pos[i] for i in run.ids], dtype=np.intp)
        run.values[agent] = {k: v[take] for k, v in run.values[agent].items()}
        if agent in run.runs:
            run.runs[agent] = {k: v[take] for k, v in run.runs[agent].items()}
