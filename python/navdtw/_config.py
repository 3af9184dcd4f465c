"""What this build of navdtw is and uses: ``navdtw.show_config()`` and ``navdtw info``."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

__all__ = ["config", "show_config"]


def config() -> dict[str, Any]:
    """This installation as a dict.

    Returns
    -------
    dict
        ``navdtw``, ``python``, ``platform``, ``numpy``, ``scipy`` (versions and the system),
        ``engine`` (the compiled engine's :func:`navdtw._core.build_info`: which SIMD kernel
        batches use and why, which kernels this CPU runs and which were compiled in, compiler,
        threads, GIL-free declaration), ``workers`` (what ``workers=-1`` means here) and
        ``extension`` (the compiled module's file).
    """
    import numpy
    import scipy

    from . import __version__, _core

    info = dict(_core.build_info())
    return {
        "navdtw": __version__,
        "python": sys.version.split()[0],
        "platform": f"{platform.system()} {platform.machine()}",
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "engine": info,
        "workers": {"default": -1, "cores": os.cpu_count() or 1, "hardware_threads": info["hardware_threads"]},
        "extension": getattr(_core, "__file__", "?"),
    }


def show_config() -> dict[str, Any]:
    """Prints which kernels this build and CPU use, as ``numpy.show_config()`` does.

    ``navdtw info`` prints the same.

    Returns
    -------
    dict
        The facts printed (``navdtw._config.config()``): versions, platform,
        the engine's build (``"engine"``), threads (``"workers"``) and the extension's file.
    """
    c = config()
    e = c["engine"]
    how = "chosen automatically" if e["simd_choice"] == "auto" else "forced by set_simd or NAVDTW_SIMD"
    if e["simd_per_batch"]:
        how += "; " + e["simd_per_batch"]
    compiled = ", ".join(e["simd_compiled"]) or "none"
    lines = [
        f"navdtw {c['navdtw']} on Python {c['python']}, {c['platform']}",
        f"  numpy {c['numpy']}, scipy {c['scipy']}",
        f"  engine: {c['extension']}",
        f"  compiler: {e['compiler']}, pybind11 {e['pybind11']}",
        f"  SIMD kernel in use: {e['simd_kernel']} ({how})",
        f"  SIMD kernels this CPU runs: {', '.join(e['simd_kernels'])}; compiled in: {compiled}",
        f"  threads: workers=-1 uses {c['workers']['cores']} cores (hardware threads {e['hardware_threads']})",
        f"  free-threaded Python: {'declared safe without the GIL' if e['gil_not_used'] else 'needs the GIL'}",
    ]
    print("\n".join(lines))
    return c
