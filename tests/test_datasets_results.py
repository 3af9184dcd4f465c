"""Results tables (navdtw.datasets.results): per-episode metrics computed by other evaluators, read
from every format, mapped to the registry's metrics, checked (ids, rates, NaN), matched against a
split, and compared by the suite and the command line."""

from __future__ import annotations

import csv
import gzip
import json
import math
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import navdtw
from navdtw.cli import main
from navdtw.datasets import DATASETS, load_results
from navdtw.datasets import results as rs

INF, NAN = float("inf"), float("nan")

# The RxR-CE log line (an agent that ended where the goal is unreachable), and two more.
VLNCE_ROWS = [
    {"scene_id": "oLBMNvg9in8", "episode_id": "9971", "success": 0.0, "spl": NAN, "os": 0.0, "ne": INF, "steps": 401},
    {"scene_id": "oLBMNvg9in8", "episode_id": 9972, "success": 1.0, "spl": 0.8, "os": 1.0, "ne": 1.25, "steps": 40},
    {"scene_id": "mp3d/zsNo4HB9uLZ/zsNo4HB9uLZ.glb", "episode_id": 3, "success": 0.0, "spl": 0.0, "os": 1.0,
     "ne": 4.5, "steps": 77},
]  # fmt: skip


def write(path, rows, fmt: str):
    """Writes ``rows`` (dicts) as ``fmt``: jsonl, json (a list), keyed ({id: rest}), csv, tsv, parquet."""
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "json":
        path.write_text(json.dumps(rows))
    elif fmt == "keyed":
        path.write_text(
            json.dumps({str(r["episode_id"]): {k: v for k, v in r.items() if k != "episode_id"} for r in rows})
        )
    elif fmt in ("csv", "tsv"):
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with open(path, "w", newline="") as f:
            w = csv.writer(f, delimiter="\t" if fmt == "tsv" else ",")
            w.writerow(keys)
            w.writerows([[repr(r[k]) if isinstance(r.get(k), float) else r.get(k, "") for k in keys] for r in rows])
    elif fmt == "parquet":
        pa = pytest.importorskip("pyarrow")
        pq = pytest.importorskip("pyarrow.parquet")
        keys = list(dict.fromkeys(k for r in rows for k in r))
        pq.write_table(pa.table({k: [r.get(k) for r in rows] for k in keys}), path)
    else:  # pragma: no cover
        raise AssertionError(fmt)
    return path


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# --------------------------------------------------------------------------------------------
# formats
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["jsonl", "json", "keyed", "csv", "tsv", "parquet"])
def test_every_format_reads_the_same_table(tmp_path, fmt):
    rows = [{**r, "episode_id": str(r["episode_id"])} for r in VLNCE_ROWS]
    if fmt == "parquet":  # one type per column
        rows = [{**r, "steps": float(r["steps"])} for r in rows]
    t = load_results(write(tmp_path / f"t.{fmt}", rows, fmt))
    assert t.ids == ["9971", "9972", "3"]
    assert list(t.values) == ["sr", "spl", "osr", "ne", "steps"]
    assert same(t.values["sr"], [0, 1, 0])
    assert same(t.values["spl"], [0, 0.8, 0])  # NaN where success is 0: 0 by SPL's formula
    assert same(t.values["ne"], [INF, 1.25, 4.5])  # an unreachable goal: +inf kept for the statistics
    assert t.scans == ["oLBMNvg9in8", "oLBMNvg9in8", "zsNo4HB9uLZ"]
    assert t.columns == {"success": "sr", "spl": "spl", "os": "osr", "ne": "ne", "steps": "steps"}
    assert t.rates == {"sr", "spl", "osr"}
    assert t.directions == {"sr": True, "spl": True, "osr": True, "ne": False, "steps": None}


