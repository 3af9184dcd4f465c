"""Internal to :mod:`navdtw.datasets.results`: a table as read (:class:`~._readers.Raw`) turned into
the fields of a :class:`~navdtw.datasets.results.ResultsTable`, one named step each (:func:`build`
runs them in order): the rows selected, the ids (one row each), the columns that label rows, the
layout's conventions, which column is which metric, the values checked, the constants, the
non-finite policy, and the evaluator's summary cross-checked."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ... import registry
from ..._messages import clipped, few, listed, named, quoted
from .._common import ID_COLUMNS
from . import layouts
from ._cells import NUMBER_TYPES, all_missing, classify, ids_of, text_of
from ._columns import (
    ALIASES,
    DIRECTIONS,
    EXTRA_COLUMNS,
    GROUP_COLUMNS,
    IGNORE,
    PATH_COLUMNS,
    SCAN_COLUMNS,
    first_column,
    norm,
)
from ._readers import Raw, Reread


def build(
    raw: Raw,
    mapping: Mapping[str, str],
    percent: bool | tuple[str, ...],
    id_column: str | None,
    path_column: str | None,
    select: Mapping[str, str],
    errors: dict[str, str] | None = None,
    constants: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Internal: the fields of a :class:`~navdtw.datasets.results.ResultsTable` (its keyword
    arguments) from a table as read, step by step: the rows selected, the ids, the columns that
    label rows (paths, scans, groups), the layout's conventions and settings, which column is which
    metric, their values checked (rates, distances, numbers beyond float's range), the constants
    left out, the non-finite policy, and the evaluator's summary checked against the rows. The
    options are parsed already (:func:`~navdtw.datasets.results.parse_columns`, ...). ``constants``:
    the constant columns of the rows read before these (:func:`extend`), which must hold in these
    rows too (else :class:`~._readers.Reread`)."""
    notes: list[str] = []
    raw = _selected(raw, select, notes)
    id_name, ids = _ids(raw, id_column)
    _check_unique(ids, raw, id_name)

    def entry(k: int) -> str:
        return f"{raw.entry(k)} ({named(id_name)} {named(ids[k])})"

    labels = _labels(raw, id_name, select, path_column)
    mapping, settings = _layout_columns(raw, mapping, labels.reserved, entry, notes)
    targets = _targets(_candidates(raw.columns, labels.reserved, mapping, notes), mapping, raw.name, notes)
    read = _values(raw, targets, percent, entry, notes)
    lay = raw.layout
    known, constants = constants, {}
    if lay is not None and known is not None:
        constants = _still_constant(read.values, read.kept, read.directions, read.rates, known, notes)
    elif lay is not None:
        constants = _constants(read.values, read.kept, read.directions, read.rates, mapping, raw.n, notes)
    as_read = {k: v.copy() for k, v in read.values.items()}
    kept = _policy(read.values, read.kept, raw, entry, ids, errors)
    _unweighted(read.values, notes)
    checks, expected, summary = _cross_check(raw, as_read, read.values, notes)
    return {
        "source": raw.name,
        "ids": ids,
        "values": read.values,
        "columns": kept,
        "ignored": tuple(read.ignored),
        "directions": read.directions,
        "rates": frozenset(read.rates),
        "scans": labels.scans,
        "paths": labels.paths,
        "id_name": id_name,
        "groups": labels.groups,
        "notes": tuple(notes),
        "layout": None if lay is None else lay.name,
        "sources": raw.sources,
        "settings": settings,
        "constants": constants,
        "checks": tuple(checks),
        "expected": expected,
        "summary": summary,
    }


def _selected(raw: Raw, select: Mapping[str, str], notes: list[str]) -> Raw:
    """The rows ``select`` keeps (the columns empty on them left out, in the notes); a table with
    rows."""
    if select:
        chosen = _select_rows(raw, select)
        empty = [c for c in raw.columns if c not in chosen.columns]
        if empty:
            notes.append(f"column(s) {', '.join(map(repr, empty))}: empty on the rows selected: left out")
        raw = chosen
    if raw.n == 0:
        raise ValueError(f"{raw.name}: no rows")
    return raw


