"""The Python examples of the README and of the documentation (docs/**/*.md) run as written, each
block on its own, and print what they say.

Every ```python block runs alone in a fresh namespace and working folder, so a reader can paste any
one of them. A line ``expression  # -> value`` states a result: the test evaluates the expression
and checks it against the value (numbers to the digits shown, anything else by its repr). Blocks
that read the real data (they call ``navdtw.data_path``) run only when the data is present; the
test points ``NAVDTW_DATA`` at it as a reader would. A block that cannot run here (it needs a Ray or
Spark cluster) says so in an HTML comment just above it, ``<!-- not run: the reason -->``, and is
reported as skipped with that reason."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest
from conftest import REPO, find_data_dir

PAGES = [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if "_build" not in p.parts)]
CLAIM = re.compile(r"^(?P<code>[^#\n]*?\S)\s*#\s*->\s*(?P<value>.+?)\s*$")
FENCE = re.compile(r"(?:<!--\s*not run:\s*(?P<skip>.*?)\s*-->\s*\n)?```python\n(?P<code>.*?)```", re.S)


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _blocks(page: Path) -> list[tuple[int, str, str | None]]:
    """(line number, code, reason it is not run or None) of every ```python block of a page."""
    text = _text(page)
    return [(text.count("\n", 0, m.start("code")) + 1, m["code"], m["skip"]) for m in FENCE.finditer(text)]


BLOCKS = [(page, line, code, skip) for page in PAGES for line, code, skip in _blocks(page)]


def _needs_data(block: str) -> bool:
    return "data_path(" in block


#: What a block imports that only an extra installs: (text in the block, module, the extra). The
#: core suite runs without extras too (tools/check_habitat.sh: beside habitat-lab's numpy 1.26.4).
EXTRAS = (("navdtw.distributed", "pyarrow", "dask"), ("navdtw.plot", "matplotlib", "plot"))


def _missing_extra(block: str) -> str | None:
    for text, module, extra in EXTRAS:
        if text in block and importlib.util.find_spec(module) is None:
            return f"needs the {extra} extra ({module} is not installed)"
    return None


def _claims(block: str) -> list[tuple[int, str, str]]:
    """(line number, expression, stated value) for every ``expr  # -> value`` line."""
    out = []
    for k, line in enumerate(block.splitlines(), 1):
        m = CLAIM.match(line)
        if m:
            out.append((k, m["code"].strip(), m["value"]))
    return out


def _tolerance(text: str) -> float:
    """Half a unit of the last digit shown: '0.5738' -> 5e-5, '2.0' -> 0.05, '100' -> 0.5."""
    mantissa = text.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10.0 ** int(text.lower().split("e")[1]) if "e" in text.lower() else 1.0
    return 0.5 * 10.0**-decimals * scale


def _matches(value, stated: str) -> bool:
    """``value`` equals what the page states, numbers to the digits shown (also inside lists,
    tuples and dicts)."""
    try:
        node = ast.parse(stated, mode="eval").body
    except SyntaxError:
        return repr(value) == stated or str(value) == stated
    return _matches_node(value, node, stated)


def _matches_node(value, node, text: str) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)):
        try:
            items = list(value)
        except TypeError:
            return False
        return len(items) == len(node.elts) and all(_matches_node(v, n, text) for v, n in zip(items, node.elts))
    if isinstance(node, ast.Dict):
        keys = [ast.literal_eval(k) for k in node.keys]
        return isinstance(value, dict) and all(
            k in value and _matches_node(value[k], n, text) for k, n in zip(keys, node.values)
        )
    text = ast.get_source_segment(text, node) or text  # this node's digits (offsets: the whole claim)
    try:
        expected = ast.literal_eval(node)
    except ValueError:
        return repr(value) == text or str(value) == text
    if isinstance(expected, bool) or not isinstance(expected, (int, float)):
        return value == expected
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return abs(number - expected) <= _tolerance(text.lstrip("-")) + 1e-12


def _block_id(page: Path, line: int) -> str:
    return f"{page.relative_to(REPO).as_posix()}:{line}"


@pytest.mark.parametrize(("page", "line", "block", "skip"), BLOCKS, ids=[_block_id(p, ln) for p, ln, _, _ in BLOCKS])
def test_block_runs_alone(page, line, block, skip, tmp_path, monkeypatch):
    if skip:
        pytest.skip(f"not run: {skip}")
    if _missing_extra(block):
        pytest.skip(_missing_extra(block))
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    if _needs_data(block):
        data = find_data_dir()
        if data is None:
            pytest.skip("needs the real VLN data (NAVDTW_DATA or ../shared/data)")
        monkeypatch.setenv("NAVDTW_DATA", str(data))
    ns: dict = {"__name__": "docs_example"}
    claims = {line: (expr, stated) for line, expr, stated in _claims(block)}
    checked = 0
    # Statement by statement, so a stated result is the value the reader's own run produces
    # (no expression is evaluated twice).
    for stmt in ast.parse(block).body:
        claim = next((claims[ln] for ln in range(stmt.lineno, stmt.end_lineno + 1) if ln in claims), None)
        if claim is not None and isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), f"{page.name}:{line}", "eval"), ns)
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), f"{page.name}:{line}", "exec"), ns)
            if claim is None:
                continue
            assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name), claim
            value = ns[stmt.targets[0].id]
        assert _matches(value, claim[1]), f"{page.name}:{line} says `{claim[0]}` gives {claim[1]}, it gives {value!r}"
        checked += 1
    assert checked == len(claims)


def test_pages_have_checked_claims():
    """The README and the documentation state results, and this test checks them (a rewrite cannot
    drop them all): the README's tour and the pages that took over the README's examples."""
    claims = {page.relative_to(REPO).as_posix(): 0 for page in PAGES}
    for page, _, code, skip in BLOCKS:
        claims[page.relative_to(REPO).as_posix()] += 0 if skip else len(_claims(code))
    assert claims["README.md"] >= 10
    assert sum(claims.values()) >= 55


def test_commands_exist():
    """Every `navdtw <command>` the README and the documentation show is a real subcommand."""
    from navdtw.cli import build_parser

    shell = "\n".join(b for page in PAGES for b in re.findall(r"```bash\n(.*?)```", _text(page), re.S))
    commands = set(re.findall(r"^navdtw (\w+)", shell, re.M))
    assert commands >= {"demo", "score", "baseline", "suite", "compare"}
    parser = build_parser()
    for cmd in commands:
        with pytest.raises(SystemExit) as exit_info:
            parser.parse_args([cmd, "--help"])
        assert exit_info.value.code == 0


def test_claim_checker_is_strict():
    """The checker accepts the digits shown and nothing else."""
    assert _matches(0.6015325, "0.6015") and not _matches(0.6015325, "0.6016")
    assert _matches((1.0, 0.9993639), "(1.0, 0.999364)") and not _matches((1.0, 0.99), "(1.0, 0.999364)")
    assert _matches([6.0, 4.65028], "[6.0, 4.6503]") and not _matches([6.0], "[6.0, 4.6503]")
    assert _matches((2349,), "(2349,)") and not _matches((2348,), "(2349,)")
    assert _matches(True, "True") and not _matches(False, "True")


def test_suite_page_example_runs(tmp_path, monkeypatch):
    """docs/suite.md's worked suite (its agents' files written by the page's own block) runs and
    gives the data sets, agents and outputs the page shows."""
    data = find_data_dir()
    if data is None:
        pytest.skip("needs the real VLN data (NAVDTW_DATA or ../shared/data)")
    from navdtw import suite

    page = REPO / "docs" / "suite.md"
    monkeypatch.setenv("NAVDTW_DATA", str(data))
    monkeypatch.chdir(tmp_path)
    writer = next(code for _, code, _ in _blocks(page) if "reverie_perturbed.json" in code)
    exec(compile(writer, "suite.md", "exec"), {"__name__": "docs_example"})
    (toml,) = [t for t in re.findall(r"```toml\n(.*?)```", _text(page), re.S) if "reverie_perturbed" in t]
    (tmp_path / "suite.toml").write_text(toml + "\n[settings]\nresamples = 200\nbaseline_walks = 2000\n")
    results = suite.run(tmp_path / "suite.toml", tmp_path / "out", progress=False)
    assert not results["failures"]
    assert set(results["datasets"]) == {"r2r_val_unseen", "ndh_val_unseen", "reverie_val_unseen"}
    rv = results["datasets"]["reverie_val_unseen"]
    assert rv["agents"]["reverie_gt"]["rgs"]["mean"] == 1.0
    assert rv["agents"]["reverie_perturbed"]["rgs"]["mean"] == pytest.approx(0.8, abs=0.01)
    assert rv["agents"]["reverie_gt"]["sr"]["mean"] > rv["agents"]["reverie_perturbed"]["sr"]["mean"]
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex", "results.json", "report.html"):
        assert (tmp_path / "out" / name).is_file(), name


@pytest.mark.slow
def test_readme_shell_blocks_run(tmp_path, monkeypatch, capsys):
    """The README's `navdtw score` line for R2R (the means its Python block states); its suite file,
    `navdtw suite run` line and the table it shows (each line as printed); its `navdtw compare` line
    (the same agents' numbers, no random-walk row without --baseline-walks). Run in a folder
    holding the files the README names."""
    import shlex

    from navdtw.cli import main

    data = find_data_dir()
    if data is None:
        pytest.skip("needs the real VLN data (NAVDTW_DATA or ../shared/data)")
    readme = _text(REPO / "README.md")
    (toml,) = re.findall(r"```toml\n(# suite\.toml.*?)```", readme, re.S)
    (suite_line,) = re.findall(r"^navdtw suite run suite\.toml .*$", readme, re.M)
    (compare_line,) = re.findall(r"^navdtw compare prevalent\.json .*$", readme, re.M)
    (score_line,) = re.findall(r"^navdtw score --dataset r2r .*$", readme, re.M)
    shown = readme.split(suite_line + "\n```\n\n```\n", 1)[1].split("```", 1)[0].splitlines()
    monkeypatch.chdir(tmp_path)
    results = data / "r2r_results" / "prevalent_r2r"
    for name, target in (
        ("R2R_val_unseen.json", data / "r2r" / "R2R_val_unseen.json"),
        ("connectivity", data / "matterport3dsimulator" / "connectivity"),
        ("prevalent.json", results / "seq2seq_teacher_imagenet_val_unseen_iter_36000.json"),
        ("prevalent_add.json", results / "seq2seq_teacher_imagenet_val_unseen_iter_36000_add.json"),
        ("agent.json", results / "seq2seq_teacher_imagenet_val_unseen_iter_36000.json"),
    ):
        (tmp_path / name).symlink_to(target)
    (tmp_path / "suite.toml").write_text(toml, encoding="utf-8")

    assert main([*shlex.split(score_line)[1:], "--no-figures"]) == 0
    means = json.loads((tmp_path / "scores" / "summary.json").read_text(encoding="utf-8"))["means"]
    assert _matches((means["sr"], means["spl"], means["ne"]), "(0.6015, 0.5601, 4.1361)")
    capsys.readouterr()

    assert main([*shlex.split(suite_line)[1:], "--no-progress"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert len(shown) == 6 and printed[: len(shown)] == shown
    assert (tmp_path / "suite_results" / "results.json").is_file()

    assert main([*shlex.split(compare_line)[1:], "--no-progress", "--metrics", "ne,sr,spl,ndtw,sdtw"]) == 0
    compared = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert compared[0].startswith("r2r: r2r, convention r2r, 2349 episodes")
    assert compared[1:5] == shown[1:5] and not compared[5].startswith("random walk")


def test_reported_block_is_what_compare_prints(tmp_path, monkeypatch, capsys):
    """docs/suite.md's reported-versus-measured block is what its `navdtw compare` line prints on
    the files of the README's several-runs example (written by the README's own block), line by
    line; the README's shell form of that example is the same command."""
    import shlex

    from navdtw.cli import main

    page = _text(REPO / "docs" / "suite.md")
    (command,) = re.findall(r"`(navdtw compare --runs mine='mine_seed\*\.jsonl'.*?)`", " ".join(page.split()))
    readme = " ".join(_text(REPO / "README.md").split())
    assert f"`{command}`" in readme
    (block,) = re.findall(r"```\n(results: reported vs measured\n.*?)```", page, re.S)
    writer = next(code for _, code, _ in _blocks(REPO / "README.md") if "_seed{seed}.jsonl" in code)
    monkeypatch.chdir(tmp_path)
    exec(compile(writer.split("results = navdtw.suite.compare(")[0], "README.md", "exec"), {"__name__": "docs_example"})
    capsys.readouterr()
    assert main([*shlex.split(command)[1:], "--no-progress"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    shown = [line.rstrip() for line in block.splitlines()]
    start = printed.index(shown[0])
    assert printed[start : start + len(shown)] == shown


def test_readme_etpnav_shell_line_runs(tmp_path, monkeypatch, capsys):
    """The README's shell form of the ETPNav example runs on the files its block writes and prints
    the means the block states (SR 47.2% and 55.8%), with the reported figures checked."""
    import shlex

    from navdtw.cli import main

    readme = _text(REPO / "README.md")
    (command,) = re.findall(r"`(navdtw compare ckpt6=.*?)`", " ".join(readme.split()))
    writer = next(code for _, code, _ in _blocks(REPO / "README.md") if "stats_ep_ckpt_" in code)
    monkeypatch.chdir(tmp_path)
    exec(compile(writer.split("results = navdtw.suite.compare(")[0], "README.md", "exec"), {"__name__": "docs_example"})
    capsys.readouterr()
    assert main([*shlex.split(command)[1:], "--no-progress"]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if line.startswith("ckpt")]
    assert lines[0][:4] == ["ckpt6", "113.52", "4.68†", "47.2"]  # agent, steps, NE, SR: the table
    assert lines[1][:4] == ["ckpt9", "110.94", "4.44*", "55.8*"]
    assert ["ckpt9", "SR", "55.8", "55.8", "[50.7,", "60.5]", "+0.0", "inside"] in [r[:8] for r in lines]  # reported


def test_results_page_compare_lines_run(tmp_path, monkeypatch, capsys):
    """docs/datasets/results.md's `navdtw compare` lines run as shown: the first on the page's own
    mine.jsonl and another agent's log of the same episodes, the second on two CSV tables that
    both have an 'Oracle SR' column and SPL in percent."""
    import shlex

    from navdtw.cli import main

    page = REPO / "docs" / "datasets" / "results.md"
    (shell,) = [b for b in re.findall(r"```bash\n(.*?)```", _text(page), re.S) if "navdtw compare mine." in b]
    first, second = shell.strip().splitlines()
    monkeypatch.chdir(tmp_path)
    exec(compile(_blocks(page)[0][1], "results.md", "exec"), {"__name__": "docs_example"})
    (tmp_path / "theirs.jsonl").write_text((tmp_path / "mine.jsonl").read_text())
    capsys.readouterr()
    assert main([*shlex.split(first)[1:], "--no-progress"]) == 0
    for name, spl in (("mine", "80"), ("theirs", "60")):
        (tmp_path / f"{name}.csv").write_text(f"episode_id,Oracle SR,spl,success\n1,0,0,0\n2,1,{spl},1\n")
    assert main([*shlex.split(second)[1:], "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "OSR" in printed and " 40.0" in printed and " 30.0" in printed  # SPL 80% and 60% on one of two
