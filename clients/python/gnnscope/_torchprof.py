"""Capture a window of training steps with torch.profiler
(GNNSCOPE_TORCH_PROFILE=STEPS; `gnnscope run --torch-profile STEPS`).

After WARMUP optimizer steps (GNNSCOPE_TORCH_PROFILE_WARMUP, default 3)
the profiler starts with schedule(wait=0, warmup=1, active=STEPS): one
more step warms it up, the next STEPS are recorded, each a `ProfilerStep#`
range from the end of one optimizer step to the end of the next (the
client calls prof.step() right after each step's end). The Chrome trace
is written next to the run's journal, runs/<run>.torch.json
(runs/<run>.rank<R>.torch.json for rank R > 0).

The journal gets, on lane `profiler`:

* one `profiler.step` span per recorded step, with the epoch and batch
  whose optimizer step ends it and attrs {"step": i} (i = 0, 1, ...: the
  order of the trace's ProfilerStep ranges, whose numbers differ between
  torch versions); a window cut short by the program's end has a last
  step from the last optimizer step to the end, attrs "tail": true, with
  the last batch's epoch and batch;
* one `torch.profile` span over the window, attrs {"trace": file name,
  "steps": STEPS, "offset_ns": O, "align": how O was found}.

A trace time maps onto the run's clock as
    run_ns = round(ts * 1000) + baseTimeNanoseconds - O
(ts in µs as the trace writes it, baseTimeNanoseconds 0 when the trace has
none). align "steps": O is the median of trace minus journal over the
recorded steps' starts and ends (the trace was read back; its time base
differs between builds: torch without Kineto writes times from the
profiler's start); align "wall": the trace could not be read, and O is the
wall-clock time of the run's start (Kineto's absolute wall-clock times).
"""

import json
import os
import time

DEFAULT_WARMUP = 3
MAX_READ = 256 << 20  # traces larger than this are not read back


def steps_from_env(env):
    """(steps, warmup) from GNNSCOPE_TORCH_PROFILE(_WARMUP); steps 0 = off."""
    def num(name, default):
        try:
            return max(int(env.get(name, "").strip() or default), 0)
        except ValueError:
            return default
    return num("GNNSCOPE_TORCH_PROFILE", 0), max(num("GNNSCOPE_TORCH_PROFILE_WARMUP",
                                                    DEFAULT_WARMUP), 1)


def trace_path(journal_path):
    """The trace file beside a journal: <run>[.rank<R>].torch.json."""
    base = journal_path[:-len(".jsonl")] if journal_path.endswith(".jsonl") else journal_path
    return base + ".torch.json"


