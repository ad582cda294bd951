#!/usr/bin/env python3
"""Print the tables of scripts/bench-vs-torch.sh from its output folder:
medians of the interleaved repeats, their ratios, the load averages the
runs started under, and what the data of each dataset needs in memory.

    python3 scripts/bench-vs-torch-summary.py RUNS_DIR

Reads kernels-{gnnscope,torch}-tT-rR.json (gnnscope bench --json and
scripts/bench-torch-kernels.py: the same keys), train-DS-rR-{gnnscope,torch}.json
(gnnscope train --json, scripts/torch-sage-reference.py) and, beside each,
.time (/usr/bin/time -v) and .load (/proc/loadavg before the run).
Standard library only.
"""

import glob
import json
import os
import re
import statistics
import sys


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def max_rss(base):
    """Maximum resident set size in bytes from /usr/bin/time -v, or None."""
    try:
        with open(base + ".time") as f:
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", f.read())
        return int(m.group(1)) * 1024 if m else None
    except OSError:
        return None


def load1(base):
    try:
        with open(base + ".load") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def times(r):
    return "-" if r is None else f"{r:.2f}x"


def gib(b):
    return "-" if b is None else f"{b / 2**30:.2f} GiB"


def loads(bases):
    ls = [x for x in (load1(b) for b in bases) if x is not None]
    return f"load {min(ls):.2f}-{max(ls):.2f} (median {statistics.median(ls):.2f})" if ls else "load unknown"


def kernel_rows(doc):
    """(key, path, rate, rate per CPU-second, unit, refusal) of every gemm
    and gather figure of one bench JSON (gnnscope's or torch's)."""
    rows = []
    for g in (doc or {}).get("gemm") or []:
        k = ("gemm", g.get("M"), g.get("K"), g.get("N"), bool(g.get("TransA")), bool(g.get("TransB")), g.get("Threads"))
        rows.append((k, g.get("Kernel") or "", g.get("GFLOPS"), g.get("GFLOPSPerCPUSecond"), "GFLOP/s",
                     g.get("Refused") or ""))
    for g in (doc or {}).get("gather") or []:
        k = ("gather", g.get("Rows"), g.get("Cols"), g.get("N"), False, False, g.get("Threads"))
        rows.append((k, g.get("Kernel") or "index_select", g.get("GatherGBps"), g.get("GatherGBpsPerCPUSecond"),
                     "GB/s", g.get("Refused") or ""))
    return rows


def best_path(paths):
    """The fastest path whose figures were never refused: (name, rate,
    per CPU-second) from {name: (rates, per-CPU rates, refusals)}, or None."""
    best = None
    for name, (rates, per_cpu, refused) in paths.items():
        if refused:
            continue
        r = med(rates)
        if r is not None and (best is None or r > best[1]):
            best = (name, r, med(per_cpu))
    return best


def peaks(d):
    """The FMA peaks of gnnscope's runs: their median per thread count,
    {threads: (GFLOP/s, GFLOP/s per CPU-second)}, and each file's own,
    {item_of(file): GFLOP/s} (a product's share of the peak measured
    seconds before it is less at the mercy of a host whose speed drifts
    than its share of a median)."""
    got, beside = {}, {}
    for f in glob.glob(os.path.join(d, "kernels-gnnscope-*.json")):
        for p in (read_json(f) or {}).get("peak") or []:
            if p.get("Supported"):
                e = got.setdefault(p.get("Threads"), ([], []))
                e[0].append(p.get("GFLOPS"))
                e[1].append(p.get("GFLOPSPerCPUSecond"))
                if p.get("GFLOPS"):
                    beside[item_of(f)] = p["GFLOPS"]
    return {t: (med(a), med(b)) for t, (a, b) in got.items()}, beside


def share(rate, per_cpu, peak):
    """A rate's share of the peak, by wall and by CPU time: "81% / 83%"."""
    if rate is None or not peak or not peak[0]:
        return "-"
    s = f"{100 * rate / peak[0]:.0f}%"
    if per_cpu and peak[1]:
        s += f" / {100 * per_cpu / peak[1]:.0f}%"
    return s


def kernel_name(k):
    kind, a, b, c, ta, tb, t = k
    if kind == "gather":
        return f"gather {c} rows of {a}x{b}, {t} thr"
    op = ("A'" if ta else "A") + ("B'" if tb else "B")
    return f"gemm {a}x{b}x{c} {op}, {t} thr"


FILE_RE = re.compile(r"kernels-(gnnscope|torch)-t(\d+)-r(\d+)(?:-s(\d+))?(?:-blas)?\.json$")


def repeat_of(path):
    """The repeat number of a kernels file (its -rR), or None."""
    m = FILE_RE.search(os.path.basename(path))
    return int(m.group(3)) if m else None


def item_of(path):
    """(threads, repeat, item) of a kernels file: the files of one item of
    one repeat, gnnscope's and torch's, share it. None if unnamed."""
    m = FILE_RE.search(os.path.basename(path))
    return (int(m.group(2)), int(m.group(3)), int(m.group(4) or 0)) if m else None


