#!/usr/bin/env bash
# The CUDA backend's acceptance on a GPU machine. Writes everything into
# one folder (default gpu-acceptance-DATE) and a summary.md there:
#
#   1. build: go build -tags cuda; the committed PTX against nvcc (if installed)
#   2. kernels: go test -tags cuda ./gnn/device/cuda (every kernel against the
#      CPU backend), gnnscope gpucheck --bench --memory
#   3. Cora: every schedule on cpu and cuda (GraphSAGE 25,10 batch 64; GCN
#      full batch; GAS), test accuracy and epoch times side by side
#   4. synth-products: baseline, async-transfer and optimized on the GPU
#      (examples/sage-products-gpu.toml), compare table and trace
#   5. PyG: the same model and settings with scripts/pyg-compare.py, when
#      torch and torch_geometric are installed
#   6. memory: the allocator's peak against NVML's (gpucheck --memory and the
#      products journals' mem and gpu events)
#
# Usage: scripts/gpu-acceptance.sh [OUT] ; env: GPU (default 0), CORA (path
# of cora.npz, default ../shared/datasets/cora.npz), EPOCHS (products,
# default 3), CORA_SEEDS (default "0 1 2"), SKIP_PYG=1, PYTHON (default
# python3), GO (default go).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-gpu-acceptance-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
GPU=${GPU:-0}
CORA=${CORA:-../shared/datasets/cora.npz}
EPOCHS=${EPOCHS:-3}
CORA_SEEDS=${CORA_SEEDS:-"0 1 2"}
PYTHON=${PYTHON:-python3}
GO=${GO:-go}
export GNNSCOPE_HOME="$OUT/home"
BIN="$OUT/gnnscope"
LOG="$OUT/acceptance.log"
status=0

say() { echo "== $*" | tee -a "$LOG"; }
step() { # step NAME CMD...: run, log, keep going on failure
  local name=$1; shift
  say "$name: $*"
  if "$@" >>"$LOG" 2>&1; then echo "ok   $name" >>"$OUT/steps.txt"; else echo "FAIL $name" >>"$OUT/steps.txt"; status=1; fi
}

: >"$OUT/steps.txt"
{ date -u; uname -a; $GO version; nvidia-smi 2>&1 || true; nvcc --version 2>&1 || true; git rev-parse HEAD 2>/dev/null; } >"$OUT/machine.txt"

# 1. build
say "build (cuda tag)"
if ! $GO build -tags cuda -o "$BIN" . >>"$LOG" 2>&1; then
  echo "FAIL build" >>"$OUT/steps.txt"
  echo "the cuda build failed: see $LOG (CUDA headers: set CGO_CFLAGS=-I<dir of cuda.h>)" | tee -a "$LOG"
  exit 1
fi
echo "ok   build" >>"$OUT/steps.txt"
if command -v nvcc >/dev/null; then
  step ptx-matches-sources bash -c "cd gnn/device/cuda && $GO run ./internal/ptxgen -check"
fi

# 2. kernels
step kernel-tests bash -c "GNNSCOPE_TEST_GPU=$GPU $GO test -tags cuda -count=1 -v ./gnn/device/cuda/ ./gnn/device/backend/ >'$OUT/kernel-tests.txt' 2>&1"
step gpucheck bash -c "'$BIN' gpucheck --device cuda:$GPU --bench --memory --json >'$OUT/gpucheck.json' 2>>'$LOG'"
"$BIN" gpucheck --device cuda:$GPU >"$OUT/gpucheck.txt" 2>&1 || true

# 3. Cora: every schedule on cpu and cuda
if [ -f "$CORA" ]; then
  mkdir -p "$OUT/cora"
  for seed in $CORA_SEEDS; do
    for dev in cpu "cuda:$GPU"; do
      d=${dev%%:*}
      common=(--data "$CORA" --seed "$seed" --device "$dev" --json -q)
      sage=(--model sage --sampler neighbor --fanout 25,10 --batch-size 64 --epochs 50)
      step "cora-$d-sage-baseline-s$seed" bash -c "'$BIN' train ${common[*]} ${sage[*]} >'$OUT/cora/$d-sage-baseline-s$seed.json'"
      step "cora-$d-sage-workers-s$seed" bash -c "'$BIN' train ${common[*]} ${sage[*]} --sampler-workers 2 --prefetch 4 >'$OUT/cora/$d-sage-workers-s$seed.json'"
      step "cora-$d-sage-overlap-eval-s$seed" bash -c "'$BIN' train ${common[*]} ${sage[*]} --overlap-eval >'$OUT/cora/$d-sage-overlap-eval-s$seed.json'"
      step "cora-$d-sage-async-s$seed" bash -c "'$BIN' train ${common[*]} ${sage[*]} --async-transfer >'$OUT/cora/$d-sage-async-s$seed.json'"
      step "cora-$d-sage-optimized-s$seed" bash -c "'$BIN' train ${common[*]} ${sage[*]} --sampler-workers 2 --prefetch 4 --overlap-eval --async-transfer >'$OUT/cora/$d-sage-optimized-s$seed.json'"
      step "cora-$d-gcn-full-s$seed" bash -c "'$BIN' train ${common[*]} --model gcn --sampler full --epochs 200 >'$OUT/cora/$d-gcn-full-s$seed.json'"
      step "cora-$d-gcn-gas-s$seed" bash -c "'$BIN' train ${common[*]} --model gcn --sampler gas --parts 40 --parts-per-batch 10 --hidden 16 --epochs 200 >'$OUT/cora/$d-gcn-gas-s$seed.json'"
    done
  done
else
  say "Cora not found at $CORA (set CORA=...): skipped"
  echo "skip cora" >>"$OUT/steps.txt"
fi

