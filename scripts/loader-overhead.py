#!/usr/bin/python3
"""What the DataLoader worker lanes cost a loader-bound trainer.

Runs examples/pytorch/loader_lanes.py (two persistent workers, each
sample a fixed amount of CPU work, a tiny model: the trainer waits for its
loader) in three settings, interleaved ABC, CBA, ... so that drift of a
shared machine hits them alike:

  plain     no gnnscope at all
  auto      the zero-change instrumentation, worker lanes off
            (GNNSCOPE_LOADER_LANES=0)
  lanes     the zero-change instrumentation with worker lanes

Each run's epochs after the first (worker start-up) give epoch times; a
setting's figure is the median over its runs of the run's median epoch.
The worker lanes' cost is lanes over auto; the whole client's is lanes
over plain. The load average before and after is printed: on a busy
machine wall-clock figures are noise-bound, so the CPU time of each run's
process tree (the trainer and its workers, getrusage of the children) is
compared too: each sample's work is a fixed amount of CPU time, so the
difference of the medians over the runs is what the instrumentation
added, given as a share of the samples' CPU work (the epochs' worth of
work of a loader-bound trainer, whose workers are the bottleneck).

Last, the hooks alone are timed per batch (a stand-in worker loop with
and without them, the main process's two spans), against a batch's work.

    scripts/loader-overhead.py [--repeats 5] [--epochs 4] [--spin 0.0003]
    scripts/loader-overhead.py --repeats 0     # the per-batch timing only
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCRIPT = os.path.join(REPO, "examples", "pytorch", "loader_lanes.py")
CLIENT = os.path.join(REPO, "clients", "python")
PYTHON = "/usr/bin/python3"


def env_for(setting, journal):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GNNSCOPE_")}
    env["OMP_NUM_THREADS"] = "1"
    if setting == "plain":
        return env
    env.update(PYTHONPATH=CLIENT, GNNSCOPE_JOURNAL=journal, GNNSCOPE_RUN="overhead",
               GNNSCOPE_SESSION="overhead")
    if setting == "auto":
        env["GNNSCOPE_LOADER_LANES"] = "0"
    return env


def one(setting, a, d, k):
    j = os.path.join(d, "%s-%d.jsonl" % (setting, k))
    args = [PYTHON, SCRIPT, "--workers", "2", "--persistent", "--epochs", str(a.epochs),
            "--samples", str(a.samples), "--batch", str(a.batch), "--spin", str(a.spin)]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(args, env=env_for(setting, j), capture_output=True, text=True,
                       timeout=1800)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    if r.returncode != 0:
        sys.exit("%s run failed:\n%s" % (setting, r.stderr))
    times = [float(m) for m in re.findall(r"seconds ([0-9.]+)", r.stdout)]
    if setting == "lanes" and not os.path.exists(j):
        sys.exit("lanes run wrote no journal")
    return statistics.median(times[1:]), cpu


def _loop(iq, dq, init_fn):
    """torch's worker loop in miniature (the shape _workers hooks)."""
    init_fn(0)
    fetcher = _Fetcher()
    while True:
        r = iq.get()
        if r is None:
            return
        idx, index = r
        dq.put((idx, fetcher.fetch(index)))


class _Fetcher:
    def __init__(self):
        self.collate_fn = list

    def fetch(self, index):
        return self.collate_fn(index)


def micro(n=20000):
    """Per-batch cost of the hooks alone, in µs: the worker's (queue
    wrappers, collate timing, the index carrying the times through a
    pickle) and the main process's (two spans written)."""
    import pickle
    import queue
    import time
    sys.path.insert(0, CLIENT)
    from gnnscope import _client, _workers

    def worker(init):
        iq, dq = queue.Queue(), queue.Queue()
        for i in range(n):
            iq.put((i, [i]))
        iq.put(None)
        t = time.perf_counter()
        _loop(iq, dq, init)
        while not dq.empty():
            pickle.loads(pickle.dumps(dq.get(), protocol=pickle.HIGHEST_PROTOCOL))
        return (time.perf_counter() - t) / n * 1e6

    bare = statistics.median(worker(lambda w: None) for _ in range(5))
    hooked = statistics.median(worker(_workers.WorkerInit(None)) for _ in range(5))
    with tempfile.TemporaryDirectory() as d:
        c = _client.Client(os.path.join(d, "m.jsonl"))
        t = time.perf_counter()
        for i in range(n):
            c.span("fetch", (i, None), (i + 5, None), 1, i, "loader/0", {"samples": 8})
            c.span("collate", (i + 5, None), (i + 6, None), 1, i, "loader/0")
        spans = (time.perf_counter() - t) / n * 1e6
        c.shutdown()
    return hooked - bare, spans


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--spin", type=float, default=0.0003, help="CPU seconds per sample")
    a = p.parse_args()
    settings = ["plain", "auto", "lanes"]
    if a.repeats <= 0:
        w, m = micro()
        print("hooks alone per batch: worker %.1f µs, main process %.1f µs" % (w, m))
        return
    got = {s: [] for s in settings}
    cpu = {s: [] for s in settings}
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="gnnscope-overhead-") as d:
        for k in range(a.repeats):
            order = settings if k % 2 == 0 else settings[::-1]
            for s in order:
                t, c = one(s, a, d, k)
                got[s].append(t)
                cpu[s].append(c)
                print("repeat %d %-5s epoch median %.4f s, CPU %.3f s" % (k + 1, s, t, c), flush=True)
    load1 = os.getloadavg()
    med = {s: statistics.median(v) for s, v in got.items()}
    print()
    for s in settings:
        print("%-5s median epoch %.4f s (runs: %s)" % (s, med[s], " ".join("%.4f" % t for t in got[s])))
    print("worker lanes: %+.2f %% of epoch time (lanes over auto)" % (100 * (med["lanes"] / med["auto"] - 1)))
    print("whole client: %+.2f %% (lanes over plain)" % (100 * (med["lanes"] / med["plain"] - 1)))
    work = a.epochs * a.samples * a.spin
    mc = {s: statistics.median(v) for s, v in cpu.items()}
    for s in settings:
        print("%-5s median CPU %.3f s (runs: %s)" % (s, mc[s], " ".join("%.3f" % t for t in cpu[s])))
    print("worker lanes: %+.2f %% CPU of the samples' work (%.2f s): lanes minus auto"
          % (100 * (mc["lanes"] - mc["auto"]) / work, work))
    print("whole client: %+.2f %% CPU: lanes minus plain" % (100 * (mc["lanes"] - mc["plain"]) / work))
    w, m = micro()
    batch = a.batch * a.spin * 1e6
    print("hooks alone per batch: worker %.1f µs, main process %.1f µs; a batch's work %.0f µs"
          " (%.2f %% and %.2f %%)" % (w, m, batch, 100 * w / batch, 100 * m / batch))
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f; %d CPUs" % (
        load0 + load1 + (os.cpu_count() or 0,)))


if __name__ == "__main__":
    main()
