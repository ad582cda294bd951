#!/usr/bin/env bash
# lint.sh: the static checks the project keeps clean.
#   go mod tidy -diff           go.mod and go.sum need no change
#   staticcheck ./...           default build
#   staticcheck -tags cuda ...  the cuda build (with the CUDA header and link
#                               stub that scripts/ci-cuda.sh provides)
# staticcheck is installed at a pinned version through the Go toolchain
# when it is missing. Run by .ci/run after scripts/ci-cuda.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v0.8.2
echo "go mod tidy -diff"
GOFLAGS= go mod tidy -diff
sc="$(go env GOPATH)/bin/staticcheck"
if ! "$sc" -version 2>/dev/null | grep -q "${version#v}"; then
  echo "installing staticcheck $version"
  GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$version"
fi
echo "staticcheck (default build)"
"$sc" ./...
cache=${GNNSCOPE_CI_CACHE:-$HOME/.cache/gnnscope-ci}
root="$cache/nvidia-cuda-dev"
inc="" stub=""
for d in /usr/include /usr/local/cuda/include "$root/usr/include"; do
  [ -f "$d/cuda.h" ] && inc=$d && break
done
for d in /usr/lib/x86_64-linux-gnu/stubs /usr/local/cuda/lib64/stubs "$root/usr/lib/x86_64-linux-gnu/stubs"; do
  [ -f "$d/libcuda.so" ] && stub=$d && break
done
if [ -z "$inc" ] || [ -z "$stub" ]; then
  echo "staticcheck -tags cuda: skipped, no cuda.h and libcuda stub (run scripts/ci-cuda.sh first)"
  exit 0
fi
echo "staticcheck (cuda build)"
CGO_CFLAGS="-I$inc" CGO_LDFLAGS="-L$stub" "$sc" -tags cuda ./...
