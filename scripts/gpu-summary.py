#!/usr/bin/env python3
"""Summarize a gpu-acceptance.sh output folder into OUT/summary.md (and
print it). Standard library only; every part is optional, so a run cut off
midway still gets a summary of what it finished.

    python3 scripts/gpu-summary.py OUT
"""

import glob
import json
import os
import re
import statistics
import sys


def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None


def read(p):
    try:
        with open(p) as f:
            return f.read()
    except OSError:
        return ""


def steps(out):
    s = read(os.path.join(out, "steps.txt")).rstrip()
    return ["## Steps", "", "```", s or "(none finished)", "```", ""] if s else []


def tests(out):
    lines = []
    for p in sorted(glob.glob(os.path.join(out, "*.test.txt"))):
        t = read(p)
        passed = len(re.findall(r"^--- PASS", t, re.M))
        failed = re.findall(r"^--- FAIL: (\S+)", t, re.M)
        skipped = len(re.findall(r"^--- SKIP", t, re.M))
        races = t.count("WARNING: DATA RACE")
        verdict = "PASS" if re.search(r"^PASS$", t, re.M) and not failed else "FAIL"
        lines.append(f"| {os.path.basename(p)[:-4]} | {verdict} | {passed} | {skipped} | {', '.join(failed) or '-'} | {races} |")
    if not lines:
        return []
    return ["## Test binaries", "", "| binary | verdict | passed | skipped | failed | races |", "|---|---|---|---|---|---|"] + lines + [""]


def gpucheck(out):
    g = load(os.path.join(out, "gpucheck.json"))
    if not g:
        return []
    h = g.get("host", {})
    lines = ["## GPU", "", f"{h.get('gpu')} ({h.get('gpu_mem', 0)/2**30:.1f} GiB), driver {h.get('driver')}; NVML: {g.get('nvml')}; GEMM: {h.get('gemm', g.get('gemm', '?'))}", ""]
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
        lines += ["## Memory: allocator against NVML (gpucheck --memory)", "", "```", json.dumps(m, indent=1), "```", ""]
    return lines


def own_gemm(out):
    g = load(os.path.join(out, "gpucheck-own.json"))
    if not g or not g.get("bench"):
        return []
    lines = ["## Kernel speed with the own GEMM kernel (gpucheck --gemm own)", "", f"checks failed: {g.get('failed')}", "",
             "| kernel | shape | ms/call | rate |", "|---|---|---|---|"]
    for b in g["bench"]:
        lines.append(f"| {b['op']} | {b['shape']} | {b['seconds']*1e3:.3f} | {b['rate']:.1f} {b['unit']} |")
    return lines + [""]


def client(out):
    lines = []
    for p in sorted(glob.glob(os.path.join(out, "client-*.json"))):
        r = load(p)
        if r is None:
            lines.append(f"| {os.path.basename(p)[7:-5]} | (no result) |")
            continue
        runs = r if isinstance(r, list) else r.get("runs", [r]) if isinstance(r, dict) else []
        for run in runs:
            if isinstance(run, dict):
                lines.append(f"| {os.path.basename(p)[7:-5]} | {json.dumps({k: run.get(k) for k in ('run', 'name', 'status', 'error') if k in run})} |")
    if not lines:
        return []
    return ["## PyTorch client runs", "", "| run | result |", "|---|---|"] + lines + [""]


def cora(out):
    runs = {}
    for p in sorted(glob.glob(os.path.join(out, "cora", "*.json"))):
        r = load(p)
        if not r or "test_acc" not in r:
            continue
        dev, rest = os.path.basename(p)[:-5].split("-", 1)
        sched, seed = rest.rsplit("-s", 1)
        runs.setdefault(sched, {}).setdefault(dev, []).append(r)
    if not runs:
        return []
    lines = ["## Cora: cpu against cuda (seeds as run; accuracy mean, epoch time median)", "",
             "| schedule | cpu test acc | cuda test acc | diff (points) | cpu epoch s | cuda epoch s | cuda peak MiB |", "|---|---|---|---|---|---|---|"]
    for sched, d in sorted(runs.items()):
        c, g = d.get("cpu", []), d.get("cuda", [])
        ca = statistics.mean(r["test_acc"] for r in c) if c else float("nan")
        ga = statistics.mean(r["test_acc"] for r in g) if g else float("nan")
        ce = statistics.median(r["epoch_s"] for r in c) if c else float("nan")
        ge = statistics.median(r["epoch_s"] for r in g) if g else float("nan")
        pk = statistics.median(r.get("peak_bytes", 0) for r in g) / 2**20 if g else float("nan")
        lines.append(f"| {sched} | {ca:.4f} ({len(c)}) | {ga:.4f} ({len(g)}) | {100*(ga-ca):+.2f} | {ce:.4f} | {ge:.4f} | {pk:.1f} |")
    f = read(os.path.join(out, "cora", "failures.txt")).strip()
    if f:
        lines += ["", "failures:", "```", f, "```"]
    return lines + [""]


