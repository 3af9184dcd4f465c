"""docs/in-the-loop.md's workflow is the code's, checked where habitat-lab is not installed too:
the iterator options its configuration blocks set are ``navdtw.habitat.ITERATOR_OPTIONS`` (read
from the package's source: importing it needs habitat-lab), and every navdtw call of its loop
(a block that needs habitat-lab, not run by tests/test_doc_examples.py) is one that
tests/habitat_loop.py makes, the rank tests/test_habitat_loop.py runs end to end."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import navdtw

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "in-the-loop.md"
LOOP = Path(__file__).resolve().parent / "habitat_loop.py"
ORDER_SOURCE = Path(navdtw.__file__).resolve().parent / "habitat" / "_order.py"
SECTION = "## The order, the log and `navdtw watch`: one workflow"


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert SECTION in text
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def iterator_options() -> dict:
    tree = ast.parse(ORDER_SOURCE.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "ITERATOR_OPTIONS":
            return ast.literal_eval(node.value)
    raise AssertionError("ITERATOR_OPTIONS not found in navdtw/habitat/_order.py")


def yaml_options(block: str) -> dict:
    """The ``key: value`` lines under ``iterator_options:`` / ``ITERATOR_OPTIONS:`` of a YAML block."""
    out, inside = {}, False
    for line in block.splitlines():
        key = line.strip().rstrip(":")
        if key.lower() == "iterator_options":
            inside = True
            continue
        if inside and ":" in line:
            k, v = (s.strip() for s in line.split(":", 1))
            out[k] = {"False": False, "True": True}.get(v, v if not re.fullmatch(r"-?\d+", v) else int(v))
    return out


def test_configuration_blocks_set_the_iterator_options():
    want = iterator_options()
    blocks = re.findall(r"```yaml\n(.*?)```", section(), re.S)
    assert len(blocks) == 2
    hydra, yacs = (yaml_options(b) for b in blocks)
    assert hydra == want
    assert yacs == {k.upper(): v for k, v in want.items()}
    assert want == {
        "shuffle": False,
        "group_by_scene": False,
        "num_episode_sample": -1,
        "max_scene_repeat_episodes": -1,
        "max_scene_repeat_steps": -1,
    }


def calls(code: str) -> set[str]:
    """``nh.x`` / ``navdtw.x`` / ``log.x`` / ``env.x`` names a piece of code uses."""
    return set(re.findall(r"\b(?:nh|navdtw|log|env|habitat\.config)\.(\w+)", code))


def test_the_loop_block_is_what_the_tested_rank_runs():
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", section(), re.S) if "OrderCheck" in b]
    used = calls(block)
    assert {"keep_order", "order_episodes", "OrderCheck", "EpisodeLog", "write", "get_metrics", "reset"} <= used
    loop = LOOP.read_text(encoding="utf-8")
    missing = {name for name in used if name not in calls(loop)}
    assert not missing, f"docs/in-the-loop.md's loop calls what tests/habitat_loop.py does not: {sorted(missing)}"


def test_the_page_names_the_tests_it_cites():
    text = section()
    for path in re.findall(r"`(tests/\w+\.py)`", text):
        assert (REPO / path).is_file(), path