def _select_rows(raw: Raw, select: Mapping[str, str]) -> Raw:
    """The rows whose ``select`` columns hold the values given (compared as text)."""
    keep = np.ones(raw.n, dtype=bool)
    for col, want in select.items():
        if col not in raw.columns:
            raise ValueError(f"{raw.name}: select: no column {col!r} (columns: {listed(raw.columns)})")
        text = np.array(text_of(raw.columns[col], raw.n), dtype=object)
        hit = text == want
        if not hit.any():
            values = listed(sorted(set(text.tolist())), 8)
            raise ValueError(f"{raw.name}: no row has {named(col)} = {want!r} ({named(col)} values: {values})")
        keep &= hit
    if not keep.any():
        raise ValueError(f"{raw.name}: no row matches every selection ({select})")
    idx = np.flatnonzero(keep)
    rows = idx.tolist()
    cols = {k: (v[idx] if isinstance(v, np.ndarray) else [v[i] for i in rows]) for k, v in raw.columns.items()}
    # a column that none of the chosen rows fills belongs to the other rows (a suite's episodes
    # file holds the metrics of every data set, each missing on the others' rows): not this table's
    cols = {k: v for k, v in cols.items() if k in select or not all_missing(v)}
    keys = None if raw.keys is None else [raw.keys[i] for i in rows]
    entry = raw.entry
    return replace(raw, columns=cols, n=len(rows), entry=lambda k: entry(rows[k]), keys=keys)


def _ids(raw: Raw, id_column: str | None) -> tuple[str, list[str]]:
    """The id column's name and the ids: the column given, a keyed JSON object's keys, or the first
    of :data:`ID_COLUMNS`."""
    name, cols = raw.name, raw.columns
    if id_column is not None:
        if id_column not in cols:
            raise ValueError(f"{name}: no id column {id_column!r} (columns: {listed(cols)})")
        return id_column, ids_of(cols[id_column], raw, id_column)
    if raw.keys is not None:
        return "episode_id", raw.keys
    found = first_column(cols, ID_COLUMNS)
    if found is None:
        what = " (one object: means over episodes are not per-episode results)" if raw.n == 1 else ""
        raise ValueError(
            f"{name}: no id column{what}; name it with --id-column (id_column in a suite file); "
            f"looked for {', '.join(ID_COLUMNS)}; columns: {listed(cols, 12)}"
        )
    return found, ids_of(cols[found], raw, found)


@dataclass
class _Labels:
    """The columns that label rows rather than hold metrics, and their labels."""

    reserved: set[str]  # columns that are not metrics (ids, paths, scans, groups, selections, settings)
    paths: list[str] | None
    scans: list[str]
    groups: dict[str, list[str]]


def _labels(raw: Raw, id_name: str, select: Mapping[str, str], path_column: str | None) -> _Labels:
    """The id, path, scan, group and selection columns, and the labels they give each row."""
    cols = raw.columns
    reserved = {c for c in cols if norm(c) in ID_COLUMNS} | {id_name} | set(select)
    if path_column is not None and path_column not in cols:
        raise ValueError(f"{raw.name}: no path column {path_column!r} (columns: {listed(cols)})")
    path_col = path_column or first_column(cols, PATH_COLUMNS)
    scan_col = first_column(cols, SCAN_COLUMNS)
    group_cols = [c for c in cols if norm(c) in GROUP_COLUMNS]
    for c in (path_col, scan_col, *group_cols):
        if c is not None:
            reserved.add(c)
    paths = None if path_col is None else ids_of(cols[path_col], raw, path_col)
    scans = [""] * raw.n if scan_col is None else _scans(text_of(cols[scan_col], raw.n))
    groups = {norm(c): text_of(cols[c], raw.n) for c in group_cols}
    return _Labels(reserved, paths, scans, groups)


