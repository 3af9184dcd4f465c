"""Benchmark-suite runs: many agents on many data sets, compared with intervals and paired tests.

A suite file (TOML) names the data sets and the agents' predictions; :func:`run` scores every
(agent, data set) pair with every metric, adds each data set's random-walk baseline, computes
bootstrap intervals and paired tests (:mod:`navdtw.stats`) and writes the leaderboards
(``leaderboard.md``, ``.csv``, ``.tex``), ``results.json``, the per-episode values
(``episodes.parquet``, or ``episodes.csv`` without pyarrow) and ``report.html``. See docs/suite.md.

::

    [datasets.r2r_unseen]
    dataset = "r2r"                          # a kind of navdtw.datasets.DATASETS
    split = "data/R2R_val_unseen.json"       # the kind's options; paths relative to this file
    connectivity = "data/connectivity"
    convention = "r2r"                       # optional (the kind's default)
    threshold = 3.0                          # optional (3.0 m)

    [agents.mine]
    r2r_unseen = "runs/mine_val_unseen.json"

    [settings]                               # optional; these are the defaults
    resamples = 10000
    seed = 0
    confidence = 0.95
    method = "bca"                           # or "percentile"
    alpha = 0.05                             # level of the "not significantly different" mark
    baseline_walks = 100000                  # 0: no baseline row
    cluster = "path"                         # or "episode"
    workers = -1
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import stats

__all__ = [
    "DEFAULT_SETTINGS",
    "DatasetSpec",
    "Suite",
    "SuiteError",
    "cluster_labels",
    "compare",
    "format_leaderboard",
    "leaderboard_marks",
    "load_suite",
    "metric_info",
    "run",
]

#: The ``[settings]`` of a suite file and their defaults.
DEFAULT_SETTINGS: dict[str, Any] = {
    "resamples": 10_000,
    "seed": 0,
    "confidence": 0.95,
    "method": "bca",
    "alpha": 0.05,
    "baseline_walks": 100_000,
    "cluster": "path",
    "workers": -1,
}

#: The output files of a run (``episodes.csv`` replaces ``episodes.parquet`` without pyarrow).
OUTPUTS = (
    "leaderboard.md",
    "leaderboard.csv",
    "leaderboard.tex",
    "results.json",
    "episodes.parquet",
    "episodes.csv",
    "report.html",
)

_BASELINE_ROW = "random walk"
_METHOD_NAMES = {"bca": "BCa", "percentile": "percentile"}
_TOP_KEYS = ("title", "datasets", "agents", "settings")


def _expand(value: str, where: str) -> str:
    """A path as written in a suite file, with ``$VAR`` / ``${VAR}`` (e.g. ``${NAVDTW_DATA}``) and ``~``
    expanded; an unset variable is an error naming the key."""
    expanded = os.path.expanduser(os.path.expandvars(value))
    unset = re.search(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", expanded)
    if unset:
        raise SuiteError(f"{where}: environment variable {unset.group(1)} is not set (in {value!r})")
    return expanded


class SuiteError(ValueError):
    """A mistake in a suite: the message names the suite file and the key."""


# --------------------------------------------------------------------------------------------
# metric metadata
# --------------------------------------------------------------------------------------------

# Used until the metric registry (navdtw.registry) is available; the same labels and directions.
_FALLBACK_METRICS: dict[str, tuple[str, str, bool, bool | None]] = {
    "pl": ("PL", "m", False, None),
    "ne": ("NE", "m", False, False),
    "one": ("ONE", "m", False, False),
    "sr": ("SR", "", True, True),
    "osr": ("OSR", "", True, True),
    "spl": ("SPL", "", True, True),
    "sed": ("SED", "", True, True),
    "cls": ("CLS", "", True, True),
    "ad": ("AD", "m", False, False),
    "md": ("MD", "m", False, False),
    "dtw": ("DTW", "m", False, False),
    "ndtw": ("nDTW", "", True, True),
    "sdtw": ("SDTW", "", True, True),
}


def metric_info(name: str) -> dict[str, Any]:
    """``{"label", "unit", "rate", "higher_is_better"}`` of a metric (from the metric registry)."""
    try:
        from . import registry  # type: ignore[attr-defined]
    except ImportError:
        registry = None
    if registry is not None:
        try:
            m = registry.get(name)
        except (KeyError, ValueError):
            m = None
        if m is not None:
            return {"label": m.label, "unit": m.unit, "rate": bool(m.rate), "higher_is_better": m.higher_is_better}
    if name in _FALLBACK_METRICS:
        label, unit, rate, better = _FALLBACK_METRICS[name]
        return {"label": label, "unit": unit, "rate": rate, "higher_is_better": better}
    return {"label": name, "unit": "", "rate": False, "higher_is_better": None}


# --------------------------------------------------------------------------------------------
# the suite file
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSpec:
    """One ``[datasets.NAME]`` table, checked: the kind, its options (paths resolved), convention
    and success threshold."""

    name: str
    kind: Any  # navdtw.datasets.DatasetKind
    options: dict[str, Any]
    convention: str
    threshold: float


@dataclass(frozen=True)
class Suite:
    """A checked suite: data sets and agents in file order; ``agents[agent][dataset]`` is the
    predictions file; ``source`` names the suite in messages."""

    source: str
    datasets: dict[str, DatasetSpec]
    agents: dict[str, dict[str, Path]]
    settings: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    title: str = ""


def _read_toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SuiteError(f"{path}: suite file not found") from None
    except IsADirectoryError:
        raise SuiteError(f"{path}: is a folder, not a suite file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path.name}: not valid TOML: {exc}") from None


def _table(value, where: str, src: str) -> dict:
    if not isinstance(value, Mapping):
        raise SuiteError(f"{src}: {where} must be a table, got {type(value).__name__}")
    return dict(value)


def _check_settings(raw: Mapping, src: str) -> dict[str, Any]:
    from .engine import MAX_WORKERS

    out = dict(DEFAULT_SETTINGS)
    for key, value in raw.items():
        where = f"{src}: settings.{key}"
        if key not in DEFAULT_SETTINGS:
            raise SuiteError(f"{where}: unknown setting; known: {', '.join(DEFAULT_SETTINGS)}")
        is_int = isinstance(value, int) and not isinstance(value, bool)
        is_num = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key == "resamples" and not (is_int and value >= 1):
            raise SuiteError(f"{where}: expected an integer >= 1, got {value!r}")
        if key == "baseline_walks" and not (is_int and value >= 0):
            raise SuiteError(f"{where}: expected an integer >= 0 (0: no baseline), got {value!r}")
        if key == "seed" and not (is_int and 0 <= value < 2**63):
            raise SuiteError(f"{where}: expected an integer in [0, 2**63), got {value!r}")
        if key in ("confidence", "alpha") and not (is_num and 0.0 < value < 1.0):
            raise SuiteError(f"{where}: expected a number in (0, 1), got {value!r}")
        if key == "method" and value not in ("bca", "percentile"):
            raise SuiteError(f'{where}: expected "bca" or "percentile", got {value!r}')
        if key == "cluster" and value not in ("path", "episode"):
            raise SuiteError(f'{where}: expected "path" or "episode", got {value!r}')
        if key == "workers" and not (is_int and (value == -1 or 1 <= value <= MAX_WORKERS)):
            raise SuiteError(f"{where}: expected -1 (all cores) or 1..{MAX_WORKERS}, got {value!r}")
        out[key] = float(value) if key in ("confidence", "alpha") else value
    return out


def _check_dataset(name: str, raw: Mapping, base: Path, src: str) -> DatasetSpec:
    from .datasets import DATASETS
    from .engine import check_threshold

    where = f"{src}: datasets.{name}"
    if "dataset" not in raw:
        raise SuiteError(f"{where}: missing 'dataset' (the kind: {', '.join(DATASETS)})")
    kind_name = raw["dataset"]
    if kind_name not in DATASETS:
        raise SuiteError(f"{where}.dataset: unknown data set kind {kind_name!r}; choose one of {', '.join(DATASETS)}")
    kind = DATASETS[kind_name]
    known = {o.name: o for o in kind.options}
    unknown = [k for k in raw if k not in known and k not in ("dataset", "convention", "threshold")]
    if unknown:
        keys = ", ".join(["dataset", *known, "convention", "threshold"])
        raise SuiteError(f"{where}.{unknown[0]}: unknown key for a {kind_name} data set; keys: {keys}")
    options: dict[str, Any] = {}
    for opt in kind.options:
        value = raw.get(opt.name)
        if value is None:
            if opt.required:
                raise SuiteError(f"{where}: missing {opt.name!r} ({opt.help})")
            continue
        if not isinstance(value, str):
            raise SuiteError(f"{where}.{opt.name}: expected a string, got {type(value).__name__}")
        if opt.kind in ("file", "dir", "path"):
            path = (base / _expand(value, f"{where}.{opt.name}")).resolve()
            if not {"file": path.is_file, "dir": path.is_dir, "path": path.exists}[opt.kind]():
                what = {"file": "file", "dir": "folder", "path": "file or folder"}[opt.kind]
                raise SuiteError(f"{where}.{opt.name}: {what} not found: {path}")
            options[opt.name] = path
        else:
            if opt.kind == "choice" and value not in opt.choices:
                raise SuiteError(f"{where}.{opt.name}: expected one of {', '.join(opt.choices)}, got {value!r}")
            options[opt.name] = value
    try:
        convention = kind.check_convention(raw.get("convention"))
    except ValueError as exc:
        raise SuiteError(f"{where}.convention: {exc}") from None
    threshold = raw.get("threshold", 3.0)
    try:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError
        threshold = check_threshold(float(threshold))
    except ValueError:
        raise SuiteError(f"{where}.threshold: expected a finite distance > 0 (metres), got {threshold!r}") from None
    return DatasetSpec(name, kind, options, convention, threshold)


def load_suite(suite, *, base: str | Path | None = None) -> Suite:
    """Reads and checks a suite: a TOML file name, or the same content as a dict (then relative
    paths are relative to ``base``, default the current folder). Every mistake raises
    :class:`SuiteError` naming the suite file and the key."""
    if isinstance(suite, Suite):
        return suite
    if isinstance(suite, Mapping):
        raw, src, root = dict(suite), "<suite>", Path(base or ".")
    else:
        path = Path(suite)
        raw, src, root = _read_toml(path), path.name, Path(base) if base is not None else path.parent
    unknown = [k for k in raw if k not in _TOP_KEYS]
    if unknown:
        raise SuiteError(f"{src}: unknown table or key {unknown[0]!r}; a suite has {', '.join(_TOP_KEYS)}")
    title = raw.get("title", "")
    if not isinstance(title, str):
        raise SuiteError(f"{src}: title must be a string")
    datasets_raw = _table(raw.get("datasets", {}), "datasets", src)
    if not datasets_raw:
        raise SuiteError(f"{src}: no [datasets.NAME] table")
    datasets = {
        str(name): _check_dataset(str(name), _table(t, f"datasets.{name}", src), root, src)
        for name, t in datasets_raw.items()
    }
    agents_raw = _table(raw.get("agents", {}), "agents", src)
    if not agents_raw:
        raise SuiteError(f"{src}: no [agents.NAME] table")
    agents: dict[str, dict[str, Path]] = {}
    for agent, t in agents_raw.items():
        t = _table(t, f"agents.{agent}", src)
        if not t:
            raise SuiteError(f'{src}: agents.{agent}: names no data set (add e.g. {next(iter(datasets))} = "FILE")')
        files = {}
        for ds, value in t.items():
            where = f"{src}: agents.{agent}.{ds}"
            if ds not in datasets:
                raise SuiteError(f"{where}: unknown data set {ds!r}; the suite defines {', '.join(datasets)}")
            if not isinstance(value, str):
                raise SuiteError(f"{where}: expected a predictions file name, got {type(value).__name__}")
            path = (root / _expand(value, where)).resolve()
            if not path.is_file():
                raise SuiteError(f"{where}: predictions file not found: {path}")
            files[ds] = path
        agents[str(agent)] = files
    settings = _check_settings(_table(raw.get("settings", {}), "settings", src), src)
    return Suite(src, datasets, agents, settings, title)


# --------------------------------------------------------------------------------------------
# clusters: which episodes share a path
# --------------------------------------------------------------------------------------------


def _prefix_before_last(ids: Sequence[str]) -> list[str]:
    return [str(i).rsplit("_", 1)[0] for i in ids]


def _first_part(ids: Sequence[str]) -> list[str]:
    return [str(i).split("_", 1)[0] for i in ids]


def _vlnce_trajectories(bench, ids: Sequence[str]) -> list[str] | None:
    traj = {str(e.get("episode_id")): e.get("trajectory_id") for e in getattr(bench, "episodes", ())}
    labels = [traj.get(str(i)) for i in ids]
    return None if any(x is None for x in labels) else [str(x) for x in labels]


#: Per data set kind: episode ids -> path ids (the cluster of each episode), or None (episodes are
#: independent). R2R / R4R instr_id "<path_id>_<k>"; RxR (VLN-HAMT ids) "<path_id>_<instruction_id>";
#: REVERIE "<path_id>_<objId>_<k>"; R2R-CE episodes share a path when they share trajectory_id.
#: Kinds not listed (NDH: one dialog per episode) resample episodes. A Benchmark may define
#: ``cluster_of(ids)`` instead.
CLUSTER_RULES: dict[str, Callable[[Any, Sequence[str]], list[str] | None]] = {
    "r2r": lambda bench, ids: _prefix_before_last(ids),
    "r4r": lambda bench, ids: _prefix_before_last(ids),
    "rxr": lambda bench, ids: _prefix_before_last(ids),
    "reverie": lambda bench, ids: _first_part(ids),
    "r2r-ce": _vlnce_trajectories,
}


def cluster_labels(bench, ids: Sequence[str]) -> list[str] | None:
    """The path id of every episode of ``bench`` (for the cluster bootstrap), or None."""
    own = getattr(bench, "cluster_of", None)
    if callable(own):
        return own(ids)
    rule = CLUSTER_RULES.get(bench.kind.name)
    return None if rule is None else rule(bench, ids)


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------


class _Bar:
    """A tqdm progress bar when tqdm is installed and ``enabled``, else nothing."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self._bar = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                return
            self._bar = tqdm(total=total, desc=desc, unit="run", leave=False, file=sys.stderr)

    def step(self, text: str = "") -> None:
        if self._bar is not None:
            if text:
                self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


