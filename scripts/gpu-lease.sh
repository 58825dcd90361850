#!/bin/sh
# One short, bounded pass of the GPU checks over an assembled bundle (build/bundle, from
# `ninja -C build kc_bundle`), for a lent GPU machine whose command has a hard time limit:
# every step runs under its own `timeout`, so the reports of the steps that finished are
# packed into OUT/kc-gpu.tgz even when a later step is cut short.
#   scripts/gpu-lease.sh BUNDLE OUT
# Budgets in seconds (environment): KC_DEADLINE (the whole pass, 330: no step starts with
# less than 5 s left or runs past it, so set the command's limit a little above),
# KC_T_DEVICE (gpu tests, 90), KC_T_CORPUS (corpus on cuda and cudnn, 150), KC_T_DIAG
# (each cudnn diagnosis run, 40), KC_T_SANITIZE (each compute-sanitizer run, 40),
# KC_FUZZ_TIME (each fuzz phase, 30; 0 skips fuzz), KC_T_BENCH (kcheck-bench, 0 skips),
# KC_T_GPU_BENCH (scripts/gpu-bench.sh, `kcheck bench` of the GPU layer set; 0 skips).
# Steps in order of what matters: gpu tests, corpus, cudnn diagnosis (KC_CUDNN_DIAG),
# memcheck (KC_MEMCHECK_CASES), fuzz, racecheck (KC_RACECHECK_CASES; either list set
# empty skips that tool), bench, gpu bench (only when at least 60 s remain). Each step's exit status is in lease.txt; the script
# itself exits 0 once the archive is written, 2 on bad arguments.
set -u
[ $# -eq 2 ] || { echo "usage: scripts/gpu-lease.sh BUNDLE OUT" >&2; exit 2; }
BUNDLE=$(cd "$1" && pwd) || exit 2
OUT=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
R="$OUT/kc"
mkdir -p "$R"
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$R/lease.txt"; }
DEADLINE=${KC_DEADLINE:-330}
# budget S: S, or what is left before the deadline (less 10 s to pack), if that is less
budget() {
  left=$(( DEADLINE - ( $(date +%s) - START ) - 10 ))
  [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
# within S CMD...: CMD under `timeout` for budget(S) seconds (then TERM, KILL 5 s later);
# not started, status 124, when under 5 s are left.
within() {
  b=$(budget "$1"); shift
  if [ "$b" -lt 5 ]; then
    echo "skipped: the deadline is near" >&2
    return 124
  fi
  timeout -k 5 "$b" "$@"
}

log "bundle $(sed -n 's/^commit //p' "$BUNDLE/MANIFEST" | head -n 1) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >>"$R/lease.txt" 2>&1
getconf GNU_LIBC_VERSION >>"$R/lease.txt" 2>&1

# backends, the host and device GoogleTests, then the corpus on cuda and cudnn.
log "gpu tests"
KC_STEPS="backends host device" within "${KC_T_DEVICE:-90}" "$BUNDLE/run.sh" "$R/tests" >/dev/null 2>&1
log "gpu tests -> $?"
log "corpus"
KC_STEPS="corpus" within "${KC_T_CORPUS:-150}" "$BUNDLE/run.sh" "$R/corpus" --timeout 60 >/dev/null 2>&1
log "corpus -> $?"

# compute-sanitizer: a few files per tool (a sanitizer run is 10-100x slower).
sanitize() {  # sanitize TOOL FILES...
  tool=$1; shift
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for c in "$@"; do
    n=$(echo "$c" | tr '/.' '__')
    within "${KC_T_SANITIZE:-40}" "$SAN" --tool "$tool" --error-exitcode 3 \
      "$BUNDLE/bin/kcheck" run "$BUNDLE/cases/$c" --backend cuda --require cuda --in-process \
      >"$R/sanitize_${tool}_$n.log" 2>&1
    rc=$?
    log "  $tool $c -> $rc ($(grep -E '^=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$R/sanitize_${tool}_$n.log" | head -n 1))"
  done
}
# KC_CUDNN_DIAG="PATH...": those cases on cudnn under the heuristic's forward algorithm
# and under each of KC_CUDNN_DIAG_ALGOS (default 0 1 2: implicit GEMM, implicit
# precomputed GEMM, GEMM), choices traced: which algorithms keep the tolerance model.
if [ -n "${KC_CUDNN_DIAG:-}" ]; then
  for a in heuristic ${KC_CUDNN_DIAG_ALGOS:-0 1 2}; do
    algo="conv forward=$a"
    [ "$a" = heuristic ] && algo=
    # shellcheck disable=SC2086
    KC_CUDNN_TRACE=1 KC_CUDNN_ALGO="$algo" within "${KC_T_DIAG:-40}" "$BUNDLE/bin/kcheck" run $KC_CUDNN_DIAG \
      --backend cudnn --jobs "$(nproc)" --report "$R/cudnn_algo_$a.json" >"$R/cudnn_algo_$a.log" 2>&1
    log "cudnn forward algorithm $a -> $? ($(grep -c '^FAILED' "$R/cudnn_algo_$a.log") failed:" \
        "$(grep '^FAILED' "$R/cudnn_algo_$a.log" | cut -c9-48 | tr '\n' ';'))"
  done
fi

log "sanitize memcheck"
sanitize memcheck ${KC_MEMCHECK_CASES-conv/conv_bias.yaml conv/conv_aligned_channels.yaml maxpool/pool2d.yaml conv_bias_relu/fused.yaml conv_bias_relu/fused_aligned_channels.yaml}

if [ "${KC_FUZZ_TIME:-30}" -gt 0 ]; then
  log "fuzz (${KC_FUZZ_TIME:-30} s per phase)"
  KC_STEPS="fuzz" KC_FUZZ_TIME="${KC_FUZZ_TIME:-30}" within $(( 3 * ${KC_FUZZ_TIME:-30} + 60 )) \
    "$BUNDLE/run.sh" "$R/fuzz" >/dev/null 2>&1
  log "fuzz -> $?"
fi

log "sanitize racecheck"
sanitize racecheck ${KC_RACECHECK_CASES-conv/conv_bias.yaml maxpool/pool2d.yaml}

if [ "${KC_T_BENCH:-0}" -gt 0 ] && [ -x "$BUNDLE/bin/kcheck-bench" ]; then
  log "bench"
  LD_LIBRARY_PATH="$BUNDLE/lib" within "$KC_T_BENCH" "$BUNDLE/bin/kcheck-bench" ${KC_BENCH_ARGS:-} \
    --benchmark_out="$R/bench.json" --benchmark_out_format=json >"$R/bench.log" 2>&1
  log "bench -> $?"
fi

if [ "${KC_T_GPU_BENCH:-0}" -gt 0 ]; then
  b=$(budget "$KC_T_GPU_BENCH")
  if [ "$b" -ge 60 ]; then
    log "gpu bench (${b} s)"
    # Its own deadline, inside ours: it packs its results before we pack ours.
    KC_DEADLINE="$b" within "$b" "$(dirname "$0")/gpu-bench.sh" "$BUNDLE" "$R/gpu-bench" >"$R/gpu-bench.log" 2>&1
    log "gpu bench -> $?"
  else
    log "gpu bench skipped: ${b} s left"
  fi
fi

log "done"
for d in tests corpus fuzz; do
  [ -f "$R/$d/summary.txt" ] && { echo "--- $d"; grep -v '^   *$' "$R/$d/summary.txt"; }
done
tar czf "$OUT/kc-gpu.tgz" -C "$OUT" kc
cp "$R/lease.txt" "$OUT/lease.txt"
[ -f "$R/corpus/report.json" ] && cp "$R/corpus/report.json" "$OUT/corpus-report.json"
exit 0