def _layout_columns(
    raw: Raw, mapping: Mapping[str, str], reserved: set[str], entry: Callable[[int], str], notes: list[str]
) -> tuple[dict[str, str], dict[str, float]]:
    """The column mappings with the layout's conventions under the user's, and the settings the
    layout's columns give (their columns added to ``reserved``); the layout read in the notes."""
    cols = raw.columns
    unknown_maps = [c for c in mapping if c not in cols]
    if unknown_maps:
        raise ValueError(f"{raw.name}: columns: no column {unknown_maps[0]!r} in this table (columns: {listed(cols)})")
    lay, given = raw.layout, mapping
    settings: dict[str, float] = {}
    if lay is None:
        if raw.how:
            notes.append(raw.how)
        return dict(mapping), settings
    notes.append(f"read as {lay.project}'s {lay.pattern} (layout {lay.name})" + (f": {raw.how}" if raw.how else ""))
    if lay.summary_last and not raw.summaries:
        notes.append(
            f"no summary record: {lay.project} appends one after the episodes when every rank has finished, so "
            "this is an unfinished evaluation's file and may cover part of the split (give the split to check)"
        )
    mapping = {**{c: t for c, t in lay.columns.items() if c in cols}, **mapping}
    for col, setting in lay.settings.items():
        if col in cols and col not in given:
            settings[setting] = _setting(cols[col], col, setting, raw, entry)
            reserved.add(col)
            notes.append(f"{setting} {settings[setting]:g} from the file's {named(col)} ({lay.project}), recorded")
    return mapping, settings


def _candidates(cols: Mapping[str, Any], reserved: set[str], mapping: Mapping[str, str], notes: list[str]) -> list[str]:
    """The columns that may hold metrics: named, and not reserved unless mapped."""
    unnamed = [c for c in cols if not c.strip()]
    if unnamed:
        notes.append("a column without a name (a written index?) is ignored")
    return [c for c in cols if c.strip() and (c not in reserved or c in mapping)]


@dataclass
class _Values:
    """The columns compared, as read and checked."""

    values: dict[str, np.ndarray] = field(default_factory=dict)  # kept name -> values
    kept: dict[str, str] = field(default_factory=dict)  # the file's column -> its kept name
    directions: dict[str, bool | None] = field(default_factory=dict)
    rates: set[str] = field(default_factory=set)
    ignored: list[str] = field(default_factory=list)  # the file's columns not compared


def _values(
    raw: Raw,
    targets: Mapping[str, tuple[str, bool | None, bool, bool]],
    percent: bool | tuple[str, ...],
    entry: Callable[[int], str],
    notes: list[str],
) -> _Values:
    """Each target column's values: numbers (a strict column's text is an error, another's leaves
    it out), rates as fractions, distances not negative; the ``percent`` names checked."""
    name, cols = raw.name, raw.columns
    out = _Values(ignored=[c for c in cols if c not in targets])
    percent_names = set(percent) if isinstance(percent, tuple) else set()
    for col, (target, direction, rate, strict) in targets.items():
        parsed = classify(cols[col], raw.text_parsed, stop_at_text=not strict)
        if parsed.overflow:
            bad = parsed.bad or 0
            raise ValueError(
                f"{name}: {entry(bad)}: {col!r} is {clipped(str(cols[col][bad]))}, beyond float's range: a corrupt "
                "value (only the evaluators' Infinity token, inf in CSV, means an unreachable goal)"
            )
        if parsed.values is None:
            if strict:
                bad = parsed.bad or 0
                value = cols[col][bad]
                raise ValueError(f"{name}: {entry(bad)}: {col!r} must be a number, got {clipped(value)}")
            out.ignored.append(col)
            if not parsed.text:
                notes.append(
                    f"column {col!r} mixes numbers and text ({entry(parsed.bad or 0)}: "
                    f"{clipped(cols[col][parsed.bad or 0])}): ignored (map it with --column {quoted(col + '=METRIC')})"
                )
            continue
        v = parsed.values
        if not strict and np.isnan(v).all():
            out.ignored.append(col)
            notes.append(f"column {col!r} holds no numbers: ignored")
            continue
        if rate:
            in_percent = percent is True or col in percent_names or target in percent_names
            v = _fraction(v, col, in_percent, name, entry, percent is not False)
        elif target in registry.names() and registry.get(target).unit == "m" and target != "gp":
            low = np.flatnonzero(v < 0)
            if low.size:
                k = int(low[0])
                raise ValueError(f"{name}: {entry(k)}: {col!r} is a distance and must be >= 0, got {float(v[k])!r}")
        out.values[target], out.kept[col] = v, target
        out.directions[target] = direction
        if rate:
            out.rates.add(target)
    if isinstance(percent, tuple):
        known = set(out.kept) | set(out.kept.values())
        unknown = [p for p in percent if p not in known]
        if unknown:
            raise ValueError(
                f"{name}: percent: no rate column {unknown[0]!r} (rate columns: {listed(sorted(out.rates))})"
            )
    return out


