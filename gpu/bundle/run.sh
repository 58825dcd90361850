#!/bin/sh
# kernelcheck GPU bundle: runs on a GPU node the corpus on cuda, cuda.direct and cudnn
# and the GPU tests, and writes every report under OUT (default ./kc-out).
#   ./run.sh [OUT] [kcheck run options...]     e.g. ./run.sh /tmp/out --timeout 600
# KC_STEPS picks the steps (default "backends host device corpus"), so that a lease
# with a per-command limit can run them one call at a time; also available:
#   sanitize  compute-sanitizer memcheck, racecheck, initcheck and synccheck on the
#             cuda corpus files in KC_SANITIZE_CASES (in-process, so the tool sees
#             every launch); exit 3 on any error it reports
#   fuzz      generated single-op cases on cuda, then on cuda.direct, then stacks on cuda,
#             for KC_FUZZ_TIME seconds each (default 120); failures shrunk and saved
#             under OUT/fuzz*
#   bench     `kcheck bench` of cases/bench/gpu (KC_BENCH_CASES) on cuda, cuda.direct and cudnn with
#             the GPU ceilings -> OUT/bench.json, then kcheck-dashboard -> OUT/dashboard.html
# Exit status: 0 when every step passed, else the largest step status (kcheck: 1 for a
# failure, 2 for bad usage or `--require cuda` unmet, i.e. no usable GPU).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$PWD/kc-out}
[ $# -gt 0 ] && shift
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)  # absolute: the fuzz steps run from the bundle's folder

# cuDNN and cuBLAS are loaded at run time: the bundle's lib/ (if it was built with
# KC_BUNDLE_CUDNN / KC_BUNDLE_CUBLAS), then the CUDA install, then a pip wheel's copy
# (PyTorch ships nvidia-cudnn and nvidia-cublas).
CUDNN_DIRS="$HERE/lib:/usr/local/cuda/lib64"
for mod in cudnn cublas; do
  for py in python3 python; do
    d=$($py -c "import os, nvidia.$mod as m; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null) && {
      CUDNN_DIRS="$CUDNN_DIRS:$d"; break; }
  done
done
export LD_LIBRARY_PATH="$CUDNN_DIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVIDIA_TF32_OVERRIDE=0   # belt and braces: f32 peers must not use TF32
# The reports' kc_commit: the commit the bundle was assembled from (its source tree is
# not on this node).
if [ -z "${KC_COMMIT:-}" ]; then
  KC_COMMIT=$(sed -n 's/^commit //p' "$HERE/MANIFEST" 2>/dev/null | head -n 1)
  grep -q "uncommitted changes" "$HERE/MANIFEST" 2>/dev/null && KC_COMMIT="$KC_COMMIT+dirty"
fi
export KC_COMMIT

JOBS=$(nproc 2>/dev/null || echo 4)
STATUS=0
step() {  # step NAME COMMAND...: runs, logs to OUT/NAME.log, keeps the worst status
  name=$1; shift
  echo "== $name: $*" | tee -a "$OUT/summary.txt"
  "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  tail -n 5 "$OUT/$name.log" | sed 's/^/   /' | tee -a "$OUT/summary.txt"
  echo "   -> exit $rc" | tee -a "$OUT/summary.txt"
  [ $rc -gt $STATUS ] && STATUS=$rc
  return 0
}

# The binaries import glibc symbols up to the version assemble.cmake recorded: on an
# older glibc the loader would refuse them with a less readable message.
need=$(sed -n 's/^needs glibc //p' "$HERE/MANIFEST" 2>/dev/null | head -n 1)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | sed 's/^glibc //')
if [ -n "$need" ] && [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" != "$need" ]; then
  echo "run.sh: this bundle needs glibc $need or newer, and this node has glibc $have" \
       "(assemble the bundle on a system with an older glibc)" >&2
  exit 2
fi

: >"$OUT/summary.txt"
cat "$HERE/MANIFEST" >"$OUT/manifest.txt" 2>/dev/null
command -v nvidia-smi >/dev/null && nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
STEPS=${KC_STEPS:-backends host device corpus}
want() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
KCHECK="$HERE/bin/kcheck"

want backends && step backends "$KCHECK" backends
want host && step gpu_host_test "$HERE/bin/gpu_host_test" --gtest_output="xml:$OUT/gpu_host_test.xml"
want device && step gpu_device_test "$HERE/bin/gpu_device_test" --gtest_output="xml:$OUT/gpu_device_test.xml"
CASES=$(ls -d "$HERE"/cases/*/ | grep -v '/bench/$')
given() {  # given FLAG ARGS...: whether ARGS hold FLAG
  f=$1; shift
  for a in "$@"; do [ "$a" = "$f" ] && return 0; done
  return 1
}
if want corpus; then
  # An option in the caller's arguments replaces its default (kcheck refuses one given twice).
  given --backend "$@" || set -- --backend cuda,cuda.direct,cudnn "$@"
  given --require "$@" || set -- --require cuda "$@"
  given --jobs "$@" || set -- --jobs "$JOBS" "$@"
  given --report "$@" || set -- --report "$OUT/report.json" "$@"
  given --junit "$@" || set -- --junit "$OUT/junit.xml" "$@"
  # shellcheck disable=SC2086
  step corpus "$KCHECK" run $CASES "$@"
fi
if want sanitize; then
  SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  SAN_CASES=${KC_SANITIZE_CASES:-conv/conv_bias.yaml conv/conv_aligned_channels.yaml maxpool/pool2d.yaml conv_bias_relu/fused.yaml stack/checkpoint_policies.yaml}
  if [ ! -x "$SAN" ]; then
    step sanitize sh -c "echo 'compute-sanitizer: not found (PATH, /usr/local/cuda/bin)'; exit 2"
    SAN_CASES=
  fi
  for tool in memcheck racecheck initcheck synccheck; do
    for c in $SAN_CASES; do
      step "sanitize_${tool}_$(echo "$c" | tr '/.' '__')" "$SAN" --tool "$tool" --error-exitcode 3 \
        "$KCHECK" run "$HERE/cases/$c" --backend cuda --require cuda --in-process
    done
  done
fi
if want fuzz; then
  cd "$HERE" || exit 2  # fuzz replays ./cases/regressions first: the bundle's copy
  step fuzz_ops "$KCHECK" fuzz --backend cuda --time "${KC_FUZZ_TIME:-120}" --jobs "$JOBS" --save "$OUT/fuzz_ops" \
    --report "$OUT/fuzz_ops.json"
  step fuzz_direct "$KCHECK" fuzz --backend cuda.direct --time "${KC_FUZZ_TIME:-120}" --jobs "$JOBS" \
    --save "$OUT/fuzz_direct" --report "$OUT/fuzz_direct.json"
  step fuzz_stack "$KCHECK" fuzz --op stack --backend cuda --time "${KC_FUZZ_TIME:-120}" --jobs "$JOBS" \
    --save "$OUT/fuzz_stack" --report "$OUT/fuzz_stack.json"
fi
if want bench; then
  # Timing, not checking: one op at a time on the GPU, so no --jobs.
  step bench "$KCHECK" bench "${KC_BENCH_CASES:-$HERE/cases/bench/gpu}" --backend cuda,cuda.direct,cudnn --out "$OUT/bench.json"
  [ -f "$OUT/bench.json" ] &&
    step dashboard "$HERE/bin/kcheck-dashboard" "$OUT/bench.json" -o "$OUT/dashboard.html"
fi
echo "reports in $OUT (summary.txt, report.json, junit.xml, failures/, *.log); exit $STATUS"
exit $STATUS
