"""Type aliases shared by the package (one definition each)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

#: A file name: ``str`` or any ``os.PathLike``.
PathLike = Union[str, "os.PathLike[str]"]

#: Anything ``numpy.asarray`` turns into an array: an ndarray or a (nested) sequence.
ArrayLike = Union[np.ndarray, Sequence[Any]]
