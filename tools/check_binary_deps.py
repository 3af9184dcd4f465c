"""Does pip install every wheel's test environment from binaries, as a machine without a compiler must?

    python tools/check_binary_deps.py          # the check (needs PyPI; 255 s at load 12-16 on 2 cores)
    python tools/check_binary_deps.py --scan   # print the lowest macOS where each install is compiler-free

cibuildwheel's test step installs each built wheel with its dependencies and
``[tool.cibuildwheel] test-requires`` into the build image with plain ``pip install``: pip takes the
NEWEST release of each package that the Python accepts (``requires-python``), and builds it from its
sdist when that release has no wheel for the image's platform. numpy and scipy publish their newest
releases for manylinux_2_28 (glibc 2.28) only, so in a manylinux2014 image that meant a numpy build
and a failed release (issue 19). A user's ``pip install navdtw`` does the same.

So, for every CPython in ``[tool.cibuildwheel] build`` and every platform the wheels target (read from
pyproject.toml: the manylinux and musllinux images, macOS, Windows), this script asks pip itself:

1. the resolution: ``pip install --dry-run --report --only-binary=:all: --platform ... --python-version
   X.Y --implementation cp --abi cpXY`` of navdtw's dependencies plus the test requirements must
   succeed (every package has a wheel);
2. the newest check: every compiled (platform-specific) wheel it picked must be the newest release
   pip would take with sdists allowed (``pip index versions``, within the requirement's specifiers),
   or pip without ``--only-binary`` would take that newer release and compile it. Step 1 alone does
   not catch issue 19: with ``--only-binary`` pip quietly falls back to numpy 2.2.6.

pip evaluates the environment markers of dependencies for the interpreter it runs under, not for
``--python-version``/``--platform``; the script evaluates them for the target and adds what pip left
out (``tomli``, ``exceptiongroup`` on 3.9/3.10, ``colorama`` on Windows) before resolving again.

macOS: navdtw's own floors (MACOSX_DEPLOYMENT_TARGET) are older than scipy's and numpy's newest
wheels need; MACOS_COMPILER_FREE below holds the real floor for each Python (the README quotes it).
The check resolves at that floor (must pass) and at the macOS version just below it (must need a
compiler), so the table cannot drift from PyPI unnoticed. ``--scan`` finds the floors again. The
README's platform table must state the same floors (glibc and macOS), and the check reads it.

pip runs ``--isolated`` against https://pypi.org/simple only (no local find-links, constraints or
mirrors), several at once. Exit status 1 names every failing Python and platform.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
INDEX = "https://pypi.org/simple"
WORKERS = 4  # pip processes at once (network waits overlap; the CPU is the limit)

# The lowest macOS on which `pip install navdtw` (and the test requirements) needs no compiler, per
# CPython: the floors of the newest scipy (and numpy) wheels pip takes there. Intel: scipy 1.13.1
# (3.9) 10.9, 1.15.3 (3.10) 10.13, 1.17.1 (3.11) 10.14, 1.18.1 (3.12-3.14) 10.15, and numpy 2.5.5
# (3.14) 10.15; never below navdtw's own 10.13. Apple silicon: scipy's arm64 wheels start at 12.0.
# Older macOS takes navdtw's wheel (10.13 / 11.0) but builds scipy from its sdist.
MACOS_COMPILER_FREE = {
    "x86_64": {"3.9": "10.13", "3.10": "10.13", "3.11": "10.14", "3.12": "10.15", "3.13": "10.15", "3.14": "10.15"},
    "arm64": {"3.9": "12.0", "3.10": "12.0", "3.11": "12.0", "3.12": "12.0", "3.13": "12.0", "3.14": "12.0"},
}
# macOS releases to try, in order (--scan; the step below a floor).
MACOS_VERSIONS = ["10.13", "10.14", "10.15", "11.0", "12.0", "13.0", "14.0", "15.0"]


@dataclass(frozen=True)
class Target:
    """A platform a wheel is built for: pip's platform tags for a machine at its floor."""

    label: str
    sys_platform: str  # for environment markers
    machine: str
    platforms: tuple[str, ...]
    expect_ok: bool = True  # False: a negative check (below a floor, a compiler is needed)


@dataclass
class Result:
    python: str
    target: Target
    ok: bool
    picked: list[str] = field(default_factory=list)  # "numpy 2.5.5 (manylinux_2_27_x86_64...)"
    problems: list[str] = field(default_factory=list)
    learned: list = field(default_factory=list)  # (Requirement, extras) pip's markers left out


