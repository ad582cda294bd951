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
#     and checks that each waterfall's parts and interaction add up to its
#     measured total (log-speedups within 1e-6; exit 1 otherwise): the
#     acceptance is ABLATION=1 REPEATS=3 DATA=synth-small
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
out="$(GNNSCOPE_WHATIF_SESSION="$dir" GNNSCOPE_WHATIF_LIMIT="${LIMIT:-0}" \
  go test -count=1 -run TestSessionAcceptance -v ./analysis/whatif/)" || status=$?
printf '%s\n' "$out" | grep -v -e '^=== RUN' -e '^--- ' -e '^PASS' -e '^ok '
[ "${status:-0}" = 0 ] || exit "$status"
if [ "${ABLATION:-0}" = 1 ]; then
  # "  sum of parts and interaction +0.123456, total +0.123456"
  printf '%s\n' "$out" | awk '
    /sum of parts and interaction/ { n++; s = $6; sub(",", "", s); d = s - $8; if (d < 0) d = -d
      if (d > 1e-6) { bad++; print "waterfall does not add up: " $0 } }
    END { if (n == 0) { print "no waterfall: the session lacks its baseline or optimized runs"; exit 1 }
      if (bad) exit 1; print n " waterfalls: parts and interaction add up to the measured total" }'
fi
