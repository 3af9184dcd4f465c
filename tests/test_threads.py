"""Thread safety and interruption of the batch engine.

* many Python threads calling the batch functions at once on shared inputs get the serial results;
* ``workers=1`` and ``workers=-1`` (and an explicit over-subscription) are bit-identical on
  thousands of pairs, exact, banded and FastDTW, coordinates and nodes;
* a long batch stops promptly on Ctrl-C (SIGINT) and leaves the process usable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import navdtw
from navdtw import Paths

# Ctrl-C is simulated with os.kill(pid, SIGINT), which is POSIX: on Windows it terminates the process.
posix_signals = pytest.mark.skipif(sys.platform == "win32", reason="os.kill(pid, SIGINT) is POSIX-only")


def _coordinate_batch(rng, count, lo=2, hi=40, dim=2):
    lengths = rng.integers(lo, hi, size=count)
    return [np.cumsum(rng.normal(0, 1.0, size=(n, dim)), axis=0).astype(np.float32) for n in lengths]


def _node_batch(rng, count, n_nodes, lo=1, hi=25):
    return [rng.integers(0, n_nodes, size=int(n)) for n in rng.integers(lo, hi, size=count)]


def _matrix(rng, n_nodes, inf_fraction=0.05):
    m = rng.uniform(0, 20, size=(n_nodes, n_nodes)).astype(np.float32)
    m = np.minimum(m, m.T)
    np.fill_diagonal(m, 0)
    m[rng.random((n_nodes, n_nodes)) < inf_fraction] = np.inf
    return m


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(20240601)
    refs = Paths.from_list(_coordinate_batch(rng, 3000))
    qrys = Paths.from_list(_coordinate_batch(rng, 3000))
    mats = [_matrix(rng, 30), _matrix(rng, 17)]
    nrefs = Paths.from_list(_node_batch(rng, 3000, 17))
    nqrys = Paths.from_list(_node_batch(rng, 3000, 17))
    env = rng.integers(0, 2, size=3000)
    pairs = np.stack([rng.integers(0, 3000, 5000), rng.integers(0, 3000, 5000)], axis=1)
    return {"refs": refs, "qrys": qrys, "mats": mats, "nrefs": nrefs, "nqrys": nqrys, "env": env, "pairs": pairs}


CALLS = {
    "dtw": lambda d, w: navdtw.dtw_batch(d["refs"], d["qrys"], workers=w),
    "band 2": lambda d, w: navdtw.dtw_batch(d["refs"], d["qrys"], window=2, workers=w),
    "band 0": lambda d, w: navdtw.ndtw_batch(d["refs"], d["qrys"], window=0, workers=w),
    "fastdtw 1": lambda d, w: navdtw.dtw_batch(d["refs"], d["qrys"], radius=1, workers=w),
    "fastdtw 0": lambda d, w: navdtw.sdtw_batch(d["refs"], d["qrys"], radius=0, workers=w),
    "pairs": lambda d, w: navdtw.dtw_batch(d["refs"], d["qrys"], pairs=d["pairs"], workers=w),
    "pairs fastdtw 2": lambda d, w: navdtw.dtw_batch(d["refs"], d["qrys"], pairs=d["pairs"], radius=2, workers=w),
    "matrix": lambda d, w: navdtw.dtw_matrix(
        Paths.from_list(d["refs"].tolist()[:60]), Paths.from_list(d["qrys"].tolist()[:50]), workers=w
    ),
    "nodes env": lambda d, w: navdtw.dtw_batch(d["nrefs"], d["nqrys"], distances=d["mats"][1], workers=w),
    "nodes two envs": lambda d, w: navdtw.sdtw_batch(
        d["nrefs"], d["nqrys"], distances=d["mats"], env=d["env"], workers=w
    ),
    "nodes band": lambda d, w: navdtw.dtw_batch(d["nrefs"], d["nqrys"], distances=d["mats"][0], window=1, workers=w),
    "evaluate": lambda d, w: navdtw.evaluate(d["refs"], d["qrys"], workers=w, metrics=["ndtw", "sdtw", "cls"])["ndtw"],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_workers_bit_identical(data, name):
    one = CALLS[name](data, 1)
    for workers in (-1, 3, 8):
        many = CALLS[name](data, workers)
        assert many.dtype == one.dtype and np.array_equal(many, one, equal_nan=True), f"workers={workers}"


def test_workers_bit_identical_sizes(data):
    """Every batch size around the chunking boundaries, with more workers than pairs."""
    refs, qrys = data["refs"].tolist(), data["qrys"].tolist()
    for size in (1, 2, 3, 15, 16, 17, 31, 33, 64, 65, 127, 129):
        one = navdtw.dtw_batch(refs[:size], qrys[:size], workers=1)
        for workers in (2, 16):
            assert np.array_equal(navdtw.dtw_batch(refs[:size], qrys[:size], workers=workers), one), (size, workers)


def test_many_python_threads(data):
    """8 Python threads call the batch functions at once on the same inputs (each also using the
    engine's own worker threads); everything equals the serial results."""
    names = sorted(CALLS)
    serial = {name: CALLS[name](data, 1) for name in names}
    results, errors = {}, []
    barrier = threading.Barrier(8)

    def worker(k):
        try:
            barrier.wait()
            for rep in range(2):
                for j, name in enumerate(names):
                    if (j + k + rep) % 2 == 0:  # every thread a different mix, all in flight together
                        results[(k, rep, name)] = CALLS[name](data, 1 + (k % 3))
        except BaseException as e:
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    assert len(results) == 8 * len(names)
    for (k, rep, name), got in results.items():
        assert np.array_equal(got, serial[name], equal_nan=True), (k, rep, name)


def test_threads_share_inputs_read_only(data):
    """The engine never writes into the caller's arrays (shared across threads)."""
    before = (data["refs"].values.copy(), data["refs"].offsets.copy(), data["mats"][0].copy())
    threads = [threading.Thread(target=CALLS[n], args=(data, 2)) for n in ("dtw", "nodes band", "fastdtw 1")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert np.array_equal(before[0], data["refs"].values)
    assert np.array_equal(before[1], data["refs"].offsets)
    assert np.array_equal(before[2], data["mats"][0])


INTERRUPT = """
import os, signal, threading, time
import numpy as np
import navdtw

WORKERS = {workers}
rng = np.random.default_rng(0)
long = np.cumsum(rng.normal(size=(3000, 2)), axis=0).astype(np.float32)
pairs = np.zeros(({count}, 2), np.int64)  # {count} pairs of 3000 x 3000 points: about 10-20 s of work
sent = []

def interrupt():
    sent.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)

threading.Timer(0.5, interrupt).start()
start = time.perf_counter()
try:
    navdtw.dtw_batch([long], [long], pairs=pairs, {extra}workers=WORKERS)
except KeyboardInterrupt:
    print("interrupted after", time.perf_counter() - sent[0])
else:
    raise SystemExit("the batch finished (%.1f s) without KeyboardInterrupt" % (time.perf_counter() - start))
# the process stays usable: small calls, batches and threads work and give the right value
a = np.array([[0.0, 0.0], [3.0, 4.0]], np.float32)
assert navdtw.dtw(a, a[:1]) == 5.0
assert list(navdtw.dtw_batch([a, a], [a[:1], a], workers=WORKERS)) == [5.0, 0.0]
print("usable")
"""


@pytest.mark.slow  # a batch that runs for seconds, so that the interrupt lands inside it
@posix_signals
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    "extra, count", [("", 2000), ("radius=1, ", 15000), ("window=50, ", 10000)], ids=["exact", "fastdtw", "band"]
)
def test_keyboard_interrupt_stops_batch(workers, extra, count):
    code = textwrap.dedent(INTERRUPT.format(workers=workers, extra=extra, count=count))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"returncode {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    lines = proc.stdout.split("\n")
    delay = float(lines[0].split()[-1])
    # "within about a second"; sanitizer builds are ~3x slower per pair, so allow them more
    limit = 3.0 if "asan" in os.environ.get("LD_PRELOAD", "") else 1.0
    assert delay < limit, f"KeyboardInterrupt came {delay:.2f} s after SIGINT"
    assert "usable" in proc.stdout


INTERRUPT_NODES = """
import os, signal, threading, time
import numpy as np
import navdtw

rng = np.random.default_rng(0)
mats = [rng.uniform(0, 10, size=(300, 300)).astype(np.float32) for _ in range(2)]
{paths}
env = np.arange(len(pairs)) % 2
sent = []
threading.Timer(0.5, lambda: (sent.append(time.perf_counter()), os.kill(os.getpid(), signal.SIGINT))).start()
try:
    navdtw.dtw_batch(refs, refs, distances=mats, env=env, pairs=pairs, workers={workers})
except KeyboardInterrupt:
    print("interrupted after", time.perf_counter() - sent[0])
else:
    raise SystemExit("the batch finished without KeyboardInterrupt")
value = navdtw.dtw_batch([[0, 1]], [[1]], distances=mats, env=[1], workers={workers})[0]
assert value == float(mats[1][0, 1]) + float(mats[1][1, 1])
print("usable")
"""

NODE_PATHS = {
    # blocks of long paths run uncopied (batch.hpp, for_each_node_pair): 3000 x 3000 ids a pair
    "long": "refs = [rng.integers(0, 300, 3000)]\npairs = np.zeros((4000, 2), np.int64)",
    # blocks of short paths are packed and grouped by environment: 10 M pairs of 16 x 16 ids
    "short": "refs = navdtw.Paths(rng.integers(0, 300, 16 * 1000).astype(np.int32), np.arange(0, 16001, 16))\n"
    "pairs = rng.integers(0, 1000, size=(10_000_000, 2))",
}


@pytest.mark.slow  # as above
@posix_signals
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("paths", ["long", "short"])
def test_keyboard_interrupt_stops_node_batch_over_environments(workers, paths):
    code = textwrap.dedent(INTERRUPT_NODES.format(workers=workers, paths=NODE_PATHS[paths]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"returncode {proc.returncode}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    delay = float(proc.stdout.split("\n")[0].split()[-1])
    limit = 3.0 if "asan" in os.environ.get("LD_PRELOAD", "") else 1.0
    assert delay < limit, f"KeyboardInterrupt came {delay:.2f} s after SIGINT"
    assert "usable" in proc.stdout


SINGLE_LONG_PAIR = """
import os, signal, threading, time
import numpy as np
import navdtw

a = np.random.default_rng(0).normal(size=(50000, 2)).astype(np.float32)  # 2.5e9 cells, a few seconds
sent = []
threading.Timer(0.5, lambda: (sent.append(time.perf_counter()), os.kill(os.getpid(), signal.SIGINT))).start()
try:
    navdtw.{call}
except KeyboardInterrupt:
    print("interrupted after", time.perf_counter() - sent[0])
"""


@pytest.mark.slow
@posix_signals
@pytest.mark.skipif(
    "asan" in os.environ.get("LD_PRELOAD", ""), reason="3x slower under the sanitizer; no memory access to check"
)
@pytest.mark.parametrize("call", ["dtw(a, a)", "dtw_batch([a], [a], workers=2)"])
def test_keyboard_interrupt_inside_one_long_pair(call):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SINGLE_LONG_PAIR.format(call=call))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    delay = float(proc.stdout.split()[-1])
    assert delay < 1.0, f"KeyboardInterrupt came {delay:.2f} s after SIGINT"