def test_json_non_standard_tokens_and_gzip(tmp_path):
    text = '{"episode_id": 1, "ne": Infinity, "gp": -Infinity, "success": 0, "spl": NaN}\n'
    text += '{"episode_id": 2, "ne": 0.5, "gp": 2.5, "success": 1, "spl": 1.0}\n'
    (tmp_path / "t.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    t = load_results(tmp_path / "t.jsonl.gz")
    assert same(t.values["ne"], [INF, 0.5]) and same(t.values["gp"], [-INF, 2.5]) and same(t.values["spl"], [0, 1])


def test_one_json_object_is_one_episode(tmp_path):
    """NaVid-style per-episode files: one object with the metrics and "id"."""
    (tmp_path / "stats_7.json").write_text(json.dumps({"id": 7, "success": 1, "spl": 0.5, "distance_to_goal": 1.0}))
    t = load_results(tmp_path / "stats_7.json")
    assert t.ids == ["7"] and t.id_name == "id" and same(t.values["ne"], [1.0])


def test_keyed_json_is_habitat_stats_episodes(tmp_path):
    """VLN-CE's stats_episodes: {episode_id: infos}, infos with a nested collisions object."""
    data = {
        "12": {"distance_to_goal": 2.0, "success": 1.0, "spl": 0.9, "ndtw": 0.7, "path_length": 8.0,
               "oracle_success": 1.0, "steps_taken": 60, "collisions": {"count": 3, "is_collision": False}},
        "15": {"distance_to_goal": 6.0, "success": 0.0, "spl": 0.0, "ndtw": 0.2, "path_length": 11.0,
               "oracle_success": 0.0, "steps_taken": 90, "collisions": {"count": 0, "is_collision": True}},
    }  # fmt: skip
    (tmp_path / "stats.json").write_text(json.dumps(data))
    t = load_results(tmp_path / "stats.json")
    assert t.ids == ["12", "15"] and t.id_name == "episode_id"
    assert list(t.values) == [
        "ne",
        "sr",
        "spl",
        "ndtw",
        "pl",
        "osr",
        "steps",
        "collisions.count",
        "collisions.is_collision",
    ]
    assert same(t.values["collisions.count"], [3, 0]) and same(t.values["collisions.is_collision"], [0, 1])
    assert t.directions["collisions.count"] is None  # unknown: compared, not marked


def test_rows_given_in_python():
    t = load_results([{"instr_id": "4_0", "nDTW": 0.5}, {"instr_id": "4_1", "nDTW": 0.25}])
    assert t.source == "<input>" and t.ids == ["4_0", "4_1"] and same(t.values["ndtw"], [0.5, 0.25])


# --------------------------------------------------------------------------------------------
# columns: aliases, explicit mappings, directions, text
# --------------------------------------------------------------------------------------------


def test_vln_duet_item_metrics():
    """VLN-DUET / HAMT _eval_item keys (and cal_dtw's nDTW / SDTW / CLS)."""
    row = {"instr_id": "10_0", "trajectory_lengths": 9.5, "trajectory_steps": 6, "action_steps": 5, "nav_error": 0.0,
           "oracle_error": 0.0, "success": 1.0, "oracle_success": 1.0, "spl": 0.95, "nDTW": 0.9, "SDTW": 0.9,
           "CLS": 0.8, "trajectory": [["a", 0, 0]]}  # fmt: skip
    t = load_results([row])
    assert t.columns == {
        "trajectory_lengths": "pl", "trajectory_steps": "trajectory_steps", "action_steps": "action_steps",
        "nav_error": "ne", "oracle_error": "one", "success": "sr", "oracle_success": "osr", "spl": "spl",
        "nDTW": "ndtw", "SDTW": "sdtw", "CLS": "cls",
    }  # fmt: skip
    assert "trajectory" in t.ignored and "instr_id" in t.ignored


def test_cvdn_and_reverie_names():
    t = load_results([{"inst_idx": 5, "dist_to_end_reductions": -1.5, "nav_errors": 8.0, "oracle_errors": 2.0}])
    assert t.columns == {"dist_to_end_reductions": "gp", "nav_errors": "ne", "oracle_errors": "one"}
    assert same(t.values["gp"], [-1.5])  # goal progress may be negative
    t = load_results([{"instr_id": "4634_215_0", "success": 1, "rgs": True, "rgspl": 0.9, "spl": 0.9}])
    assert same(t.values["rgs"], [1.0])  # REVERIE evaluators write RGS as a boolean


def test_havln_sr_is_the_strict_success_and_success_stays_beside_it():
    """HA-VLN's metric dict: habitat's success and its own SR (success without collisions), TCR, CR."""
    rows = [
        {"episode_id": 1, "success": 1.0, "SR": 0, "TCR": 2, "CR": 1, "spl": NAN, "distance_to_goal": 1.0},
        {"episode_id": 2, "success": 0.0, "SR": 0, "TCR": 0, "CR": 0, "spl": NAN, "distance_to_goal": 5.0},
    ]
    with pytest.raises(
        ValueError, match=r"<input>: entry 0 \(episode_id 1\): 'spl' is NaN or missing while success is 1 "
    ):
        load_results(rows)  # the formula rule reads habitat's success (1 here), not the strict SR
    t = load_results([rows[1]])
    assert t.columns == {
        "success": "success",
        "SR": "sr",
        "TCR": "tcr",
        "CR": "cr",
        "spl": "spl",
        "distance_to_goal": "ne",
    }
    assert t.directions["tcr"] is False and t.directions["cr"] is False and "cr" in t.rates
    assert any("'success' is kept under its own name: 'SR' gives sr" in n for n in t.notes)


def test_explicit_mapping_directions_and_ignore():
    rows = [
        {"id": "a", "Oracle SR": 0.5, "score": 3.0, "junk": 1.0, "spl": 0.2},
        {"id": "b", "Oracle SR": 1, "score": 1.0, "junk": 2.0, "spl": 0.1},
    ]
    t = load_results(rows, columns={"Oracle SR": "osr", "score": "-", "junk": "ignore"})
    assert list(t.values) == ["osr", "score", "spl"] and t.directions["score"] is False and "junk" in t.ignored
    t = load_results(rows, columns=["score=+", "Oracle SR=osr", "junk=ignore"])  # the command line's form
    assert t.directions["score"] is True
    rec = t.evaluate().metric("score")
    assert rec.label == "score" and rec.higher_is_better is True and not rec.rate


def test_two_columns_for_one_metric_is_an_error_unless_one_is_named_as_the_metric():
    rows = [{"episode_id": 1, "nav_error": 1.0, "distance_to_goal": 2.0}]
    with pytest.raises(
        ValueError,
        match=r"columns 'nav_error' and 'distance_to_goal' both give ne; .*--column 'distance_to_goal=ignore'",
    ):
        load_results(rows)
    t = load_results(rows, columns={"nav_error": "ignore"})
    assert same(t.values["ne"], [2.0])
    t = load_results([{"episode_id": 1, "my_spl": 0.5, "spl": 0.25}], columns={"my_spl": "spl"})
    assert same(t.values["spl"], [0.5]) and "spl" in t.ignored  # the explicit mapping wins


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"x": "nope"}, r"column 'x': unknown target 'nope'; give a metric \(pl, ne"),
        (["x"], r"expected column mappings as NAME=VALUE, got 'x'"),
        ({"x": 3}, r"'x' must be given a string"),
    ],
)
def test_bad_column_mappings(columns, message):
    with pytest.raises(ValueError, match=message):
        load_results([{"id": 1, "x": 1.0}], columns=columns)


