#!/usr/bin/env bash
# The full test suite: unit, property and end-to-end tests and the case corpus, through
# ctest. Extra arguments go to ctest (e.g. -L smoke, -R MaxPool).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$KC_BUILD_DIR"
exec ctest --output-on-failure -j "$(nproc)" "$@"
