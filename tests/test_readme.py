"""The README's Python examples run as written, each block on its own, and print what it says.

Every ```python block runs alone in a fresh namespace and working folder, so a reader can paste any
one of them. A line ``expression  # -> value`` states a result: the test evaluates the expression
and checks it against the value (numbers to the digits shown, anything else by its repr). Blocks
that read the real data (they call ``navdtw.data_path``) run only when the data is present; the
test points ``NAVDTW_DATA`` at it as a reader would."""

from __future__ import annotations

import ast
import re

import pytest
from conftest import REPO, find_data_dir

README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)
CLAIM = re.compile(r"^(?P<code>[^#\n]*?\S)\s*#\s*->\s*(?P<value>.+?)\s*$")


def _needs_data(block: str) -> bool:
    return "data_path(" in block


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
    """``value`` equals what the README states, numbers to the digits shown (also inside lists,
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
        return len(items) == len(node.elts) and all(
            _matches_node(v, n, ast.get_source_segment(text, n)) for v, n in zip(items, node.elts)
        )
    if isinstance(node, ast.Dict):
        keys = [ast.literal_eval(k) for k in node.keys]
        return isinstance(value, dict) and all(
            k in value and _matches_node(value[k], n, ast.get_source_segment(text, n))
            for k, n in zip(keys, node.values)
        )
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


def _block_id(k: int, block: str) -> str:
    first = next((ln for ln in block.splitlines() if ln.strip() and not ln.startswith("import")), "")
    return f"block{k}:{first[:40]}"


@pytest.mark.parametrize("block", BLOCKS, ids=[_block_id(k, b) for k, b in enumerate(BLOCKS)])
def test_readme_block_runs_alone(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    if _needs_data(block):
        data = find_data_dir()
        if data is None:
            pytest.skip("needs the real VLN data (NAVDTW_DATA or ../shared/data)")
        monkeypatch.setenv("NAVDTW_DATA", str(data))
    ns: dict = {"__name__": "readme"}
    claims = {line: (expr, stated) for line, expr, stated in _claims(block)}
    checked = 0
    # Statement by statement, so a stated result is the value the reader's own run produces
    # (no expression is evaluated twice).
    for stmt in ast.parse(block).body:
        claim = next((claims[ln] for ln in range(stmt.lineno, stmt.end_lineno + 1) if ln in claims), None)
        if claim is not None and isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), "README block", "eval"), ns)
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), "README block", "exec"), ns)
            if claim is None:
                continue
            assert isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name), claim
            value = ns[stmt.targets[0].id]
        assert _matches(value, claim[1]), f"README says `{claim[0]}` gives {claim[1]}, it gives {value!r}"
        checked += 1
    assert checked == len(claims)


def test_readme_has_checked_claims():
    """The README states results, and this test checks them (a rewrite cannot drop them all)."""
    assert sum(len(_claims(b)) for b in BLOCKS) >= 10


def test_readme_commands_exist():
    """Every `navdtw <command>` the README shows is a real subcommand."""
    from navdtw.cli import build_parser

    commands = set(re.findall(r"^navdtw (\w+)", README, re.M))
    assert commands >= {"demo", "score", "baseline"}
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


def test_readme_suite_runs(tmp_path, monkeypatch):
    """The README's suite (its agents' files written by the README's own block) runs and gives the
    data sets, agents and outputs the README shows."""
    data = find_data_dir()
    if data is None:
        pytest.skip("needs the real VLN data (NAVDTW_DATA or ../shared/data)")
    from navdtw import suite

    monkeypatch.setenv("NAVDTW_DATA", str(data))
    monkeypatch.chdir(tmp_path)
    writer = next(b for b in BLOCKS if "reverie_perturbed.json" in b)
    exec(compile(writer, "README block", "exec"), {"__name__": "readme"})
    (toml,) = re.findall(r"```toml\n(.*?)```", README, re.S)
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
