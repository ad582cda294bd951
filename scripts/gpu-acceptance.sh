#!/usr/bin/env bash
# The CUDA backend's acceptance on a GPU machine, run from the folder that
# scripts/gpu-bundle.sh builds (the machine needs no Go), planned to fit
# one call of the machine:
#
#   BUNDLE/scripts/gpu-acceptance.sh [--dry-run] [--budget SECONDS] [--only STEPS] OUT
#
# The steps, most valuable first; each has a cost in seconds, measured on
# the H100 on 2026-11-25 or estimated (the plan says which). The plan takes
# them in this order while their costs fit the budget (default 540) and
# lists the rest as not run. A step may run half again its cost (within
# the time left), as the earlier steps are worth more than the later
# ones; a step whose cost no longer fits the time left when its turn
# comes is not run either:
#
#   machine    nvidia-smi, glibc, driver, ldd, Python packages, cuBLAS found
#   kernels    the new kernels' tests (TestGatherRowsAt,
#              TestSamplerMatchesReference and the cuda tests' other
#              checks), then gnnscope gpucheck: every device op, the
#              gathers and copies these kernels use among them
#   versus     synth-products, GraphSAGE 3x256, fanouts 15,10,5, batches of
#              1024: the optimized variant as planned for this machine
#              against PyG with graph and features resident on the GPU
#              (scripts/pyg-compare.py --sampler torch --resident: its own
#              PyTorch sampler, no pyg-lib or torch-sparse), interleaved
#              twice on this machine; the dataset is generated here once
#              (the first export) and read from gnnscope's cache after
#   sampling   sampled edges per second: gnnscope bench --only sample, CPU
#              workers against the GPU kernel
#   features   examples/sage-products-gpu-data.toml: features device, uva,
#              host, with and without the feature cache, GPU against CPU
#              sampling (OUT/gpu-data-sampling.md)
#   tests-race the cuda test binaries built with -race
#   gpucheck-bench  gpucheck --bench --memory, and --gemm own --bench
#   cora       Cora on every schedule, cpu against cuda, seeds $CORA_SEEDS
#   products   synth-products: baseline, async-transfer and optimized (spec)
#   pyg        PyG's other configurations on the same exported graph
#   client     the PyTorch examples profiled through gnnscope run --cmd
#   summary    OUT/summary.md (scripts/gpu-summary.py)
#
# Every step writes its results under OUT as it goes and appends
# "ok|FAIL|TIMEOUT NAME seconds" (or "not-run NAME why") to OUT/steps.txt,
# so that a run cut off midway keeps what it finished. --dry-run checks
# the machine (glibc, libcuda, the bundle's files) and prints the plan,
# each step's cost and command, and the estimated total, running none.
# --only takes a comma list of step names. With ARCHIVE=FILE, OUT is packed
# into FILE (tar.gz, files over 8 MB left out) after every step: where
# the machine hands back only so many files (a lent machine's call), set
# it, or the later steps' outputs may not come back (on the H200 the
# versus step's did not).
#
# env: GPU (default 0), CORA_SEEDS (default "0 1 2"), EPOCHS (default 2),
# ROUNDS (versus, default 2), FEATURE_EPOCHS (features, default 1),
# PYTHON (default python3), PYG_ONLY (names of the pyg step's
# configurations: neighborloader torch workers).
set -uo pipefail
BUNDLE=$(cd "$(dirname "$0")/.." && pwd)
dry=0 only="" budget=540
while [ $# -gt 0 ]; do
  case $1 in
    --dry-run) dry=1; shift ;;
    --only) only=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    -h|--help) sed -n '2,52p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-acceptance: unknown flag $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
OUT=${1:-gpu-acceptance-$(date -u +%Y%m%d-%H%M%S)}
GPU=${GPU:-0}
CORA_SEEDS=${CORA_SEEDS:-"0 1 2"}
EPOCHS=${EPOCHS:-2}
ROUNDS=${ROUNDS:-2}
case $budget in ''|*[!0-9]*) echo "gpu-acceptance: --budget takes whole seconds, got '$budget'" >&2; exit 2 ;; esac
PYTHON=${PYTHON:-python3}
BIN="$BUNDLE/gnnscope"
CORA="$BUNDLE/data/cora.npz"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export GNNSCOPE_HOME="$OUT/home"
LOG="$OUT/acceptance.log"
status=0

say() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG" >&2; }