def test_mapping_a_column_the_table_lacks_is_an_error():
    with pytest.raises(ValueError, match=r"<input>: columns: no column 'Oracle SR' in this table \(columns: id, sr\)"):
        load_results([{"id": 1, "sr": 1.0}], columns={"Oracle SR": "osr"})


def test_text_mixed_and_empty_columns(tmp_path):
    rows = [
        {"episode_id": 1, "instruction": "walk past the sofa", "n_words": 4, "flag": 7, "nothing": None, "ne": 1.0},
        {"episode_id": 2, "instruction": "3", "n_words": 1, "flag": "x", "nothing": None, "ne": 2.0},
    ]
    for t in (load_results(rows), load_results(write(tmp_path / "t.csv", rows, "csv"))):
        assert list(t.values) == ["n_words", "ne"]
        assert {"instruction", "flag", "nothing"} <= set(t.ignored)
        assert any("column 'flag' mixes numbers and text" in n for n in t.notes)


def test_a_pandas_index_column_is_ignored(tmp_path):
    (tmp_path / "t.csv").write_text(",episode_id,success\n0,5,1.0\n1,6,0.0\n")
    t = load_results(tmp_path / "t.csv")
    assert list(t.values) == ["sr"] and "" in t.ignored


# --------------------------------------------------------------------------------------------
# ids
# --------------------------------------------------------------------------------------------


def test_id_columns_in_order_and_named():
    t = load_results([{"id": "x", "instr_id": "4_0", "episode_id": 9, "sr": 1}])
    assert t.id_name == "episode_id" and t.ids == ["9"]
    t = load_results([{"id": "x", "instr_id": "4_0", "sr": 1}], id_column="instr_id")
    assert t.ids == ["4_0"] and list(t.values) == ["sr"]  # other id columns are never metrics


def test_ids_are_strings_mixed_int_and_str(tmp_path):
    t = load_results([{"episode_id": 12, "sr": 1}, {"episode_id": "13", "sr": 0}, {"episode_id": 14.0, "sr": 0}])
    assert t.ids == ["12", "13", "14"]
    with pytest.raises(
        ValueError, match=r"<input>: duplicate episode_id 12 \(1 in all\): 12 is at entry 0 and entry 1"
    ):
        load_results([{"episode_id": 12, "sr": 1}, {"episode_id": "12", "sr": 0}])
    write(tmp_path / "d.jsonl", [{"episode_id": i % 7, "sr": 1} for i in range(20)], "jsonl")
    with pytest.raises(
        ValueError,
        match=r"^d\.jsonl: duplicate episode_id 0, 1, 2, 3, 4, … \(7 in all\): 0 is at line 1 and line 8",
    ):
        load_results(tmp_path / "d.jsonl")


@pytest.mark.parametrize("bad", [None, True, 1.5, [1], {"a": 1}, ""])
def test_bad_ids(bad):
    with pytest.raises(ValueError, match=r"<input>: entry 1: 'episode_id' must be a string or an integer id"):
        load_results([{"episode_id": 1, "sr": 1}, {"episode_id": bad, "sr": 0}])


def test_no_id_column():
    with pytest.raises(
        ValueError,
        match=r"<input>: no id column \(one object: means over episodes are not per-episode results\); "
        r"name it with --id-column",
    ):
        load_results([{"success": 0.55, "spl": 0.5}])
    with pytest.raises(ValueError, match=r"no id column 'key' \(columns: id, sr\)"):
        load_results([{"id": 1, "sr": 1}], id_column="key")


def test_column_names_in_messages_stay_on_one_line(tmp_path):
    # CI's readers fuzz run: a TSV header cell '"a\nb"' (a quoted newline) broke the "no id
    # column" message in two; every listed name that is not plain is quoted.
    table = tmp_path / "table.tsv"
    table.write_text('"go\nthen stop"\t,\tsr\n1\t2\t3\n4\t5\t6\n')
    with pytest.raises(ValueError) as caught:
        load_results(table)
    message = str(caught.value)
    assert "\n" not in message
    assert "columns: 'go\\nthen stop', ',', sr" in message
    with pytest.raises(ValueError) as caught:
        load_results(table, id_column="key")
    assert str(caught.value).endswith("no id column 'key' (columns: 'go\\nthen stop', ',', sr)")


def test_listed_names():
    from navdtw._messages import listed

    assert listed(["sr", "spl"]) == "sr, spl"
    assert listed(["", "a b", "a,b", "x\x1b[2J"]) == "'', a b, 'a,b', 'x\\x1b[2J'"
    assert listed([f"c{i}" for i in range(5)], 2) == "c0, c1, … (3 more)"


def test_a_suite_episodes_file_needs_a_selection():
    rows = [
        {"dataset": d, "agent": a, "id": str(i), "scan": "s", "sr": 1.0}
        for d in ("x", "y")
        for a in ("a", "b")
        for i in range(3)
    ]
    with pytest.raises(
        ValueError,
        match=r"duplicate id .*the table holds several agents and datasets: choose rows with --select agent=NAME",
    ):
        load_results(rows)
    t = load_results(rows, select={"agent": "b", "dataset": "y"})
    assert t.ids == ["0", "1", "2"] and list(t.values) == ["sr"]
    with pytest.raises(ValueError, match=r"no row has agent = 'c' \(agent values: a, b\)"):
        load_results(rows, select=["agent=c"])