def _policy(
    values: dict[str, np.ndarray],
    kept: dict[str, str],
    raw: Raw,
    entry: Callable[[int], str],
    ids: list[str],
    errors: dict[str, str] | None,
) -> dict[str, str]:
    """The non-finite policy applied to ``values`` (:func:`_formula_nans`); with ``errors``, a
    column that breaks it is left out and its message stored there. Returns the columns kept; a
    table left without a metric is an error."""
    failed: dict[str, str] = {}
    _formula_nans(values, kept, raw.name, entry, ids, None if errors is None else failed)
    if failed:  # left out: the caller records each column's failure
        kept = {c: k for c, k in kept.items() if k not in failed}
        if not values:
            raise ValueError(next(iter(failed.values())))
        errors.update(failed)  # type: ignore[union-attr]
    if not values:
        raise ValueError(
            f"{raw.name}: no metric column (columns: {listed(raw.columns)}); map one with --column NAME=METRIC"
        )
    return kept


def _setting(raw_values, col: str, setting: str, raw: Raw, entry: Callable[[int], str]) -> float:
    """A per-row setting (AerialVLN's SUCCESS_DISTANCE): one positive number in every row."""
    parsed = classify(raw_values, raw.text_parsed, stop_at_text=False)
    v = parsed.values
    if v is None or not np.isfinite(v).all() or (v <= 0).any():
        k = parsed.bad if v is None else int(np.flatnonzero(~np.isfinite(v) | (v <= 0))[0])
        raise ValueError(f"{raw.name}: {entry(k or 0)}: {col!r} is the {setting} and must be a positive number")
    if (v != v[0]).any():
        k = int(np.flatnonzero(v != v[0])[0])
        raise ValueError(
            f"{raw.name}: {entry(k)}: {col!r} is the {setting} and differs between rows ({v[0]:g} and {v[k]:g}): "
            "one table has one"
        )
    return float(v[0])


def _constants(
    values: dict[str, np.ndarray],
    kept: dict[str, str],
    directions: dict,
    rates: set,
    given: Mapping[str, str],
    n: int,
    notes: list[str],
) -> dict[str, float]:
    """Columns of a project's layout, outside the registry and not mapped (by the user or the
    layout), that hold one value in every row (a setting or a flag the evaluator writes per row: AerialVLN's ``done``):
    reported once, not compared as metrics."""
    out: dict[str, float] = {}
    if n < 2:
        return out
    for col, k in list(kept.items()):
        if k in registry.names() or k in EXTRA_COLUMNS or col in given:
            continue
        v = values[k]
        if np.isfinite(v).all() and (v == v[0]).all():
            out[col] = float(v[0])
            del values[k], kept[col], directions[k]
            rates.discard(k)
    if out:
        text = ", ".join(f"{c} = {x:g}" for c, x in out.items())
        notes.append(f"the same in every row, reported once and not compared: {text}")
    return out


def _still_constant(
    values: dict[str, np.ndarray],
    kept: dict[str, str],
    directions: dict,
    rates: set,
    known: Mapping[str, float],
    notes: list[str],
) -> dict[str, float]:
    """The constant columns of the rows read before (:func:`_constants` over them), left out of
    rows read later as :func:`_constants` leaves them out of the whole table; a known constant
    that another value breaks (the whole table would compare it) is a :class:`~._readers.Reread`."""
    for col, x in known.items():
        k = kept.get(col)
        if k is None or not (np.isfinite(values[k]).all() and (values[k] == x).all()):
            raise Reread(f"{col!r}: no longer the same in every row")
        del values[k], kept[col], directions[k]
        rates.discard(k)
    if known:
        text = ", ".join(f"{c} = {x:g}" for c, x in known.items())
        notes.append(f"the same in every row, reported once and not compared: {text}")
    return dict(known)


