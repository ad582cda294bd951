#!/usr/bin/env bash
# Unpacks Debian's CUDA 11.8 compiler (the nvcc release the committed PTX
# of gnn/device/cuda/kernels was generated with) into a folder, without
# installing anything, and prints the nvcc to give ptxgen:
#
#   nvcc=$(scripts/nvcc-local.sh [DIR])      # default ~/.cache/gnnscope-nvcc
#   (cd gnn/device/cuda && go run ./internal/ptxgen -nvcc "$nvcc")          # regenerate
#   (cd gnn/device/cuda && go run ./internal/ptxgen -nvcc "$nvcc" -check)   # compare
#
# It downloads nvidia-cuda-toolkit (nvcc, cicc, ptxas), nvidia-cuda-dev
# (the headers) and libnvvm4 with apt-get download (the non-free component
# must be in the machine's apt sources: scripts/ci-cuda.sh can add it),
# unpacks them with dpkg -x, and writes an nvcc.profile that points nvcc at
# the unpacked headers and libdevice. Only PTX is generated (--ptx), so the
# host compiler matters little: Debian's gcc 12 is newer than CUDA 11.8
# supports, and the profile defines __NV_NO_HOST_COMPILER_CHECK, which is
# what nvcc's -allow-unsupported-compiler does.
set -euo pipefail
dir=${1:-$HOME/.cache/gnnscope-nvcc}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -x "$dir/bin/nvcc" ]; then
  dl=$(mktemp -d)
  if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
  (cd "$dl" && apt-get download -qq nvidia-cuda-toolkit nvidia-cuda-dev libnvvm4) >&2
  for f in "$dl"/*.deb; do dpkg -x "$f" "$dir/root"; done
  rm -rf "$dl"
  r="$dir/root"
  mkdir -p "$dir/bin"
  cp -a "$r/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$r/usr/lib/nvidia-cuda-toolkit/bin/cicc" \
    "$r/usr/lib/nvidia-cuda-toolkit/bin/crt" "$r/usr/bin/cudafe++" "$r/usr/bin/ptxas" "$r/usr/bin/fatbinary" "$dir/bin/"
  cat >"$dir/bin/nvcc.profile" <<PROFILE
NVVMIR_LIBRARY_DIR = $r/usr/lib/nvidia-cuda-toolkit/libdevice
PATH += \$(_HERE_):
INCLUDES += -D__NV_NO_HOST_COMPILER_CHECK=1 "-I$r/usr/include" \$(_SPACE_)
LIBRARIES =+ \$(_SPACE_) -L$r/usr/lib/x86_64-linux-gnu/stubs
PROFILE
fi
"$dir/bin/nvcc" --version >&2
echo "$dir/bin/nvcc"
