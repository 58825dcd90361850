#!/usr/bin/env bash
# The main job: check the shipped case corpus on every available backend, print a
# summary, write out/report.json (plus out/junit.xml and out/failures/*.yaml).
# Extra arguments go to `kcheck run` (e.g. --backend reference --jobs 4).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$KC_ROOT"
exec "$KC_BUILD_DIR/harness/kcheck" run cases --jobs "$(nproc)" --timeout 120 \
  --report out/report.json --junit out/junit.xml "$@"
