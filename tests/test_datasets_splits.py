"""Each data set kind answers for its split (issue 32): ``DatasetKind.split_index`` reads which
episodes a split file holds with the kind's own reader, and ``navdtw order``, a results table's
``--split`` and the recognition of a file given to the wrong option ask the kinds, so a new kind is
its module and its registry entry. Proved here with a kind that only re-registers R2R under a new
name (in this test: no other file knows it)."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest
from synthetic_suite import make_world

import navdtw.datasets as ds
from navdtw.datasets import DATASETS, r2r, shapes
from navdtw.order import load_order, write_order


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("splits"))


@pytest.fixture
def copy_kind(monkeypatch):
    """R2R registered again as ``r2r-copy``: the record and its registry entry, nothing else."""
    kind = dataclasses.replace(r2r.R2R, name="r2r-copy", title="R2R (copy)")
    monkeypatch.setitem(DATASETS, kind.name, kind)
    return kind


def _episodes(path, ids, **extra):
    eps = [{"episode_id": i, "trajectory_id": k // 2, "scene_id": "mp3d/s1/s1.glb", **extra} for k, i in enumerate(ids)]
    path.write_bytes(gzip.compress(json.dumps({"episodes": eps}).encode(), mtime=0))
    return path


# --------------------------------------------------------------------------------------------
# every kind's index agrees with its own full reader
# --------------------------------------------------------------------------------------------


def test_each_kinds_index_has_the_ids_its_reader_reads(world, tmp_path):
    split = world / "data" / "split.json"
    index = ds.split_index(split)
    assert index.kind == "r2r" and index.unit == "path" and len(index.units) == 40
    assert index.ids == [r["instr_id"] for r in r2r.instructions(r2r.load_r2r(split))]
    assert index.scans == [r["scan"] for r in r2r.instructions(r2r.load_r2r(split))]
    assert index.entries == json.loads(split.read_text())
    assert ds.split_index(split, "r4r").kind == "r4r"  # the same reader under its other name
    # VLN-CE episodes: episode ids, trajectory ids as paths, scans from scene_id, instruction ids
    eps = _episodes(tmp_path / "val.json.gz", [5, 3, 9], instruction={"instruction_id": 70, "language": "en-US"})
    index = ds.split_index(eps)
    assert (index.kind, index.ids, index.paths, index.scans) == ("r2r-ce", ["5", "3", "9"], ["0", "0", "1"], ["s1"] * 3)
    assert ds.split_index(eps, "rxr-ce").groups == {"language": ["en-US"] * 3}
    # positions references, JSON Lines
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps({"episode_id": k, "path": [[0, 0], [1, 1]]}) + "\n" for k in (4, 2)))
    assert ds.split_index(refs).kind == "positions" and ds.split_index(refs).ids == ["4", "2"]
    assert ds.split_index(refs).ids == [r["episode_id"] for r in ds.load_positions(refs)]


def test_each_kinds_index_of_the_real_splits(data_dir):
    r2r_split = data_dir / "r2r" / "R2R_val_unseen.json"
    assert ds.split_index(r2r_split).ids == [r["instr_id"] for r in r2r.instructions(r2r.load_r2r(r2r_split))]
    ce = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen" / "val_unseen.json.gz"
    index = ds.split_index(ce)
    assert index.kind == "r2r-ce" and index.ids == [str(e["episode_id"]) for e in ds.load_vlnce_episodes(ce)]
    assert index.scans == [e["scan"] for e in ds.load_vlnce_episodes(ce)]
    ndh = data_dir / "cvdn" / "NDH_val_unseen.json"
    assert ds.split_index(ndh).kind == "ndh"
    assert ds.split_index(ndh).ids == [str(e["inst_idx"]) for e in ds.load_ndh(ndh)]
    r4r = data_dir / "r4r_generated" / "R4R_val_unseen.paths.json"  # num_instructions, no texts
    assert ds.split_index(r4r).ids == [r["instr_id"] for r in r2r.instructions(r2r.load_r2r(r4r))]
    for reverie in sorted((data_dir / "reverie").rglob("REVERIE_val_unseen.json"))[:1]:
        from navdtw.datasets import reverie as rv

        index = ds.split_index(reverie)
        assert index.kind == "reverie"
        assert index.ids == [r["instr_id"] for r in rv.instructions(rv.load_reverie(reverie))]


def test_a_split_of_another_kind_is_named(world, tmp_path):
    eps = _episodes(tmp_path / "val_unseen.json.gz", [1, 2])
    whose = r"^val_unseen.json.gz: not a split of r2r \(the split: .*\); it is a split of r2r-ce \(R2R-CE\)$"
    with pytest.raises(ValueError, match=whose):
        DATASETS["r2r"].split_index(eps)
    (tmp_path / "x.json").write_text(json.dumps([{"a": 1}]))
    with pytest.raises(ValueError, match=r"^x.json: not a split file of a kind navdtw reads \(r2r, r4r: the split: "):
        ds.split_index(tmp_path / "x.json")
    with pytest.raises(ValueError, match=r"^data set 'results' has no split file$"):
        DATASETS["results"].split_index(eps)
    with pytest.raises(ValueError, match=r"^unknown data set 'nope'"):
        ds.split_index(eps, "nope")


def test_a_test_split_without_paths_is_indexed(tmp_path):
    """The index needs the ids only: a test split whose reference paths are withheld is ordered."""
    test = tmp_path / "R2R_test.json"
    test.write_text(json.dumps([{"path_id": k, "scan": "s", "instructions": ["a", "b"]} for k in range(6)]))
    files = write_order(test, tmp_path / "o", seed=1)
    assert sorted(load_order(files["json"]).ids) == sorted(f"{k}_{j}" for k in range(6) for j in range(2))


def test_order_of_rxr_guide_lines_and_a_reverie_split(tmp_path):
    """Splits navdtw order refused before (RxR's guide lines had no id it knew; REVERIE's entries
    share a path_id, so ``<path_id>_<k>`` came twice): each read by its kind."""
    line = {"scan": "s", "path": ["a"], "language": "en-US"}
    lines = [{"instruction_id": 40 + k, "path_id": k // 2, **line} for k in range(6)]
    guide = tmp_path / "rxr_val_unseen_guide.jsonl.gz"
    guide.write_bytes(gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode(), mtime=0))
    files = write_order(guide, tmp_path / "o", seed=2, workers=2)
    order = load_order(files["json"])
    assert sorted(order.ids) == sorted(f"{k // 2}_{40 + k}" for k in range(6))
    copy = [json.loads(x) for x in gzip.decompress(files["split"].read_bytes()).decode().splitlines()]
    assert [f"{x['path_id']}_{x['instruction_id']}" for x in copy] == order.ids  # JSON Lines, gzipped, in order
    assert ds.split_index(files["split1"]).ids == order.ids[1::2]
    reverie = tmp_path / "REVERIE_val_unseen.json"
    entries = [
        {"id": f"7_{obj}", "path_id": 7, "objId": obj, "scan": "s", "path": ["a"], "instructions": ["x", "y"]}
        for obj in (11, 12)
    ]
    reverie.write_text(json.dumps(entries))
    order = load_order(write_order(reverie, tmp_path / "r", seed=0)["json"])
    assert sorted(order.units) == [("7_11_0", "7_11_1"), ("7_12_0", "7_12_1")]


# --------------------------------------------------------------------------------------------
# a new kind: R2R under another name, registered in this test only
# --------------------------------------------------------------------------------------------


def test_a_new_kind_orders_its_split(world, tmp_path, copy_kind):
    split = world / "data" / "split.json"
    assert ds.split_index(split, "r2r-copy").kind == "r2r-copy"
    mine = write_order(split, tmp_path / "mine", seed=5, workers=2, kind="r2r-copy")
    theirs = write_order(split, tmp_path / "theirs", seed=5, workers=2)
    for name in ("order", "json", "split", "split0", "split1"):
        assert mine[name].read_bytes() == theirs[name].read_bytes(), name


def test_a_new_kind_names_files_given_to_the_wrong_option(world, tmp_path, copy_kind):
    conn = world / "data" / "connectivity"
    eps = _episodes(tmp_path / "val_unseen.json.gz", [1, 2])
    wrong = r"^--split val_unseen.json.gz holds VLN-CE episodes .*; give it as --vlnce-episodes \(--rxrce-episodes for"
    with pytest.raises(ValueError, match=wrong):
        ds.open("r2r-copy", split=eps, connectivity=conn)
    bench = ds.open("r2r-copy", split=world / "data" / "split.json", connectivity=conn)
    assert bench.kind is copy_kind
    # R2R trajectories are the new kind's own shape: a bad one keeps the reader's message
    oracle = json.loads((world / "runs" / "oracle.json").read_text())
    oracle[0]["trajectory"][1][0] = "nowhere"
    (tmp_path / "bad.json").write_text(json.dumps(oracle))
    with pytest.raises(ValueError, match=r"^bad.json: entry 0 \(instr_id 100_0\): unknown viewpoint 'nowhere'"):
        bench.match(tmp_path / "bad.json", convention="paper")
    assert shapes.explain(world / "runs" / "oracle.json", copy_kind) is None
    # another kind's file is named for what it is, under the new kind's name
    (tmp_path / "ndh.json").write_text(json.dumps([{"inst_idx": 4, "trajectory": [["scanA_00", 0.0, 0.0]]}]))
    with pytest.raises(ValueError, match=r"^ndh.json holds CVDN/NDH trajectories .*, not what --dataset r2r-copy"):
        bench.match(tmp_path / "ndh.json")


def test_the_kinds_read_the_shapes_the_shapes_say():
    """A shape's kinds (the suggestions of the messages) and each kind's own ``predictions`` agree."""
    for kind in DATASETS.values():
        if kind.reads_scores:
            continue
        assert {s.name for s in shapes.SHAPES.values() if kind.name in s.kinds} == set(kind.predictions), kind.name
        for opt in kind.options:
            assert set(opt.shapes) <= set(shapes.SHAPES), (kind.name, opt.name)


def test_a_new_kind_is_a_results_tables_split(world, tmp_path, capsys, copy_kind):
    from navdtw.cli import main

    split = world / "data" / "split.json"
    ids = ds.split_index(split).ids
    for name, sr in (("a", 1.0), ("b", 0.0)):
        rows = [{"instr_id": i, "sr": sr if k % 3 else 1.0, "spl": 0.5} for k, i in enumerate(reversed(ids))]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = ds.open("results", split=split, dataset_kind="r2r-copy")
    table = bench.match(tmp_path / "a.jsonl")
    assert table.ids == ids and table.scans == ds.split_index(split).scans  # in split order, with its scans
    assert bench.cluster_of(table.ids) == [i.rsplit("_", 1)[0] for i in ids] and "split.json" in bench.clusters
    args = ["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--dataset", "results"]
    args += ["--dataset-kind", "r2r-copy", "--split", str(split), "--no-progress", "--resamples", "200"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    assert "120 episodes" in capsys.readouterr().out
    # without a split, the new kind's ids name their paths as R2R's do
    assert ds.open("results", dataset_kind="r2r-copy").cluster_of(["12_0", "12_1", "7_0"]) == ["12", "12", "7"]
    with pytest.raises(ValueError, match=r"^val.json.gz: not a split of r2r-copy .*; it is a split of r2r-ce"):
        ds.open("results", split=_episodes(tmp_path / "val.json.gz", [1]), dataset_kind="r2r-copy")


def test_watch_names_the_registered_kinds_that_match_part_of_a_split(tmp_path, copy_kind):
    from types import SimpleNamespace

    from navdtw.watch import Follower

    ndh = SimpleNamespace(kind=DATASETS["ndh"], matches_partial=False)  # NDH matches whole splits only
    kinds = r"\(r2r, r4r, r2r-ce, rxr-ce, positions, r2r-copy\), not ndh"
    with pytest.raises(ValueError, match=r"kinds that match a part of their split " + kinds):
        Follower(tmp_path / "preds.json", name="run", bench=ndh)


def test_navdtw_order_takes_the_new_kind(world, tmp_path, capsys, copy_kind):
    from navdtw.cli import main

    split = str(world / "data" / "split.json")
    assert main(["order", split, "--seed", "3", "--dataset", "r2r-copy", "--out", str(tmp_path / "a")]) == 0
    assert main(["order", split, "--seed", "3", "--out", str(tmp_path / "b")]) == 0  # recognised: r2r
    assert (tmp_path / "a" / "order.json").read_bytes() == (tmp_path / "b" / "order.json").read_bytes()
    capsys.readouterr()
    assert main(["order", split, "--seed", "3", "--dataset", "results", "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "--dataset results: a data set kind without a split file; choose one of r2r, r4r, r2r-ce" in err
    assert err.rstrip().endswith("positions, r2r-copy")
    assert main(["order", split, "--seed", "3", "--dataset", "r2r-ce", "--out", str(tmp_path / "d")]) == 2
    assert "split.json: not a split of r2r-ce (R2R-CE episodes ({split}.json.gz)); it is a split of r2r" in (
        capsys.readouterr().err
    )
