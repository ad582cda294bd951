#!/usr/bin/env bash
# Type-checks and links the cuda build without a GPU or a driver: the CUDA
# driver API header (cuda.h) and the link stub of libcuda come from Debian's
# nvidia-cuda-dev package, downloaded (non-free component) and unpacked
# without installing it, unless cuda.h is already installed. Then:
#   go vet -tags cuda      (cgo against cuda.h: every driver call type-checks)
#   go build -tags cuda    (links against the stub libcuda.so)
#   go test -tags cuda -c  (the GPU tests compile)
#   ptxgen -check          (the committed PTX is what nvcc makes, where nvcc is)
# Run by .ci/run; the package is cached in $GNNSCOPE_CI_CACHE (default
# ~/.cache/gnnscope-ci) between runs on one machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${GNNSCOPE_CI_CACHE:-$HOME/.cache/gnnscope-ci}
inc="" stub=""
if [ "${GNNSCOPE_CI_UNPACK:-0}" = 1 ]; then
  : # unpack the package even where the headers are installed (to test this path)
elif [ -f /usr/include/cuda.h ]; then
  inc=/usr/include
elif [ -f /usr/local/cuda/include/cuda.h ]; then
  inc=/usr/local/cuda/include
fi
for d in /usr/lib/x86_64-linux-gnu/stubs /usr/local/cuda/lib64/stubs; do
  [ -n "$inc" ] && [ -f "$d/libcuda.so" ] && stub=$d && break
done
if [ -z "$inc" ] || [ -z "$stub" ]; then
  root="$cache/nvidia-cuda-dev"
  if [ ! -f "$root/usr/include/cuda.h" ]; then
    mkdir -p "$cache"
    if ! apt-cache show nvidia-cuda-dev >/dev/null 2>&1; then
      echo "adding Debian's non-free component to apt sources for nvidia-cuda-dev"
      . /etc/os-release
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian ${VERSION_CODENAME} contrib non-free non-free-firmware" \
        >/etc/apt/sources.list.d/gnnscope-ci-nonfree.list
      apt-get update -qq
    fi
    (cd "$cache" && rm -f nvidia-cuda-dev_*.deb && apt-get download -qq nvidia-cuda-dev)
    mkdir -p "$root"
    # Only the header and the link stub; the package is large.
    dpkg-deb --fsys-tarfile "$cache"/nvidia-cuda-dev_*.deb |
      tar -x -C "$root" ./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so
    rm -f "$cache"/nvidia-cuda-dev_*.deb
  fi
  [ -z "$inc" ] && inc="$root/usr/include"
  [ -z "$stub" ] && stub="$root/usr/lib/x86_64-linux-gnu/stubs"
fi
export CGO_CFLAGS="-I$inc" CGO_LDFLAGS="-L$stub"
echo "cuda.h from $inc, libcuda stub from $stub"
go vet -tags cuda ./gnn/... ./runner/... ./cli/... .
go build -tags cuda -o /dev/null .
go test -tags cuda -c -o /dev/null ./gnn/device/cuda
go test -tags cuda -c -o /dev/null ./gnn/device/backend
if command -v nvcc >/dev/null; then
  (cd gnn/device/cuda && go run ./internal/ptxgen -check)
  echo "committed PTX matches nvcc's output"
else
  echo "nvcc not installed: PTX checked by its source checksums only (go test ./gnn/device/cuda)"
fi
