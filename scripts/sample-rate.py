#!/usr/bin/env python3
"""Sampling rate and data placement of the runs under a gnnscope home.

Usage: sample-rate.py DIR [OUT.md]

DIR is a gnnscope home or one session's folder. For every run journal
under it (sessions/*/runs/*.jsonl, or runs/*.jsonl) it prints one Markdown
row: the variant, its feature store and sampler device as configured, the
placement lines of its plan (run_start's adjusted lines that start with
"features:" or "sampler:"), the lane of its sample spans, the edges they
sampled, the sampled edges per second over their summed durations and
the median of the spans' own rates, and the run's seconds per epoch.
Spans record their edges and rate as attrs (gnn/train's sampleSpan).
"""
import glob
import json
import os
import statistics
import sys


def runs(home):
    paths = glob.glob(os.path.join(home, "sessions", "*", "runs", "*.jsonl")) + glob.glob(os.path.join(home, "runs", "*.jsonl"))
    for path in sorted(paths):
        start, end, edges, dur, rates, lanes = None, None, 0, 0, [], set()
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("t") == "run_start":
                    start = e
                elif e.get("t") == "run_end":
                    end = e
                elif e.get("t") == "span" and e.get("name") == "sample":
                    a = e.get("attrs") or {}
                    lanes.add(e.get("lane", ""))
                    edges += a.get("edges", 0)
                    dur += e.get("dur", 0)
                    if "edges_per_s" in a:
                        rates.append(a["edges_per_s"])
        if start is None:
            continue
        yield path, start, end, edges, dur, rates, lanes


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = ["| variant | features | sampler | plan | sample lanes | edges | edges/s (sum) | edges/s (median span) | s/epoch |",
            "|---|---|---|---|---|---|---|---|---|"]
    for path, start, end, edges, dur, rates, lanes in runs(sys.argv[1]):
        cfg = start.get("config") or {}
        plan = "; ".join(l for l in start.get("adjusted") or [] if l.startswith(("features:", "sampler:")))
        summ = (end or {}).get("summary") or {}
        rate = f"{edges / (dur / 1e9):.3g}" if dur > 0 else ""
        med = f"{statistics.median(rates):.3g}" if rates else ""
        epoch = f"{summ['epoch_s']:.3g}" if "epoch_s" in summ else ""
        rows.append(f"| {start.get('variant') or os.path.basename(path)} | {cfg.get('feature_store', '')} | "
                    f"{cfg.get('sampler_device', '')} | {plan} | {', '.join(sorted(lanes))} | {edges} | {rate} | {med} | {epoch} |")
    text = "\n".join(rows) + "\n"
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
