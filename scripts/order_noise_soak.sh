#!/usr/bin/env bash
# Runs the corpus N times (default 100) on trap.random_order_dw, the zoo's correct kernel
# that sums dw in a new random order on every call (as float atomics do), and fails on
# the first run in which any case does not pass or skip: order noise must never be taken
# for state, a cache or a race (docs/checks.md, "state" and "determinism").
# Usage: scripts/order_noise_soak.sh [N] [BUILD_DIR]
set -euo pipefail
runs=${1:-100}
build=${2:-build}
kcheck="$build/harness/kcheck"
plugin="$build/tests/traps/libkc_traps.so"
for ((i = 1; i <= runs; ++i)); do
  out=$("$kcheck" run cases --plugin "$plugin" --backend trap.random_order_dw --jobs 2 --quiet 2>&1) || {
    echo "run $i of $runs: not every case passed"
    echo "$out" | grep -E "^(FAILED|MISTRUSTED|CRASHED|TIMEOUT)" -A3
    exit 1
  }
  echo "run $i of $runs: $(echo "$out" | grep -E '^trap.random_order_dw ')"
done
echo "all $runs runs passed every case they took"