def pct(xs):
    return f"{100 * statistics.median(xs):.0f}%" if xs else "-"


def paired_ratios(own_by_rep, path_by_rep):
    """gnnscope's rate over the best path's in each repeat both ran (the two
    ran one after the other, item by item): a list, in repeat order."""
    return [own_by_rep[r] / path_by_rep[r] for r in sorted(own_by_rep)
            if r in path_by_rep and own_by_rep[r] is not None and path_by_rep[r]]


def spread(xs):
    """"1.04 (0.97-1.12)": the median of per-repeat ratios and their range."""
    if not xs:
        return "-"
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"


def kernels(d):
    files = sorted(glob.glob(os.path.join(d, "kernels-gnnscope-*.json")))
    if not files:
        return
    own, ref = {}, {}
    own_rep, ref_rep = {}, {}  # per repeat: {k: {r: rate}}, {k: {path: {r: rate}}}
    peak, beside = peaks(d)
    own_share, ref_share = {}, {}  # shares of the peak beside: {k: [..]}, {k: {path: [..]}}
    for f in files:
        rep, pk = repeat_of(f), beside.get(item_of(f))
        for k, _, rate, per_cpu, unit, _ in kernel_rows(read_json(f)):
            if pk and rate and k[0] == "gemm":
                own_share.setdefault(k, []).append(rate / pk)
            e = own.setdefault(k, (unit, [], []))
            e[1].append(rate)
            e[2].append(per_cpu)
            own_rep.setdefault(k, {})[rep] = rate
    for f in glob.glob(os.path.join(d, "kernels-torch-*.json")):
        rep, pk = repeat_of(f), beside.get(item_of(f))
        for k, path, rate, per_cpu, _, why in kernel_rows(read_json(f)):
            if pk and rate and k[0] == "gemm":
                ref_share.setdefault(k, {}).setdefault(path, []).append(rate / pk)
            e = ref.setdefault(k, {}).setdefault(path, ([], [], []))
            e[0].append(rate)
            e[1].append(per_cpu)
            if why:
                e[2].append(why)
            ref_rep.setdefault(k, {}).setdefault(path, {})[rep] = rate
    bases = [f[:-5] for f in glob.glob(os.path.join(d, "kernels-*.json"))]
    runs = len({repeat_of(f) for f in files})
    print(f"\n## Kernels (medians of {runs} interleaved repeats; {loads(bases)})\n")
    if peak:
        print("FMA peak (gnnscope bench, its micro-kernel's registers), per second / per CPU-second: "
              + ", ".join(f"{t} thr {fmt(v[0], '.1f')} / {fmt(v[1], '.1f')} GFLOP/s"
                          for t, v in sorted(peak.items())) + "\n")
    print("Rates: per second / per CPU-second. Torch figures whose CPU over wall time was off "
          "the threads given (over 1.15x, or under 0.6x above one thread) are marked refused "
          "and are no best. gnnscope/best is the ratio of the medians; paired, the median "
          "(and range) of each repeat's own ratio, the two sides having run that item one "
          "right after the other. FMA-peak shares: of the median peak above, per second / per "
          "CPU-second, gnnscope's then the best path's; beside, each figure's share of the peak "
          "gnnscope measured right before that item (median over the repeats).\n")
    print("| kernel | torch paths | best torch | gnnscope | gnnscope/best | paired "
          "| FMA-peak share gnnscope, torch | share of the peak beside, gnnscope, torch |")
    print("|---|---|---|---|---|---|---|---|")
    for k in sorted(own, key=lambda k: (k[0], k[6], k[1:6])):
        unit, rates, per_cpu = own[k]
        a, a_cpu = med(rates), med(per_cpu)
        paths = ref.get(k, {})
        cells = []
        for name in sorted(paths):
            r, rc, why = paths[name]
            cells.append(f"{name} {fmt(med(r))} / {fmt(med(rc))}" + (f" (refused: {why[0]})" if why else ""))
        best = best_path(paths)
        best_cell = f"{best[0]} {fmt(best[1])} / {fmt(best[2])} {unit}" if best else "-"
        paired = spread(paired_ratios(own_rep.get(k, {}), ref_rep.get(k, {}).get(best[0], {}))) if best else "-"
        shares = "-"
        if k[0] == "gemm" and peak.get(k[6]):
            shares = share(a, a_cpu, peak[k[6]]) + ", " + (share(best[1], best[2], peak[k[6]]) if best else "-")
        near = "-"
        if k in own_share:
            near = pct(own_share[k]) + ", " + (pct(ref_share.get(k, {}).get(best[0], [])) if best else "-")
        print(f"| {kernel_name(k)} | {'; '.join(cells) or '-'} | {best_cell} | {fmt(a)} / {fmt(a_cpu)} {unit} "
              f"| {fmt(ratio(a, best[1] if best else None), '.2f')} | {paired} | {shares} | {near} |")
    if not ref:
        print("\n(no torch side: scripts/bench-torch-kernels.py missing or failed)")


