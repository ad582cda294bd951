#!/bin/sh
# Memory under a budget, acceptance run: the same training without a
# budget, under a budget with --on-oom skip, and under the budget with the
# memory guard (one run per guard mode), side by side.
#
# Usage: scripts/mem-acceptance.sh [REPEATS] [BUDGET] [GUARDS]
#   REPEATS  runs of every configuration (default 5); the configurations
#            are interleaved (A B C ... A B C ...) so that a noisy, shared
#            machine slows them alike
#   BUDGET   device memory budget (default 20350000 bytes: about the 90th
#            percentile of the unbudgeted run's batch peaks on synth-small
#            with the default flags, so that skip loses 5-15 % of batches)
#   GUARDS   comma-separated guard modes to run (default cut,split,resample)
# Environment:
#   GNNSCOPE  the gnnscope binary (default: built from this checkout into a
#             temporary folder)
#   TRAIN     the training flags (default: GraphSAGE on synth-small, whose
#             power-law degrees make batch peaks vary, fanouts 15,10,
#             batches of 1024, 20 epochs, seed 0)
#   KEEP      a folder to keep every run's JSON in
#   SCHED     flags of a second, overlapped schedule (e.g. "--overlap-eval
#             --sampler-workers 2 --prefetch 4"): every configuration then
#             also runs with them (skip aside), as CONFIG+sched, compared with
#             unbudgeted+sched; the guarded ones then exercise the memory
#             gate (evaluation of epoch e shares the budget with epoch e+1)
#   CACHE     flags of a device feature cache (e.g. "--cache-bytes 20%" or
#             "--cache-bytes 20% --cache-policy frequency"): the unbudgeted
#             run and every guarded one (with SCHED, those too) then also
#             run with it, as CONFIG+cache, the guarded ones under BUDGET
#             plus the cache's bytes, so that the room beside the resident
#             cache is BUDGET's beside nothing
#
# Prints one row per configuration: epoch time (median over the repeats and
# its spread, min-max), the median of each repeat's epoch time over the
# unbudgeted run's of the same repeat, training-only, evaluation and guard
# (its decisions and actions, from the guard spans) time per epoch, time
# spent waiting at the memory gate (mem.wait spans, both lanes) per epoch,
# optimizer steps, OOMs (batches skipped, and their share), guard actions,
# the largest measured batch peak and the device's peak against the
# budget, the predictor's MAPE, test accuracy and the cache's hit rate and
# bytes moved host-to-device per epoch; then the acceptance checks: skip
# loses at least 5 % of its batches; a guarded run has no OOM, every batch
# peak and the device's peak within its budget, an epoch time within 10 %
# of the unbudgeted run's (of the same schedule and cache) and test
# accuracy within 0.5 points; a run with the cache trains exactly what the
# same run without it trains (steps, validation loss and test accuracy
# equal) and hits the cache. Needs python3 (standard library only).
set -eu

repeats=${1:-5}
budget=${2:-20350000}
guards=${3:-cut,split,resample}
train=${TRAIN:---data synth-small --model sage --hidden 64 --fanout 15,10 --batch-size 1024 --epochs 20 --seed 0}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gs=${GNNSCOPE:-}
if [ -z "$gs" ]; then
	(cd "$(dirname "$0")/.." && go build -o "$tmp/gnnscope" .)
	gs=$tmp/gnnscope
fi
out=${KEEP:-$tmp/runs}
mkdir -p "$out"

configs="unbudgeted skip $(echo "$guards" | tr ',' ' ')"
sched=${SCHED:-}
if [ -n "$sched" ]; then
	# Not skip: unguarded, its overlapped evaluation may run out of
	# memory too, which ends the run.
	for c in $configs; do
		[ "$c" = skip ] || configs="$configs $c+sched"
	done
fi
cache=${CACHE:-}
cbudget=$budget
if [ -n "$cache" ]; then
	for c in $configs; do
		[ "$c" = skip ] || configs="$configs $c+cache"
	done
fi
# Generate (and cache) the dataset before timing anything; with CACHE,
# read the cache's bytes.
# shellcheck disable=SC2086
"$gs" train $train $cache --epochs 1 --json -q >"$tmp/first.json"
if [ -n "$cache" ]; then
	cbytes=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cache"]["bytes"])' "$tmp/first.json")
	cbudget=$((budget + cbytes))
fi

r=1
while [ "$r" -le "$repeats" ]; do
	for c in $configs; do
		b=$budget
		case $c in
		*+cache) b=$cbudget ;;
		esac
		case ${c%%+*} in
		unbudgeted) flags= ;;
		skip) flags="--mem-budget $b --on-oom skip" ;;
		*) flags="--mem-budget $b --mem-guard ${c%%+*}" ;;
		esac
		case $c in
		*+sched*) flags="$flags $sched" ;;
		esac
		case $c in
		*+cache) flags="$flags $cache" ;;
		esac
		echo "repeat $r/$repeats: $c" >&2
		# shellcheck disable=SC2086
		"$gs" train $train $flags --json -q >"$out/$c.$r.json"
	done
	r=$((r + 1))
