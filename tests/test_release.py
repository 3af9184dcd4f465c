"""What a release promises beyond the code (issue 36): every release test step runs the same
Hypothesis examples; the README works as the package's index page; the published extras hold no
developer pins; the CHANGELOG puts breaking changes first; the docs say what the floors check
runs; CI leaves nothing in /tmp. Parts that read files only a source checkout has skip elsewhere
(the wheel and sdist checks copy tests/, README.md, pyproject.toml and docs/)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO
from hypothesis import settings

GITHUB = "https://github.com/navdtw/navdtw/blob/main/"


def _text(name: str) -> str:
    path = REPO / name
    if not path.is_file():
        pytest.skip(f"{name} is not here (not a source checkout)")
    return path.read_text(encoding="utf-8")


def _pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads(_text("pyproject.toml"))


# --- every release test step derandomized (item 16)


def test_the_chosen_hypothesis_profile_is_in_force(pytestconfig):
    # `--hypothesis-profile=ci` (the README's command) must not be undone by tests/conftest.py,
    # whichever of the two pytest reads first
    chosen = pytestconfig.getoption("--hypothesis-profile", None) or os.environ.get("HYPOTHESIS_PROFILE", "default")
    want = settings.get_profile(chosen)
    assert settings.default.derandomize == want.derandomize
    assert (settings.default.database is None) == (want.database is None)
    ci = settings.get_profile("ci")
    assert ci.derandomize and ci.database is None and ci.deadline is None


def test_every_release_test_step_runs_the_same_examples():
    command = _pyproject()["tool"]["cibuildwheel"]["test-command"]
    assert "pytest" in command and "--hypothesis-profile=ci" in command  # each wheel of wheels.yml
    for page in ("README.md", "docs/install.md", "docs/development.md"):
        lines = [line for line in _text(page).splitlines() if 'pip install ".[test]" && python -m pytest' in line]
        assert lines, page
        assert all("--hypothesis-profile=ci" in line for line in lines), (page, lines)
    check_wheel = REPO / "tools" / "check_wheel.sh"
    if check_wheel.is_file():  # run by hand too, not only under .ci/run's HYPOTHESIS_PROFILE=ci
        assert 'export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"' in check_wheel.read_text()


# --- the README as the package's index page (item 17)


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_the_readme_links_work_on_the_package_index():
    readme = _text("README.md")
    links = _links(readme)
    assert len(links) >= 20
    relative = [link for link in links if not link.startswith(("https://", "http://"))]
    assert relative == [], f"relative links break on PyPI: {relative}"
    for link in links:
        if link.startswith(GITHUB):
            target = REPO / link.removeprefix(GITHUB).split("#")[0]
            assert target.exists(), f"{link}: no {target.relative_to(REPO)} in the repository"
    # install from the index first, then the two set-up commands for a checkout
    order = ["pip install navdtw", 'pip install ".[plot]" && navdtw demo', 'pip install ".[test]" && python -m pytest']
    assert [readme.index(command) for command in order] == sorted(readme.index(command) for command in order)


def test_the_site_links_the_readme_to_its_own_pages():
    ext = REPO / "docs" / "_ext" / "readme_links.py"
    if not ext.is_file():
        pytest.skip("docs/_ext is not here")
    spec = importlib.util.spec_from_file_location("readme_links", ext)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert '"readme_links"' in _text("docs/conf.py")
    assert "{include} ../README.md" in _text("docs/index.md") and ":relative-docs: docs/" in _text("docs/index.md")
    local = module.local_links(_text("README.md"))
    assert module.PAGES not in local
    pages = [link for link in _links(local) if link.startswith("docs/")]
    assert len(pages) >= 20
    for link in pages:
        assert (REPO / link.split("#")[0]).is_file(), link
    content = [_text("README.md")]
    module._include_read(None, Path("../README.md"), "index", content)
    assert content[0] == local
    other = ["[a](https://github.com/navdtw/navdtw/blob/main/docs/x.md)"]
    module._include_read(None, Path("other.md"), "index", other)
    assert other == ["[a](https://github.com/navdtw/navdtw/blob/main/docs/x.md)"]  # only the README


def test_the_published_extras_hold_no_developer_pins():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert "lint" not in extras
    for name, reqs in extras.items():
        for req in reqs:
            assert not re.match(r"(ruff|clang-format|pre-commit)\b", req), (name, req)
    pins = REPO / "tools" / "lint-requirements.txt"
    hooks = REPO / ".pre-commit-config.yaml"
    if pins.is_file() and hooks.is_file():  # the developers' pins agree with pre-commit's
        wanted = dict(re.findall(r"^([\w-]+)==(\S+)$", pins.read_text(), re.M))
        assert set(wanted) == {"ruff", "clang-format"}
        revs = hooks.read_text()
        assert f"ruff-pre-commit\n    rev: v{wanted['ruff']}" in revs
        assert f"mirrors-clang-format\n    rev: v{wanted['clang-format']}" in revs
        ci = REPO / ".ci" / "run"
        if ci.is_file():
            assert "-r tools/lint-requirements.txt" in ci.read_text()


def test_the_changelog_puts_breaking_changes_and_renamed_names_first():
    # CONTRIBUTING's release steps: "breaking changes and renamed or removed names first"
    changelog = _text("CHANGELOG.md")
    top = changelog.split("\n## ")[1]
    sections = re.findall(r"^### (.+)$", top, re.M)
    assert sections[:2] == ["Changed (breaking)", "Renamed or removed public names"], sections[:4]


def test_the_docs_say_what_the_floors_check_runs():
    check_wheel = REPO / "tools" / "check_wheel.sh"
    if not check_wheel.is_file():
        pytest.skip("tools/ is not here")
    floors = check_wheel.read_text().split("the repaired wheel with every floor")[1].split("step ")[0]
    assert '-m "not slow"' in floors  # what the text below must say, as long as it is so
    page = " ".join(_text("docs/portability.md").split())
    assert 'python -m pytest -m "not slow"' in page
    assert "runs the whole test suite there" not in page
    assert "3.11 on the CI machine" in page


def test_the_floors_test_files_exist():
    # check_wheel.sh names the test files its floors run by default; a renamed or moved test file
    # would make pytest fail there only (a release check), so name it here first.
    check_wheel = REPO / "tools" / "check_wheel.sh"
    if not check_wheel.is_file():
        pytest.skip("tools/ is not here")
    text = check_wheel.read_text()
    for name in ("FLOORS_TESTS", "CORE_FLOORS_TESTS"):
        listed = re.search(rf"^\s*{name}=\((tests/[^)]*)\)", text, re.M)
        assert listed, f"{name} lists no test files in tools/check_wheel.sh"
        files = listed.group(1).split()
        assert len(files) >= 5
        assert [f for f in files if not (REPO / f).is_file()] == []


def test_ci_leaves_nothing_in_tmp():
    run = _text(".ci/run")
    # one private temporary folder for everything, removed by the exit trap
    assert 'CI_TMP="$(mktemp -d "${TMPDIR:-/tmp}/navdtw-ci.XXXXXX")"' in run
    assert 'export TMPDIR="$CI_TMP"' in run
    assert "trap cleanup EXIT" in run and 'rm -rf "$CI_TMP"' in run
    assert run.index('export TMPDIR="$CI_TMP"') < run.index("tools/check_wheel.sh >")  # before anything writes
    assert "trap - EXIT" not in run  # the cleanup trap stays to the end
    assert not re.search(r"/tmp/", run.replace("${TMPDIR:-/tmp}/navdtw-ci", "")), "a fixed path in /tmp"
    # the fuzz corpora go where TMPDIR says, not to fuzz/run.sh's default /tmp/navdtw-fuzz
    calls = re.findall(r'(?:NAVDTW_FUZZ_WORK="([^"]+)" )?bash fuzz/run.sh', run)
    assert calls and all(call == "$(mktemp -d)" for call in calls), calls
