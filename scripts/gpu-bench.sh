#!/bin/sh
# `kcheck bench` of the GPU layer set on a lent GPU node, bounded: the cases of
# cases/bench/gpu on the cuda backend (the CUTLASS engine), cuda.direct and the cudnn peer, with the GPU's ceilings (d2d
# copy, cuBLAS GEMM) measured in the same run, then the dashboard; the device, driver and
# commit are recorded and everything is packed into OUT/kc-bench.tgz, also when a step is
# cut short. Runs from an assembled bundle (`ninja -C build kc_bundle`), which needs none
# of our Debian libraries.
#   scripts/gpu-bench.sh BUNDLE OUT
# Budgets in seconds (environment): KC_DEADLINE (the whole pass, 470: inside 8 minutes;
# no step starts with under 5 s left or runs past it, 10 s kept to pack), KC_T_BENCH
# (kcheck bench, 420), KC_T_DASHBOARD (30). KC_BENCH_CASES replaces the cases' path;
# KC_BENCH_ARGS adds options (e.g. "--min-time 0.1 --max-reps 200").
# Exit: kcheck bench's status (0 all re-checks passed, 1 a failure or a missed
# speed-of-light rule, 124 cut by the deadline), 2 on bad arguments.
set -u
[ $# -eq 2 ] || { echo "usage: scripts/gpu-bench.sh BUNDLE OUT" >&2; exit 2; }
BUNDLE=$(cd "$1" && pwd) || exit 2
OUT=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
R="$OUT/kc-bench"
mkdir -p "$R"
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$R/bench-run.txt"; }
DEADLINE=${KC_DEADLINE:-470}
budget() {  # budget S: S, or what is left before the deadline less 10 s to pack
  left=$(( DEADLINE - ( $(date +%s) - START ) - 10 ))
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
within() {  # within S CMD...: CMD under timeout for budget(S); 124 unstarted under 5 s
  b=$(budget "$1"); shift
  if [ "$b" -lt 5 ]; then
    echo "skipped: the deadline is near" >&2
    return 124
  fi
  timeout -k 5 "$b" "$@"
}

# Libraries loaded at run time (cuDNN, cuBLAS): as run.sh finds them.
DIRS="$BUNDLE/lib:/usr/local/cuda/lib64"
for mod in cudnn cublas; do
  for py in python3 python; do
    d=$($py -c "import os, nvidia.$mod as m; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null) && {
      DIRS="$DIRS:$d"; break; }
  done
done
export LD_LIBRARY_PATH="$DIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The layer set's batch-32 cases need more host memory than kcheck's default cap of 4 GiB
# allows a case (the oracle's f64 tensors); a GPU node has far more.
export KC_MAX_CASE_BYTES=${KC_MAX_CASE_BYTES:-32G}
export NVIDIA_TF32_OVERRIDE=0  # the f32 peer and the f32 GEMM ceiling without TF32
if [ -z "${KC_COMMIT:-}" ]; then
  KC_COMMIT=$(sed -n 's/^commit //p' "$BUNDLE/MANIFEST" 2>/dev/null | head -n 1)
  grep -q "uncommitted changes" "$BUNDLE/MANIFEST" 2>/dev/null && KC_COMMIT="$KC_COMMIT+dirty"
fi
export KC_COMMIT

# What ran where: the results compare only on the same device and driver.
log "bundle $KC_COMMIT on $(hostname)"
{
  echo "commit $KC_COMMIT"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.max.mem,power.limit \
    --format=csv 2>&1
  getconf GNU_LIBC_VERSION 2>&1
  echo "LD_LIBRARY_PATH $LD_LIBRARY_PATH"
} >"$R/device.txt"
cp "$BUNDLE/MANIFEST" "$R/manifest.txt" 2>/dev/null
command -v nvidia-smi >/dev/null && nvidia-smi >"$R/nvidia-smi.txt" 2>&1
within 20 "$BUNDLE/bin/kcheck" backends >"$R/backends.txt" 2>&1

CASES=${KC_BENCH_CASES:-$BUNDLE/cases/bench/gpu}
log "kcheck bench $CASES"
# shellcheck disable=SC2086
within "${KC_T_BENCH:-420}" "$BUNDLE/bin/kcheck" bench "$CASES" --backend cuda,cuda.direct,cudnn --out "$R/bench.json" \
  ${KC_BENCH_ARGS:-} >"$R/bench.log" 2>&1
STATUS=$?
log "kcheck bench -> $STATUS"
tail -n 20 "$R/bench.log" | sed 's/^/   /' | tee -a "$R/bench-run.txt"

if [ -s "$R/bench.json" ]; then
  log "dashboard"
  within "${KC_T_DASHBOARD:-30}" "$BUNDLE/bin/kcheck-dashboard" "$R/bench.json" -o "$R/dashboard.html" \
    >"$R/dashboard.log" 2>&1
  log "dashboard -> $?"
else
  log "no bench.json: no dashboard"
fi

log "done"
tar czf "$OUT/kc-bench.tgz" -C "$OUT" kc-bench
for f in bench.json dashboard.html bench-run.txt; do [ -f "$R/$f" ] && cp "$R/$f" "$OUT/$f"; done
exit $STATUS
