"""Rules written once (issue 32): each is kept in one place that every caller uses, so a fix made
there reaches them all; the tests here hold each rule's one place to its callers.

* the optional dependencies: ``navdtw/_optional.py`` imports them and words what is missing;
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from navdtw._optional import EXTRAS, import_optional, install_hint, missing


def test_an_optional_module_is_imported_or_named_with_its_extra(monkeypatch):
    assert import_optional("json", "x").dumps([1]) == "[1]"
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError) as caught:
        import_optional("pyarrow.parquet", "p.parquet: reading Parquet")
    assert str(caught.value) == (
        'p.parquet: reading Parquet needs pyarrow: pip install "navdtw[dask]" (or pip install pyarrow)'
    )
    assert import_optional("pyarrow.parquet", "x", errors="ignore") is None
    # a module no extra brings is installed by its own name
    assert missing("pandas", "to_pandas") == "to_pandas needs pandas: pip install pandas"


def test_every_extra_named_is_one_of_the_package():
    try:
        import tomllib
    except ImportError:  # pragma: no cover - below 3.11
        import tomli as tomllib  # navdtw's own dependency below 3.11

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for module, extra in EXTRAS.items():
        # the extra brings the module, itself or as one of dask's (fsspec, distributed)
        assert any(req.startswith((module, "dask[")) for req in extras[extra]), (module, extra)
    assert install_hint("matplotlib.figure") == 'pip install "navdtw[plot]" (or pip install matplotlib)'


def test_the_callers_word_a_missing_dependency_as_the_helper(monkeypatch):
    from navdtw import distributed, metrics, plot

    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg", "pyarrow", "pyarrow.compute"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r'^a figure needs matplotlib: pip install "navdtw\[plot\]"'):
        plot.plot_alignment(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ImportError, match=r'^navdtw.distributed needs pyarrow: pip install "navdtw\[dask\]"'):
        distributed.to_arrow([np.zeros((2, 3))], [np.zeros((2, 3))])
    monkeypatch.setitem(sys.modules, "pandas", None)
    scores = metrics.evaluate([np.zeros((2, 3))], [np.zeros((2, 3))], threshold=3.0)
    with pytest.raises(ImportError, match=r"^to_pandas needs pandas: pip install pandas$"):
        scores.to_pandas()