pack() {
  [ -n "${ARCHIVE:-}" ] || return 0
  (cd "$OUT" && find . -type f -size -8M -print0 | tar czf "$ARCHIVE.tmp" --null -T - 2>/dev/null) &&
    mv "$ARCHIVE.tmp" "$ARCHIVE"
}

wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

# run NAME LIMIT CMD...: one step under a time limit, logged, never fatal.
run() {
  local name=$1 limit=$2; shift 2
  if [ $dry = 1 ]; then printf '  %-10s %4ss  %s\n' "$name" "$limit" "$*"; return 0; fi
  say "$name (limit ${limit}s)"
  local t0=$SECONDS rc=0
  if [ "$(type -t "$1")" = function ]; then
    timeout --kill-after=10 "$limit" bash -c '"$@"' _ "$@" >>"$LOG" 2>&1 || rc=$?
  else
    timeout --kill-after=10 "$limit" "$@" >>"$LOG" 2>&1 || rc=$?
  fi
  local word=ok
  if [ $rc = 124 ] || [ $rc = 137 ]; then word=TIMEOUT; status=1
  elif [ $rc != 0 ]; then word=FAIL; status=1; fi
  echo "$word $name $((SECONDS - t0))s rc=$rc" | tee -a "$OUT/steps.txt" >&2
  pack
}

