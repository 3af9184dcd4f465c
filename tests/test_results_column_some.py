"""``--column NAME=...`` over several tables (issue 36 item 12): applied where the column exists,
the tables that lack it said once, an error only when no table has it."""

from __future__ import annotations

import json

import pytest

from navdtw.cli import main
from navdtw.datasets import load_results


def _tables(folder, with_column):
    for name in ("a", "b", "c"):
        rows = [{"id": i, "sr": (i + len(name)) % 2} for i in range(12)]
        if name in with_column:
            for r in rows:
                r["Oracle SR"] = 1
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_column_some_tables_lack_is_mapped_where_it_is(tmp_path, monkeypatch, capsys):
    _tables(tmp_path, "a")
    monkeypatch.chdir(tmp_path)
    argv = ["compare", "a.jsonl", "b.jsonl", "c.jsonl", "--dataset", "results", "--column", "Oracle SR=osr"]
    assert main([*argv, "--resamples", "100", "--no-progress", "--out", "out"]) == 0
    err = capsys.readouterr().err
    said = (
        "--column: the column Oracle SR is mapped in the tables that have it; 2 of the 3 tables lack it: "
        "b (b.jsonl), c (c.jsonl)"
    )
    assert err.count(said) == 1 and "failed" not in err
    agents = json.loads((tmp_path / "out" / "results.json").read_text())["datasets"]["results"]["agents"]
    assert agents["a"]["osr"]["mean"] == 1.0 and "osr" not in agents["b"] and "osr" not in agents["c"]
    assert agents["b"]["sr"]["mean"] == pytest.approx(0.5)


def test_a_column_no_table_has_is_one_error(tmp_path, monkeypatch, capsys):
    _tables(tmp_path, "")
    monkeypatch.chdir(tmp_path)
    argv = ["compare", "a.jsonl", "b.jsonl", "c.jsonl", "--dataset", "results", "--column", "Oracle SR=osr"]
    assert main([*argv, "--resamples", "100", "--no-progress"]) == 5
    err = capsys.readouterr().err
    assert err.count("navdtw: failed:") == 1 and "no table has the column Oracle SR; a's a.jsonl has sr, id" in err, err
    with pytest.raises(ValueError, match=r"a\.jsonl: columns: no column 'Oracle SR' in this table"):
        load_results(tmp_path / "a.jsonl", columns={"Oracle SR": "osr"})  # one table: an error, as before
