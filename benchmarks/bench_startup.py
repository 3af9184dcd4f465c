"""Benchmark of the ``navdtw`` command's start-up: how long a user waits for an answer.

Each command runs in a fresh interpreter (``sys.executable``), ``--repeat`` times; the median wall
time is printed beside the bare interpreter's (``python -c pass``), with the load average, since
a shared machine slows every row alike. Measured:

* ``import navdtw`` (target <= 0.1 s) and ``import navdtw; navdtw.evaluate`` (the engine, numpy);
* ``navdtw --help``, ``navdtw --version``, a mistyped command, ``navdtw watch --help`` and
  ``navdtw score`` / ``compare`` / ``baseline --help`` (target <= 0.15 s each: none imports numpy;
  the last three are answered from a record of their options, navdtw.cli._help_snapshot);
* then ``python -X importtime`` of ``navdtw --help``: the slowest imports, cumulative.

The targets are printed PASS / MISS and never fail the script. The command runs as the console
script does (``navdtw.cli.main``), without the entry-point wrapper's own start-up.

Usage: python benchmarks/bench_startup.py [--repeat 15]
       python benchmarks/bench_startup.py --tiny    # one run of each: checks the script runs (CI)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CLI = "import sys; from navdtw.cli import main; sys.exit(main({argv!r}))"

ROWS = [
    ("python -c pass (the interpreter alone)", "pass", None),
    ("import navdtw", "import navdtw", 0.1),
    ("import navdtw; navdtw.evaluate", "import navdtw; navdtw.evaluate", None),
    ("navdtw --help", CLI.format(argv=["--help"]), 0.15),
    ("navdtw --version", CLI.format(argv=["--version"]), 0.15),
    ("navdtw bogus (a mistyped command)", CLI.format(argv=["bogus"]), 0.15),
    ("navdtw watch --help", CLI.format(argv=["watch", "--help"]), 0.15),
    ("navdtw score --help", CLI.format(argv=["score", "--help"]), 0.15),
    ("navdtw compare --help", CLI.format(argv=["compare", "--help"]), 0.15),
    ("navdtw baseline --help", CLI.format(argv=["baseline", "--help"]), 0.15),
]


def wall(code: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def slowest_imports(code: str, count: int) -> list[tuple[int, str]]:
    """``-X importtime``: the ``count`` largest cumulative times (us) among the top-level imports."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line[len("import time:") :].split("|")
            if cumulative.strip().isdigit() and not name.startswith("   "):  # the top two levels
                rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=15, help="runs of each command (median kept; default 15)")
    ap.add_argument("--tiny", action="store_true", help="one run of each (checks the script runs)")
    args = ap.parse_args()
    repeat = 1 if args.tiny else args.repeat
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"median wall time of {repeat} run(s), each in a fresh interpreter:\n")
    for label, code, target in ROWS:
        t = wall(code, repeat)
        verdict = "" if target is None else f"   target <= {target:.2f} s: {'PASS' if t <= target else 'MISS'}"
        print(f"  {label:<40} {t:6.3f} s{verdict}")
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    print("\npython -X importtime, navdtw --help: slowest imports (cumulative)")
    for us, name in slowest_imports(CLI.format(argv=["--help"]), 3 if args.tiny else 8):
        print(f"  {us / 1000:7.1f} ms  {name.strip()}")


if __name__ == "__main__":
    main()
