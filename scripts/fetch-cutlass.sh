#!/usr/bin/env bash
# Fetches the pinned CUTLASS headers for the CUDA build (docs/architecture.md, "CUTLASS"):
# the nvidia-cutlass wheel from PyPI with pip, checked against its sha256, of which only
# the C++ include trees (cutlass/, cute/ and tools/util/include) and the license are
# unpacked, into DEST/cutlass-VERSION (found there by cmake/cutlass.cmake). Does nothing
# when that folder is already complete. Exit 1 when the wheel cannot be had or is not the
# pinned one; scripts/setup.sh then builds without the CUTLASS engine and says so.
#   scripts/fetch-cutlass.sh DEST
set -euo pipefail
dest="${1:?usage: scripts/fetch-cutlass.sh DEST}"
version=4.2.0.0
sha256=f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
out="$dest/cutlass-$version"
[ -f "$out/include/cutlass/version.h" ] && [ -f "$out/LICENSE.txt" ] && exit 0

mkdir -p "$dest"
tmp="$(mktemp -d "$dest/fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  "nvidia-cutlass==$version" -d "$tmp/wheel"
wheel="$tmp/wheel/nvidia_cutlass-$version-py3-none-any.whl"
if ! echo "$sha256  $wheel" | sha256sum --check --quiet --status -; then
  echo "fetch-cutlass: $wheel is not the pinned nvidia-cutlass $version (sha256 differs)" >&2
  exit 1
fi
/usr/bin/python3 - "$wheel" "$tmp/tree" <<'PY'
import os, sys, zipfile
wheel, tree = sys.argv[1], sys.argv[2]
keep = {"cutlass_library/source/include/": "include/",
        "cutlass_library/source/tools/util/include/": "tools/util/include/",
        "nvidia_cutlass-4.2.0.0.dist-info/licenses/LICENSE.txt": "LICENSE.txt"}
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        for prefix, to in keep.items():
            if name.startswith(prefix) and not name.endswith("/"):
                path = os.path.join(tree, to + name[len(prefix):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(name) as src, open(path, "wb") as dst:
                    dst.write(src.read())
PY
rm -rf "$out"
mv "$tmp/tree" "$out"
echo "fetch-cutlass: CUTLASS $version headers in $out"