# ---- checks: the machine can run the bundle ----
check() {
  local ok=1
  for f in "$BIN" "$BUNDLE/scripts/gpu-summary.py"; do
    [ -e "$f" ] || { echo "missing $f: rebuild the bundle (scripts/gpu-bundle.sh)"; ok=0; }
  done
  local need have
  need=$(cat "$BUNDLE/glibc-min.txt" 2>/dev/null || echo 0)
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}'); have=${have:-0}
  if [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1)" != "$need" ]; then
    echo "glibc $have is older than the $need the binaries were linked against: build the bundle on an older system"; ok=0
  else
    echo "glibc $have (binaries need $need): ok"
  fi
  local api drv
  api=$(cat "$BUNDLE/driver-api-min.txt" 2>/dev/null || echo 0)
  drv=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*' | grep -o '[0-9.]*$')
  if [ -n "$drv" ] && [ "$api" != 0 ]; then
    drv=$(( ${drv%%.*} * 1000 + ${drv#*.} * 10 ))
    if [ "$drv" -lt "$api" ]; then
      echo "the driver supports CUDA $drv, older than the $api the binaries' driver calls need"; ok=0
    else
      echo "driver CUDA API $drv (binaries need $api): ok"
    fi
  fi
  if ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 '; then
    echo "libcuda.so.1: $(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')"
  else
    echo "libcuda.so.1 not in the linker cache: --device cuda will fail with a clear error"
  fi
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi"
  [ -f "$CORA" ] || echo "no data/cora.npz in the bundle: the cora step is skipped"
  [ $ok = 1 ]
}
check | tee "$OUT/check.txt" >&2 || { [ $dry = 1 ] || exit 1; }

# ---- the steps ----
machine() {
  date -u; uname -a; ldd --version | head -1
  nvidia-smi || true
  nvidia-smi -q | sed -n '1,40p' || true
  echo "--- ldd"; ldd "$BIN"
  echo "--- bundle"; cat "$BUNDLE/manifest.txt" | head -2
  echo "--- python"; $PYTHON - <<'EOF' || true
import importlib, sys
print(sys.version)
for m in ["torch", "torch_geometric", "pyg_lib", "torch_sparse", "torch_scatter", "lightning", "pynvml", "numpy"]:
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "?"))
    except Exception as e:
        print(m, "missing:", type(e).__name__, e)
try:
    import torch
    print("cuda", torch.version.cuda, "available", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
except Exception as e:
    print("torch cuda:", e)
EOF
  echo "--- cuBLAS libraries"
  ldconfig -p | grep -i cublas || true
  find / -xdev -name 'libcublas.so*' 2>/dev/null | head -20 || true
}

cora() {
  mkdir -p "$OUT/cora"
  local sage=(--model sage --sampler neighbor --fanout 25,10 --batch-size 64 --epochs 50)
  local -A sched=(
    [sage-baseline]="${sage[*]}"
    [sage-workers]="${sage[*]} --sampler-workers 2 --prefetch 4"
    [sage-overlap-eval]="${sage[*]} --overlap-eval"
    [sage-async]="${sage[*]} --async-transfer"
    [sage-optimized]="${sage[*]} --sampler-workers 2 --prefetch 4 --overlap-eval --async-transfer"
    [gcn-full]="--model gcn --sampler full --epochs 200"
    [gcn-gas]="--model gcn --sampler gas --parts 40 --parts-per-batch 10 --hidden 16 --epochs 200"
  )
  local fail=0 s seed
  # the CPU runs go in the background, two at a time, beside the GPU runs
  (
    for seed in $CORA_SEEDS; do for s in "${!sched[@]}"; do
      "$BIN" train --data "$CORA" --seed "$seed" --device cpu --threads 4 --json -q ${sched[$s]} \
        >"$OUT/cora/cpu-$s-s$seed.json" 2>"$OUT/cora/cpu-$s-s$seed.err" || echo "cpu $s s$seed failed" >>"$OUT/cora/failures.txt"
    done; done
  ) &
  local cpu=$!
  for seed in $CORA_SEEDS; do for s in "${!sched[@]}"; do
    "$BIN" train --data "$CORA" --seed "$seed" --device "cuda:$GPU" --json -q ${sched[$s]} \
      >"$OUT/cora/cuda-$s-s$seed.json" 2>"$OUT/cora/cuda-$s-s$seed.err" || { echo "cuda $s s$seed failed" >>"$OUT/cora/failures.txt"; fail=1; }
    pack
  done; done
  wait $cpu
  [ ! -s "$OUT/cora/failures.txt" ]
}

products() {
  sed -e "s/^device = \"cuda\"/device = \"cuda:$GPU\"/" -e "s/^epochs = 3/epochs = $EPOCHS/" \
    "$BUNDLE/scripts/sage-products-gpu.toml" >"$OUT/products.toml"
  "$BIN" run --spec "$OUT/products.toml" --wait --json >"$OUT/products-run.json" || return 1
  "$BIN" compare last --format md >"$OUT/products-compare.md"
  "$BIN" export trace last -o "$OUT/products-trace.json" || true
}

# gpu_data runs examples/sage-products-gpu-data.toml: where the features
# live (device, uva, host, the budget's choice), the feature cache, and
# GPU against CPU sampling; then sums up each run's sampled edges per
# second and its placement lines (scripts/sample-rate.py); then the
# sampling benchmark on the CPU workers and with the GPU kernel.
gpu_data() {
  sed -e "s/^device = \"cuda\"/device = \"cuda:$GPU\"/" -e "s/^epochs = 3/epochs = ${FEATURE_EPOCHS:-1}/" \
    "$BUNDLE/scripts/sage-products-gpu-data.toml" >"$OUT/gpu-data.toml"
  local rc=0
  "$BIN" run --spec "$OUT/gpu-data.toml" --wait --json >"$OUT/gpu-data-run.json" || rc=1
  "$BIN" compare last --format md >"$OUT/gpu-data-compare.md" || rc=1
  "$BIN" export trace last -o "$OUT/gpu-data-trace.json" || true
  local sess
  sess=$(ls -td "$GNNSCOPE_HOME"/sessions/*/ | head -1)
  $PYTHON "$BUNDLE/scripts/sample-rate.py" "$sess" "$OUT/gpu-data-sampling.md" || rc=1
  return $rc
}

# products.npz is large: it stays outside OUT, for the pyg and client steps
NPZ=${NPZ:-${TMPDIR:-/tmp}/gnnscope-products.npz}
export NPZ

pyg() {
  [ -f "$NPZ" ] || "$BIN" datasets export synth-products -o "$NPZ" -q || return 1
  local rc=0 name
  # NeighborLoader (needs pyg-lib or torch-sparse), then the vectorized
  # torch sampler on the device, then CPU workers with pinned memory (the
  # graph and features resident on the device: the versus step)
  for cfg in "neighborloader --sampler pyg" "torch --sampler torch" "workers --sampler torch --workers 8"; do
    name=${cfg%% *}
    [ -z "${PYG_ONLY:-}" ] || [[ " $PYG_ONLY " == *" $name "* ]] || continue
    $PYTHON "$BUNDLE/scripts/pyg-compare.py" "$NPZ" --layers 3 --hidden 256 --fanout 15,10,5 \
      --batch-size 1024 --epochs "$EPOCHS" --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --device "cuda:$GPU" \
      ${cfg#* } --json "$OUT/pyg-$name.json" >"$OUT/pyg-$name.txt" 2>&1 || rc=1
  done
  return $rc
}

client() {
  local py="$BUNDLE/scripts/pytorch" rc=0
  "$BIN" run --cmd "lightning=$PYTHON $py/lightning_sage.py --epochs 3 --nodes 200000 --devices 1" --wait --json \
    >"$OUT/client-lightning.json" || rc=1
  "$BIN" run --cmd "pyg-sage=$PYTHON $py/pyg_sage.py --npz $BUNDLE/data/cora.npz --epochs 3" --wait --json \
    >"$OUT/client-pyg-sage.json" || rc=1
  if [ -f "$NPZ" ]; then
    "$BIN" run --cmd "pyg-products=$PYTHON $BUNDLE/scripts/pyg-compare.py $NPZ --sampler torch --resident --epochs 2 --device cuda:$GPU" \
      --wait --json >"$OUT/client-pyg-products.json" || rc=1
  fi
  for s in "$GNNSCOPE_HOME"/sessions/*/; do cp "$s"/runs/*.log "$OUT/" 2>/dev/null; done
  return $rc
}

tests() { # tests SUFFIX: every test binary of that kind
  local t rc=0
  if ! compgen -G "$BUNDLE/tests/*$1" >/dev/null; then
    echo "no test binaries $BUNDLE/tests/*$1: was the bundle copied whole?" >&2
    return 1
  fi
  for t in "$BUNDLE"/tests/*"$1"; do
    case $1 in .test) [[ $t == *.race.test ]] && continue ;; esac
    local n; n=$(basename "$t")
    (cd "$BUNDLE" && GNNSCOPE_TEST_GPU=$GPU "$t" -test.v -test.count=1 -test.timeout 280s) >"$OUT/$n.txt" 2>&1 || rc=1
    pack
  done
  return $rc
}

# kernels: the new kernels' own tests first, then every cuda test, then
# gpucheck's op checks (the gathers and copies they use among them)
kernels() {
  local t rc=0
  if ! compgen -G "$BUNDLE/tests/*.test" >/dev/null; then
    echo "no test binaries in $BUNDLE/tests: was the bundle copied whole?" >&2
    rc=1
  fi
  for t in "$BUNDLE"/tests/*.test; do
    [[ -f $t && $t != *.race.test ]] || continue
    local n; n=$(basename "$t" .test)
    (cd "$BUNDLE" && GNNSCOPE_TEST_GPU=$GPU "$t" -test.v -test.count=1 -test.timeout 60s \
      -test.run 'TestGatherRowsAt|TestSamplerMatchesReference') >"$OUT/kernels-$n.txt" 2>&1 || rc=1
    (cd "$BUNDLE" && GNNSCOPE_TEST_GPU=$GPU "$t" -test.v -test.count=1 -test.timeout 120s) >"$OUT/tests-$n.txt" 2>&1 || rc=1
    pack
  done
  "$BIN" gpucheck --device "cuda:$GPU" --json >"$OUT/gpucheck.json" || rc=1
  return $rc
}

gpucheck_bench() {
  local rc=0
  "$BIN" gpucheck --device "cuda:$GPU" --bench --memory --json >"$OUT/gpucheck-bench.json" || rc=1
  "$BIN" gpucheck --device "cuda:$GPU" --gemm own --bench --json >"$OUT/gpucheck-own.json" || rc=1
  return $rc
}

# versus: optimized as planned for this machine (nothing set but the
# experiment) against PyG resident, interleaved ROUNDS times
versus() {
  local t0=$SECONDS
  [ -f "$NPZ" ] || "$BIN" datasets export synth-products -o "$NPZ" -q || return 1
  echo "synth-products generated and exported in $((SECONDS - t0)) s ($(du -h "$NPZ" | cut -f1))" >"$OUT/versus-data.txt"
  local r rc=0
  for r in $(seq 1 "$ROUNDS"); do
    "$BIN" run --data synth-products --model sage --layers 3 --hidden 256 --fanout 15,10,5 --batch-size 1024 \
      --epochs "$EPOCHS" --device "cuda:$GPU" --variants optimized --wait --json >"$OUT/versus-optimized-$r.json" || rc=1
    $PYTHON "$BUNDLE/scripts/pyg-compare.py" "$NPZ" --layers 3 --hidden 256 --fanout 15,10,5 \
      --batch-size 1024 --epochs "$EPOCHS" --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --device "cuda:$GPU" \
      --sampler torch --resident --json "$OUT/versus-pyg-$r.json" >"$OUT/versus-pyg-$r.txt" 2>&1 || rc=1
    pack
  done
  local s
  for s in "$GNNSCOPE_HOME"/sessions/*/; do cp "$s"/runs/*.log "$OUT/" 2>/dev/null; done
  return $rc
}

# sampling: the sampler alone, CPU workers against the GPU kernel (edges/s)
sampling() {
  local dev rc=0
  for dev in cpu "cuda:$GPU"; do
    "$BIN" bench --only sample --data synth-products --threads "1,$(nproc)" --min-time 3s --sampler-device "$dev" \
      >"$OUT/sampling-bench-${dev%%:*}.txt" 2>&1 || rc=1
  done
  return $rc
}

machine_out() { machine >"$OUT/machine.txt" 2>&1; }
export -f say pack machine machine_out kernels gpucheck_bench versus sampling cora products gpu_data pyg client tests
export BUNDLE BIN CORA OUT GPU CORA_SEEDS EPOCHS ROUNDS PYTHON LOG
export ARCHIVE=${ARCHIVE:-}

# ---- the plan: name, cost in seconds, what the cost is, command ----
# Costs: "measured" ones are the H100 run of 2026-11-25 and the H200 run
# of 2026-11-28 (docs/gpu/*/steps-*.txt, summary-call1.md); the others
# are estimates.
STEPS=(
  "machine|30|measured 29 s|machine_out"
  "kernels|35|measured 10 s on the H200 (tests 3 s and gpucheck 15 s on the H100)|kernels"
  "versus|150|measured 97 s on the H200, the export included|versus"
  "sampling|30|measured 15 s on the H200|sampling"
  "features|170|estimated: 7 runs of synth-products, 1 epoch each (FEATURE_EPOCHS), at ~24 s|gpu_data"
  "tests-race|75|measured 28 s on the H100; on the H200 its tests took 60 s (TestGatherRowsAt 38 s under -race)|tests .race.test"
  "gpucheck-bench|30|measured 15 s and 14 s|gpucheck_bench"
  "cora|65|measured 60 s|cora"
  "products|150|measured 173 s on the H100, 74 s on the H200|products"
  "pyg|250|measured: timed out at 215 s and 250 s|pyg"
  "client|100|measured 97 s on the H100, 57 s on the H200|client"
  "summary|5|measured 0 s|$PYTHON $BUNDLE/scripts/gpu-summary.py $OUT"
)

# plan: the steps wanted, in order, while their costs fit the budget
planned=() unplanned=() total=0
for st in "${STEPS[@]}"; do
  IFS='|' read -r name cost _ _ <<<"$st"
  wanted "$name" || continue
  if [ "$name" = cora ] && [ ! -f "$CORA" ]; then unplanned+=("$name|no data/cora.npz in the bundle"); continue; fi
  if [ $((total + cost)) -le "$budget" ]; then planned+=("$st"); total=$((total + cost))
  else unplanned+=("$name|cost ${cost} s does not fit the ${budget} s budget after ${total} s"); fi
done
# limit AT COST: a step's time limit when it starts at AT seconds
limit() { local l=$(( $2 + $2 / 2 )) left=$(( budget - $1 )); echo $(( l < left ? l : left )); }

if [ $dry = 1 ]; then
  echo "plan for a budget of ${budget} s (name, cost, time limit, basis, command):"
  at=0
  for st in "${planned[@]}"; do
    IFS='|' read -r name cost basis cmd <<<"$st"
    printf '  %-15s %4ss  limit %4ss  %s\n  %15s                     %s\n' "$name" "$cost" "$(limit $at "$cost")" "$basis" "" "$cmd"
    at=$((at + cost))
  done
  echo "estimated total: ${total} s of ${budget} s"
  for u in "${unplanned[@]}"; do echo "not run: ${u%%|*} (${u#*|})"; done
  exit 0
fi

for u in "${unplanned[@]}"; do echo "not-run ${u%%|*} ${u#*|}" >>"$OUT/steps.txt"; done
for st in "${planned[@]}"; do
  IFS='|' read -r name cost _ cmd <<<"$st"
  if [ $((SECONDS + cost)) -gt "$budget" ]; then
    echo "not-run $name cost ${cost} s, ${SECONDS} s of ${budget} s gone" | tee -a "$OUT/steps.txt" >&2
    continue
  fi
  # shellcheck disable=SC2086 # cmd is a function and its words
  run "$name" "$(limit $SECONDS "$cost")" $cmd
done
# the datasets generated into gnnscope's cache are gigabytes, not results
rm -rf "$GNNSCOPE_HOME/cache"
say "done: $OUT (status $status)"
exit $status
