"""What a suite run writes and says (issue 19, "Outputs"): stale files of earlier runs, a folder
that cannot be written, all-or-nothing writes naming the real output, escaping per format (checked
by a Markdown renderer, a CSV reader, pdfLaTeX and the terminal's view), the LaTeX table's width,
warnings carried everywhere, provenance; on the synthetic suite of tests/test_suite.py."""

from __future__ import annotations

import csv
import errno
import hashlib
import html
import io
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from synthetic_suite import AGENTS, make_world, suite_text, trajectory, write_suite

from navdtw import suite as S
from navdtw.cli import main

FAST = "resamples = 200\nbaseline_walks = 0\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return make_world(tmp_path_factory.mktemp("suite"))


def _files(out: Path) -> dict[str, str]:
    """Every file in ``out`` (not the cache) with its SHA-256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.is_file() and p.name}


# ------------------------------------------------------------------------------------------
# stale outputs, --no-report
# ------------------------------------------------------------------------------------------


def test_a_rerun_removes_its_own_stale_outputs_only(world, tmp_path, capsys):
    suite = write_suite(world, AGENTS, name="stale.toml", settings=FAST)
    out = tmp_path / "out"
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 0
    assert (out / "report.html").is_file()
    (out / "my_notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]) == 0
    said = capsys.readouterr().out
    assert not (out / "report.html").exists()  # the earlier run's report would describe other results
    assert (out / "my_notes.txt").read_text() == "mine"
    assert "report" not in said.split("wrote", 1)[1].splitlines()[0]  # it says what it wrote, nothing more
    assert "removed the earlier run's report.html" in said
    results = json.loads((out / "results.json").read_text())
    assert results["outputs"]["removed"] == ["report.html"] and "report.html" not in results["outputs"]["files"]
    manifest = json.loads((out / ".navdtw-outputs.json").read_text())["files"]
    assert set(manifest) == set(results["outputs"]["files"])
    assert all(hashlib.sha256((out / n).read_bytes()).hexdigest() == h for n, h in manifest.items())
    # a file of the same name that navdtw did not write (or that was changed) is left, with a warning
    (out / "report.html").write_text("the user's own page")
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]) == 0
    err = capsys.readouterr().err
    assert (out / "report.html").read_text() == "the user's own page"
    assert "report.html: not written by this run and left in place (no record that navdtw wrote it)" in err


# ------------------------------------------------------------------------------------------
# a folder or file that cannot be written
# ------------------------------------------------------------------------------------------


def _refuse(monkeypatch, where: Path, name: str | None, code: int):
    """``tempfile.mkstemp`` fails in ``where`` (for temporaries of ``name`` only, if given); root
    ignores file permissions, so a read-only folder and a full disk are simulated here."""
    real = tempfile.mkstemp

    def mkstemp(*args, **kw):
        if Path(kw.get("dir", "")) == where and (name is None or kw.get("prefix", "").startswith(f".{name}.")):
            raise OSError(code, __import__("os").strerror(code), str(where / f"{kw.get('prefix')}xyz.tmp"))
        return real(*args, **kw)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def test_a_read_only_folder_fails_before_the_work(world, tmp_path, monkeypatch, capsys):
    from navdtw.datasets import r2r

    out = tmp_path / "ro"
    out.mkdir()
    _refuse(monkeypatch, out, None, errno.EROFS)
    scored = []
    monkeypatch.setattr(r2r.R2RBenchmark, "match", lambda self, *a, **k: scored.append(1))
    suite = write_suite(world, AGENTS, name="ro.toml", settings=FAST)
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out}: cannot write into the output folder: Read-only file system" in err[0]
    assert ".tmp" not in err[0] and scored == []  # nothing was scored
    with pytest.raises(S.OutputError):
        S.run(suite, out, progress=False)


def test_a_failed_write_keeps_the_previous_outputs_and_names_the_output(world, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    first = write_suite(world, {"oracle": "oracle.json"}, name="w1.toml", settings=FAST)
    assert main(["suite", "run", str(first), "--out", str(out), "--no-progress"]) == 0
    before = _files(out)
    capsys.readouterr()
    _refuse(monkeypatch, out, "leaderboard.tex", errno.ENOSPC)
    second = write_suite(world, AGENTS, name="w2.toml", settings=FAST)
    assert main(["suite", "run", str(second), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{out / 'leaderboard.tex'}: cannot write: No space left on device" in err[0]
    assert "no output of the run was written" in err[0] and ".tmp" not in err[0]
    assert _files(out) == before  # all or nothing: the earlier run's files, no temporaries left


def test_an_output_name_taken_by_a_folder(world, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "leaderboard.md").mkdir(parents=True)
    suite = write_suite(world, {"oracle": "oracle.json"}, name="dir.toml", settings=FAST)
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"navdtw: error: {out / 'leaderboard.md'}: cannot write: it exists and is not a file"]
    assert [p.name for p in out.iterdir() if p.name != ".cache"] == ["leaderboard.md"]  # nothing written


def test_other_commands_name_the_output_and_exit_3(tmp_path, monkeypatch, capsys):
    out = tmp_path / "demo"
    out.mkdir()
    _refuse(monkeypatch, out, "summary.json", errno.ENOSPC)
    assert main(["demo", "--pairs", "5", "--out", str(out), "--no-figures"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"navdtw: error: {out / 'summary.json'}: cannot write: No space left on device"]


# ------------------------------------------------------------------------------------------
# escaping per format
# ------------------------------------------------------------------------------------------

HOSTILE = {
    "html": "<img src=x onerror=alert(1)>",
    "pipe": "a|b\nc",
    "formula": "=cmd|' /C calc'!A0",
    "latex": 'x_y^z~{}%$#&\\ "q" <a> --b `c\'',
    "ansi": "\x1b[31mred\x1b[0m\u202eevil",
    "md": "*bold* _it_ [link](http://x) `code` # - 1. ~~s~~ $m$",
}


@pytest.fixture(scope="module")
def hostile(world, tmp_path_factory):
    """A run whose agents and data set have hostile names, and a failure whose message quotes one."""
    runs = world / "runs"
    lines = ['[datasets."grid <b>val</b> | x"]', 'dataset = "r2r"', 'split = "data/split.json"']
    lines += ['connectivity = "data/connectivity"', ""]
    for key, name in HOSTILE.items():
        shutil.copy(runs / "near.json", runs / f"h_{key}.json")
        lines += [f"[agents.{json.dumps(name)}]", f'"grid <b>val</b> | x" = "runs/h_{key}.json"', ""]
    (runs / "bad <script>.json").write_text("[{")
    lines += ['[agents."=broken"]', '"grid <b>val</b> | x" = "runs/bad <script>.json"', "", "[settings]", FAST]
    path = world / "hostile.toml"
    path.write_text("\n".join(lines))
    out = tmp_path_factory.mktemp("hostile")
    results = S.run(path, out, progress=False)
    assert len(results["failures"]) == 1
    return out, results


def test_markdown_escapes_for_a_real_renderer(hostile):
    markdown_it = pytest.importorskip("markdown_it")
    out, _ = hostile
    text = (out / "leaderboard.md").read_text()
    page = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").render(text)
    assert "<img" not in page and "<b>" not in page and "<script" not in page  # shown, never run
    assert "<em>" not in page and "<code>" not in page and "<a " not in page and "<s>" not in page
    board = page.split("<details>")[0]  # the leaderboard, before the pairwise comparisons
    rows = [html.unescape(r) for r in re.findall(r"<tr>\s*<td>(.*?)</td>", board, re.S)]  # the agents' cells
    shown = {**HOSTILE, "pipe": "a|b c", "ansi": "[31mred [0m evil"}  # control characters as spaces
    assert rows == list(shown.values())
    assert "<h2>grid &lt;b&gt;val&lt;/b&gt; | x</h2>" in page
    assert "bad &lt;script&gt;.json" in page  # the failure's message


def test_csv_cells_cannot_run_as_formulas(hostile):
    out, _ = hostile
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text())))
    agents = {r["agent"] for r in rows}
    assert "'=cmd|' /C calc'!A0" in agents and "=cmd|' /C calc'!A0" not in agents
    assert all(not r[k].startswith(("=", "+", "-", "@")) for r in rows for k in ("dataset", "agent", "metric"))
    assert all(r["mean"] == "" or float(r["mean"]) == float(r["mean"]) for r in rows)  # numbers stay numbers
    assert S.tables.csv_cell("-1.5") == "'-1.5" and S.tables.csv_cell("a=b") == "a=b"


def test_latex_compiles_with_every_name(hostile, tmp_path):
    out, _ = hostile
    tex = (out / "leaderboard.tex").read_text()
    text = "\n".join(line for line in tex.splitlines() if not line.startswith("\\label"))
    for bad in ("<img", "a|b", '"q"', "\x1b", "\u202e", "--b"):
        assert bad not in text
    _compile(tmp_path, tex)


def test_the_terminal_shows_control_characters_instead_of_running_them(hostile, capsys):
    _, results = hostile
    text = S.format_leaderboard(results)
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b[31mred" in text and "\\u202e" in text
    assert "a|b c" not in text and "a|b\\nc" in text  # the newline cannot break the table
    from navdtw.cli import _print_suite

    _print_suite(results, None)
    printed = capsys.readouterr()
    assert "\x1b" not in printed.out + printed.err


def test_html_escapes(hostile):
    _, results = hostile
    page = results._repr_html_()
    assert "<img" not in page and html.escape(HOSTILE["html"]) in page


# ------------------------------------------------------------------------------------------
# LaTeX: the metrics, the forms, the width
# ------------------------------------------------------------------------------------------


def _compile(folder: Path, tex: str, textwidth: str = "455pt") -> str:
    """pdfLaTeX on ``tex`` in a two-column article with ACL's text width (the narrowest of the common
    two-column venues); returns the log. Skips without pdflatex."""
    if not shutil.which("pdflatex"):
        pytest.skip(
            "pdflatex is not installed (bash tools/install_latex.sh: texlive-latex-base, texlive-latex-recommended)"
        )
    (folder / "lb.tex").write_text(tex)
    (folder / "paper.tex").write_text(
        "\\documentclass[10pt,twocolumn]{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        f"\\setlength{{\\textwidth}}{{{textwidth}}}\n\\begin{{document}}\n\\input{{lb}}\nText.\n\\end{{document}}\n"
    )
    r = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (folder / "paper.log").read_text(errors="replace")
    assert r.returncode == 0, log[-3000:]
    return log


def test_the_default_latex_table_fits_a_two_column_paper(world, tmp_path):
    """Issue 19: leaderboard.tex had 15 metric columns with their intervals, 2-2.5x a page's width
    (943-1168 pt on the README's suite against ACL's 455 pt). Now: the headline metrics, the
    intervals under the means."""
    out = tmp_path / "out"
    results = S.run(write_suite(world, AGENTS, name="tex.toml", settings=FAST), out, progress=False, report=False)
    tex = (out / "leaderboard.tex").read_text()
    log = _compile(tmp_path, tex)
    assert "Overfull \\hbox" not in log
    head = next(line for line in tex.splitlines() if line.startswith("Agent &"))
    assert head.count("&") == len(S.tables.LATEX_METRICS["*"]) - 1  # no GP on R2R: 7 metric columns
    assert len(results["datasets"]["grid_val"]["agents"]["oracle"]) == 13  # every metric elsewhere


def test_metric_selection_and_the_compact_form(world, tmp_path, capsys):
    suite = write_suite(world, AGENTS, name="sel.toml", settings=FAST)
    out = tmp_path / "o"
    args = ["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]
    assert main([*args, "--metrics", "sr,ndtw,ne", "--latex", "compact"]) == 0
    text = capsys.readouterr().out
    assert "SR↑ (%)  nDTW↑ (%)  NE↓ (m)" in text and "SPL" not in text
    results = json.loads((out / "results.json").read_text())
    assert results["metrics"] == ["sr", "ndtw", "ne"]
    assert list(results["datasets"]["grid_val"]["agents"]["oracle"]) == ["sr", "ndtw", "ne"]
    assert {c["metric"] for c in results["datasets"]["grid_val"]["comparisons"]} == {"sr", "ndtw", "ne"}
    tex = (out / "leaderboard.tex").read_text()
    assert "Agent & SR$\\uparrow$ & nDTW$\\uparrow$ & NE$\\downarrow$ \\\\" in tex
    assert "\\scriptsize [" not in tex and "Intervals: see leaderboard.md." in tex
    # the same in the suite file; a bad name is one line, exit 2
    (world / "sel2.toml").write_text('metrics = ["spl"]\nlatex = "compact"\n' + suite_text({"oracle": "oracle.json"}))
    assert S.load_suite(world / "sel2.toml").metrics == ("spl",)
    assert main([*args, "--metrics", "sr,nope"]) == 2
    assert "--metrics: unknown metric 'nope'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------
# warnings carried everywhere; provenance
# ------------------------------------------------------------------------------------------


def test_warnings_reach_the_terminal_results_and_report(world, tmp_path, capsys):
    preds = json.loads((world / "runs" / "oracle.json").read_text())
    dup = [*preds, {**preds[0], "trajectory": preds[5]["trajectory"]}]  # a duplicate id, kept first
    (world / "runs" / "dup.json").write_text(json.dumps(dup))
    astray = [dict(p) for p in preds]
    for p in astray[:4]:  # four trajectories that do not start at their reference's start
        p["trajectory"] = trajectory(["scanA_44" if p["trajectory"][0][0].startswith("scanA") else "scanB_44"])
    (world / "runs" / "astray.json").write_text(json.dumps(astray))
    text = suite_text({"astray": "astray.json"}, settings=FAST).replace(
        "[settings]", '[agents.dup]\ngrid_val = "runs/dup.json"\n\n[settings]'
    )
    suite = world / "warn.toml"
    suite.write_text(text)
    out = tmp_path / "o"
    assert main(["suite", "run", str(suite), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    messages = [(w["agent"], w["dataset"], w["message"]) for w in results["warnings"]]
    dup_msg = next(m for a, d, m in messages if a == "dup" and d == "grid_val")
    assert "kept the first entry of duplicated ids" in dup_msg and "100_0" in dup_msg
    start = next(m for a, d, m in messages if a == "astray" and d == "grid_val")
    assert start.startswith("astray.json: 4 of 120 trajectories do not start at their reference's start")
    for needle in (dup_msg, start):
        assert needle in err and needle.replace("_", "\\_") in (out / "leaderboard.md").read_text()
    page = (out / "report.html").read_text()
    assert "trajectories do not start at their reference" in page and 'id="warnings"' in page
    # navdtw score says it too (it was silent without --strict)
    args = [
        "score",
        "--split",
        str(world / "data" / "split.json"),
        "--connectivity",
        str(world / "data" / "connectivity"),
    ]
    assert main([*args, "--predictions", str(world / "runs" / "astray.json"), "--out", str(tmp_path / "s")]) == 0
    assert "navdtw: warning: astray.json: 4 of 120 trajectories" in capsys.readouterr().err
    assert json.loads((tmp_path / "s" / "summary.json").read_text())["warnings"] == [start]


def test_provenance(world, tmp_path, capsys):
    suite = write_suite(world, {"oracle": "oracle.json"}, name="prov.toml", settings=FAST)
    out = tmp_path / "o"
    argv = ["suite", "run", str(suite), "--out", str(out), "--no-progress", "--no-report"]
    assert main(argv) == 0
    p = json.loads((out / "results.json").read_text())["provenance"]
    assert p["command"] == ["navdtw", *argv]
    assert p["suite_file"] == {"path": str(suite.resolve()), "sha256": hashlib.sha256(suite.read_bytes()).hexdigest()}
    by = {(i["dataset"], i["agent"], i["option"]): i for i in p["inputs"]}
    split = by[("grid_val", None, "split")]
    assert split["path"] == str((world / "data" / "split.json").resolve())
    assert split["sha256"] == hashlib.sha256((world / "data" / "split.json").read_bytes()).hexdigest()
    pred = by[("grid_paper", "oracle", "predictions")]
    assert pred["sha256"] == hashlib.sha256((world / "runs" / "oracle.json").read_bytes()).hexdigest()
    conn = world / "data" / "connectivity"  # a folder: over its files' names and digests
    want = hashlib.sha256(
        "".join(f"{f.name}\0{hashlib.sha256(f.read_bytes()).hexdigest()}\n" for f in sorted(conn.iterdir())).encode()
    ).hexdigest()
    assert by[("grid_val", None, "connectivity")]["sha256"] == want
    import numpy
    import scipy

    assert (p["numpy"], p["scipy"]) == (numpy.__version__, scipy.__version__) and p["python"]
    assert S.run(suite, None, progress=False)["provenance"]["command"] is None  # from Python: the suite file


@pytest.mark.data
def test_a_navigation_only_reverie_file_is_said(data_dir, tmp_path):
    """A REVERIE file without predObjId is scored navigation-only (no RGS, RGSPL): said once."""
    split = json.loads((data_dir / "reverie" / "REVERIE_val_unseen.json").read_text())
    preds = [
        {"instr_id": f"{e['id']}_{k}", "trajectory": trajectory(e["path"])}
        for e in split
        for k in range(len(e["instructions"]))
    ]
    (tmp_path / "nav_only.json").write_text(json.dumps(preds))
    results = S.compare(
        [tmp_path / "nav_only.json"],
        dataset="reverie",
        split=data_dir / "reverie" / "REVERIE_val_unseen.json",
        connectivity=data_dir / "matterport3dsimulator" / "connectivity",
        objects=data_dir / "reverie" / "BBox_val_scans.json.gz",
        settings={"resamples": 100},
        progress=False,
    )
    (w,) = results["warnings"]
    assert w["agent"] == "nav_only" and "scored navigation-only, without RGS and RGSPL" in w["message"]
    assert "rgs" not in results["datasets"]["reverie"]["agents"]["nav_only"]
