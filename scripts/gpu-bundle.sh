#!/usr/bin/env bash
# Builds, on a machine with Go and the CUDA headers (no GPU needed),
# everything a GPU machine without Go needs to run gnnscope's CUDA
# acceptance, into one folder:
#
#   gnnscope                   the binary, built with the cuda tag
#   tests/*.test               go test -c -tags cuda of the packages with
#   tests/*.race.test          GPU tests ($GPU_TEST_PKGS), without and with
#                              -race
#   data/cora.npz              Cora (from $CORA, default ../shared/datasets)
#   scripts/                   gpu-acceptance.sh, pyg-compare.py,
#                              sample-rate.py, the products specs, the
#                              PyTorch examples and the Python client
#   needs.txt                  the glibc and libcuda symbol versions the
#                              binaries need (objdump -T), and ldd's view
#   manifest.txt               sizes, SHA-256 and the commit built
#
# Then, on the GPU machine: BUNDLE/scripts/gpu-acceptance.sh OUT
# (--dry-run checks the machine and lists the steps without running them).
#
# Usage: scripts/gpu-bundle.sh [DIR]   (default gpu-bundle)
# The CUDA headers are found as scripts/ci-cuda.sh finds them: cuda.h where
# installed, else the unpacked nvidia-cuda-dev in $GNNSCOPE_CI_CACHE
# (run scripts/ci-cuda.sh once to fetch it), or set CGO_CFLAGS yourself.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-gpu-bundle}
CORA=${CORA:-../shared/datasets/cora.npz}
CACHE=${GNNSCOPE_CI_CACHE:-$HOME/.cache/gnnscope-ci}

say() { echo "gpu-bundle: $*" >&2; }

if [ -z "${CGO_CFLAGS:-}" ]; then
  if [ -f /usr/include/cuda.h ] || [ -f /usr/local/cuda/include/cuda.h ]; then
    :
  elif [ -f "$CACHE/nvidia-cuda-dev/usr/include/cuda.h" ]; then
    export CGO_CFLAGS="-I$CACHE/nvidia-cuda-dev/usr/include"
  else
    say "no cuda.h: run scripts/ci-cuda.sh once (it fetches Debian's nvidia-cuda-dev), or set CGO_CFLAGS=-I<dir of cuda.h>"
    exit 1
  fi
fi

rm -rf "$DIR"
mkdir -p "$DIR/tests" "$DIR/data" "$DIR/scripts"
flags=(-trimpath -ldflags "-s -w")

say "building gnnscope (cuda tag)"
go build -tags cuda "${flags[@]}" -o "$DIR/gnnscope" .

# The packages whose tests run on a GPU when built with the cuda tag.
pkgs=${GPU_TEST_PKGS:-"./gnn/device/cuda ./gnn/device/backend"}
for ip in $pkgs; do
  name=$(echo "${ip#./}" | tr / -)
  say "test binaries of $ip"
  go test -c -tags cuda "${flags[@]}" -o "$DIR/tests/$name.test" "$ip"
  go test -c -race -tags cuda "${flags[@]}" -o "$DIR/tests/$name.race.test" "$ip"
done

if [ -f "$CORA" ]; then
  cp "$CORA" "$DIR/data/cora.npz"
else
  say "no Cora at $CORA (set CORA=...): the bundle's Cora steps will be skipped"
fi

cp scripts/gpu-acceptance.sh scripts/pyg-compare.py scripts/gpu-summary.py scripts/sample-rate.py "$DIR/scripts/"
cp examples/sage-products-gpu.toml examples/sage-products-gpu-data.toml "$DIR/scripts/"
mkdir -p "$DIR/scripts/pytorch" "$DIR/scripts/pyclient"
cp examples/pytorch/*.py examples/pytorch/*.toml "$DIR/scripts/pytorch/"
cp -r clients/python/gnnscope clients/python/sitecustomize.py "$DIR/scripts/pyclient/"
find "$DIR" -name __pycache__ -prune -exec rm -rf {} +

{
  echo "# what the binaries need from the machine (objdump -T, ldd, here)"
  for f in "$DIR/gnnscope" "$DIR"/tests/*.test; do
    echo "## $(basename "$f")"
    objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | sed 's/^/glibc-max /'
    ldd "$f" 2>&1 | sed 's/ (0x[0-9a-f]*)//; s/^/ldd /'
  done
} >"$DIR/needs.txt"
# The driver is not linked: libcuda.so.1 is opened at run time and its
# entry points are bound under the names of the cuda.h the build used, so
# the driver must support that header's CUDA version.
hdr=""
for d in ${CGO_CFLAGS:-} -I/usr/include -I/usr/local/cuda/include; do
  f="${d#-I}/cuda.h"
  [ -f "$f" ] && hdr=$f && break
done
cuda_api=$(awk '$1 == "#define" && $2 == "CUDA_VERSION" {print $3}' "${hdr:-/dev/null}")
echo "driver-api ${cuda_api:-unknown} (CUDA_VERSION of ${hdr:-no cuda.h}; libcuda.so.1 is loaded at run time)" >>"$DIR/needs.txt"
echo "${cuda_api:-0}" >"$DIR/driver-api-min.txt"
# the newest glibc symbol version over all binaries, read by the acceptance
# script's first check
grep '^glibc-max' "$DIR/needs.txt" | awk '{print $2}' | sed 's/GLIBC_//' | sort -V | tail -1 >"$DIR/glibc-min.txt"

{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version)"
  (cd "$DIR" && find . -type f ! -name manifest.txt -print0 | sort -z | xargs -0 sha256sum)
} >"$DIR/manifest.txt"
say "done: $DIR ($(du -sh "$DIR" | cut -f1)); needs glibc >= $(cat "$DIR/glibc-min.txt")"