# 4. synth-products on the GPU
spec="$OUT/products.toml"
sed -e "s/^device = \"cuda\"/device = \"cuda:$GPU\"/" -e "s/^epochs = 3/epochs = $EPOCHS/" examples/sage-products-gpu.toml >"$spec"
step products-run bash -c "'$BIN' run --spec '$spec' --wait --json >'$OUT/products-run.json'"
"$BIN" compare last --format md >"$OUT/products-compare.md" 2>>"$LOG" || true
"$BIN" export trace last -o "$OUT/products-trace.json" >>"$LOG" 2>&1 || true

# 5. PyG
if [ "${SKIP_PYG:-0}" != 1 ] && $PYTHON -c "import torch, torch_geometric, numpy" 2>>"$LOG"; then
  step products-export "$BIN" datasets export synth-products -o "$OUT/products.npz" -q
  step pyg bash -c "$PYTHON scripts/pyg-compare.py '$OUT/products.npz' --layers 3 --hidden 256 --fanout 15,10,5 --batch-size 1024 --epochs $EPOCHS --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --device cuda:$GPU --json '$OUT/pyg.json' >>'$LOG' 2>&1"
else
  say "PyG comparison skipped (torch and torch_geometric not importable by $PYTHON, or SKIP_PYG=1)"
  echo "skip pyg" >>"$OUT/steps.txt"
fi

# 6. summary (Python's standard library only)
$PYTHON - "$OUT" <<'EOF' || { echo "summary failed" | tee -a "$LOG"; status=1; }
import glob, json, os, statistics, sys
out = sys.argv[1]
lines = ["# gnnscope CUDA acceptance", ""]
lines += ["## Steps", "", "```", open(os.path.join(out, "steps.txt")).read().rstrip(), "```", ""]
def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None
g = load(os.path.join(out, "gpucheck.json"))
if g:
    h = g.get("host", {})
    lines += ["## GPU", "", f"{h.get('gpu')} ({h.get('gpu_mem', 0)/2**30:.1f} GiB), driver {h.get('driver')}; NVML: {g.get('nvml')}", ""]
    lines += ["## Kernels against the CPU backend (gpucheck)", "", "| transfers | op | shape | max rel err | ok |", "|---|---|---|---|---|"]
    for run in g.get("checks", []):
        for r in run["results"]:
            lines.append(f"| {'async' if run['async_transfer'] else 'sync'} | {r['op']} | {r['shape']} | {r['max_rel_err']:.3g} | {'yes' if r['ok'] else '**NO**'} |")
    lines += ["", f"failed: {g.get('failed')}", ""]
    if g.get("bench"):
        lines += ["## Kernel speed", "", "| kernel | shape | ms/call | rate |", "|---|---|---|---|"]
        for b in g["bench"]:
            lines.append(f"| {b['op']} | {b['shape']} | {b['seconds']*1e3:.3f} | {b['rate']:.1f} {b['unit']} |")
        lines.append("")
    m = g.get("memory")
    if m:
        lines += ["## Memory: allocator against NVML (gpucheck --memory)", "",
                  f"pattern: {m['pattern']}; allocator peak {m['allocator_peak']/2**20:.1f} MiB; pool reserved {m['pool_reserved']/2**20:.1f} MiB; "
                  f"NVML process {m['process_before']/2**20:.1f} MiB before, {m['process_at_peak']/2**20:.1f} MiB at the peak", ""]
runs = {}
for p in sorted(glob.glob(os.path.join(out, "cora", "*.json"))):
    r = load(p)
    if not r or "test_acc" not in r:
        continue
    dev, rest = os.path.basename(p)[:-5].split("-", 1)
    sched, seed = rest.rsplit("-s", 1)
    runs.setdefault((sched, dev), []).append(r)
if runs:
    lines += ["## Cora: cpu against cuda (median over seeds)", "", "| schedule | device | test acc | epoch s | peak MiB |", "|---|---|---|---|---|"]
    for (sched, dev), rs in sorted(runs.items()):
        acc = statistics.median(r["test_acc"] for r in rs)
        ep = statistics.median(r["epoch_s"] for r in rs)
        pk = statistics.median(r["peak_bytes"] for r in rs) / 2**20
        lines.append(f"| {sched} | {dev} | {acc:.4f} | {ep:.4f} | {pk:.1f} |")
    lines.append("")
pr = os.path.join(out, "products-compare.md")
if os.path.exists(pr):
    lines += ["## synth-products on the GPU (gnnscope compare)", "", open(pr).read().rstrip(), ""]
mems, gpus = [], []
for p in glob.glob(os.path.join(out, "home", "sessions", "*", "runs", "*.jsonl")):
    peak = used = 0
    for line in open(p):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("t") == "mem":
            peak = max(peak, e.get("peak", 0))
        elif e.get("t") == "gpu":
            used = max(used, e.get("used", 0))
    mems.append((os.path.basename(p)[:-6], peak, used))
if mems:
    lines += ["## synth-products memory: largest batch peak (allocator) and largest NVML device use", "", "| run | batch peak MiB | NVML used MiB |", "|---|---|---|"]
    for name, peak, used in sorted(mems):
        lines.append(f"| {name} | {peak/2**20:.1f} | {used/2**20:.1f} |")
    lines.append("")
py = load(os.path.join(out, "pyg.json"))
if py:
    lines += ["## PyG", "", f"{py['framework']} {py['pyg']} (torch {py['torch']}, sampler {py['sampler']}) on {py['device']}: "
              f"{py['epoch_s']:.3f} s/epoch ({py['epoch_s_after_first']} after the first), test acc {py['test_acc']:.4f}, peak {(py['peak_bytes'] or 0)/2**20:.1f} MiB", ""]
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
say "done: $OUT/summary.md (status $status)"
exit $status