class TorchProfile:
    """Drives torch.profiler over a window of optimizer steps for a
    Client; on_step(end_mark, epoch, batch) is called at every step end."""

    def __init__(self, torch, client, steps, warmup=DEFAULT_WARMUP):
        self.torch = torch
        self.c = client
        self.steps = steps
        self.warmup = warmup
        self.count = 0      # optimizer steps seen
        self.prof = None
        self.calls = 0      # prof.step() calls
        self.marks = []     # (before, after) host ns around each prof.step()
        self.keys = []      # (epoch, batch) of the step ending each call
        self.path = None
        self.done = False
        self.error = None

    def on_step(self, end_ns, epoch, batch):
        """An optimizer step ended at end_ns (run clock)."""
        if self.done:
            return
        self.count += 1
        if self.prof is None:
            if self.count >= self.warmup:
                self._start()
            return
        before = end_ns  # the caller calls right at the step's end
        self.prof.step()
        after = self.c.now()
        self.calls += 1
        self.marks.append((before, after))
        self.keys.append((epoch, batch))
        if self.calls > self.steps:  # the last recorded step has ended
            self._finish()

    def _start(self):
        tp = self.torch.profiler
        acts = [tp.ProfilerActivity.CPU]
        if self.c.cuda() is not None:
            acts.append(tp.ProfilerActivity.CUDA)
        self.c._open()
        j = self.c.journal
        self.path = trace_path(j.path if j is not None else self.c.path)
        self.wall = time.time_ns() - self.c.now()
        self.prof = tp.profile(activities=acts, profile_memory=True,
                               schedule=tp.schedule(wait=0, warmup=1, active=self.steps,
                                                    repeat=1),
                               on_trace_ready=self._ready)
        self.prof.start()

    def _ready(self, prof):
        prof.export_chrome_trace(self.path)
        try:
            os.chmod(self.path, 0o600)  # private, as the run's journal
        except OSError:
            pass

    def _finish(self):
        self.done = True
        try:
            self.prof.stop()
        except Exception:
            pass
        self.prof = None
        self.write()

    def close(self):
        """At exit: a window cut short still writes what it recorded."""
        if self.prof is None or self.done:
            return
        self.done = True
        now = self.c.now()
        try:
            self.prof.stop()  # ends the open step; saves when recording
        except Exception:
            pass
        self.marks.append((now, now))
        self.keys.append(None)  # the step open at the end trained no batch
        self.prof = None
        if os.path.exists(self.path or ""):
            self.write()

    def recorded(self):
        """The recorded steps as (start, end, epoch, batch), in order: the
        step begun by call i (after its warm-up call) ends at call i+1."""
        out = []
        for i in range(1, min(len(self.marks) - 1, self.steps) + 1):
            start = self.marks[i - 1][1]
            end = self.marks[i][0]
            key = self.keys[i] or self.keys[i - 1] + ("tail",)
            out.append((start, end) + key)
        return out

    def write(self):
        steps = self.recorded()
        if not steps:
            return
        c = self.c
        for i, st in enumerate(steps):
            a = {"step": i}
            if len(st) > 4:
                a["tail"] = True
            c.span("profiler.step", (st[0], None), (st[1], None), st[2], st[3], "profiler", a)
        off, align = measured_offset(self.path, steps)
        if off is None:
            off, align = self.wall, "wall"
        ep, b = steps[0][2], steps[0][3]
        c.span("torch.profile", (steps[0][0], None), (steps[-1][1], None), ep, b, "profiler",
               {"trace": os.path.basename(self.path), "steps": len(steps),
                "offset_ns": int(off), "align": align})


def read_steps(path):
    """The trace's ProfilerStep ranges as sorted (start ns, end ns) on
    its own time base (see the module's doc), or None."""
    try:
        if os.path.getsize(path) > MAX_READ:
            return None
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    base = 0
    if isinstance(doc, dict):
        try:
            base = int(doc.get("baseTimeNanoseconds") or 0)
        except (TypeError, ValueError):
            base = 0
        doc = doc.get("traceEvents")
    if not isinstance(doc, list):
        return None
    out = []
    for ev in doc:
        if not isinstance(ev, dict) or ev.get("ph") != "X" \
                or ev.get("cat") == "gpu_user_annotation":  # the GPU's copy of a range
            continue
        name = ev.get("name")
        if not isinstance(name, str) or not name.startswith("ProfilerStep#"):
            continue
        try:
            ts, dur = float(ev["ts"]), float(ev["dur"])
        except (KeyError, TypeError, ValueError):
            continue
        start = round(ts * 1000) + base
        out.append((start, start + round(dur * 1000)))
    out.sort()
    return out


def measured_offset(path, steps):
    """The offset (trace ns minus run ns) that puts the trace's
    ProfilerStep ranges on the recorded steps: the median over their
    starts and ends; (None, "") when the trace does not tell."""
    got = read_steps(path)
    if not got or len(got) != len(steps):
        return None, ""
    d = []
    for (ts, te), st in zip(got, steps):
        d += [ts - st[0], te - st[1]]
    d.sort()
    n = len(d)
    mid = d[n // 2] if n % 2 else (d[n // 2 - 1] + d[n // 2]) // 2
    return mid, "steps"


def install(torch, client, rec, env=None):
    """Start capturing when GNNSCOPE_TORCH_PROFILE asks for it; returns the
    TorchProfile or None."""
    env = os.environ if env is None else env
    steps, warmup = steps_from_env(env)
    if steps <= 0 or getattr(torch, "profiler", None) is None:
        return None
    tp = TorchProfile(torch, client, steps, warmup)
    rec.tprof = tp
    client.closing.insert(0, tp.close)
    return tp
