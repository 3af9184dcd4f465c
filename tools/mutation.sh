#!/usr/bin/env bash
# Mutation testing of navdtw's numbers (docs/development.md, "Mutation testing"), by hand:
#   bash tools/mutation.sh python [args]   # cosmic-ray over registry, metrics, conventions, stats, matchers
#   bash tools/mutation.sh cpp [args]      # the hand-made C++ mutants of the recurrence and the kernels
#   bash tools/mutation.sh check           # every C++ mutant still applies (no build; for CI)
# Run from an environment with navdtw installed (pip install ".[test]"); the arguments go to
# tools/mutation/python_mutants.py or cpp_mutants.py (--help). Everything is written under build/.
# The full runs take hours on 2 busy cores: both run their judges under `nice -n 10`.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
shift || true
case "$what" in
    python)
        python -m pip install --quiet "cosmic-ray==8.7.0"
        exec python tools/mutation/python_mutants.py "$@"
        ;;
    cpp)
        python -m pip install --quiet pybind11 cmake ninja
        exec python tools/mutation/cpp_mutants.py "$@"
        ;;
    check)
        exec python tools/mutation/cpp_mutants.py --check
        ;;
    *)
        echo "usage: bash tools/mutation.sh python|cpp|check [args]" >&2
        exit 2
        ;;
esac