# --------------------------------------------------------------------------------------------
# rates, distances, non-finite values
# --------------------------------------------------------------------------------------------


def test_percentages_are_refused_with_the_option_named(tmp_path):
    write(
        tmp_path / "p.csv",
        [{"episode_id": 1, "sr": 100.0, "spl": 85.5}, {"episode_id": 2, "sr": 0.0, "spl": 0.0}],
        "csv",
    )
    with pytest.raises(
        ValueError,
        match=r"^p\.csv: line 2 \(episode_id 1\): 'sr' is a rate and must be a fraction in \[0, 1\], got 100: "
        r"a percentage\? Say so with --percent \(or --percent-columns sr\)$",
    ):
        load_results(tmp_path / "p.csv")
    t = load_results(tmp_path / "p.csv", percent=True)
    assert same(t.values["sr"], [1, 0]) and same(t.values["spl"], [0.855, 0])
    with pytest.raises(
        ValueError, match=r"'sr' is a rate .* got 100: a percentage\? Say so with the percent option for this column"
    ):
        load_results(tmp_path / "p.csv", percent=["spl"])
    t = load_results(tmp_path / "p.csv", percent="sr,spl")
    assert same(t.values["spl"], [0.855, 0])


def test_percent_on_fractions_and_out_of_range_rates():
    rows = [{"id": 1, "success": 1.0, "spl": 80.0}, {"id": 2, "success": 0.0, "spl": 0.0}]
    with pytest.raises(ValueError, match=r"percent: 'success' holds fractions already \(largest value 1\)"):
        load_results(rows, percent=True)
    assert same(load_results(rows, percent=["spl"]).values["spl"], [0.8, 0])
    with pytest.raises(ValueError, match=r"percent: no rate column 'ndtw'"):
        load_results(rows, percent=["spl", "ndtw"])
    for bad in (150.0, -0.5, INF):
        with pytest.raises(
            ValueError, match=r"entry 0 \(id 1\): 'ndtw' is a rate and must be a fraction in \[0, 1\], got"
        ):
            load_results([{"id": 1, "ndtw": bad}])


def test_distances_must_not_be_negative():
    with pytest.raises(ValueError, match=r"entry 0 \(id 1\): 'ne' is a distance and must be >= 0, got -1.0"):
        load_results([{"id": 1, "ne": -1.0}])
    with pytest.raises(ValueError, match=r"'path_length' is a distance and must be >= 0, got -inf"):
        load_results([{"id": 1, "path_length": -INF}])


def test_nan_defined_by_the_formula_is_its_value_and_any_other_nan_is_an_error():
    rows = [
        {"id": i, "success": s, "spl": NAN if s == 0 else 0.5, "sdtw": NAN, "ndtw": 0.3}
        for i, s in enumerate([0, 0, 1])
    ]
    with pytest.raises(
        ValueError,
        match=r"^<input>: entry 2 \(id 2\): 'sdtw' is NaN or missing while sr is 1 \(1 episode\(s\)\); "
        r"a NaN is not a score: fix or drop it$",
    ):
        load_results(rows)
    rows[2]["sdtw"] = 0.3
    t = load_results(rows)
    assert same(t.values["spl"], [0, 0, 0.5]) and same(t.values["sdtw"], [0, 0, 0.3])
    with pytest.raises(
        ValueError, match=r"'spl' is NaN or missing \(a NaN spl is 0 where sr is 0, but there is no sr\)"
    ):
        load_results([{"id": 1, "spl": NAN}])
    t = load_results([{"id": 1, "rgs": False, "rgspl": NAN}])
    assert same(t.values["rgspl"], [0])
    with pytest.raises(ValueError, match=r"entry 0 \(id 1\): 'ne' is NaN or missing \(2 episode\(s\)\)"):
        load_results([{"id": 1, "ne": NAN}, {"id": 2, "ne": None}])
    with pytest.raises(
        ValueError,
        match=r"'steps2' is NaN or missing \(1 episode\(s\)\); a NaN is not a score: fix or drop it "
        r"\(--column 'steps2=ignore' leaves the column out\)",
    ):
        load_results([{"id": 1, "steps2": 1}, {"id": 2, "steps2": NAN}])


# --------------------------------------------------------------------------------------------
# hostile tables: one line naming the file and the entry
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", r"^t\.dat: empty file \(no rows\)$"),
        ("  \n\n", r"^t\.dat: empty file \(no rows\)$"),
        ("episode_id,success\n", r"^t\.dat: a header and no rows$"),
        ("[]", r"^t\.dat: no rows$"),
        ("{}", r"^t\.dat: no id column"),
        ("3", r"^t\.dat: empty file|^t\.dat: a header and no rows"),
        ("[1, 2]", r"^t\.dat: entry 0: expected an object \(one episode\), got int$"),
        ('{"id": 1, "sr": 1}\n{"id": 2, "sr": \n', r"^t\.dat: line 2: malformed JSON at column 17: Expecting value$"),
        ('{"id": 1, "sr": 1}\n[1]\n', r"^t\.dat: line 2: expected an object \(one episode\), got list$"),
        ('[{"id": 1, "sr": 1},', r"^t\.dat: malformed JSON at line 1 column 21"),
        ("id,sr\n1,1.0\n2\n", r"^t\.dat: line 3: 1 fields where the header has 2$"),
        ("id,sr,sr\n1,1,1\n", r"^t\.dat: line 1: the column 'sr' appears twice$"),
        ("id,sr\n1,yes\n", r"^t\.dat: line 2 \(id 1\): 'sr' must be a number, got 'yes'$"),
        (
            '[{"id": 1, "ne": 1.0}, {"id": 2, "ne": "far"}]',
            r"^t\.dat: entry 1 \(id 2\): 'ne' must be a number, got 'far'$",
        ),
        ('[{"id": 1, "ne": [1.0]}]', r"^t\.dat: entry 0 \(id 1\): 'ne' must be a number, got \[1\.0\]$"),
        ('[{"id": 1, "note": "x"}]', r"^t\.dat: no metric column \(columns: id, note\)"),
    ],
)
def test_hostile_tables(tmp_path, content, message):
    (tmp_path / "t.dat").write_text(content)
    with pytest.raises(ValueError, match=message):
        load_results(tmp_path / "t.dat")