# --------------------------------------------------------------------------------------------
# pyproject.toml
# --------------------------------------------------------------------------------------------


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pythons(pp: dict) -> list[str]:
    """'cp39-* cp310-*' -> ['3.9', '3.10'], each checked against requires-python."""
    build = pp["tool"]["cibuildwheel"]["build"]
    out = [f"3.{m}" for m in re.findall(r"\bcp3(\d+)-", build)]
    spec = SpecifierSet(pp["project"]["requires-python"])
    bad = [v for v in out if Version(v) not in spec]
    if not out or bad:
        sys.exit(f"check_binary_deps: cibuildwheel build {build!r} vs requires-python {spec}: {bad or 'none'}")
    return out


def requirements(pp: dict) -> list[str]:
    return [*pp["project"]["dependencies"], *pp["tool"]["cibuildwheel"]["test-requires"]]


def _glibc(image: str) -> int:
    """cibuildwheel image name -> the glibc 2.x minor it targets (manylinux_2_28 -> 28)."""
    m = re.fullmatch(r"manylinux_2_(\d+)", image.replace("manylinux2014", "manylinux_2_17"))
    if not m:
        sys.exit(f"check_binary_deps: unknown manylinux image {image!r} (a name such as 'manylinux_2_28')")
    return int(m[1])


def _manylinux_platforms(minor: int, arch: str) -> tuple[str, ...]:
    """What pip on a glibc 2.<minor> machine accepts: every manylinux_2_k for k <= minor and the
    legacy names (pip's --platform expands only the legacy names, not PEP 600's)."""
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    tags = []
    for k in range(minor, 4, -1):
        tags.append(f"manylinux_2_{k}_{arch}")
        if k in legacy:
            tags.append(f"{legacy[k]}_{arch}")
    return tuple(tags)


def _macos_floor(pp: dict, arch: str) -> str:
    """navdtw's MACOSX_DEPLOYMENT_TARGET for an architecture (the override for arm64, if any)."""
    floor = pp["tool"]["cibuildwheel"]["macos"]["environment"]["MACOSX_DEPLOYMENT_TARGET"]
    for o in pp["tool"]["cibuildwheel"].get("overrides", []):
        if f"macosx_{arch}" in o["select"] and "MACOSX_DEPLOYMENT_TARGET" in o.get("environment", {}):
            floor = o["environment"]["MACOSX_DEPLOYMENT_TARGET"]
    return floor


def _mac_tag(version: str, arch: str) -> str:
    major, minor = version.split(".")
    return f"macosx_{major}_{minor}_{arch}"


def targets(pp: dict, python: str) -> list[Target]:
    """The wheels' platforms: Windows, Linux at the manylinux image's glibc, musl 1.2, and macOS at
    the compiler-free floor plus the step below it when that is still at or above navdtw's floor."""
    linux = pp["tool"]["cibuildwheel"]["linux"]
    # Windows first: its resolution finds every dependency pip's markers drop (colorama on Windows,
    # tomli and exceptiongroup below 3.11), which the other targets then get without a second pass.
    out = [Target("Windows AMD64", "win32", "AMD64", ("win_amd64",))]
    for arch in ("x86_64", "aarch64"):
        minor = _glibc(linux[f"manylinux-{arch}-image"])
        out.append(Target(f"Linux {arch} (glibc 2.{minor})", "linux", arch, _manylinux_platforms(minor, arch)))
    musl = linux["musllinux-x86_64-image"]  # musllinux_1_2: a musl 1.2 system also takes 1_1 wheels
    out.append(Target(f"Linux x86_64 ({musl})", "linux", "x86_64", (f"{musl}_x86_64", "musllinux_1_1_x86_64")))
    for arch in ("x86_64", "arm64"):
        own, free = _macos_floor(pp, arch), MACOS_COMPILER_FREE[arch][python]
        if Version(free) < Version(own):
            sys.exit(f"check_binary_deps: MACOS_COMPILER_FREE[{arch}][{python}] = {free} is below navdtw's {own}")
        out.append(Target(f"macOS {free} {arch}", "darwin", arch, (_mac_tag(free, arch),)))
        below = [v for v in MACOS_VERSIONS if Version(own) <= Version(v) < Version(free)]
        if below:
            v = below[-1]
            out.append(Target(f"macOS {v} {arch}", "darwin", arch, (_mac_tag(v, arch),), expect_ok=False))
    return out


# --------------------------------------------------------------------------------------------
# pip
# --------------------------------------------------------------------------------------------


PIP_RUNS: list[str] = []  # the subcommand of every pip run (the summary counts them)