@dataclass
class _DatasetRun:
    spec: DatasetSpec
    bench: Any = None
    ids: list[str] = field(default_factory=list)
    scans: list[str] = field(default_factory=list)
    matched: dict[str, Any] = field(default_factory=dict)
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    metrics: list[str] = field(default_factory=list)
    baseline: dict[str, float] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)


def _failure(agent: str | None, dataset: str, file: Path | None, exc: BaseException) -> dict[str, Any]:
    msg = " ".join((str(exc) or type(exc).__name__).split())
    return {"agent": agent, "dataset": dataset, "file": None if file is None else str(file), "error": msg}


def _fingerprint(spec: DatasetSpec) -> dict[str, Any]:
    """What the baseline depends on among the data set's inputs: file contents (sha256) and, for
    folders, the listing with sizes and modification times."""
    out: dict[str, Any] = {}
    for name, value in sorted(spec.options.items()):
        if isinstance(value, Path) and value.is_file():
            out[name] = hashlib.sha256(value.read_bytes()).hexdigest()
        elif isinstance(value, Path):
            listing = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in value.iterdir() if p.is_file())
            out[name] = hashlib.sha256(json.dumps(listing).encode()).hexdigest()
        else:
            out[name] = value
    return out


def _baseline(run: _DatasetRun, settings: dict, cache_dir: Path | None, progress: bool) -> dict[str, float]:
    """The data set's random-walk baseline means, from the cache when the same inputs, walks,
    seed, convention, threshold and navdtw version were computed before."""
    from . import __version__

    spec = run.spec
    n = int(settings["baseline_walks"])
    if n == 0:
        return {}
    key_data = {
        "kind": spec.kind.name,
        "inputs": _fingerprint(spec),
        "n": n,
        "seed": int(settings["seed"]),
        "convention": spec.convention,
        "threshold": spec.threshold,
        "navdtw_version": __version__,
    }
    key = hashlib.sha256(json.dumps(key_data, sort_keys=True).encode()).hexdigest()
    cache = None if cache_dir is None else cache_dir / f"baseline-{spec.kind.name}-{key[:24]}.json"
    if cache is not None and cache.is_file():
        try:
            stored = json.loads(cache.read_text(encoding="utf-8"))
            if stored.get("key") == key:
                return {k: float(v) for k, v in stored["means"].items()}
        except (ValueError, KeyError, TypeError, OSError):
            pass  # a damaged cache entry is recomputed and replaced
    try:
        means = run.bench.baseline(
            n,
            seed=key_data["seed"],
            convention=spec.convention,
            threshold=spec.threshold,
            workers=settings["workers"],
            progress=progress,
        )
    except NotImplementedError:
        return {}
    means = {k: float(v) for k, v in means.items()}
    if cache is not None:
        from ._io import atomic_write_text

        # json writes inf as Infinity, which json reads back: the cache is navdtw's own file.
        atomic_write_text(cache, json.dumps({"key": key, "inputs": key_data, "means": means}, indent=1))
    return means


