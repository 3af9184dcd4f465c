"""Internal to :mod:`navdtw.datasets.r2r`: R2R results files (an agent's trajectories,
``[{"instr_id", "trajectory"}, ...]``), read and written; R2R, R4R and RxR's HAMT read them."""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path

from .._io import atomic_write_bytes
from .._messages import named
from .._typing import PathLike
from ._common import finite_real, is_int, list_of, source, trajectory_viewpoints


def load_predictions(path_or_list, *, duplicates: str = "error") -> dict[str, list[str]]:
    """Reads R2R results: ``[{"instr_id": "<path_id>_<k>", "trajectory": [[viewpoint, heading,
    elevation], ...]}, ...]`` -> ``{instr_id: [viewpoint, ...]}`` in file order.

    Viewpoints are kept exactly as listed, including the repeats an agent writes while turning in
    place (:func:`match_predictions` can collapse them). A step may also be a bare viewpoint
    string. Integer ``instr_id`` values are turned into strings. Empty or malformed trajectories
    raise ``ValueError`` naming the entry; so does a duplicated ``instr_id`` unless
    ``duplicates="first"``, which keeps the first entry of an id as the R2R evaluator does.

    Parameters
    ----------
    path_or_list : str, os.PathLike or list
        The results file (gzipped or not), or its parsed list.
    duplicates : str, optional
        ``"error"`` (default) or ``"first"``.

    Returns
    -------
    dict[str, list of str]
        ``instr_id`` -> viewpoints, in file order.

    Raises
    ------
    ValueError
        A malformed file or entry (naming the file and the entry): an ``instr_id`` that is not a
        string or integer, an empty or malformed trajectory, a duplicated ``instr_id`` (with
        ``duplicates="error"``); a ``duplicates`` other than ``"error"`` or ``"first"``.
    FileNotFoundError
        A file name that does not exist.
    """
    data, name = source(path_or_list)
    return read_predictions(data, name, duplicates)[0]


def read_predictions(data, name: str, duplicates: str = "error"):
    """Internal: ``({instr_id: viewpoints}, {instr_id: entry index}, [ids of the later duplicates
    dropped])`` of parsed R2R results."""
    if duplicates not in ("error", "first"):
        raise ValueError(f"duplicates must be 'error' or 'first', got {duplicates!r}")
    data = list_of(data, name, "predictions")
    out: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    dropped: list[str] = []
    for k, e in enumerate(data):
        if not isinstance(e, dict):
            raise ValueError(f"{name}: entry {k}: expected an object, got {type(e).__name__}")
        iid = e.get("instr_id")
        if not (isinstance(iid, str) or is_int(iid)):
            raise ValueError(f"{name}: entry {k}: 'instr_id' must be a string, got {iid!r}")
        iid = str(iid)
        where = f"{name}: entry {k} (instr_id {named(iid)})"
        if iid in first:
            if duplicates == "first":
                dropped.append(iid)
                continue
            raise ValueError(f"{where}: duplicate instr_id (also entry {first[iid]})")
        first[iid] = k
        out[iid] = trajectory_viewpoints(e.get("trajectory"), where)
    return out, first, dropped


def _steps_for_writing(traj, where: str) -> list:
    if isinstance(traj, str) or not isinstance(traj, (list, tuple)):
        raise ValueError(f"{where}: trajectory must be a list of viewpoints")
    if not traj:
        raise ValueError(f"{where}: trajectory is empty")
    steps = []
    for j, step in enumerate(traj):
        if isinstance(step, str):
            # heading / elevation unknown: written as 0.0 (the R2R evaluators read only step[0])
            steps.append([step, 0.0, 0.0])
        elif isinstance(step, (list, tuple)) and step and isinstance(step[0], str):
            rest = list(step[1:])
            if not all(finite_real(x) for x in rest):
                raise ValueError(f"{where}: trajectory[{j}] has a non-numeric or non-finite heading/elevation")
            steps.append([step[0]] + [float(x) for x in rest])
        else:
            raise ValueError(f"{where}: trajectory[{j}] must be a viewpoint id or [viewpoint, heading, elevation]")
    return steps


def write_predictions(path: PathLike, predictions) -> None:
    """Writes predictions in the R2R results format, atomically.

    ``predictions``: a mapping ``instr_id -> trajectory`` where a trajectory is a list of viewpoint
    ids (written as ``[viewpoint, 0.0, 0.0]``) or of ``[viewpoint, heading, elevation]`` steps; or
    a list of ``{"instr_id", "trajectory"}`` records. The JSON goes to a temporary file in the
    target's folder that then replaces the target (``os.replace``), so readers never see a
    half-written file. A name ending in ``.gz`` is gzip-compressed.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced if it exists; its folder is created).
    predictions : mapping or list of dict
        ``{instr_id: trajectory}``, or ``[{"instr_id", "trajectory"}, ...]``.

    Raises
    ------
    ValueError
        A record without ``instr_id`` and ``trajectory``, an ``instr_id`` that is not a string or
        integer, a duplicated ``instr_id``, an empty trajectory, or a step that is not a viewpoint
        id or ``[viewpoint, heading, elevation]`` with finite numbers (naming the index).
    OSError
        The file cannot be written (:class:`~navdtw.suite.OutputError`, naming ``path``).
    """
    path = Path(path)
    if isinstance(predictions, Mapping):
        items = list(predictions.items())
    else:
        items = []
        for k, e in enumerate(predictions):
            if not isinstance(e, Mapping) or "instr_id" not in e or "trajectory" not in e:
                raise ValueError(f"predictions[{k}]: expected {{'instr_id', 'trajectory'}}")
            items.append((e["instr_id"], e["trajectory"]))
    records = []
    seen = set()
    for k, (iid, traj) in enumerate(items):
        if not (isinstance(iid, str) or is_int(iid)):
            raise ValueError(f"predictions[{k}]: instr_id must be a string, got {iid!r}")
        iid = str(iid)
        if iid in seen:
            raise ValueError(f"predictions[{k}]: duplicate instr_id {named(iid)}")
        seen.add(iid)
        records.append({"instr_id": iid, "trajectory": _steps_for_writing(traj, f"predictions[{k}] ({iid})")})
    payload = json.dumps(records, allow_nan=False).encode("utf-8")
    if path.name.endswith(".gz"):
        payload = gzip.compress(payload, mtime=0)
    atomic_write_bytes(path, payload)