def test_hostile_files(tmp_path):
    with pytest.raises(ValueError, match=r"a folder without files \(its subfolders are read with --recursive\)"):
        load_results(tmp_path)  # a folder is one run's files (NaVid's log/): here, none
    (tmp_path / "b.csv").write_bytes(b"id,sr\n\xff\xfe,1\n")
    with pytest.raises(ValueError, match=r"^b\.csv: not UTF-8 text"):
        load_results(tmp_path / "b.csv")
    (tmp_path / "g.jsonl.gz").write_bytes(gzip.compress(b'{"id": 1, "sr": 1}\n')[:-8])
    with pytest.raises(ValueError, match=r"^g\.jsonl\.gz: corrupt or truncated gzip data"):
        load_results(tmp_path / "g.jsonl.gz")
    (tmp_path / "p.parquet").write_bytes(b"PAR1" + b"\0" * 20)
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=r"^p\.parquet: not a readable Parquet file"):
        load_results(tmp_path / "p.parquet")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "p.parquet").write_bytes(b"PAR1" + b"\0" * 20)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r'p\.parquet: reading Parquet needs pyarrow: pip install "navdtw\[dask\]"'):
        load_results(tmp_path / "p.parquet")


# --------------------------------------------------------------------------------------------
# navdtw's own per-episode files, read back
# --------------------------------------------------------------------------------------------


def _scores(n=40, seed=1):
    rng = np.random.default_rng(seed)
    refs = [rng.normal(size=(int(rng.integers(2, 8)), 3)) for _ in range(n)]
    qrys = [r + rng.normal(scale=float(rng.uniform(0.1, 4)), size=r.shape) for r in refs]
    return navdtw.evaluate(refs, qrys, ids=[f"{k // 3}_{k % 3}" for k in range(n)])


def test_scores_to_csv_round_trip(tmp_path):
    scores = _scores()
    scores.to_csv(tmp_path / "episodes.csv", columns={"instr_id": scores.ids, "scan": ["s"] * len(scores)})
    t = load_results(tmp_path / "episodes.csv")
    assert t.ids == scores.ids and t.id_name == "instr_id" and list(t.values) == list(scores)
    for m in scores:
        np.testing.assert_array_equal(t.values[m], scores[m])  # repr(float) is exact
    assert t.evaluate().summary() == scores.summary()


def test_score_command_episodes_csv_round_trip(tmp_path, data_dir):
    split = data_dir / "r2r" / "R2R_val_unseen.json"
    preds = data_dir / "r2r_results" / "rpl2024_group9" / "val_unseen_phi_agent.json"
    conn = data_dir / "matterport3dsimulator" / "connectivity"
    args = ["score", "--split", str(split), "--connectivity", str(conn), "--predictions", str(preds)]
    assert main([*args, "--out", str(tmp_path), "--no-figures"]) == 0
    bench = navdtw.datasets.open("r2r", split=split, connectivity=conn)
    scores = bench.evaluate(bench.match(preds))
    t = load_results(tmp_path / "episodes.csv")
    assert t.ids == [str(i) for i in scores.ids] and list(t.values) == list(scores)
    for m in scores:
        np.testing.assert_array_equal(t.values[m], scores[m])
    # with the split: the R2R path bootstrap's clusters, the scans of the split
    rb = navdtw.datasets.open("results", split=split, dataset_kind="r2r")
    matched = rb.match(tmp_path / "episodes.csv")
    assert matched.ids == t.ids and not matched.left_out
    from navdtw.suite.clusters import CLUSTER_RULES, cluster_labels

    assert cluster_labels(rb, matched.ids) == CLUSTER_RULES["r2r"](bench, matched.ids)
    assert rb.clusters == "the paths of R2R_val_unseen.json"


@pytest.mark.parametrize("pyarrow", [True, False])
def test_suite_episodes_file_round_trip(tmp_path, monkeypatch, pyarrow):
    if pyarrow:
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setitem(sys.modules, "pyarrow", None)
    files = []
    for seed in (1, 2):
        scores = _scores(seed=seed)
        path = tmp_path / f"agent{seed}.csv"
        scores.to_csv(path, columns={"instr_id": scores.ids})
        files.append(path)
    res = navdtw.suite.compare(files, dataset="results", out_dir=tmp_path / "out", progress=False, report=False,
                               settings={"resamples": 200})  # fmt: skip
    assert not res["failures"]
    episodes = tmp_path / "out" / ("episodes.parquet" if pyarrow else "episodes.csv")
    assert episodes.is_file()
    for seed, path in zip((1, 2), files):
        back = load_results(episodes, select={"agent": f"agent{seed}", "dataset": "results"})
        orig = load_results(path)
        assert back.ids == orig.ids and back.id_name == "id"
        for m in orig.values:
            np.testing.assert_array_equal(back.values[m], orig.values[m])


