#!/usr/bin/env bash
# whatif-acceptance.sh: predicted against measured epoch times. Runs an
# experiment's baseline and variants with interleaved repeats in a store
# of its own, then predicts every variant's median epoch time from the
# baseline's runs (analysis/whatif's critical-path replay) and prints
# predicted, measured and the error; with optimized and single
# optimizations among the variants, the speedup waterfall, measured and
# predicted. Timings need a quiet machine: the
# runs' "host busy" notes in the comparison table say when it was not.
#
# Usage: scripts/whatif-acceptance.sh [SESSION_FOLDER]
#   with a folder: only the prediction, over that session's journals
#   VARIANTS=baseline,pipelined,optimized REPEATS=3 EPOCHS=5 DATA=synth-small
#   RUN_ARGS: the experiment's flags instead of GraphSAGE 64, fanout 15,10,
#     batch 1024 on DATA, e.g. the overlapped evaluation of a full-batch GCN:
#     RUN_ARGS="--data ../shared/datasets/cora.npz --model gcn --sampler full
#     --epochs 30" VARIANTS=baseline,overlap-eval
#   ABLATION=1 runs --ablation instead of VARIANTS (the waterfall's runs)
#   LIMIT=0.15 makes an error beyond 15 % fail (exit 1)
#   GNNSCOPE_BINARY: a built gnnscope (default: built here)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-}"
if [ -z "$dir" ]; then
  bin="${GNNSCOPE_BINARY:-}"
  if [ -z "$bin" ]; then
    bin="$(mktemp -d)/gnnscope"
    go build -o "$bin" .
  fi
  home="$(mktemp -d)"
  args="${RUN_ARGS:---data ${DATA:-synth-small} --model sage --hidden 64 --fanout 15,10 --batch-size 1024 --epochs ${EPOCHS:-5}}"
  # shellcheck disable=SC2086 # RUN_ARGS is a list of flags
  which="--variants ${VARIANTS:-baseline,pipelined,optimized}"
  [ "${ABLATION:-0}" = 1 ] && which=--ablation
  # shellcheck disable=SC2086
  GNNSCOPE_HOME="$home" "$bin" run $args $which --repeats "${REPEATS:-3}" --wait -q || true
  dir="$(ls -d "$home"/sessions/* | tail -n 1)"
fi
dir="$(cd "$dir" && pwd)"
echo "session $dir"
GNNSCOPE_WHATIF_SESSION="$dir" GNNSCOPE_WHATIF_LIMIT="${LIMIT:-0}" \
  go test -count=1 -run TestSessionAcceptance -v ./analysis/whatif/ | grep -v -e '^=== RUN' -e '^--- ' -e '^PASS' -e '^ok '