def needs(doc, cfg):
    """What the data needs: features, CSR (int64 row pointers, int32
    columns), parameters with gradients and Adam's two moments, and one
    layer's input and output activations over all nodes."""
    n, f, e = doc.get("nodes"), doc.get("features"), doc.get("edges")
    if not (n and f and e):
        return None
    hidden, layers = cfg.get("hidden", 64), cfg.get("layers", 2)
    classes = doc.get("classes") or 0
    dims = [f] + [hidden] * (layers - 1) + [classes]
    params = sum(2 * a * b + b for a, b in zip(dims[:-1], dims[1:]))
    parts = {
        "features": 4 * n * f,
        "csr": 8 * (n + 1) + 4 * e,
        "model+adam": 4 * 4 * params,
        "one layer": 4 * n * (max(f, hidden) + hidden),
    }
    return parts


def figure(doc, key):
    """setup_s, or the mean over the epochs of their train_s or eval_s (from
    the history: gnnscope's epoch_s counts the evaluation in)."""
    if key == "setup_s":
        return doc.get(key)
    xs = [h.get(key) for h in doc.get("history") or [] if h.get(key) is not None]
    return sum(xs) / len(xs) if xs else None


def train(d):
    runs = {}
    for f in glob.glob(os.path.join(d, "train-*-r*-gnnscope.json")):
        m = re.match(r"train-(.+)-r(\d+)-gnnscope\.json$", os.path.basename(f))
        runs.setdefault(m.group(1), []).append(int(m.group(2)))
    if not runs:
        return
    mem = []
    for ds in sorted(runs, key=lambda s: ["synth-tiny", "synth-small", "synth-medium", "synth-products"].index(s)
                     if s in ["synth-tiny", "synth-small", "synth-medium", "synth-products"] else 9):
        reps = sorted(runs[ds])
        g = {r: read_json(os.path.join(d, f"train-{ds}-r{r}-gnnscope.json")) or {} for r in reps}
        t = {r: read_json(os.path.join(d, f"train-{ds}-r{r}-torch.json")) or {} for r in reps}
        bases = [os.path.join(d, f"train-{ds}-r{r}-{s}") for r in reps for s in ("gnnscope", "torch")]
        print(f"\n## {ds}: GraphSAGE {cfg_line(t)} ({len(reps)} repeats; {loads(bases)})\n")
        if any((t[r].get("config") or {}).get("epochs") == 0 for r in reps):
            print("torch trained no epoch here (--epochs 0): its evaluation ran on the initial weights\n")
        print("| figure | gnnscope | torch | torch/gnnscope | per repeat |")
        print("|---|---|---|---|---|")
        for key, label in (("train_s", "training epoch (s)"), ("eval_s", "full evaluation (s)"), ("setup_s", "setup (s)")):
            a = med([figure(g[r], key) for r in reps])
            b = med([figure(t[r], key) for r in reps])
            per = " ".join(fmt(ratio(figure(t[r], key), figure(g[r], key)), ".2f") for r in reps)
            print(f"| {label} | {fmt(a)} | {fmt(b)} | {times(ratio(b, a))} | {per} |")
        a = med([g[r].get("test_acc") for r in reps])
        b = med([t[r].get("test_acc") for r in reps])
        print(f"| test accuracy after 1 epoch | {fmt(a, '.4f')} | {fmt(b, '.4f')} | | |")
        ra = med([max_rss(os.path.join(d, f"train-{ds}-r{r}-gnnscope")) for r in reps])
        rb = med([max_rss(os.path.join(d, f"train-{ds}-r{r}-torch")) for r in reps])
        print(f"| peak RSS | {gib(ra)} | {gib(rb)} | {times(ratio(rb, ra))} | |")
        mem.append((ds, needs(t[reps[0]], t[reps[0]].get("config") or {}), ra, rb, g[reps[0]].get("peak_bytes")))
    print("\n## Memory: what the data needs against each process's peak RSS\n")
    print("| dataset | features | CSR | model+Adam | one layer (N x (in+out)) | sum | gnnscope RSS | gnnscope peak_bytes | torch RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ds, p, ra, rb, peak in mem:
        if p is None:
            continue
        print(f"| {ds} | {gib(p['features'])} | {gib(p['csr'])} | {gib(p['model+adam'])} | {gib(p['one layer'])} "
              f"| {gib(sum(p.values()))} | {gib(ra)} | {gib(peak)} | {gib(rb)} |")


def cfg_line(t):
    for doc in t.values():
        c = doc.get("config")
        if c:
            return (f"{c['layers']}x{c['hidden']}, fanouts {c['fanout']}, batch {c['batch_size']}, "
                    f"{doc.get('threads')} threads")
    return ""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    try:
        with open(os.path.join(d, "header.txt")) as f:
            print(f.read().rstrip())
    except OSError:
        pass
    kernels(d)
    train(d)


if __name__ == "__main__":
    main()
