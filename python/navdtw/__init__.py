"""navdtw: exact, fast DTW / nDTW / SDTW and the navigation metrics of vision-and-language navigation.

The compiled engine (``navdtw._core``) computes exact, banded (Sakoe-Chiba) and FastDTW alignments
over ragged batches of paths, for coordinates (Euclidean) or graph node indices over precomputed
distance matrices, multithreaded with the GIL released. See the README for a tour.
"""

from __future__ import annotations

from .engine import (
    dtw,
    dtw_batch,
    dtw_matrix,
    dtw_prefix,
    ndtw,
    ndtw_batch,
    sdtw,
    sdtw_batch,
    warping_path,
)
from .paths import Paths

__version__ = "0.1.0"

__all__ = [
    "Paths",
    "dtw",
    "ndtw",
    "sdtw",
    "warping_path",
    "dtw_prefix",
    "dtw_batch",
    "ndtw_batch",
    "sdtw_batch",
    "dtw_matrix",
    "__version__",
]