def test_episodes_csv_round_trip_undoes_the_formula_escaping(tmp_path, monkeypatch):
    """episodes.csv writes text cells that start with = + - @ with a leading ' (formula injection);
    reading the file back gives the ids and names as they were."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    ids = ["-1", "=2", "+3", "@4", "5", "'6"] * 2
    ids = [f"{i}{'' if k < 6 else '_b'}" for k, i in enumerate(ids)]
    files = {}
    for agent, shift in (("=evil", 0.0), ("-minus", 0.1)):
        path = tmp_path / f"{len(files)}.jsonl"
        path.write_text("".join(json.dumps({"id": i, "ne": 1.0 + k + shift}) + "\n" for k, i in enumerate(ids)))
        files[agent] = [path]
    res = navdtw.suite.compare([], runs=files, dataset="results", out_dir=tmp_path / "out", progress=False,
                               report=False, settings={"resamples": 50})  # fmt: skip
    assert not res["failures"]
    text = (tmp_path / "out" / "episodes.csv").read_text()
    assert "\n'-1" not in text and ",'=evil," in text and ",'-1," in text  # escaped on disk
    for agent, shift in (("=evil", 0.0), ("-minus", 0.1)):
        back = load_results(tmp_path / "out" / "episodes.csv", select={"agent": agent})
        assert back.ids == ids
        np.testing.assert_array_equal(back.values["ne"], 1.0 + np.arange(len(ids)) + shift)


# --------------------------------------------------------------------------------------------
# splits and clusters
# --------------------------------------------------------------------------------------------


def test_clusters_from_a_path_column_and_from_id_shapes():
    bench = navdtw.datasets.open("results")
    bench.match([{"episode_id": i, "trajectory_id": i // 2, "sr": 1} for i in range(4)])
    assert bench.cluster_of(["0", "1", "2", "3"]) == ["0", "0", "1", "1"]
    assert bench.clusters == "the tables' path column"
    bench = navdtw.datasets.open("results")
    assert bench.cluster_of(["12_0", "12_1", "7_2"]) == ["12", "12", "7"]
    assert bench.cluster_of(["4634_215_0", "4634_216_1"]) == ["4634", "4634"]
    assert bench.cluster_of(["9971", "9972"]) is None and bench.clusters == ""
    bench = navdtw.datasets.open("results", dataset_kind="rxr")
    assert bench.cluster_of(["3_41", "3_42", "5_43"]) == ["3", "3", "5"]
    assert navdtw.datasets.open("results", dataset_kind="ndh").cluster_of(["1_2"]) is None


def test_split_r2r_ce_episodes_with_instruction_ids(tmp_path, data_dir):
    folder = data_dir / "r2r_vlnce" / "R2R_VLNCE_v1-3_preprocessed" / "val_unseen"
    bench = navdtw.datasets.open("results", split=folder / "val_unseen.json.gz", dataset_kind="r2r-ce")
    eps = navdtw.datasets.load_vlnce_episodes(folder / "val_unseen.json.gz")
    rows = [{"episode_id": e["episode_id"], "success": 1.0} for e in eps[:50]][::-1]
    with pytest.raises(ValueError, match=r"PARTIAL RESULTS: covers 50 of the 1839 episodes of val_unseen\.json\.gz"):
        bench.match(rows)  # part of a split is an error unless allowed
    bench = navdtw.datasets.open("results", split=folder / "val_unseen.json.gz", dataset_kind="r2r-ce", partial=True)
    with pytest.warns(UserWarning, match=r"PARTIAL RESULTS: covers 50 of the 1839 .*\(allowed by --partial"):
        t = bench.match(rows)
    assert t.ids == [str(e["episode_id"]) for e in eps[:50]]  # split order, under the episode ids
    assert t.scans == [e["scan"] for e in eps[:50]]
    assert (
        len(t.left_out) == len(eps) - 50
        and "1789 of the 1839 episodes of val_unseen.json.gz have no row" in t.notes[-1]
    )
    assert bench.cluster_of(t.ids) == [str(e["trajectory_id"]) for e in eps[:50]]
    with pytest.raises(
        ValueError, match=r"<input>: episode_id 999999 \(1 in all\): not episodes of val_unseen\.json\.gz"
    ):
        bench.match([{"episode_id": 999999, "success": 1.0}])


def test_split_rxr_guide_languages_and_ids(tmp_path):
    guide = tmp_path / "rxr_val_unseen_guide.jsonl"
    lines = [{"instruction_id": 40 + k, "path_id": k // 2, "scan": "s", "path": ["a", "b"], "language": lang}
             for k, lang in enumerate(["en-US", "hi-IN", "te-IN", "en-IN"])]  # fmt: skip
    guide.write_text("".join(json.dumps(x) + "\n" for x in lines))
    bench = navdtw.datasets.open("results", split=guide, dataset_kind="rxr", partial=True)
    with pytest.warns(UserWarning, match=r"PARTIAL RESULTS: covers 2 of the 4 episodes"):
        follower = bench.match([{"instruction_id": 43, "sr": 0}, {"instruction_id": 40, "sr": 1}])
    with pytest.warns(UserWarning, match=r"PARTIAL RESULTS"):
        hamt = bench.match([{"instr_id": "1_43", "sr": 0}, {"instr_id": "0_40", "sr": 1}])
    for t in (follower, hamt):  # VLN-HAMT's ids and the followers' instruction ids are the same episodes
        assert t.ids == ["0_40", "1_43"] and t.groups == {"language": ["en-US", "en-IN"]}
        assert t.evaluate().summary(by="language")["en-US"]["sr"] == 1.0
    assert bench.cluster_of(hamt.ids) == ["0", "1"] and bench.n == 4
    with pytest.raises(
        ValueError, match=r"episodes of rxr_val_unseen_guide\.jsonl with two rows \(under two ids\): 0_40"
    ):
        bench.match([{"id": "40", "sr": 0}, {"id": "0_40", "sr": 1}])


def test_split_needs_its_kind(tmp_path):
    (tmp_path / "s.json").write_text("[]")
    with pytest.raises(ValueError, match=r"split s\.json: say which kind of data set it is with dataset_kind"):
        navdtw.datasets.open("results", split=tmp_path / "s.json")


def test_align_names_the_file_and_the_ids():
    a = load_results([{"id": i, "sr": 1} for i in range(10)])
    b = replace_source(load_results([{"id": i, "sr": 0} for i in range(2, 10)]), "b.jsonl")
    c = replace_source(load_results([{"id": i, "sr": 0} for i in range(12)]), "c.jsonl")
    assert rs.align([a, a]) == a.ids
    with pytest.raises(ValueError, match=r"^b\.jsonl: no row for id 0, 1 \(2 in all\), which <input> has$"):
        rs.align([a, b])
    with pytest.raises(ValueError, match=r"^c\.jsonl: rows for id 10, 11 \(2 in all\), which <input> does not have$"):
        rs.align([a, c])


def replace_source(t, source):
    from dataclasses import replace

    return replace(t, source=source)


# --------------------------------------------------------------------------------------------
# suite files and the command line
# --------------------------------------------------------------------------------------------


def test_suite_file_with_results_options(tmp_path):
    write(
        tmp_path / "a.jsonl",
        [{"episode_id": i, "SR": 100.0 * (i % 2), "Oracle SR": 100.0, "TCR": i % 3} for i in range(30)],
        "jsonl",
    )
    write(
        tmp_path / "b.jsonl", [{"episode_id": i, "SR": 100.0, "Oracle SR": 100.0, "TCR": 0} for i in range(30)], "jsonl"
    )
    (tmp_path / "suite.toml").write_text(
        '[datasets.ce]\ndataset = "results"\ncolumns = {"Oracle SR" = "osr", TCR = "-"}\npercent = ["SR", "osr"]\n'
        '[agents.a]\nce = "a.jsonl"\n[agents.b]\nce = "b.jsonl"\n[settings]\nresamples = 300\nbaseline_walks = 0\n'
    )
    res = navdtw.suite.run(tmp_path / "suite.toml", progress=False, report=False)
    assert not res["failures"]
    ds = res["datasets"]["ce"]
    assert ds["convention"] == "external" and ds["n"] == 30
    assert ds["agents"]["a"]["sr"]["mean"] == pytest.approx(0.5) and ds["agents"]["b"]["sr"]["mean"] == 1.0
    assert set(ds["agents"]["a"]) == {"sr", "osr", "TCR"}  # a direction given: kept under its own name


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('columns = {x = "nope"}', r"datasets\.ce\.columns: column 'x': unknown target 'nope'"),
        ("percent = 3", r"datasets\.ce\.percent: expected true or a list of column names, got 3"),
        ("id_column = 3", r"datasets\.ce\.id_column: expected a string"),
        # the kinds with a split file, in the registry's order (navdtw.datasets.base.SPLIT_KINDS)
        ('dataset_kind = "xyz"', r"datasets\.ce\.dataset_kind: must be one of r2r, r4r, r2r-ce, reverie, ndh, rxr"),
    ],
)
def test_suite_file_checks_the_results_options(tmp_path, extra, message):
    write(tmp_path / "a.jsonl", [{"episode_id": 1, "sr": 1}], "jsonl")
    (tmp_path / "suite.toml").write_text(f'[datasets.ce]\ndataset = "results"\n{extra}\n[agents.a]\nce = "a.jsonl"\n')
    with pytest.raises(navdtw.suite.SuiteError, match=message):
        navdtw.suite.load_suite(tmp_path / "suite.toml")


def test_compare_command_on_results_tables(tmp_path, capsys):
    rows_a = [
        {"episode_id": i, "success": float(i % 2), "spl": NAN if i % 2 == 0 else 50.0, "Oracle SR": 1.0}
        for i in range(40)
    ]
    rows_b = [{"episode_id": str(i), "success": 1.0, "spl": 90.0, "Oracle SR": 1.0} for i in range(40)]
    write(tmp_path / "a.jsonl", rows_a, "jsonl")
    write(tmp_path / "b.csv", rows_b, "csv")
    args = [
        "compare",
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "b.csv"),
        "--dataset",
        "results",
        "--no-progress",
        "--resamples",
        "300",
    ]
    assert main([*args, "--column", "Oracle SR=osr", "--percent-columns", "spl"]) == 0
    out = capsys.readouterr().out
    assert "convention external, 40 episodes" in out and "OSR" in out
    assert main(args) == 5  # the percentages, caught per file: every agent failed
    err = capsys.readouterr().err
    assert "navdtw: failed: a on results: a.jsonl: line 2 (episode_id 1): 'spl' is a rate" in err
    assert main([*args, "--column", "x"]) == 2
    assert capsys.readouterr().err == "navdtw: error: --column: expected column mappings as NAME=VALUE, got 'x'\n"
    assert main([*args, "--dataset-kind", "nope"]) == 2
    kinds = "r2r, r4r, r2r-ce, reverie, ndh, rxr, rxr-ce, positions"  # with a split file, in the registry's order
    assert f"--dataset-kind: must be one of {kinds}, got 'nope'" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "a.jsonl"), "--dataset", "r2r", "--percent"]) == 2
    assert "does not take --percent" in capsys.readouterr().err


def test_score_command_says_results_are_compared(tmp_path, capsys):
    write(tmp_path / "a.jsonl", [{"episode_id": 1, "sr": 1}], "jsonl")
    assert main(["score", "--dataset", "results", "--predictions", str(tmp_path / "a.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("navdtw: error: --dataset results: a results table holds scores already")
    assert "navdtw compare TABLE ... --dataset results" in err


def test_the_kind_is_registered():
    kind = DATASETS["results"]
    assert kind.reads_scores and not kind.has_baseline and kind.default_convention == "external"
    assert [o.flag for o in kind.options] == [
        "--split", "--dataset-kind", "--column", "--percent", "--layout", "--recursive", "--partial",
        "--id-column", "--path-column", "--select",
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------
# properties: every format gives back what was written
# --------------------------------------------------------------------------------------------

_finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
_rate = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def tables(draw):
    n = draw(st.integers(1, 30))
    ids = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n, unique=True))
    as_text = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    rows = []
    for i, text in zip(ids, as_text):
        success = draw(st.sampled_from([0.0, 1.0]))
        rows.append(
            {
                "episode_id": str(i) if text else i,
                "success": success,
                "spl": draw(_rate) if success else draw(st.sampled_from([0.0, NAN])),
                "distance_to_goal": draw(st.one_of(_finite, st.just(INF))),
                "extra": draw(st.floats(allow_nan=False, width=64)),
            }
        )
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=tables(), fmt=st.sampled_from(["jsonl", "json", "keyed", "csv", "parquet"]))
def test_round_trip_property(tmp_path, rows, fmt):
    if fmt in ("keyed", "csv", "parquet"):  # one type per column
        rows = [{**r, "episode_id": str(r["episode_id"])} for r in rows]
    t = load_results(write(tmp_path / f"t.{fmt}", rows, fmt))
    assert t.ids == [str(r["episode_id"]) for r in rows]
    assert same(t.values["sr"], [r["success"] for r in rows])
    assert same(t.values["spl"], [0.0 if math.isnan(r["spl"]) else r["spl"] for r in rows])
    assert same(t.values["ne"], [r["distance_to_goal"] for r in rows])
    assert same(t.values["extra"], [r["extra"] for r in rows])


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(allow_nan=False, allow_infinity=True, width=64), min_size=1, max_size=20))
def test_csv_numbers_parse_as_python_writes_them(values):
    text = ["id,extra"] + [f"{k},{v!r}" for k, v in enumerate(values)]
    raw = rs._readers._read_csv("\n".join(text) + "\n", "t.csv", tab=False)
    col = rs._cells.classify(raw.columns["extra"], raw.text_parsed, stop_at_text=False)
    assert same(col.values, values)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(min_value=0.0, max_value=100.0, allow_nan=False), min_size=1, max_size=20))
def test_percent_is_a_division_by_100(values):
    rows = [{"id": k, "ndtw": v} for k, v in enumerate(values)]
    top = max(values)
    if 0 < top <= 1:
        with pytest.raises(ValueError, match="holds fractions already"):
            load_results(rows, percent=True)
    else:
        np.testing.assert_allclose(load_results(rows, percent=True).values["ndtw"], np.array(values) / 100)
    if top > 1:
        with pytest.raises(ValueError, match="a percentage"):
            load_results(rows)


def test_json_lines_are_read_in_blocks(tmp_path, monkeypatch):
    """Blocks of lines: a column that appears in a later block, blank lines, and the line named in
    an error are those of the whole file."""
    monkeypatch.setattr(rs._readers, "_BLOCK", 4)
    rows = [{"id": i, "sr": float(i % 2)} for i in range(10)]
    rows[7]["steps"] = 3
    text = "\n".join(json.dumps(r) for r in rows[:5]) + "\n\n\n" + "\n".join(json.dumps(r) for r in rows[5:]) + "\n"
    (tmp_path / "t.jsonl").write_text(text)
    raw = rs._readers._read_raw(tmp_path / "t.jsonl")
    assert raw.n == 10 and raw.columns["steps"] == [None] * 7 + [3, None, None]
    assert [raw.entry(k) for k in (4, 5, 9)] == ["line 5", "line 8", "line 12"]
    (tmp_path / "t.jsonl").write_text(text.replace('{"id": 8,', '{"id": 8,,'))
    with pytest.raises(ValueError, match=r"^t\.jsonl: line 11: malformed JSON at column 10"):
        load_results(tmp_path / "t.jsonl")


def test_csv_in_blocks_quoted_newlines_and_line_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr(rs._readers, "_BLOCK", 3)
    text = 'id,instruction,ne\n1,"walk\nto the door",1.5\n\n2,x,2.5\r\n3,y,3.5\n4,z,-1\n'
    (tmp_path / "t.csv").write_text(text)
    with pytest.raises(ValueError, match=r"^t\.csv: line 7 \(id 4\): 'ne' is a distance and must be >= 0, got -1\.0$"):
        load_results(tmp_path / "t.csv")
    (tmp_path / "t.csv").write_text(text.replace("-1", "4.5"))
    t = load_results(tmp_path / "t.csv")
    assert t.ids == ["1", "2", "3", "4"] and same(t.values["ne"], [1.5, 2.5, 3.5, 4.5])
    raw = rs._readers._read_raw(tmp_path / "t.csv")
    assert raw.columns["instruction"][0] == "walk\nto the door"
    (tmp_path / "t.csv").write_text(text.replace("4,z,-1", "4,z"))
    with pytest.raises(ValueError, match=r"^t\.csv: line 7: 2 fields where the header has 3$"):
        load_results(tmp_path / "t.csv")