def pip(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", *args, "--index-url", INDEX]
    PIP_RUNS.append(args[0])
    return subprocess.run(cmd, capture_output=True, text=True)


def _target_options(python: str, t: Target) -> list[str]:
    opts = ["--python-version", python, "--implementation", "cp", "--abi", "cp" + python.replace(".", "")]
    for p in t.platforms:
        opts += ["--platform", p]
    return opts


def marker_env(python: str, t: Target) -> dict[str, str]:
    system = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}[t.sys_platform]
    return {
        "python_version": python,
        "python_full_version": python + ".0",
        "implementation_name": "cpython",
        "implementation_version": python + ".0",
        "platform_python_implementation": "CPython",
        "sys_platform": t.sys_platform,
        "platform_system": system,
        "platform_machine": t.machine,
        "os_name": "nt" if t.sys_platform == "win32" else "posix",
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def _applies(req: Requirement, env: dict[str, str], extras: list[str]) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate({**env, "extra": e}) for e in ["", *extras])


def resolve(python: str, t: Target, reqs: list[str]) -> tuple[dict | None, str]:
    """pip's binary-only resolution for the target -> (report, error text)."""
    # --ignore-installed: what this venv holds must not count as already there.
    opts = ["--dry-run", "--ignore-installed", "--quiet", "--report", "-", "--only-binary=:all:"]
    r = pip("install", *opts, *_target_options(python, t), *reqs)
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "WARNING" not in ln]
        return None, " / ".join(lines[-3:])
    return json.loads(r.stdout), ""


@cache
def releases(name: str, python: str, platforms: tuple[str, ...] = ()) -> tuple[Version, ...]:
    """Every release pip would consider for this Python (sdists allowed), newest first; with
    platforms, only those with an sdist or a wheel for them."""
    opts = ["--python-version", python]
    for p in platforms:
        opts += ["--platform", p]
    r = pip("index", "versions", name, "--json", *opts)
    if r.returncode != 0:
        raise RuntimeError(f"pip index versions {name} --python-version {python} failed: {r.stderr.strip()}")
    return tuple(Version(v) for v in json.loads(r.stdout)["versions"])


# --------------------------------------------------------------------------------------------
# the check
# --------------------------------------------------------------------------------------------


def check(python: str, t: Target, root: list[str], learned: tuple = ()) -> Result:
    """Resolve, add what pip's marker evaluation left out until nothing is missing, then the newest
    check. ``learned``: (requirement, extras) pairs another target of this Python found missing."""
    res = Result(python, t, ok=False)
    env = marker_env(python, t)
    reqs = [Requirement(r) for r in root]
    res.learned = list(learned)
    report = None
    for _ in range(4):
        wanted = [r for r in reqs if _applies(r, env, [])]
        wanted += [_unmarked(r) for r, extras in res.learned if _applies(r, env, extras)]
        report, err = resolve(python, t, [str(r) for r in wanted])
        if report is None:
            res.problems.append(f"no binary-only resolution: {err}")
            break
        have = {canonicalize_name(i["metadata"]["name"]) for i in report["install"]}
        missing = [
            (req, extras)
            for item in report["install"]
            for extras in [item.get("requested_extras") or []]
            for req in map(Requirement, item["metadata"].get("requires_dist") or [])
            if canonicalize_name(req.name) not in have and _applies(req, env, extras)
        ]
        if not missing:
            break
        res.learned += missing
    if report is not None:
        try:
            res.problems += _newest_problems(python, t, report, wanted, env)
        except RuntimeError as e:
            res.problems.append(str(e))
        for item in report["install"]:
            wheel = item["download_info"]["url"].rsplit("/", 1)[-1]
            platform = wheel[:-4].split("-")[-1]
            if platform != "any":
                res.picked.append(f"{item['metadata']['name']} {item['metadata']['version']} ({platform})")
    res.ok = not res.problems
    return res


def _unmarked(req: Requirement) -> Requirement:
    out = Requirement(str(req))
    out.marker = None
    return out


def _newest_problems(python: str, t: Target, report: dict, reqs: list[Requirement], env: dict) -> list[str]:
    """Compiled wheels older than the release pip would take with sdists allowed."""
    # Every specifier on each package: the root requirements and the resolved packages' own.
    specs: dict[str, SpecifierSet] = {}
    all_reqs = list(reqs)
    for item in report["install"]:
        extras = item.get("requested_extras") or []
        all_reqs += [
            q for q in map(Requirement, item["metadata"].get("requires_dist") or []) if _applies(q, env, extras)
        ]
    for q in all_reqs:
        key = canonicalize_name(q.name)
        specs[key] = specs.get(key, SpecifierSet()) & q.specifier
    problems = []
    for item in report["install"]:
        name, picked = item["metadata"]["name"], Version(item["metadata"]["version"])
        if item["download_info"]["url"].endswith("-any.whl"):
            continue  # pure Python: an sdist of a newer release needs no compiler
        spec = specs.get(canonicalize_name(name), SpecifierSet())
        newer = [v for v in releases(name, python) if v > picked and v in spec]
        if newer:  # confirm with the target's platforms (a newer release may lack an sdist)
            newer = [v for v in releases(name, python, t.platforms) if v > picked and v in spec]
        if newer:
            problems.append(
                f"{name} {newer[0]} is the release pip takes for CPython {python}, but it has no wheel for "
                f"{t.platforms[0]}: pip builds it from source (binaries only: {name} {picked})"
            )
    return problems


