#!/usr/bin/env bash
# Installs the Debian packages kernelcheck needs when any is missing, then configures
# and builds into ${KC_BUILD_DIR:-build} (every target, or those in KC_BUILD_TARGETS).
# Sourced by check-corpus.sh (kcheck alone) and test.sh (everything).
# CUDA is optional: gpu/ is built when nvcc is found (on PATH or under /usr/local/cuda).
set -euo pipefail

KC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KC_BUILD_DIR="${KC_BUILD_DIR:-$KC_ROOT/build}"
KC_PACKAGES=(build-essential cmake ninja-build libeigen3-dev libyaml-cpp-dev librapidcheck-dev
             libgtest-dev libbenchmark-dev clang-format libdnnl-dev python3-dev python3-numpy python3-torch
             python3-pytest)
# pip fetches the pinned CUTLASS headers, which only a CUDA build uses.
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then KC_PACKAGES+=(python3-pip); fi

kc_install_missing() {
  local missing=()
  for p in "${KC_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "kernelcheck: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

kc_build() {
  local extra=()
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    extra+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  fi
  # The CUTLASS engine's pinned headers (cmake/cutlass.cmake), where nvcc builds gpu/.
  if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    bash "$KC_ROOT/scripts/fetch-cutlass.sh" "$KC_BUILD_DIR/_deps" ||
      echo "kernelcheck: the CUTLASS headers were not fetched: the CUTLASS engine is not built" >&2
  fi
  command -v ccache >/dev/null 2>&1 && extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  cmake -S "$KC_ROOT" -B "$KC_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
  # KC_BUILD_TARGETS: what the caller runs (the main job needs kcheck alone; the tests, all).
  # shellcheck disable=SC2086
  cmake --build "$KC_BUILD_DIR" -j "$(nproc)" ${KC_BUILD_TARGETS:+--target $KC_BUILD_TARGETS}
}

kc_install_missing
kc_build
# oneDNN's OpenMP threads spin while they wait; beside other work on the cores (the tests
# run two at a time) that doubles the peers' time. Read once, when a process starts.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
