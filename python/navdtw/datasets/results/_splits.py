"""Internal to :mod:`navdtw.datasets.results`: the episodes of a data set's split, read for the results
kind (``split`` with ``dataset_kind``): ids, scans, paths, languages.

This is the one place of the results package that parses split files, through each kind's reader:
:data:`SPLIT_READERS`, kind -> reader. It stands in for the kinds' own account of their split (a
``split_index`` per kind, issue 32), which will replace it with one call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._common import read_text


@dataclass(frozen=True)
class Split:
    """Internal: a split's episodes as a results table is checked against them: their ids (in file
    order), scans, paths and group labels (languages), and the other ids an evaluator may key them
    by."""

    name: str
    ids: list[str]
    scans: list[str]
    paths: list[str] | None
    groups: dict[str, list[str]]
    other_ids: dict[str, str]  # another id an evaluator may key an episode by -> its id


def _split_r2r(path: Path) -> Split:
    from .. import r2r

    recs = r2r.instructions(r2r.load_r2r(path))
    ids = [r["instr_id"] for r in recs]
    return Split(path.name, ids, [r["scan"] for r in recs], [str(r["path_id"]) for r in recs], {}, {})


def _split_reverie(path: Path) -> Split:
    from .. import reverie

    recs = reverie.instructions(reverie.load_reverie(path))
    ids = [r["instr_id"] for r in recs]
    paths = [str(r.get("path_id", r["id"].split("_", 1)[0])) for r in recs]
    return Split(path.name, ids, [r["scan"] for r in recs], paths, {}, {})


def _split_ndh(path: Path) -> Split:
    from .. import ndh

    recs = ndh.load_ndh(path)
    return Split(path.name, [str(r["inst_idx"]) for r in recs], [r["scan"] for r in recs], None, {}, {})


def _split_episodes(path: Path) -> Split:
    """VLN-CE episodes (R2R-CE, RxR-CE): ``{"episodes": [...]}``."""
    from .. import vlnce

    eps = vlnce.load_vlnce_episodes(path)
    ids = [str(e["episode_id"]) for e in eps]
    paths = [str(e["trajectory_id"]) for e in eps] if all("trajectory_id" in e for e in eps) else None
    other, langs = {}, []
    for e, i in zip(eps, ids):
        ins = e.get("instruction")
        if isinstance(ins, dict):
            if "instruction_id" in ins:
                other[str(ins["instruction_id"])] = i
            langs.append(str(ins.get("language", "")))
    groups = {"language": langs} if len(langs) == len(ids) and any(langs) else {}
    return Split(path.name, ids, [str(e.get("scan", "")) for e in eps], paths, groups, other)


def _split_rxr(path: Path) -> Split:
    from .. import rxr

    head = read_text(path).lstrip()[:4096]
    if head.startswith("{") and '"episodes"' in head:
        return _split_episodes(path)  # RxR-CE episodes (VLN-CE's format)
    recs = rxr.load_rxr_guide(path)
    ids = [r["instr_id"] for r in recs]
    paths = [str(r.get("path_id", r["instr_id"])) for r in recs]
    other = {str(r["instruction_id"]): r["instr_id"] for r in recs}
    return Split(path.name, ids, [r["scan"] for r in recs], paths, {"language": [r["language"] for r in recs]}, other)


#: data set kind -> how its split says which episodes there are (ids, scans, paths, languages).
SPLIT_READERS: dict[str, Callable[[Path], Split]] = {
    "r2r": _split_r2r,
    "r4r": _split_r2r,
    "rxr": _split_rxr,
    "reverie": _split_reverie,
    "ndh": _split_ndh,
    "r2r-ce": _split_episodes,
    "rxr-ce": _split_episodes,
}
