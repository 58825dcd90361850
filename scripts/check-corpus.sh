#!/usr/bin/env bash
# The main job: check the shipped case corpus on every available backend, print a
# summary, write out/report.json (plus out/junit.xml and out/failures/*.yaml).
# Extra arguments go to `kcheck run` (e.g. --backend reference --jobs 4); one that names
# an option below replaces its default (kcheck refuses an option given twice).
set -euo pipefail
KC_BUILD_TARGETS=kcheck  # the tests' targets are test.sh's to build
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$KC_ROOT"
given() {  # given FLAG: whether the caller's arguments hold FLAG
  local a
  for a in "${args[@]}"; do [[ "$a" == "$1" ]] && return 0; done
  return 1
}
args=("$@")
defaults=()
given --jobs || defaults+=(--jobs "$(nproc)")
given --timeout || given --in-process || defaults+=(--timeout 120)  # in-process runs cannot be timed out
given --report || defaults+=(--report out/report.json)
given --junit || defaults+=(--junit out/junit.xml)
# oneDNN's and PyTorch's known contract differences (each with its reason): XFAIL, not FAILED.
given --waivers || defaults+=(--waivers peers/onednn/waivers.yaml --waivers peers/torch/waivers.yaml)
# The PyTorch peer is a Python module (docs/python.md): loaded where kcheck has its Python
# bridge; without torch its backends are listed unavailable with the reason.
if [ -f "$KC_BUILD_DIR/harness/libkc_python.so" ]; then
  defaults+=(--python peers/torch/torch_peer.py)
else
  echo "kernelcheck: torch, torch.cuda: not loaded: kcheck was built without its Python bridge (python3-dev)" >&2
fi
exec "$KC_BUILD_DIR/harness/kcheck" run cases "${defaults[@]}" "$@"
