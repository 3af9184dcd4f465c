#!/usr/bin/env bash
# Headless Chromium and its WebDriver for the browser test of the HTML report (tests/test_report.py).
# Debian/Ubuntu only; elsewhere (or without root) it says so and the test skips.
set -euo pipefail

if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
# shellcheck source=tools/as_root.sh
. "$(dirname "$0")/as_root.sh"
apt_install install_browser.sh "the browser test of the report will skip" \
    --no-install-recommends chromium chromium-driver || true
