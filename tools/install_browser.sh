#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the browser test of the HTML report (tests/test_report.py).
# Debian/Ubuntu only; elsewhere (or without root) it says so and the test skips.
set -euo pipefail

if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install_browser.sh: no apt-get; the browser test of the report will skip" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then SUDO="sudo -n"; else
        echo "install_browser.sh: not root and no sudo; the browser test of the report will skip" >&2
        exit 0
    fi
fi
if ! { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; }; then
    echo "install_browser.sh: could not install chromium + chromium-driver; the browser test of the report will skip" >&2
fi
