"""Regression tests of the fuzzers' findings (fuzz/README.md): one test per finding, with the input
that found it, cut down by hand. Each section belongs to one fuzzer."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import navdtw
import navdtw.suite.config
from navdtw import datasets as ds
from navdtw import humanaware

ROOT = Path(__file__).resolve().parents[1]

# ============================================================================================
# Python readers: fuzz/readers.py (atheris, coverage-guided; one target per reader)
# ============================================================================================
#
# The oracle of fuzz/readers.py: a reader returns or raises ValueError / TypeError with one line
# that names the file; never another exception, a hang or a write outside its folder.


def refused(call, *names: str, match: str = "") -> str:
    """The one-line ValueError ``call()`` raises; it names every one of ``names`` and matches."""
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert "\n" not in msg, msg
    for n in names:
        assert n in msg, msg
    for bad in ("np.int64(", "np.float64(", "querys"):
        assert bad not in msg, msg
    if match:
        assert pytest.importorskip("re").search(match, msg), msg
    return msg


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def connectivity(ids, positions, edges, included=None) -> str:
    n = len(ids)
    out = []
    for k, (vp, (x, y, z)) in enumerate(zip(ids, positions)):
        un = [False] * n
        for a, b in edges:
            if k in (a, b):
                un[b if a == k else a] = True
        pose = [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, z, 0, 0, 0, 1]
        out.append(
            {"image_id": vp, "pose": pose, "included": True if included is None else included[k], "unobstructed": un}
        )
    return json.dumps(out)


# --- JSON nested deeper than Python's parser goes: RecursionError -------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "name, read",
    [
        ("R2R_val.json", ds.load_r2r),
        ("REVERIE_val.json", ds.load_reverie),
        ("NDH_val.json", ds.load_ndh),
        ("preds.json", ds.load_predictions),
        ("c.json", ds.load_havln_collisions),
        ("BBox.json", ds.load_objects),
        ("val_unseen.json.gz", ds.load_vlnce_episodes),
        ("val_unseen_gt.json.gz", ds.load_vlnce_gt),
        ("preds_ce.json", ds.load_vlnce_predictions),
        ("table.json", ds.load_results),
        ("scanA_connectivity.json", ds.matterport.load_navgraph),
    ],
)
def test_deep_json_is_refused_naming_the_file(tmp_path, name, read):
    path = write(tmp_path / name, DEEP)
    refused(lambda: read(str(path)), name, match="nested too deeply")


@pytest.mark.parametrize(
    "name, read, text",
    [
        ("guide.jsonl", ds.load_rxr_guide, '{"instruction_id": 1}\n' + DEEP + "\n"),
        ("preds.jsonl", ds.load_vlnce_predictions, '{"episode_id": 1, "path": [[0, 0, 0]]}\n' + DEEP + "\n"),
        ("table.jsonl", ds.load_results, '{"episode_id": 1, "sr": 1}\n' + DEEP + "\n"),
    ],
)
def test_deep_json_line_is_refused_naming_the_line(tmp_path, name, read, text):
    path = write(tmp_path / name, text)
    refused(lambda: read(str(path)), name, "line 2", match="nested too deeply")


# --- integers of more than 4300 digits (Python's int() limit): an anonymous ValueError ----------


@pytest.mark.parametrize(
    "name, read, text",
    [
        ("R2R_val.json", ds.load_r2r, '[{"path_id": 1' + "0" * 5000 + "}]"),
        ("BBox.json", ds.load_objects, '{"s_v": {"v": {"7": {"visible_pos": [1' + "0" * 5000 + "]}}}}"),
        ("val_unseen.json.gz", ds.load_rxrce_episodes, '{"episodes": [{"episode_id": 1' + "0" * 5000 + "}]}"),
        ("table.jsonl", ds.load_results, '{"episode_id": 1}\n{"episode_id": 1' + "0" * 5000 + "}\n"),
        ("guide.jsonl", ds.load_rxr_guide, '{"instruction_id": 1' + "0" * 5000 + "}\n"),
    ],
)
def test_huge_integer_literal_is_refused_naming_the_file(tmp_path, name, read, text):
    path = write(tmp_path / name, text)
    refused(lambda: read(str(path)), name, match="more than 4300 digits")


def test_ndh_inst_idx_string_of_5000_digits(tmp_path):
    path = write(tmp_path / "preds.json", json.dumps([{"inst_idx": "1" * 5000, "trajectory": ["a0"]}]))
    refused(lambda: ds.load_ndh_predictions(str(path)), "preds.json", "entry 0", match="5000 digits")


# --- R2R: num_instructions = 2**63 - 1 made instructions() build records forever (a hang) -------


def test_r2r_num_instructions_is_bounded(tmp_path):
    entry = {"path_id": 2, "scan": "s", "path": ["b0"], "num_instructions": 2**63 - 1}
    path = write(tmp_path / "R4R_val.json", json.dumps([entry]))
    msg = refused(lambda: ds.load_r2r(str(path)), "R4R_val.json", "entry 0 (path_id 2)", match="num_instructions")
    assert f"[0, {ds.r2r.MAX_INSTRUCTIONS}]" in msg
    entry["num_instructions"] = ds.r2r.MAX_INSTRUCTIONS
    path.write_text(json.dumps([entry]))
    assert len(ds.instructions(ds.load_r2r(str(path)))) == ds.r2r.MAX_INSTRUCTIONS


# --- connectivity: a repeated image_id was refused by NavGraph without the file's name ----------


def test_connectivity_duplicate_image_id_names_file_and_entries(tmp_path):
    text = connectivity(["a0", "a1", "a0"], [(0, 0, 0), (1, 0, 0), (2, 0, 0)], [(0, 1), (1, 2)])
    path = write(tmp_path / "conn" / "scanA_connectivity.json", text)
    refused(
        lambda: ds.matterport.load_navgraph(path),
        "scanA_connectivity.json",
        match=r"entry 2: image_id 'a0' appears twice \(also entry 0\)",
    )
    # an excluded viewpoint is not a node: its id may repeat an included one
    text = connectivity(["a0", "a1", "a0"], [(0, 0, 0), (1, 0, 0), (2, 0, 0)], [(0, 1)], included=[True, True, False])
    path.write_text(text)
    assert ds.matterport.load_navgraph(path).ids == ["a0", "a1"]


def test_connectivity_position_beyond_the_engine_range(tmp_path):
    # 1e300 apart: the edge weight overflowed to inf, a silent wrong distance
    text = connectivity(["a0", "a1"], [(0, 0, 0), (1e300, 0, 0)], [(0, 1)])
    path = write(tmp_path / "scanA_connectivity.json", text)
    refused(
        lambda: ds.matterport.load_navgraph(path), "scanA_connectivity.json", match="entry 1: pose position is beyond"
    )


# --- splits naming scans: a line break in the message, a scan id that leaves the folder ----------


def _graph_split(tmp_path, scan: str) -> tuple[Path, Path]:
    conn = tmp_path / "connectivity"
    write(conn / "scanA_connectivity.json", connectivity(["a0", "a1"], [(0, 0, 0), (1, 0, 0)], [(0, 1)]))
    split = [{"path_id": 1, "scan": scan, "path": ["a0"], "instructions": ["go"]}]
    return write(tmp_path / "R2R_val.json", json.dumps(split)), conn


def test_unknown_scan_with_a_line_break_gives_one_line(tmp_path):
    split, conn = _graph_split(tmp_path, "a\nb")
    refused(lambda: ds.open("r2r", split=split, connectivity=conn), "R2R_val.json", "entry 0 (path_id 1)")


@pytest.mark.parametrize("scan", ["../scanA", "..", "x/../scanA"])
def test_scan_id_is_a_plain_name(tmp_path, scan):
    # "../scanA" read connectivity/../scanA_connectivity.json, a file outside the folder
    split, conn = _graph_split(tmp_path, scan)
    write(tmp_path / "scanA_connectivity.json", connectivity(["a0"], [(0, 0, 0)], []))
    refused(lambda: ds.open("r2r", split=split, connectivity=conn), "R2R_val.json", match="is not a scan id")


def test_r2r_split_without_instructions_names_the_file(tmp_path):
    # was "match_predictions: the split is empty", naming neither file
    split, conn = _graph_split(tmp_path, "scanA")
    split.write_text(json.dumps([{"path_id": 1, "scan": "scanA", "path": ["a0"], "num_instructions": 0}]))
    refused(lambda: ds.open("r2r", split=split, connectivity=conn), "R2R_val.json", match="no instructions")


def test_connectivity_pose_int_beyond_float_range(tmp_path):
    # OverflowError: int too large to convert to float
    text = connectivity(["a0", "a1"], [(0, 0, 0), (1, 0, 0)], [(0, 1)]).replace(
        "[1, 0, 0, 1, ", "[1" + "0" * 400 + ", 0, 0, 1, "
    )
    path = write(tmp_path / "scanA_connectivity.json", text)
    refused(lambda: ds.matterport.load_navgraph(path), "scanA_connectivity.json", match=r"entry 1: pose\[0\] is beyond")


# --- continuous paths: huge or ragged coordinates ---------------------------------------------


def test_vlnce_coordinates_beyond_the_engine_range_are_refused_when_read(tmp_path):
    # were read, then refused by the engine at scoring time without the file or the episode
    eps = {"episodes": [{"episode_id": 1, "reference_path": [[0, 0, 0], [1e300, 0, 0]]}]}
    path = write(tmp_path / "val_unseen.json.gz", json.dumps(eps))
    refused(
        lambda: ds.load_vlnce_episodes(str(path)),
        "val_unseen.json.gz",
        "episode 0 (episode_id 1)",
        match="point 1 has a coordinate beyond",
    )
    big_int = '{"1": [[0, 0, 0], [1' + "0" * 400 + ", 0, 0]]}"  # an int beyond float's range
    preds = write(tmp_path / "preds.json", big_int)
    refused(lambda: ds.load_vlnce_predictions(str(preds)), "preds.json", "episode_id 1", match="'path' must be")


def test_r2rce_episode_without_ground_truth_names_the_files(tmp_path):
    # was "ground truth: no ground truth for episode_id 1 (1 of the 2 episodes of episodes)"
    eps = {"episodes": [{"episode_id": k, "reference_path": [[0, 0, 0]]} for k in (1, 2)]}
    e = write(tmp_path / "val_unseen.json.gz", json.dumps(eps))
    g = write(tmp_path / "val_unseen_gt.json.gz", json.dumps({"2": {"locations": [[0, 0, 0]]}}))
    p = write(tmp_path / "preds.json", json.dumps({"1": [[0, 0, 0]], "2": [[0, 0, 0]]}))
    bench = ds.open("r2r-ce", vlnce_episodes=e, vlnce_gt=g)
    refused(
        lambda: bench.match(str(p)), "val_unseen_gt.json.gz: no ground truth for episode_id 1", "val_unseen.json.gz"
    )
    # and "episodes: no episodes" for an empty episodes file
    e.write_bytes(gzip.compress(b'{"episodes": []}'))
    bench = ds.open("r2r-ce", vlnce_episodes=e, vlnce_gt=g)
    refused(lambda: bench.match(str(p)), "val_unseen.json.gz: no episodes")


def test_vlnce_gt_action_beyond_int64(tmp_path):
    gt = {"1": {"locations": [[0, 0, 0]], "actions": [1, 2**64]}}
    path = write(tmp_path / "gt.json", json.dumps(gt))
    refused(lambda: ds.load_vlnce_gt(str(path)), "gt.json", "episode_id 1", match="'actions'")


def test_positions_goal_with_a_line_break_is_one_line(tmp_path):
    # CI's readers fuzz run: a goal "a\nb" broke the message in two
    entry = {"episode_id": "e1", "path": [[0, 0], [1, 1]], "goal": "a\nb"}
    path = write(tmp_path / "refs.json", json.dumps([entry]))
    msg = refused(lambda: ds.load_positions(str(path)), "refs.json", "entry 0 (episode_id e1)")
    assert "'goal' must be a point" in msg, msg


def test_positions_ragged_path_names_the_point(tmp_path):
    # numpy's "inhomogeneous shape after 2 dimensions" message, without the file or the entry
    line = {"episode_id": "e1", "path": [[0, 0, 0], [1, 1, [0]], [2, 2, 2]]}
    path = write(tmp_path / "refs.jsonl", json.dumps(line) + "\n")
    refused(lambda: ds.load_positions(str(path)), "refs.jsonl", "line 1 (episode_id e1)", match="point 1 holds a list")


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: navdtw.dtw([[0, 0], [1]], [[0, 0]]),
            "reference: ragged path: point 1 has 1 coordinate, point 0 has 2",
        ),
        (
            lambda: navdtw.dtw_batch([[[0, 0]], [[0, 0], [1, 1, 1]]], [[[0, 0]], [[0, 0]]]),
            "references[1]: ragged path: point 1 has 3 coordinates, point 0 has 2",
        ),
        (lambda: navdtw.dtw([[0, 0]], [[0, 0], 5]), "query: ragged path: point 1 is a single number, point 0 has 2"),
        (lambda: navdtw.dtw([[0, [0]], [1, 1]], [[0, 0]]), "reference: ragged path: point 0 holds nested lists"),
        (lambda: navdtw.Paths([[0, 0], [1]], [0, 2]), "paths: ragged path: point 1 has 1 coordinate, point 0 has 2"),
        (
            lambda: navdtw.evaluate([[[0, 0, 0]]], [[[0, 0, 0], [1, 1]]]),
            "queries[0]: ragged path: point 1 has 2 coordinates, point 0 has 3",
        ),
    ],
)
def test_ragged_paths_name_the_path_and_point(call, message):
    # was numpy's "setting an array element with a sequence ... inhomogeneous shape", naming neither
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)


# --- HA-VLN counts: 2**63 and 1e300 -----------------------------------------------------------


@pytest.mark.parametrize("count", ["9223372036854775808", "1e300", "100000000000000000000000000000"])
def test_havln_count_beyond_int64_is_refused(tmp_path, count):
    # 1e300 became a 301-digit int; baseline_for then raised OverflowError
    path = write(tmp_path / "collision_num_val_unseen.json", '{"7": 1, "8": ' + count + "}")
    refused(
        lambda: ds.load_havln_collisions(str(path)),
        "collision_num_val_unseen.json",
        "entry 1 (episode_id 8)",
        match="too large",
    )


def test_humanaware_float_count_of_2_63_is_refused():
    # float(2**63) > int64 max was False (int64 max rounds up to 2**63): it wrapped to -2**63
    with pytest.raises(ValueError, match=r"collision_count\[1\] = 9\.223372036854776e\+18: count too large"):
        humanaware.evaluate([1, 1], [0.0, 2.0**63], [0, 0], [0.0, 0.0])
    assert humanaware.evaluate([1], [2.0**62], [0], [0.0]).collision_count[0] == 2**62


def test_messages_show_plain_numbers_not_numpy_reprs():
    with pytest.raises(ValueError) as info:
        humanaware.evaluate([1, 2], [0, 0], [0, 0], [0.0, 0.0])
    assert str(info.value) == "success[1] = 2: success must be 0/1 or a bool"
    with pytest.raises(ValueError) as info:
        humanaware.evaluate([1], [-3], [0], [0.0])
    assert str(info.value) == "collision_count[0] = -3: counts must be non-negative integers"


def test_engine_pairs_message_plain_numbers_and_queries():
    # was "pairs[0] = (np.int64(0), np.int64(5)): query index out of range for 1 querys"
    r = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError) as info:
        navdtw.dtw_batch([r], [r], pairs=[[0, 5]])
    assert str(info.value) == "pairs[0] = (0, 5): query index out of range for 1 queries"
    with pytest.raises(ValueError, match=r"pairs\[0\] = \(3, 0\): reference index out of range for 1 references"):
        navdtw.dtw_batch([r], [r], pairs=[[3, 0]])


# --- the harness itself: every committed seed passes the oracle -------------------------------


@pytest.mark.skipif(not (ROOT / "fuzz" / "readers.py").is_file(), reason="needs the repository's fuzz/ folder")
def test_reader_seeds_replay_under_the_oracle():
    out = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / "readers.py"), "--target", "all", "--replay"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("inputs: ok") >= 11, out.stdout


# --- results tables ----------------------------------------------------------------------------


def test_results_number_beyond_float_range_is_refused(tmp_path):
    # OverflowError: int too large to convert to float (found by reading the code beside the fuzzer);
    # then read as +inf; issue 28's answer: a number beyond float's range is a corrupt value, refused
    # naming the entry (only the evaluators' Infinity token, inf in CSV, means unreachable)
    big = "1" + "0" * 400
    corrupt = "beyond float's range: a corrupt value"
    path = write(tmp_path / "t.jsonl", f'{{"episode_id": 1, "sr": {big}}}\n{{"episode_id": 2, "sr": 0}}\n')
    refused(lambda: ds.load_results(str(path)), "t.jsonl", "line 1 (episode_id 1)", match=corrupt)
    path = write(tmp_path / "d.jsonl", '{"episode_id": 1, "ne": 1.0}\n{"episode_id": 2, "ne": 1e400}\n')
    refused(lambda: ds.load_results(str(path)), "d.jsonl", "line 2 (episode_id 2)", match=corrupt)
    path = write(tmp_path / "n.jsonl", f'{{"episode_id": 1, "ne": -{big}}}\n')
    refused(lambda: ds.load_results(str(path)), "n.jsonl", "line 1 (episode_id 1)", match=corrupt)
    path = write(tmp_path / "i.jsonl", '{"episode_id": 1, "ne": Infinity}\n{"episode_id": 2, "ne": 1.0}\n')
    assert ds.load_results(str(path)).values["ne"].tolist() == [np.inf, 1.0]  # the evaluators' token


# --- suite TOML --------------------------------------------------------------------------------


def _suite(tmp_path, text: str) -> Path:
    for name in ("preds.json", "R2R_val.json"):
        write(tmp_path / name, "x")
    (tmp_path / "connectivity").mkdir(exist_ok=True)
    return write(tmp_path / "suite.toml", text)


SUITE_HEAD = '[datasets.a]\ndataset = "r2r"\nsplit = "R2R_val.json"\nconnectivity = "connectivity"\n'


def test_suite_missing_file_with_a_line_break_gives_one_line(tmp_path):
    # "...vlnce_gt: file not found: /.../a\nb", a message of two lines
    path = _suite(tmp_path, SUITE_HEAD.replace('"R2R_val.json"', '"a\\nb"') + '[agents.m]\na = "preds.json"\n')
    refused(lambda: navdtw.suite.config.load_suite(path), "suite.toml", match=r"file not found: '.*a\\nb'")
    path.write_text(SUITE_HEAD + '[agents.m]\na = "x\\ny.json"\n')
    refused(lambda: navdtw.suite.config.load_suite(path), "suite.toml", match="predictions file not found")


@pytest.mark.parametrize(
    "text, match",
    [
        # tomllib's UnicodeDecodeError, naming no file
        (b"title = '\xff'\n", "not UTF-8 text"),
        # int() of more than 4300 digits: Python's anonymous ValueError
        ("title = 1" + "0" * 5000 + "\n", "more than 4300 digits"),
        # an unhashable kind: TypeError "unhashable type: 'list'"
        ('[datasets.a]\ndataset = ["r2r"]\n', "datasets.a.dataset: unknown data set kind"),
        # pathlib's "embedded null byte"
        (SUITE_HEAD.replace("R2R_val.json", "R2R\\u0000.json") + '[agents.m]\na = "preds.json"\n', "NUL character"),
        (SUITE_HEAD + '[agents.m]\na = "pre\\u0000ds.json"\n', "NUL character"),
        # float() of an int beyond float's range: OverflowError
        (SUITE_HEAD + '[agents.m]\na = "preds.json"\n[agents.m.reported.a]\nsr = 1' + "0" * 400 + "\n", "expected a"),
    ],
)
def test_suite_hostile_toml_is_refused_naming_the_suite(tmp_path, text, match):
    path = _suite(tmp_path, "")
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    refused(lambda: navdtw.suite.config.load_suite(path), "suite.toml", match=match)


# --- a line break in any name a message shows (fuzz/readers.py's rename_everywhere) -------------
#
# Found once the harness gave one name a line break in every file of a bundle (a mutation of its
# own: coverage does not change, so libFuzzer never kept such an input for a later mutation to
# carry to an error). Every message showing an id, a column or a key now shows it through
# _common.show / _messages.named / listed (quoted when not plain), or as TOML writes the key.


def test_results_id_with_a_line_break_in_entry_messages(tmp_path):
    # "t.jsonl: line 1 (episode_id a\nb): 'spl' must be a number"
    path = write(tmp_path / "t.jsonl", '{"episode_id": "a\\nb", "spl": "x", "success": 1}\n')
    refused(lambda: ds.load_results(str(path)), "t.jsonl", r"(episode_id 'a\nb')")
    # "duplicate episode_id 'a\\nb' (1 in all): a\nb is at line 1 and line 2"
    path = write(tmp_path / "u.jsonl", '{"episode_id": "a\\nb", "success": 1}\n' * 2)
    refused(lambda: ds.load_results(str(path)), "u.jsonl", r"'a\nb' is at line 1 and line 2")


def test_results_column_names_with_a_line_break(tmp_path):
    # the id column's name in every entry; "table.json: entry 1 (episode_id\n\n 2)"
    path = write(tmp_path / "t.csv", '"id\nx",success\n1,1\n1,0\n')
    refused(lambda: ds.load_results(str(path), id_column="id\nx"), "t.csv", match=r"duplicate 'id\\nx' 1 ")
    # select: the column and the values it holds
    path = write(tmp_path / "s.csv", 'instr_id,success,"ag\nent"\n1_0,1,"a\nb"\n1_1,0,c\n')
    msg = refused(lambda: ds.load_results(str(path), select={"ag\nent": "z"}), "s.csv")
    assert r"no row has 'ag\nent' = 'z' ('ag\nent' values: 'a\nb', c)" in msg
    # two columns giving one metric: the advice names the column as a shell argument, on one line
    path = write(tmp_path / "c.csv", 'instr_id,c,"a\nb"\n1_0,1,1\n')
    msg = refused(lambda: ds.load_results(str(path), columns={"a\nb": "ne", "c": "ne"}), "c.csv")
    assert r"leave one out with --column 'a\nb=ignore'" in msg


def test_nonfinite_policy_names_an_id_with_a_line_break():
    # registry.nonfinite_policy's own "episode <id>" (the suite's scoring uses it)
    from navdtw import registry

    with pytest.raises(ValueError) as info:
        registry.nonfinite_policy({"ndtw": [np.nan]}, ids=["a\nb"], source="s.json")
    assert "\n" not in str(info.value) and r"episode 'a\nb'" in str(info.value)


def test_reverie_box_key_with_a_line_break(tmp_path):
    # "BBox.json: scanA_a2\n: expected {'a2\\n': {objId: ...}}"
    path = write(tmp_path / "BBox.json", json.dumps({"scanA_a2\n": [1]}))
    refused(lambda: ds.load_objects(str(path)), "BBox.json", r"BBox.json: 'scanA_a2\n'")
    path = write(tmp_path / "BBox.json", json.dumps({"scanA_a2": {"a2": {"o\n1": {"visible_pos": 3}}}}))
    refused(lambda: ds.load_objects(str(path)), "BBox.json", r"object 'o\n1'")


@pytest.mark.parametrize(
    "text, match",
    [
        # 'suite.toml: datasets.r\n\n2r_val.dataset: unknown data set kind'
        ('[datasets."r\\n2r"]\ndataset = "x"\n', r'datasets\."r\\n2r"\.dataset: unknown data set kind'),
        (SUITE_HEAD + '"split\\n" = 1\n', r'datasets\.a\."split\\n": unknown key'),
        # 'suite.toml: settings.alpha\r\n: unknown setting'
        (SUITE_HEAD + '[agents.m]\na = "preds.json"\n[settings]\n"alpha\\r" = 1\n', r'settings\."alpha\\r": unknown'),
        # 'suite.toml: agents.mine\r.reported.r2r_val: ne: expected a number'
        (SUITE_HEAD + '[agents."m\\r"]\na = "preds.json"\n[agents."m\\r".reported.a]\nne = "x"\n', r'agents\."m\\r"\.'),
        (
            SUITE_HEAD + '[agents.m]\na = "preds.json"\n[agents.m.reported.a]\n"sr\\n" = 2\n',
            r"'sr\\n' = 2: SR is a rate",
        ),
        (SUITE_HEAD + '[agents.m]\na = "preds.json"\n[agents.m.reported.a]\nsr = "\\n150%"\n', r"sr = '\\n150%'"),
        (SUITE_HEAD + '[agents.m]\n"a\\n" = "preds.json"\n', r'agents\.m\."a\\n": unknown data set'),
    ],
)
def test_suite_keys_with_a_line_break_are_shown_as_toml_writes_them(tmp_path, text, match):
    path = _suite(tmp_path, text)
    refused(lambda: navdtw.suite.config.load_suite(path), "suite.toml", match=match)


@pytest.mark.skipif(not (ROOT / "fuzz" / "readers.py").is_file(), reason="needs the repository's fuzz/ folder")
def test_every_seed_with_a_renamed_name_passes_the_oracle():
    # a CI-sized run of the mutation that found the findings above: every target's seeds, each
    # name in turn given a line break everywhere (30 draws per target; the long runs: fuzz/run.sh)
    code = (
        "import os, random, sys\n"
        "sys.argv = ['readers.py', '--replay']\n"
        f"sys.path.insert(0, {str(ROOT / 'fuzz')!r})\n"
        "import readers as R\n"
        "for name, t in R.TARGETS.items():\n"
        "    folder = os.path.join(R.SEEDS, name)\n"
        "    seeds = [open(os.path.join(folder, f), 'rb').read() for f in sorted(os.listdir(folder))]\n"
        "    rng = random.Random(30)\n"
        "    for k in range(30):\n"
        "        files = R.rename_everywhere(t, R.decode(seeds[k % len(seeds)]), rng)\n"
        "        if files is not None:\n"
        "            R.run_one(t, R.encode(files))\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
