#!/bin/sh
# Fidelity of the PyTorch bridge's zero-change instrumentation: runs
# examples/pytorch/sage_train.py in interleaved pairs, plain and with the
# instrumentation (GNNSCOPE_JOURNAL set, clients/python on PYTHONPATH, as
# gnnscope run does), the order alternating from pair to pair so that a
# noisy, shared machine slows both alike.
#
# Usage: scripts/bridge-fidelity.sh [PAIRS] [EPOCHS]
#   PAIRS   interleaved pairs (default 5)
#   EPOCHS  epochs per run (default 3)
# Environment:
#   PYTHON  the interpreter with torch (default /usr/bin/python3)
#   ARGS    more sage_train.py flags (default "--variant baseline --nodes 10000")
#   THREADS OMP_NUM_THREADS of both runs (default 1: steadier on a shared machine)
#   KEEP    a folder to keep the journals and outputs in
#
# Prints each pair's epoch times (as the trainer prints them), the ratio of
# the instrumented run's mean epoch time to the plain run's, the median of
# those ratios (the overhead), the same for each run's fastest epoch (less
# sensitive to other load on the machine), and the per-batch stage coverage of the
# instrumented runs: the fraction of batches whose sample + transfer +
# train spans sum to within 5 % of the batch's wall time (its sample's
# start to the next batch's).
set -eu

PAIRS=${1:-5}
EPOCHS=${2:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
ARGS=${ARGS:-"--variant baseline --nodes 10000"}
THREADS=${THREADS:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENT=$ROOT/clients/python
OUT=${KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$OUT"' EXIT

run_plain() {
	env -u GNNSCOPE_JOURNAL -u GNNSCOPE_AUTO OMP_NUM_THREADS=$THREADS \
		"$PYTHON" "$ROOT/examples/pytorch/sage_train.py" --epochs "$EPOCHS" $ARGS >"$OUT/plain$1.txt"
}

run_auto() {
	rm -f "$OUT/auto$1.jsonl"
	GNNSCOPE_JOURNAL=$OUT/auto$1.jsonl GNNSCOPE_RUN=auto$1 GNNSCOPE_AUTO=1 OMP_NUM_THREADS=$THREADS \
		PYTHONPATH=$CLIENT${PYTHONPATH:+:$PYTHONPATH} \
		"$PYTHON" "$ROOT/examples/pytorch/sage_train.py" --epochs "$EPOCHS" $ARGS >"$OUT/auto$1.txt"
}

i=1
while [ "$i" -le "$PAIRS" ]; do
	if [ $((i % 2)) -eq 1 ]; then
		run_plain "$i"
		run_auto "$i"
	else
		run_auto "$i"
		run_plain "$i"
	fi
	echo "pair $i done" >&2
	i=$((i + 1))
done

PYTHONPATH=$CLIENT "$PYTHON" - "$OUT" "$PAIRS" <<'PY'
import re, statistics, sys
from gnnscope import fidelity

out, pairs = sys.argv[1], int(sys.argv[2])
times = lambda text: [float(t) for t in re.findall(r"time ([0-9.]+)s", text)]
strip = lambda text: re.sub(r"time [0-9.]+s", "time -", text)
ratios, mins, ok, total, same = [], [], 0, 0, True
for i in range(1, pairs + 1):
    plain = open("%s/plain%d.txt" % (out, i)).read()
    auto = open("%s/auto%d.txt" % (out, i)).read()
    same = same and strip(plain) == strip(auto)
    tp, ta = times(plain), times(auto)
    r = statistics.mean(ta) / statistics.mean(tp)
    ratios.append(r)
    mins.append(min(ta) / min(tp))
    c, n, worst = fidelity.coverage(fidelity.read("%s/auto%d.jsonl" % (out, i)))
    ok, total = ok + c, total + n
    print("pair %d: plain %s  auto %s  ratio %.3f (fastest epochs %.3f)  coverage %d/%d (worst %.3f)"
          % (i, " ".join("%.3f" % t for t in tp), " ".join("%.3f" % t for t in ta), r, mins[-1],
             c, n, worst))
print("median overhead ratio (auto/plain epoch time): %.3f (%+.1f %%)"
      % (statistics.median(ratios), 100 * (statistics.median(ratios) - 1)))
print("median ratio of the fastest epochs: %.3f (%+.1f %%)"
      % (statistics.median(mins), 100 * (statistics.median(mins) - 1)))
print("stage coverage: %d/%d batches within 5 %% of their wall time (%.1f %%)"
      % (ok, total, 100.0 * ok / max(total, 1)))
print("printed output identical apart from times: %s" % ("yes" if same else "NO"))
PY
