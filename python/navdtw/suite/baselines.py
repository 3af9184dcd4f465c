"""Each data set's random-walk baseline row, computed once per inputs and cached on disk.

The cache key is everything the baseline's numbers depend on: the data set's files (contents, or a
folder's listing with sizes and modification times), the number of walks, the seed, the convention,
the threshold and navdtw's version. Entries are navdtw's own JSON files; a damaged one is computed
again and replaced. Internal to :mod:`navdtw.suite`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .config import DatasetSpec

#: The name of the baseline's row in the leaderboards (and of its "agent" in ``failures``).
BASELINE_ROW = "random walk"


def cached_baseline(
    spec: DatasetSpec, bench, settings: dict, cache_dir: Path | None, progress: bool
) -> dict[str, float]:
    """The random-walk baseline means of one data set, from the cache when the same inputs, walks,
    seed, convention, threshold and navdtw version were computed before.

    Parameters
    ----------
    spec, bench:
        the data set's checked table and its open :class:`navdtw.datasets.Benchmark`.
    settings:
        the suite's settings (``baseline_walks``: 0 for none; ``seed``, ``workers``).
    cache_dir:
        the cache folder, or None for no cache.
    progress:
        show the walker's progress bar.

    Returns
    -------
    metric -> mean over the walks (empty when ``baseline_walks`` is 0 or the data set kind has no
    baseline).

    Raises
    ------
    ValueError, OSError
        from the walker or from writing the cache entry.
    """
    from .. import __version__

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
        means = bench.baseline(
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
        from .._io import atomic_write_text

        # json writes inf as Infinity, which json reads back: the cache is navdtw's own file.
        atomic_write_text(cache, json.dumps({"key": key, "inputs": key_data, "means": means}, indent=1))
    return means


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
