"""Type stubs for navdtw._core, the compiled engine. Use the navdtw package API instead: these
functions expect prepared arrays (float32 coordinates, int32/int64 node ids, int64 offsets)."""

from collections.abc import Sequence
from typing import Literal, TypedDict

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
NodeArray = npt.NDArray[np.int32] | npt.NDArray[np.int64]

MAX_PATH_CELLS: int

SimdKernel = Literal["avx512", "avx2", "neon", "portable"]

def simd_available() -> bool: ...
def simd_enabled() -> bool: ...
def simd_kernels() -> list[SimdKernel]: ...
def set_simd(kernel: bool | Literal["auto", "avx512", "avx2", "neon", "portable"]) -> None: ...
def simd_kernel_for(
    pairs: int, cells_per_pair: float, precision: Literal["double", "single"] = "double"
) -> SimdKernel: ...

class BuildInfo(TypedDict):
    """What ``build_info()`` returns (``navdtw.show_config()`` prints it)."""

    simd_kernel: SimdKernel  # lane kernel batches use now (most batches, when chosen automatically)
    simd_choice: Literal["auto", "avx512", "avx2", "neon", "portable"]  # "auto", or the kernel forced
    simd_per_batch: str  # the automatic choice's exception, e.g. avx512 for long double batches ("" if none)
    simd_kernels: list[SimdKernel]  # kernels this build and CPU run, widest first, "portable" last
    simd_compiled: list[str]  # lane kernels built into this module: ["avx512", "avx2"], ["neon"] or []
    cpu_avx2: bool  # this CPU and OS run AVX2 (False off x86-64)
    cpu_avx512: bool  # this CPU and OS run AVX-512F (False off x86-64)
    compiler: str  # e.g. "GCC 12.2.0", "Clang 14.0.6", "MSVC 193933523"
    hardware_threads: int  # std::thread::hardware_concurrency() (0 if unknown)
    pybind11: str  # pybind11 version the module was built with
    gil_not_used: bool  # declared safe without the GIL (free-threaded CPython)

def build_info() -> BuildInfo: ...

STATS: tuple[str, ...]

def dtw_points(
    ref_values: F32,
    ref_offsets: I64,
    qry_values: F32,
    qry_offsets: I64,
    *,
    pairs: I64 | None = None,
    all_pairs: bool = False,
    window: int = -1,
    radius: int = -1,
    workers: int = 1,
    precision: Literal["double", "single"] = "double",
) -> F64: ...
def dtw_nodes(
    ref_values: NodeArray,
    ref_offsets: I64,
    qry_values: NodeArray,
    qry_offsets: I64,
    distances: Sequence[F32],
    *,
    env: I64 | None = None,
    pairs: I64 | None = None,
    all_pairs: bool = False,
    window: int = -1,
    workers: int = 1,
    precision: Literal["double", "single"] = "double",
) -> F64: ...
def dtw_anchored_points(
    ref_values: F32,
    ref_offsets: I64,
    qry_values: F32,
    qry_offsets: I64,
    anchor_values: I64,
    anchor_offsets: I64,
    *,
    pairs: I64 | None = None,
    exclusive: bool = False,
    window: int = -1,
    workers: int = 1,
) -> F64: ...
def dtw_anchored_nodes(
    ref_values: NodeArray,
    ref_offsets: I64,
    qry_values: NodeArray,
    qry_offsets: I64,
    distances: Sequence[F32],
    anchor_values: I64,
    anchor_offsets: I64,
    *,
    env: I64 | None = None,
    pairs: I64 | None = None,
    exclusive: bool = False,
    window: int = -1,
    workers: int = 1,
) -> F64: ...
def prefix_points(reference: F32, query: F32) -> F64: ...
def prefix_nodes(reference: NodeArray, query: NodeArray, distances: F32) -> F64: ...
def warping_path_points(reference: F32, query: F32) -> tuple[float, I64]: ...
def warping_path_nodes(reference: NodeArray, query: NodeArray, distances: F32) -> tuple[float, I64]: ...
def stats_points(
    ref_values: F32,
    ref_offsets: I64,
    qry_values: F32,
    qry_offsets: I64,
    *,
    pairs: I64 | None = None,
    threshold: float = 3.0,
    workers: int = 1,
) -> F64: ...
def stats_nodes(
    ref_values: NodeArray,
    ref_offsets: I64,
    qry_values: NodeArray,
    qry_offsets: I64,
    distances: Sequence[F32],
    *,
    env: I64 | None = None,
    pairs: I64 | None = None,
    threshold: float = 3.0,
    workers: int = 1,
) -> F64: ...
def random_walks(
    indptr: I64,
    indices: I64,
    starts: I64,
    base: I64,
    step_counts: I64,
    first: int,
    count: int,
    seed: int,
    workers: int = 1,
) -> tuple[I64, I64, I64]: ...
def reward_step_points(
    ref_values: F32,
    columns: F64,
    ref_offsets: I64,
    steps: I64,
    dtw: F64,
    ndtw: F64,
    active: U8,
    points: F32,
    rewards: F64,
    threshold: float,
    workers: int = 1,
) -> None: ...
def reward_step_nodes(
    ref_values: I64,
    columns: F64,
    ref_offsets: I64,
    steps: I64,
    dtw: F64,
    ndtw: F64,
    active: U8,
    points: I64,
    rewards: F64,
    distances: Sequence[F32],
    env: I64 | None = None,
    threshold: float = 3.0,
    workers: int = 1,
) -> None: ...

class PointStepper:
    """One episode's streaming nDTW against a coordinate reference (rounded to float32): the last DP
    column, extended by one point a step (``reward_step_points``'s kernel and reward rule). Used
    by navdtw.habitat's measures; ``limit`` is navdtw.engine.MAX_COORDINATE."""

    def __init__(self, reference: F64 | Sequence[Sequence[float]], threshold: float, limit: float) -> None: ...
    def step(self, point: Sequence[float]) -> float: ...
    def reset(self, reference: F64 | Sequence[Sequence[float]] | None = None) -> None: ...
    @property
    def dtw(self) -> float: ...
    @property
    def ndtw(self) -> float: ...
    @property
    def gain(self) -> float: ...
    @property
    def steps(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def threshold(self) -> float: ...

class WorConfidenceSequence:
    """A confidence sequence for the mean of a finite population of values in [0, 1] sampled without replacement."""

    def __init__(self, population: int, alpha: float, grid: int) -> None: ...
    def update(self, x: float) -> None: ...
    def extend(self, x: F64) -> None: ...
    def interval(self) -> tuple[float, float]: ...
    @property
    def count(self) -> int: ...
    @property
    def sum(self) -> float: ...
    @property
    def emptied(self) -> int: ...

def wor_confidence_path(x: F64, *, population: int, alpha: float, grid: int) -> tuple[F64, F64, int]: ...