def _score(run: _DatasetRun, suite: Suite, failures: list, bar: _Bar) -> None:
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
            failures.append(_failure(agent, spec.name, file, exc))
        else:
            run.matched[agent] = matched
            run.values[agent] = {k: np.asarray(scores[k], dtype=np.float64) for k in scores}
            ids_of[agent] = [str(i) for i in matched.ids]
            if not run.scans:
                run.scans = list(matched.scans)
        bar.step(f"{agent} on {spec.name}")
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


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _analyze(run: _DatasetRun, settings: dict) -> dict[str, Any]:
    spec = run.spec
    agents, metrics = list(run.values), run.metrics
    result: dict[str, Any] = {
        "dataset": spec.kind.name,
        "convention": spec.convention,
        "n": len(run.ids),
        "threshold": spec.threshold,
        "agents": {},
        "baseline": {m: {"mean": _num(v)} for m, v in run.baseline.items()},
        "comparisons": [],
    }
    clusters = cluster_labels(run.bench, run.ids) if settings["cluster"] == "path" else None
    result["resampling"] = "episode" if clusters is None else "path"
    if not agents or not run.ids:
        return result
    k = len(metrics)
    matrix = np.empty((len(run.ids), len(agents) * k))
    for a, agent in enumerate(agents):
        for j, m in enumerate(metrics):
            matrix[:, a * k + j] = run.values[agent][m]
    pairs = [(a * k + j, b * k + j) for j in range(k) for a in range(len(agents)) for b in range(a + 1, len(agents))]
    res = stats.analyze(
        matrix,
        pairs,
        confidence=settings["confidence"],
        resamples=settings["resamples"],
        method=settings["method"],
        seed=settings["seed"],
        clusters=clusters,
        names=[f"{agent}/{m}" for agent in agents for m in metrics],
    )
    mean, lo, hi = res.means
    for a, agent in enumerate(agents):
        result["agents"][agent] = {
            m: {"mean": _num(mean[a * k + j]), "ci": [_num(lo[a * k + j]), _num(hi[a * k + j])]}
            for j, m in enumerate(metrics)
        }
    c = res.comparisons
    p_holm = np.empty(len(pairs))
    per_metric = len(agents) * (len(agents) - 1) // 2
    for j in range(k):  # one Holm family per (data set, metric)
        sl = slice(j * per_metric, (j + 1) * per_metric)
        p_holm[sl] = stats.holm(c.p_permutation[sl])
    for q, (x, y) in enumerate(pairs):
        result["comparisons"].append(
            {
                "a": agents[x // k],
                "b": agents[y // k],
                "metric": metrics[x % k],
                "diff": _num(c.diff[q]),
                "ci": [_num(c.lo[q]), _num(c.hi[q])],
                "p": _num(c.p_permutation[q]),
                "p_holm": _num(p_holm[q]),
                "test": "permutation",
                "p_sign": _num(c.p_sign[q]),
            }
        )
    return result


def leaderboard_marks(dataset: Mapping, alpha: float = 0.05) -> dict[str, dict[str, list[str]]]:
    """Per metric of one data set of ``results.json``: ``{"best": [agents], "tied": [agents]}``.

    ``best``: the agent(s) with the best mean (direction from the metric's ``higher_is_better``;
    metrics without a direction, like path length, get no marks). ``tied``: the other agents whose
    paired permutation test against a best agent has ``p_holm >= alpha``, i.e. not significantly
    different from the best. The same rule as ``navdtw.report.leaderboard_marks``.
    """
    p: dict[tuple[str, str, str], float] = {}
    for c in dataset.get("comparisons", []):
        if c.get("p_holm") is not None:
            p[(c["metric"], c["a"], c["b"])] = p[(c["metric"], c["b"], c["a"])] = float(c["p_holm"])
    out: dict[str, dict[str, list[str]]] = {}
    agents = dataset.get("agents", {})
    metrics: dict[str, None] = {}
    for values in agents.values():
        metrics.update(dict.fromkeys(values))
    for m in metrics:
        better = metric_info(m)["higher_is_better"]
        means = {a: v[m]["mean"] for a, v in agents.items() if m in v and v[m]["mean"] is not None}
        if better is None or not means:
            continue
        sign = 1.0 if better else -1.0
        top = max(sign * x for x in means.values())
        best = [a for a, x in means.items() if sign * x == top]
        tied = [a for a in means if a not in best and any(p.get((m, a, b), -1.0) >= alpha for b in best)]
        out[m] = {"best": best, "tied": tied}
    return out


def _timed(timings: dict[str, float] | None, stage: str, t0: tuple[float, float]) -> tuple[float, float]:
    """Adds the wall and CPU seconds since ``t0`` to ``timings[stage]`` and ``timings[stage + "_cpu"]``."""
    now = (time.perf_counter(), time.process_time())
    if timings is not None:
        timings[stage] = timings.get(stage, 0.0) + now[0] - t0[0]
        timings[stage + "_cpu"] = timings.get(stage + "_cpu", 0.0) + now[1] - t0[1]
    return now


def run(
    suite,
    out_dir: str | Path | None = None,
    *,
    progress: bool = True,
    report: bool = True,
    cache_dir: str | Path | None = None,
    base: str | Path | None = None,
    timings: dict[str, float] | None = None,
    max_scenes: int = 500,
) -> dict[str, Any]:
    """Runs a suite (a TOML file name, a dict of the same content, or a :class:`Suite`) and
    returns the content of ``results.json``.

    With ``out_dir``, writes the leaderboards, ``results.json``, the per-episode values and (with
    ``report`` and ``navdtw.report`` available) ``report.html`` there. Baselines are cached in
    ``cache_dir`` (default ``<out_dir>/.cache``; no cache without either). A predictions file
    that cannot be read or matched is listed in ``failures`` (agent, data set, file, error) and
    the run goes on; a data set whose files cannot be opened fails all its agents the same way.
    ``timings``, if given, receives wall seconds per stage (load, score, baseline, stats, write,
    report) and CPU seconds as ``<stage>_cpu``.
    ``max_scenes``: episodes per data set whose maps the report embeds (evenly spaced).
    """
    from . import __version__

    suite = load_suite(suite, base=base)
    settings = suite.settings
    out = None if out_dir is None else Path(out_dir)
    cache = Path(cache_dir) if cache_dir is not None else (None if out is None else out / ".cache")
    failures: list[dict[str, Any]] = []
    runs: list[_DatasetRun] = []
    total = sum(len(files) for files in suite.agents.values())
    bar = _Bar(total + len(suite.datasets), "suite", progress)
    t = (time.perf_counter(), time.process_time())
    try:
        for spec in suite.datasets.values():
            r = _DatasetRun(spec)
            runs.append(r)
            try:
                r.bench = spec.kind.open(**spec.options)
            except (ValueError, KeyError, OSError) as exc:
                failures.append(_failure(None, spec.name, None, exc))
                for agent, files in suite.agents.items():
                    if spec.name in files:
                        failures.append(_failure(agent, spec.name, files[spec.name], exc))
                        bar.step()
                bar.step()
                continue
            t = _timed(timings, "load", t)
            _score(r, suite, failures, bar)
            t = _timed(timings, "score", t)
            try:
                r.baseline = _baseline(r, settings, cache, progress)
            except (ValueError, OSError) as exc:
                failures.append(_failure(_BASELINE_ROW, spec.name, None, exc))
            t = _timed(timings, "baseline", t)
            try:
                r.result = _analyze(r, settings)
            except ValueError as exc:  # e.g. a NaN metric value
                failures.append(_failure(None, spec.name, None, exc))
                r.result = {}
            bar.step(f"statistics of {spec.name}")
            t = _timed(timings, "stats", t)
    finally:
        bar.close()
    results = {
        "navdtw_version": __version__,
        "settings": dict(settings),
        "datasets": {r.spec.name: r.result for r in runs if r.result},
        "failures": failures,
    }
    if out is not None:
        _write_outputs(out, results, runs, suite)
        t = _timed(timings, "write", t)
        if report:
            _write_report(out, results, runs, suite, max_scenes)
            _timed(timings, "report", t)
    return results


def compare(
    predictions: Sequence[str | Path],
    *,
    dataset: str,
    out_dir: str | Path | None = None,
    convention: str | None = None,
    threshold: float | None = None,
    settings: Mapping[str, Any] | None = None,
    progress: bool = True,
    report: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """:func:`run` for one data set without a suite file: ``dataset`` is the kind (``"r2r"``),
    ``options`` its files (``split=..., connectivity=...``), agents are named by file stems."""
    agents: dict[str, dict[str, str]] = {}
    for p in predictions:
        name = Path(p).stem
        if name in agents:
            raise SuiteError(f"{p}: two predictions files are both named {name!r}; rename one")
        agents[name] = {dataset: str(Path(p).resolve())}
    table: dict[str, Any] = {"dataset": dataset}
    table.update({k: str(Path(v).resolve()) if isinstance(v, Path) else v for k, v in options.items() if v})
    if convention is not None:
        table["convention"] = convention
    if threshold is not None:
        table["threshold"] = threshold
    raw = {"datasets": {dataset: table}, "agents": agents, "settings": dict(settings or {})}
    return run(raw, out_dir, progress=progress, report=report)


# --------------------------------------------------------------------------------------------
# leaderboards
# --------------------------------------------------------------------------------------------


def _fmt(x: float | None, rate: bool) -> str:
    if x is None:
        return "n/a"
    return f"{x * 100:.1f}" if rate else f"{x:.2f}"


def _header(m: str) -> str:
    info = metric_info(m)
    unit = "%" if info["rate"] else info["unit"]
    arrow = {True: "↑", False: "↓", None: ""}[info["higher_is_better"]]
    return f"{info['label']}{arrow}" + (f" ({unit})" if unit else "")


def _board(ds: Mapping, alpha: float):
    """(metrics, rows) of one data set: rows are (agent, {metric: (mean, lo, hi, mark)}) with mark
    "best", "tied" or ""; the baseline row last (no interval, no mark)."""
    marks = leaderboard_marks(ds, alpha)
    metrics: dict[str, None] = {}
    for values in ds["agents"].values():
        metrics.update(dict.fromkeys(values))
    metrics.update(dict.fromkeys(ds.get("baseline", {})))
    rows = []
    for agent, values in ds["agents"].items():
        cells = {}
        for m, v in values.items():
            mk = marks.get(m, {})
            mark = "best" if agent in mk.get("best", ()) else "tied" if agent in mk.get("tied", ()) else ""
            cells[m] = (v["mean"], v["ci"][0], v["ci"][1], mark)
        rows.append((agent, cells))
    if ds.get("baseline"):
        rows.append((_BASELINE_ROW, {m: (v["mean"], None, None, "") for m, v in ds["baseline"].items()}))
    return list(metrics), rows


def _caption(name: str, ds: Mapping, settings: Mapping) -> str:
    unit = "paths" if ds.get("resampling") == "path" else "episodes"
    return (
        f"{name}: {ds['dataset']}, convention {ds['convention']}, {ds['n']} episodes; means with "
        f"{settings['confidence'] * 100:g}% {_METHOD_NAMES[settings['method']]} bootstrap intervals "
        f"({settings['resamples']} resamples by {unit})"
    )


_MARK_NOTE = (
    "Bold: best mean. {dagger}: not significantly different from the best (paired permutation test, "
    "Holm-adjusted p >= {alpha:g} over the pairs of agents compared on that metric). No marks on metrics "
    "without a direction (PL). Rates in percent."
)


def format_leaderboard_md(results: Mapping) -> str:
    settings = results["settings"]
    out = ["# Leaderboard", ""]
    for name, ds in results["datasets"].items():
        metrics, rows = _board(ds, settings["alpha"])
        out += [f"## {name}", "", _caption(name, ds, settings) + ".", ""]
        out.append("| agent | " + " | ".join(_header(m) for m in metrics) + " |")
        out.append("|---|" + "---:|" * len(metrics))
        for agent, cells in rows:
            line = [agent.replace("|", "\\|")]
            for m in metrics:
                if m not in cells:
                    line.append("")
                    continue
                mean, lo, hi, mark = cells[m]
                rate = metric_info(m)["rate"]
                text = _fmt(mean, rate)
                text = f"**{text}**" if mark == "best" else f"{text}†" if mark == "tied" else text
                if lo is not None or hi is not None:
                    text += f" [{_fmt(lo, rate)}, {_fmt(hi, rate)}]"
                line.append(text)
            out.append("| " + " | ".join(line) + " |")
        out.append("")
    out.append(_MARK_NOTE.format(dagger="†", alpha=settings["alpha"]))
    if results.get("failures"):
        out += ["", "## Failures", ""]
        out += [f"- {_failure_line(f)}" for f in results["failures"]]
    return "\n".join(out) + "\n"


def _failure_line(f: Mapping) -> str:
    who = " on ".join(str(f[k]) for k in ("agent", "dataset") if f.get(k))
    return f"{who}: {f['error']}"


def format_leaderboard(results: Mapping) -> str:
    """The leaderboards as fixed-width text (means only; rates in percent): ``*`` marks the best
    agent, ``†`` the agents not significantly different from it."""
    settings = results["settings"]
    blocks = []
    for name, ds in results["datasets"].items():
        metrics, rows = _board(ds, settings["alpha"])
        head = ["agent"] + [_header(m) for m in metrics]
        body = []
        for agent, cells in rows:
            line = [agent]
            for m in metrics:
                mean, _, _, mark = cells.get(m, (None, None, None, ""))
                line.append(_fmt(mean, metric_info(m)["rate"]) + {"best": "*", "tied": "†", "": " "}[mark])
            body.append(line)
        widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
        lines = [_caption(name, ds, settings)]
        for r in [head, None, *body]:
            if r is None:
                lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
                continue
            lines.append("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
        blocks.append("\n".join(lines))
    note = "*: best mean; " + _MARK_NOTE.split(". ", 1)[1].format(dagger="†", alpha=settings["alpha"])
    return "\n\n".join(blocks) + "\n\n" + note


_TEX = {c: "\\" + c for c in "&%$#_{}"}
_TEX.update({"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"})


def tex_escape(text: str) -> str:
    """Text safe in LaTeX: ``my_agent`` -> ``my\\_agent``."""
    return "".join(_TEX.get(c, c) for c in str(text))


def format_leaderboard_tex(results: Mapping) -> str:
    """One booktabs table per data set (needs ``\\usepackage{booktabs}``)."""
    settings = results["settings"]
    out = [
        "% navdtw suite leaderboard; needs \\usepackage{booktabs}. Rates in percent.",
        f"% Generated by navdtw {results['navdtw_version']}.",
    ]
    for name, ds in results["datasets"].items():
        metrics, rows = _board(ds, settings["alpha"])
        heads = []
        for m in metrics:
            info = metric_info(m)
            arrow = {True: r"$\uparrow$", False: r"$\downarrow$", None: ""}[info["higher_is_better"]]
            unit = r"\%" if info["rate"] else tex_escape(info["unit"])
            heads.append(tex_escape(info["label"]) + arrow + (f" ({unit})" if unit else ""))
        caption = (
            tex_escape(_caption(name, ds, settings))
            + ". "
            + tex_escape(_MARK_NOTE.format(dagger="DAGGER", alpha=settings["alpha"]))
            .replace("DAGGER", r"$^\dagger$")
            .replace(">=", r"$\geq$")
            .replace("Bold:", r"\textbf{Bold}:")
        )
        out += [
            "",
            r"\begin{table*}[t]",
            r"\centering",
            r"\small",
            r"\setlength{\tabcolsep}{3pt}",
            r"\begin{tabular}{l" + "r" * len(metrics) + "}",
            r"\toprule",
            "Agent & " + " & ".join(heads) + r" \\",
            r"\midrule",
        ]
        for k, (agent, cells) in enumerate(rows):
            if agent == _BASELINE_ROW and ds.get("baseline") and k == len(rows) - 1:
                out.append(r"\midrule")
            line = [tex_escape(agent)]
            for m in metrics:
                if m not in cells:
                    line.append("")
                    continue
                mean, lo, hi, mark = cells[m]
                rate = metric_info(m)["rate"]
                text = _fmt(mean, rate)
                text = rf"\textbf{{{text}}}" if mark == "best" else rf"{text}$^\dagger$" if mark == "tied" else text
                if lo is not None or hi is not None:
                    text += rf" {{\scriptsize[{_fmt(lo, rate)}, {_fmt(hi, rate)}]}}"
                line.append(text)
            out.append(" & ".join(line) + r" \\")
        label = "".join(c if c.isalnum() else "-" for c in name)
        out += [
            r"\bottomrule",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            rf"\label{{tab:navdtw-{label}}}",
            r"\end{table*}",
        ]
    return "\n".join(out) + "\n"


def _leaderboard_csv(results: Mapping) -> str:
    """Long format: one row per (data set, agent or baseline, metric); means as fractions."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["dataset", "agent", "metric", "mean", "lo", "hi", "best", "not_significantly_worse"])
    alpha = results["settings"]["alpha"]
    for name, ds in results["datasets"].items():
        metrics, rows = _board(ds, alpha)
        for agent, cells in rows:
            for m in metrics:
                if m in cells:
                    mean, lo, hi, mark = cells[m]
                    numbers = ("" if x is None else repr(x) for x in (mean, lo, hi))
                    w.writerow([name, agent, m, *numbers, int(mark == "best"), int(mark in ("best", "tied"))])
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------


def _episode_columns(runs: Sequence[_DatasetRun]) -> dict[str, list]:
    metrics: dict[str, None] = {}
    for r in runs:
        if r.result:
            metrics.update(dict.fromkeys(r.metrics))
    cols: dict[str, list] = {"dataset": [], "agent": [], "id": [], "scan": []}
    cols.update({m: [] for m in metrics})
    for r in runs:
        if not r.result:
            continue
        n = len(r.ids)
        for agent, values in r.values.items():
            cols["dataset"] += [r.spec.name] * n
            cols["agent"] += [agent] * n
            cols["id"] += r.ids
            cols["scan"] += r.scans if len(r.scans) == n else [""] * n
            for m in metrics:
                v = values.get(m)
                cols[m].append(v if v is not None else np.full(n, np.nan))
    for m in metrics:
        cols[m] = np.concatenate(cols[m]) if cols[m] else np.zeros(0)
    return cols


def _write_episodes(out: Path, runs: Sequence[_DatasetRun]) -> Path:
    from ._io import atomic_write_bytes, atomic_write_text

    cols = _episode_columns(runs)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        names = list(cols)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        fixed = [
            cols[k] if k in ("dataset", "agent", "id", "scan") else [repr(float(x)) for x in cols[k]] for k in names
        ]
        w.writerows(zip(*fixed))
        return atomic_write_text(out / "episodes.csv", buf.getvalue())
    table = pa.table({k: pa.array(v) for k, v in cols.items()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return atomic_write_bytes(out / "episodes.parquet", sink.getvalue().to_pybytes())


def _write_outputs(out: Path, results: dict, runs: Sequence[_DatasetRun], suite: Suite) -> list[Path]:
    from ._io import atomic_write_text

    text = json.dumps(results, indent=2, allow_nan=False)
    return [
        atomic_write_text(out / "results.json", text + "\n"),
        atomic_write_text(out / "leaderboard.md", format_leaderboard_md(results)),
        atomic_write_text(out / "leaderboard.csv", _leaderboard_csv(results)),
        atomic_write_text(out / "leaderboard.tex", format_leaderboard_tex(results)),
        _write_episodes(out, runs),
    ]


def _scenes(runs: Sequence[_DatasetRun], max_scenes: int, report) -> dict[str, Any]:
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


def _write_report(out: Path, results: dict, runs: Sequence[_DatasetRun], suite: Suite, max_scenes: int) -> Path | None:
    try:
        from . import report  # type: ignore[attr-defined]
    except ImportError:
        return None
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
    data = {
        "title": suite.title or "navdtw benchmark suite",
        "results": results,
        "metrics": {m: metric_info(m) for m in metrics},
        "episodes": episodes,
        "scenes": _scenes(runs, max_scenes, report),
    }
    path = out / "report.html"
    report.write_report(path, data, max_scenes=max_scenes)
    return path
