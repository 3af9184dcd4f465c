"""navdtw.datasets.matterport: the connectivity readers load_navgraph and navdtw.load_connectivity
(their file-format tests are in test_graphs.py)."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import navdtw
from navdtw import datasets, graphs
from navdtw.datasets import matterport


def entries():
    pose = np.eye(4)
    out = []
    for k, (x, y) in enumerate([(0, 0), (3, 4), (3, 8)]):
        pose[:3, 3] = (x, y, 0)
        unob = [abs(k - j) == 1 for j in range(3)]
        out.append({"image_id": f"v{k}", "pose": pose.ravel().tolist(), "included": True, "unobstructed": unob})
    return out


def test_one_reader_under_every_name():
    assert navdtw.load_connectivity is matterport.load_connectivity
    assert datasets.load_connectivity is matterport.load_connectivity
    # graphs know no file format since 0.2: the old spelling says where the reader went
    with pytest.raises(AttributeError, match=r"navdtw\.graphs\.load_connectivity moved to the readers"):
        graphs.load_connectivity  # noqa: B018
    assert not hasattr(navdtw.NavGraph, "from_connectivity")


def test_load_navgraph(tmp_path):
    path = tmp_path / "scanA_connectivity.json"
    path.write_text(json.dumps(entries()))
    g = matterport.load_navgraph(path)
    assert g.name == "scanA" and g.ids == ["v0", "v1", "v2"] and g.edges.tolist() == [[0, 1], [1, 2]]
    np.testing.assert_allclose(g.weights, [5.0, 4.0])
    # gzipped or with a byte-order mark: the same graph, like every other reader of the package
    gz = tmp_path / "scanB_connectivity.json"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    np.testing.assert_array_equal(matterport.load_navgraph(gz).distances, g.distances)
    gz.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    np.testing.assert_array_equal(matterport.load_navgraph(gz).distances, g.distances)
    gz.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match=r"scanB_connectivity\.json: not UTF-8"):
        matterport.load_navgraph(gz)


def test_load_connectivity_order_and_errors(tmp_path):
    for scan in ("b", "a"):
        (tmp_path / f"{scan}{matterport.SUFFIX}").write_text(json.dumps(entries()))
    assert matterport.load_connectivity(tmp_path).scans == ["a", "b"]
    assert matterport.load_connectivity(tmp_path, scans=["b"]).scans == ["b"]
    with pytest.raises(FileNotFoundError, match="'c'"):
        matterport.load_connectivity(tmp_path, scans=["c"])
    bad = entries()
    bad[1]["pose"] = bad[1]["pose"][:3]
    (tmp_path / f"c{matterport.SUFFIX}").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match=r"c_connectivity\.json: entry 1: 'pose' must be a list of 16 numbers"):
        matterport.load_connectivity(tmp_path, scans=["c"])