def _run(pp: dict, plan: dict[str, list[Target]]) -> list[Result]:
    """Each Python's first target, then the others with what the first found pip's markers miss."""
    root = requirements(pp)
    with ThreadPoolExecutor(WORKERS) as ex:
        first = list(ex.map(lambda py: check(py, plan[py][0], root), plan))
        learned = {r.python: tuple(r.learned) for r in first}
        jobs = [(py, t) for py in plan for t in plan[py][1:]]
        rest = list(ex.map(lambda job: check(job[0], job[1], root, learned[job[0]]), jobs))
    return first + rest


def run_checks(pp: dict) -> list[Result]:
    results = _run(pp, {py: targets(pp, py) for py in pythons(pp)})
    order = {(py, t): k for k, (py, t) in enumerate((py, t) for py in pythons(pp) for t in targets(pp, py))}
    return sorted(results, key=lambda r: order[(r.python, r.target)])


def scan(pp: dict) -> None:
    """The lowest macOS (from navdtw's floor up) where each Python's install is compiler-free."""
    plan = {}
    for py in pythons(pp):
        plan[py] = [
            Target(f"macOS {v} {arch}", "darwin", arch, (_mac_tag(v, arch),))
            for arch in ("x86_64", "arm64")
            for v in MACOS_VERSIONS
            if Version(v) >= Version(_macos_floor(pp, arch))
        ]
    floors: dict[str, dict[str, str]] = {"x86_64": {}, "arm64": {}}
    for r in sorted(_run(pp, plan), key=lambda r: Version(r.target.label.split()[1])):
        if r.ok:
            floors[r.target.machine].setdefault(r.python, r.target.label.split()[1])
    print(json.dumps(floors, indent=1))


def readme_problems(pp: dict) -> list[str]:
    """The README's platform table states these floors: glibc from the manylinux images, and each
    macOS floor of MACOS_COMPILER_FREE (and no other) in its macOS rows."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {r.split("|")[1].strip(): r for r in text.splitlines() if r.startswith("| ")}
    linux = pp["tool"]["cibuildwheel"]["linux"]
    glibc = {_glibc(linux[f"manylinux-{arch}-image"]) for arch in ("x86_64", "aarch64")}
    want = {"Linux, glibc": {f"2.{m}" for m in glibc}}
    for arch, label in (("x86_64", "macOS, Intel"), ("arm64", "macOS, Apple silicon")):
        want[label] = {v.removesuffix(".0") for v in MACOS_COMPILER_FREE[arch].values()}
    problems = []
    for label, floors in want.items():
        stated = set(re.findall(r">= ([\d.]+)", rows.get(label, "").rsplit("|", 2)[-2])) if label in rows else None
        if stated != floors:
            problems.append(f"README.md's row {label!r} states floors {stated}, this check has {sorted(floors)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scan", action="store_true", help="find the compiler-free macOS floors and print them")
    args = ap.parse_args(argv)
    pp = project()
    if args.scan:
        scan(pp)
        return 0
    t0 = time.monotonic()
    results = run_checks(pp)
    failed = 0
    for p in readme_problems(pp):
        print(f"FAIL {p}")
        failed += 1
    for r in results:
        good = r.ok == r.target.expect_ok
        failed += not good
        mark = "ok  " if good else "FAIL"
        what = "compiler-free" if r.ok else "needs a compiler"
        expect = "" if r.target.expect_ok else " (expected: below the floor)"
        print(f"{mark} cp{r.python.replace('.', '')} {r.target.label:<28} {what}{expect}: {', '.join(r.picked) or '-'}")
        if not good or not r.target.expect_ok:
            for p in r.problems:
                print(f"       {p}")
            if not r.problems:
                print("       every package has a wheel (the floor in MACOS_COMPILER_FREE is too high)")
    runs = f"{PIP_RUNS.count('install')} pip dry runs, {PIP_RUNS.count('index')} pip index queries"
    print(f"check_binary_deps: {len(results)} checks ({runs}), {failed} failed, {time.monotonic() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