#: the fields of a table that rows read later must give alike (:func:`extend`)
_ALIKE = ("id_name", "ignored", "layout", "settings", "constants", "rates", "checks", "expected", "summary")


def extend(
    fields: Mapping[str, Any],
    raw: Raw,
    how: str,
    mapping: Mapping[str, str],
    percent: bool | tuple[str, ...],
    id_column: str | None,
    path_column: str | None,
    seen: set[str],
) -> dict[str, Any]:
    """Internal: the fields of the rows read after a table's (``raw``, with the whole run's name,
    layout and ``how``), built by the same steps, when the table they make together is the two
    joined: every decision of :func:`build` that depends on all the rows (the columns kept and
    ignored, rates, directions, settings, constants, notes, an evaluator's summary, ids once) comes
    out the same on these rows as on the earlier ones, and no id of theirs is in ``seen``. ``how``
    is the earlier table's (its notes name the files read). Anything else is a
    :class:`~._readers.Reread`: the run is read whole, which gives the table, or the error."""
    if fields["summary"] is not None or len(fields["ids"]) < 2:
        raise Reread("a summary record, or too few rows to know the constant columns")
    try:
        part = build(raw, mapping, percent, id_column, path_column, {}, None, constants=fields["constants"])
    except ValueError as exc:  # a whole read names the entry as the table's
        raise Reread(str(exc)) from None
    for key in _ALIKE:
        if part[key] != fields[key]:
            raise Reread(f"{key}: not as before")
    for key in ("columns", "directions"):  # the same, in the same order
        if list(part[key].items()) != list(fields[key].items()):
            raise Reread(f"{key}: not as before")
    for key in ("values", "groups"):
        if list(part[key]) != list(fields[key]):
            raise Reread(f"{key}: not as before")
    if (part["paths"] is None) != (fields["paths"] is None):
        raise Reread("paths: not as before")
    notes = tuple(n.replace(how, raw.how) for n in fields["notes"]) if how else fields["notes"]
    if part["notes"] != notes:
        raise Reread("notes: not as before")
    if not seen.isdisjoint(part["ids"]):
        raise Reread("an id read before")
    return part


def _unweighted(values: Mapping[str, np.ndarray], notes: list[str]) -> None:
    """The note on a pooled ratio whose weight column the table lacks (a table's ``isr`` without
    ``subtasks``): its mean can only be the rows' plain mean, not the evaluator's ratio."""
    for m in values:
        rec = registry.get(m) if m in registry.names() else None
        if rec is not None and rec.weight is not None and rec.weight not in values:
            notes.append(
                f"{m!r} is a pooled ratio weighted by {rec.weight!r}, which the table lacks: its mean is the plain "
                "mean of the rows, not the evaluator's ratio"
            )


