"""A small usage file type-checked against navdtw's stubs (_core.pyi, py.typed) by test_typing.py."""

import numpy as np

import navdtw
from navdtw import _core

r = np.zeros((3, 2), np.float32)
q = np.zeros((4, 2), np.float32)
d: np.ndarray = _core.dtw_points(r, np.array([0, 3], np.int64), q, np.array([0, 4], np.int64), workers=1)
d32: np.ndarray = _core.dtw_points(r, np.array([0, 3], np.int64), q, np.array([0, 4], np.int64), precision="single")
value, path = _core.warping_path_points(r, q)
cost: float = value
stats: tuple = _core.STATS
simd: bool = _core.simd_available()
kernel: str = _core.build_info()["simd_kernel"]
kernels: list[str] = list(_core.simd_kernels())
_core.set_simd("portable")
_core.set_simd(True)
long_kernel: str = _core.simd_kernel_for(200, 1e6, "single")
threads: int = _core.build_info()["hardware_threads"]
single: float = navdtw.dtw(r, q)
batch = navdtw.dtw_batch([r], [q], workers=1)
batch32 = navdtw.dtw_batch([r], [q], precision="single")
scores = navdtw.evaluate([r], [q])
