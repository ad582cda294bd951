"""Check a journal's per-batch stage coverage.

For every training batch with a sample span, its wall time runs from its
sample's start to the next batch's sample start in the same epoch (the last
batch of an epoch: to its train span's end); its recorded stages are its
sample, transfer and train spans. A batch is covered when the stages sum to
within tol (5 %) of its wall time.

    python3 -m gnnscope.fidelity RUN.jsonl [--tol 0.05]
"""

import json
import sys


def batches(events):
    """[(epoch, batch, stages_ns, wall_ns)] of a journal's events."""
    per = {}
    for e in events:
        if e.get("t") != "span" or e.get("lane", "compute") != "compute":
            continue
        if e["name"] in ("sample", "transfer", "train"):
            per.setdefault((e["epoch"], e["batch"]), {})[e["name"]] = (e["start"], e["dur"])
    out = []
    keys = sorted(k for k in per if "sample" in per[k] and "train" in per[k])
    for i, k in enumerate(keys):
        st = per[k]
        s0 = st["sample"][0]
        nxt = keys[i + 1] if i + 1 < len(keys) else None
        if nxt is not None and nxt[0] == k[0]:
            end = per[nxt]["sample"][0]
        else:
            end = st["train"][0] + st["train"][1]
        total = sum(d for _, d in st.values())
        out.append((k[0], k[1], total, end - s0))
    return out


def coverage(events, tol=0.05):
    """(covered batches, batches, worst ratio of stages to wall)."""
    bs = batches(events)
    ok = 0
    worst = 1.0
    for _, _, total, wall in bs:
        r = total / wall if wall > 0 else 1.0
        worst = min(worst, r) if r <= 1 else (worst if abs(1 - worst) > abs(1 - r) else r)
        if abs(1 - r) <= tol:
            ok += 1
    return ok, len(bs), worst


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def main(argv):
    tol = 0.05
    if "--tol" in argv:
        i = argv.index("--tol")
        tol = float(argv[i + 1])
        del argv[i:i + 2]
    for path in argv:
        ok, n, worst = coverage(read(path), tol)
        print("%s: %d/%d batches covered within %.0f%% (%.1f%%), worst ratio %.3f"
              % (path, ok, n, tol * 100, 100.0 * ok / max(n, 1), worst))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