def _cross_check(
    raw: Raw, as_read: Mapping[str, np.ndarray], values: Mapping[str, np.ndarray], notes: list[str]
) -> tuple[list[dict[str, Any]], int | None, dict[str, Any] | None]:
    """The evaluator's summary record (the last one) against navdtw's means, per metric: the
    evaluator's figure, the same mean recomputed from the file's episodes with the evaluator's NaN
    and infinity handling, and navdtw's mean (its non-finite policy). Returns the checks, the
    summary's episode count and where the summary is (``ResultsTable.summary``)."""
    if not raw.summaries:
        return [], None, None
    where, record = raw.summaries[-1]
    lay = layouts.summary_layout(record)
    length = record.get("length")
    expected = int(length) if type(length) is int and length >= 0 else None
    words: list[str] = []
    checks: list[dict[str, Any]] = []
    for key, metric in lay.summary.keys.items() if lay is not None and lay.summary is not None else ():
        if key not in record or metric not in values or type(record[key]) not in NUMBER_TYPES - {type(None)}:
            continue
        assert lay is not None and lay.summary is not None
        policy = lay.summary.policy_of(metric)
        theirs = float(record[key])
        again = layouts.evaluator_mean(as_read[metric], policy)
        ours = values[metric][np.isfinite(values[metric])]
        mine = float(ours.mean()) if ours.size else math.nan
        agrees = (
            (math.isnan(theirs) and math.isnan(again))
            or theirs == again
            or (math.isfinite(theirs) and math.isfinite(again) and abs(theirs - again) <= 1e-6 + 1e-4 * abs(again))
        )
        checks.append(
            {"metric": metric, "key": key, "evaluator": theirs, "recomputed": again, "navdtw": mine,
             "policy": policy, "agrees": bool(agrees)}
        )  # fmt: skip
        odd = int((~np.isfinite(as_read[metric])).sum())
        if not agrees:
            words.append(
                f"{key} {theirs:.6g} DIFFERS from {again:.6g}, its mean over this file's {len(values[metric])} "
                f"episodes (the evaluator {layouts.policy_words(policy)}): the summary averaged other episodes"
            )
        elif math.isfinite(theirs) and abs(theirs - mine) <= 1e-6 + 1e-4 * abs(mine):
            words.append(f"{key} {theirs:.4f} = navdtw's {metric} {mine:.4f}")
        else:
            what = "NaN" if math.isnan(theirs) else f"{theirs:.4f}" if math.isfinite(theirs) else "Infinity"
            words.append(
                f"{key} {what} (the evaluator {layouts.policy_words(policy)}; {odd} episode(s) NaN or infinite in "
                f"the file); navdtw's {metric} {mine:.4f} (its non-finite policy)"
            )
    head = f"the evaluator's summary ({where}"
    head += f", {lay.project}" if lay is not None else ""
    rows = len(next(iter(values.values())))
    head += f", {expected} episodes" if expected is not None else ""
    # a summary over more episodes than the file holds: said here too, where no split checks it
    head += f"; the file has {rows}: PARTIAL)" if expected is not None and rows < expected else ")"
    notes.append(head + (": " + "; ".join(words) if words else ": left out of the episodes"))
    summary = {
        "where": where,
        "layout": None if lay is None else lay.name,
        "project": None if lay is None else lay.project,
        "length": expected,
    }
    return checks, expected, summary


def _scans(texts: list[str]) -> list[str]:
    """``mp3d/X/X.glb`` -> ``X``; a plain scan id as it is (each distinct text converted once)."""
    stem = {t: Path(t).stem if "/" in t or t.endswith(".glb") else t for t in set(texts)}
    return [stem[t] for t in texts]


def _check_unique(ids: list[str], raw: Raw, id_name: str) -> None:
    counts = Counter(ids)
    if len(counts) == len(ids):
        return
    dups = [i for i, c in counts.items() if c > 1]
    first = ids.index(dups[0])
    second = ids.index(dups[0], first + 1)
    hint = ""
    multi = [c for c in ("agent", "dataset") if c in raw.columns and len(set(text_of(raw.columns[c], raw.n))) > 1]
    if multi:
        several = " and ".join(m + "s" for m in multi)
        hint = f"; the table holds several {several}: choose rows with " + " ".join(f"--select {m}=NAME" for m in multi)
    raise ValueError(
        f"{raw.name}: duplicate {named(id_name)} {few(dups)}: {named(dups[0])} is at {raw.entry(first)} and "
        f"{raw.entry(second)}; each episode needs one row{hint}"
    )


