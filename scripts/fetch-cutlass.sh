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

if ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  echo "fetch-cutlass: pip is not installed (python3-pip)" >&2
  exit 1
fi
mkdir -p "$dest"
tmp="$(mktemp -d "$dest/fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m pip download --quiet --disable-pip-version-check --retries 1 --timeout 15 --no-deps \
  --only-binary=:all: \
  "nvidia-cutlass==$version" -d "$tmp/wheel"
wheel="$tmp/wheel/nvidia_cutlass-$version-py3-none-any.whl"
if ! echo "$sha256  $wheel" | sha256sum --check --quiet --status -; then
  echo "fetch-cutlass: $wheel is not the pinned nvidia-cutlass $version (sha256 differs)" >&2
  exit 1
fi
/usr/bin/python3 - "$wheel" "$tmp/tree" "$version" <<'PY'
import os, sys, zipfile
wheel, tree, version = sys.argv[1:4]
keep = {"cutlass_library/source/include/": "include/",
        "cutlass_library/source/tools/util/include/": "tools/util/include/",
        "nvidia_cutlass-%s.dist-info/licenses/LICENSE.txt" % version: "LICENSE.txt"}
found = dict.fromkeys(keep, 0)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        for prefix, to in keep.items():
            if name.startswith(prefix) and not name.endswith("/"):
                found[prefix] += 1
                path = os.path.join(tree, to + name[len(prefix):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(name) as src, open(path, "wb") as dst:
                    dst.write(src.read())
missing = [p for p, n in found.items() if n == 0]
if missing:
    sys.exit("fetch-cutlass: the wheel holds nothing under " + ", ".join(missing))
PY
rm -rf "$out"
mv "$tmp/tree" "$out"
echo "fetch-cutlass: CUTLASS $version headers in $out"