def journals(out):
    rows = []
    for p in sorted(glob.glob(os.path.join(out, "home", "sessions", "*", "runs", "*.jsonl"))):
        peak = used = 0
        epochs = []
        start = {}
        for line in open(p, errors="replace"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            t = e.get("t")
            if t == "mem":
                peak = max(peak, e.get("peak", 0))
            elif t == "gpu":
                used = max(used, e.get("used", 0))
            elif t == "epoch" and "dur" in e:
                epochs.append(e["dur"] / 1e9)
            elif t == "run_start":
                start = e
        rows.append((os.path.basename(os.path.dirname(os.path.dirname(p))), os.path.basename(p)[:-6], peak, used, epochs, start.get("host", {}).get("gemm", "")))
    if not rows:
        return []
    lines = ["## Runs in the session home (allocator batch peak, NVML device use, epoch times)", "",
             "| session | run | batch peak MiB | NVML used MiB | epochs s | gemm |", "|---|---|---|---|---|---|"]
    for sess, name, peak, used, ep, gemm in rows:
        lines.append(f"| {sess[:24]} | {name} | {peak/2**20:.1f} | {used/2**20:.1f} | {', '.join(f'{x:.2f}' for x in ep)} | {gemm} |")
    return lines + [""]


def clocks(out):
    """The mapping of CUDA-event times onto the host clock, read off each
    run's journal: for every batch, the device span of its training step
    (gpu.train) against the host span that queued it (train). A device
    span cannot start before the host queued its work, so a negative start
    offset is the mapping's error; its trend over the run is the drift."""
    rows = []
    for p in sorted(glob.glob(os.path.join(out, "home", "sessions", "*", "runs", "*.jsonl"))):
        host, dev = {}, {}
        for line in open(p, errors="replace"):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("t") != "span":
                continue
            k = (e.get("epoch"), e.get("batch"))
            if e.get("name") == "train" and e.get("lane") == "compute":
                host[k] = e["start"]
            elif e.get("name") == "gpu.train":
                dev[k] = e["start"]
        ks = sorted(set(host) & set(dev))
        if len(ks) < 3:
            continue
        xs = [host[k] / 1e9 for k in ks]
        ys = [(dev[k] - host[k]) / 1e3 for k in ks]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        var = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var > 0 else float("nan")
        q = sorted(ys)
        rows.append(f"| {os.path.basename(p)[:-6]} | {len(ks)} | {statistics.median(ys):.1f} | {q[len(q)//20]:.1f} | {q[len(q)*19//20]:.1f} | "
                    f"{sum(1 for y in ys if y < 0)} | {slope:.2f} over {xs[-1]-xs[0]:.1f} s |")
    if not rows:
        return []
    return ["## Clock mapping: device span start minus host span start per batch (training step)", "",
            "| run | batches | median µs | p5 µs | p95 µs | device first | drift µs/s |", "|---|---|---|---|---|---|---|"] + rows + [""]


def pyg(out):
    lines = []
    for p in sorted(glob.glob(os.path.join(out, "pyg-*.json"))):
        py = load(p)
        if not py:
            continue
        lines.append(f"| {os.path.basename(p)[4:-5]} | {py.get('framework')} {py.get('pyg')} (torch {py.get('torch')}) | {py.get('sampler')} | "
                     f"{py.get('epoch_s', 0):.3f} | {py.get('epoch_s_after_first')} | {py.get('test_acc', 0):.4f} | {(py.get('peak_bytes') or 0)/2**20:.1f} |")
    if not lines:
        return []
    return ["## PyG on the same graph", "", "| config | framework | sampler | epoch s | after first | test acc | peak MiB |", "|---|---|---|---|---|---|---|"] + lines + [""]


def main():
    out = sys.argv[1]
    lines = ["# gnnscope CUDA acceptance", ""]
    lines += steps(out) + tests(out) + gpucheck(out) + own_gemm(out) + cora(out)
    for name in ["products-compare.md", "gpu-data-compare.md", "gpu-data-sampling.md", "client-compare.md"]:
        t = read(os.path.join(out, name)).rstrip()
        if t:
            lines += [f"## {name[:-3]}", "", t, ""]
    lines += journals(out) + clocks(out) + pyg(out) + client(out)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