def _targets(
    candidates: list[str], mapping: Mapping[str, str], name: str, notes: list[str]
) -> dict[str, tuple[str, bool | None, bool, bool]]:
    """column -> (kept name, direction, is a rate, strict: a non-number is an error) for the columns
    to compare. Priority for one metric: an explicit mapping, then a column named as the metric,
    then an alias; two at the same level are an error, lower ones keep their own names."""
    metric_names = set(registry.names())
    claims: dict[str, list[tuple[int, str]]] = {}
    out: dict[str, tuple[str, bool | None, bool, bool]] = {}
    for col in candidates:
        explicit = mapping.get(col)
        n = norm(col)
        if explicit == IGNORE:
            continue
        if explicit in DIRECTIONS:
            out[col] = (col, DIRECTIONS[explicit], False, True)
            continue
        if explicit is not None:
            claims.setdefault(explicit, []).append((0, col))
        elif n in metric_names or n in EXTRA_COLUMNS:
            claims.setdefault(n, []).append((1, col))
        elif n in ALIASES:
            claims.setdefault(ALIASES[n], []).append((2, col))
        else:
            out[col] = (col, None, False, False)  # unknown: kept if numeric, no direction
    for target, cs in claims.items():
        cs.sort(key=lambda c: c[0])  # by level, file order within a level
        top = [c for level, c in cs if level == cs[0][0]]
        if len(top) > 1:
            raise ValueError(
                f"{name}: columns {top[0]!r} and {top[1]!r} both give {target}; leave one out with "
                f"--column {quoted(top[1] + '=ignore')} (or map it to another metric)"
            )
        direction, rate = _direction_rate(target)
        out[top[0]] = (target, direction, rate, True)
        for _, col in cs[1:]:
            if col in claims or norm(col) in claims:  # its own name is a metric another column gives
                notes.append(f"column {col!r} is ignored: {top[0]!r} gives {target}")
                continue
            notes.append(f"column {col!r} is kept under its own name: {top[0]!r} gives {target}")
            out[col] = (col, direction, rate, True)
    order = {c: k for k, c in enumerate(candidates)}
    return dict(sorted(out.items(), key=lambda kv: order[kv[0]]))


def _direction_rate(target: str) -> tuple[bool | None, bool]:
    if target in EXTRA_COLUMNS:
        return EXTRA_COLUMNS[target]
    m = registry.get(target)
    return m.higher_is_better, bool(m.rate)


def _fraction(
    v: np.ndarray, col: str, in_percent: bool, name: str, entry: Callable[[int], str], percent_given: bool
) -> np.ndarray:
    """A rate column as fractions in [0, 1] (NaN kept for the formula rule), or a ValueError."""
    finite = v[np.isfinite(v)]
    if in_percent:
        top = float(finite.max()) if finite.size else 0.0
        if 0.0 < top <= 1.0:
            raise ValueError(
                f"{name}: percent: {col!r} holds fractions already (largest value {top:g}); give percent "
                "only for the columns in percent (--percent-columns NAME,...)"
            )
        v = v / 100.0
    bad = np.flatnonzero(np.isinf(v) | (v < 0) | (v > 1))
    if bad.size:
        k = int(bad[0])
        x = float(v[k]) * (100.0 if in_percent else 1.0)
        if not in_percent and 1.0 < x <= 100.0:
            more = "" if percent_given else f" --percent (or --percent-columns {named(col)})"
            raise ValueError(
                f"{name}: {entry(k)}: {col!r} is a rate and must be a fraction in [0, 1], got {x:g}: "
                f"a percentage? Say so with{more or ' the percent option for this column'}"
            )
        scale = "percentage in [0, 100]" if in_percent else "fraction in [0, 1]"
        raise ValueError(f"{name}: {entry(k)}: {col!r} is a rate and must be a {scale}, got {x!r}")
    return v


def _formula_nans(
    values: dict[str, np.ndarray],
    kept: Mapping[str, str],
    name: str,
    entry: Callable[[int], str],
    ids: list[str],
    errors: dict[str, str] | None = None,
) -> None:
    """The non-finite policy (:func:`navdtw.registry.nonfinite_policy`, the one rule): a NaN (or a
    missing value) is 0 where the metric's formula says so (SPL, SDTW, SED where success is 0;
    RGSPL where RGS is 0), any other is an error naming the file, the entry and the column.

    One detail of results tables: SPL's formula is 0 where *plain* success is 0. A table may hold a
    column ``SR`` (the metric ``sr``: HA-VLN's success without a collision, stricter) and a column
    ``success`` (plain success, then kept under its own name): the rule reads ``success`` there."""
    col_of = {k: c for c, k in kept.items()}
    plain = next((values[k] for c, k in kept.items() if norm(c) == "success" and k != "sr"), None)
    fixed = registry.nonfinite_policy(
        values,
        ids=ids,
        source=name,
        where=entry,
        columns={k: repr(c) for k, c in col_of.items()},
        indicators=None if plain is None else {"sr": ("success", plain)},
        hint=lambda k: f"--column {quoted(col_of[k] + '=ignore')} leaves the column out",
        nan="NaN or missing",
        errors=errors,
    )
    for k in errors or {}:
        del values[k]
    values.update(fixed)