done

python3 - "$out" "$budget" "$cbudget" "$repeats" $configs <<'EOF'
import json, statistics, sys

out, budget, cbudget, repeats, configs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
runs = {c: [json.load(open(f"{out}/{c}.{r}.json")) for r in range(1, repeats + 1)] for c in configs}
for c, rs in runs.items():
    for x in rs:
        if x.get("status") != "ok":
            sys.exit(f"{c}: run ended with status {x.get('status')}: {x.get('error')}")

def med(v):
    return statistics.median(v)

def base_of(c):
    return "unbudgeted" + c[len(plain(c)):]

def plain(c):
    return c.split("+")[0]

def budget_of(c):
    return cbudget if c.endswith("+cache") else budget

def cache_of(x):
    cs = x.get("cache")
    if not cs:
        return "-"
    return f"{100 * cs['hit_rate']:.1f} %, {cs['bytes_h2d'] / max(x['epochs'], 1) / 2**20:.1f} MiB"

print(f"budget {budget} bytes ({budget / 2**20:.2f} MiB); {repeats} interleaved repeats; times in seconds per epoch")
if cbudget != budget:
    print(f"runs with the cache: budget {cbudget} bytes ({cbudget / 2**20:.2f} MiB), the cache's {cbudget - budget} bytes beside the same room")
print()
print("| run | epoch time, median (min-max) | vs unbudgeted | train | eval | guard | mem wait | steps | OOMs (share of batches) | guard actions | max batch peak / budget | device peak | predictor MAPE | test acc | cache hits, moved per epoch |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
summary = {}
for c in configs:
    rs, base = runs[c], runs[base_of(c)]
    ep = [x["epoch_s"] for x in rs]
    ratio = med([x["epoch_s"] / b["epoch_s"] for x, b in zip(rs, base)])
    ev = med([x["eval_s"] / x["epochs"] for x in rs])
    tr = med([(x["train_s"] - x["eval_s"]) / x["epochs"] for x in rs])
    gd = med([x.get("stage_s", {}).get("guard", 0) / x["epochs"] for x in rs])
    mw = med([x.get("stage_s", {}).get("mem.wait", 0) / x["epochs"] for x in rs])
    x = rs[0]
    batches = x["oom_count"] + x["steps"] if plain(c) == "skip" else None
    ooms = f"{x['oom_count']}" + (f" ({100 * x['oom_count'] / batches:.1f} %)" if batches else "")
    mape = x.get("predictor_mape")
    peak = max(y["max_batch_peak_bytes"] for y in rs)
    dpeak = max(y["peak_bytes"] for y in rs)
    summary[c] = dict(ratio=ratio, peak=peak, dpeak=dpeak, ooms=max(y["oom_count"] for y in rs), acc=x["test_acc"], share=(x["oom_count"] / batches if batches else 0),
                      trained=[(y["steps"], y["val_loss"], y["test_acc"]) for y in rs], hits=min((y.get("cache") or {}).get("hits", 0) for y in rs))
    print(f"| {c} | {med(ep):.4f} ({min(ep):.4f}-{max(ep):.4f}) | {100 * (ratio - 1):+.1f} % | {tr:.4f} | {ev:.4f} | {gd:.4f} | {mw:.4f} | {x['steps']} | {ooms} | "
          f"{x['guard_actions']} | {peak} / {budget_of(c) if plain(c) != 'unbudgeted' else '-'} | {dpeak} | "
          f"{'-' if mape is None else f'{100 * mape:.4f} %'} | {x['test_acc']:.4f} | {cache_of(x)} |")
print()
ok = True
def check(cond, what):
    global ok
    ok &= cond
    print(("PASS " if cond else "FAIL ") + what)
for c in configs:
    s = summary[c]
    if c.endswith("+cache"):
        check(s["hits"] > 0, f"{c}: the cache was hit")
        same = s["trained"] == summary[c.removesuffix("+cache")]["trained"]
        check(same, f"{c}: steps, validation loss and test accuracy identical to {c.removesuffix('+cache')}'s")
    if plain(c) == "skip":
        check(s["share"] >= 0.05, f"{c} loses {100 * s['share']:.1f} % of its batches (at least 5 %)")
    if plain(c) in ("unbudgeted", "skip"):
        continue
    check(s["ooms"] == 0, f"{c}: {s['ooms']} OOMs")
    b = budget_of(c)
    check(s["peak"] <= b, f"{c}: max batch peak {s['peak']} within the budget {b}")
    check(s["dpeak"] <= b, f"{c}: device peak {s['dpeak']} within the budget {b}")
    check(s["ratio"] <= 1.10, f"{c}: epoch time {100 * (s['ratio'] - 1):+.1f} % of the {base_of(c)} run's (within 10 %)")
    d = 100 * (s["acc"] - summary[base_of(c)]["acc"])
    check(abs(d) <= 0.5, f"{c}: test accuracy {d:+.2f} points from the {base_of(c)} run's (within 0.5)")
sys.exit(0 if ok else 1)
EOF
