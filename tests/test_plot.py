"""navdtw.plot: the paper's figures render to non-empty PNG files, without warnings."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import navdtw
from navdtw import plot
from navdtw.synthetic import PAIR_KINDS, SyntheticWorld

PNG = b"\x89PNG\r\n\x1a\n"

REF = np.array([[0, 0], [1, 0], [2, 0.5], [3, 1.5], [4, 2]], dtype=np.float64)
QRY = np.array([[0, 0], [0.8, 0.6], [1.7, 1.2], [2.5, 1.5], [3.2, 2.2], [4.2, 2.4]], dtype=np.float64)


def _png(path):
    data = path.read_bytes()
    assert data[:8] == PNG and len(data) > 5_000
    return data


def test_plot_alignment_default_path(tmp_path):
    fig = plot.plot_alignment(REF, QRY, title="Figure 1")
    title = fig.axes[0].get_title()
    value, _ = navdtw.warping_path(REF, QRY)
    assert f"DTW = {value:.2f}" in title
    assert f"nDTW = {navdtw.ndtw(REF, QRY, threshold=3.0):.3f}" in title
    assert fig.axes[0].get_aspect() == 1.0
    assert plot.save(fig, tmp_path / "alignment.png") == tmp_path / "alignment.png"
    _png(tmp_path / "alignment.png")
    assert not list(tmp_path.glob(".*.tmp"))


def test_plot_alignment_given_path_and_axes(tmp_path):
    Figure = pytest.importorskip("matplotlib.figure").Figure
    fig = Figure(figsize=(8, 4))
    axes = fig.subplots(1, 2)
    _, path = navdtw.warping_path(REF, QRY)
    plot.plot_alignment(REF, QRY, path, ax=axes[0], dtw=1.5, threshold=1.0, legend=False)
    assert "DTW = 1.50" in axes[0].get_title()
    assert f"nDTW = {np.exp(-1.5 / 5):.3f}" in axes[0].get_title()
    # [n, 3] points: aligned in 3-D, the first two columns drawn
    plot.plot_alignment(np.c_[REF, np.zeros(len(REF))], np.c_[QRY, np.ones(len(QRY))], ax=axes[1])
    plot.save(fig, tmp_path / "two.png")
    _png(tmp_path / "two.png")


def test_plot_alignment_rejects_bad_input():
    with pytest.raises(ValueError, match="reference_xy"):
        plot.plot_alignment(np.zeros((0, 2)), QRY)
    with pytest.raises(ValueError, match="path"):
        plot.plot_alignment(REF, QRY, path=np.array([[0, 0], [9, 9]]))


def test_plot_pairs_grid_sorted_by_ndtw(tmp_path):
    world = SyntheticWorld.generate(seed=1)
    refs, queries = world.sample_pairs(10, seed=2)
    scores = navdtw.evaluate(refs, queries, distances=world.distances, threshold=world.threshold)
    pairs = [(world.positions[r], world.positions[q]) for r, q in zip(refs, queries)]
    kinds = [PAIR_KINDS[i % len(PAIR_KINDS)] for i in range(len(refs))]
    fig = plot.plot_pairs_grid(pairs, scores, titles=kinds, ncols=4, suptitle="sorted")
    shown = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(shown) == 10
    values = [float(t.split("= ")[-1]) for t in shown]
    assert values == sorted(values, reverse=True)
    plot.save(fig, tmp_path / "grid.png")
    _png(tmp_path / "grid.png")
    with pytest.raises(ValueError, match="scores"):
        plot.plot_pairs_grid(pairs, scores["ndtw"][:3])


def test_plot_histograms(tmp_path):
    world = SyntheticWorld.generate(seed=0)
    refs, queries = world.sample_pairs(30, seed=0)
    scores = navdtw.evaluate(refs, queries, distances=world.distances, threshold=world.threshold)
    fig = plot.plot_histograms(scores, metrics=("ndtw", "sdtw", "spl", "ne", "pl"), title="run")
    assert sum(1 for ax in fig.axes if ax.get_title()) == 5
    plot.save(fig, tmp_path / "hist.png")
    _png(tmp_path / "hist.png")


def test_plot_histograms_mapping_with_inf_and_missing_metrics(tmp_path):
    values = {"ndtw": np.array([0.0, 0.5, 1.0]), "dtw": np.array([1.0, np.inf, 2.0])}
    fig = plot.plot_histograms(values, metrics=("ndtw", "dtw", "sed"))
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 2 and "1 inf left out" in titles[1]
    plot.save(fig, tmp_path / "h.png", dpi=60)
    assert (tmp_path / "h.png").read_bytes()[:8] == PNG
    with pytest.raises(ValueError, match="none of the metrics"):
        plot.plot_histograms(values, metrics=("spl",))


def test_save_closes_pyplot_figures(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    fig, ax = plt.subplots()
    plot.plot_alignment(REF, QRY, ax=ax)
    plot.save(fig, tmp_path / "p.png", close=True)
    assert not plt.fignum_exists(fig.number)
    _png(tmp_path / "p.png")
