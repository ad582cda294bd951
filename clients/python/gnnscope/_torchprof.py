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

Memory: torch without Kineto (Debian's 1.13) writes no `[memory]` events
into the trace although profile_memory records every allocation and
free. When the trace is such a bare array and holds none, the recorded
ones are appended in Kineto's shape (instant events "[memory]", args
"Device Type", "Device Id", "Bytes", "Total Allocated"), on the trace's
time base (the record's time minus the profiler's trace start).
"Total Allocated" is the running sum of the window's allocations and
frees, per device, raised by its lowest point: what was allocated before
the window and freed in it would make the sum negative, so it is a lower
bound of what torch held, not the allocator's total (args "gnnscope"
says so). No "Total Reserved": the CPU does not tell it. A trace that
Kineto wrote (a JSON object, its own memory events) is left as it is.
"""

import json
import os
import tempfile
import time

DEFAULT_WARMUP = 3
MAX_READ = 256 << 20  # traces larger than this are not read back
MEMORY = "[memory]"
LEGACY_PID = "CPU functions"  # the pid torch without Kineto writes
MEMORY_NOTE = "running sum of the window's allocations and frees, from its lowest point"
CHUNK = 1 << 20


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
        export(prof, self.path)

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


def export(prof, path):
    """Writes prof's Chrome trace to path, private, with the memory
    records a trace without Kineto lacks (see the module's doc)."""
    prof.export_chrome_trace(path)
    try:
        add_memory(prof, path)
    except Exception:  # the trace as torch wrote it is still a trace
        pass
    try:
        os.chmod(path, 0o600)  # private, as the run's journal
    except OSError:
        pass


def memory_records(prof):
    """The profiler's memory records as (ts µs on the exported trace's
    time base, thread, device type, device id, bytes), in time order;
    [] when prof does not give them."""
    try:
        res = prof.profiler.kineto_results
        origin = int(res.trace_start_us())
        evs = res.events()
    except Exception:
        return []
    out = []
    for e in evs:
        try:
            if e.name() != MEMORY:
                continue
            idx = int(e.device_index())
            out.append((int(e.start_us()) - origin, int(e.start_thread_id()),
                        int(e.device_type()), idx - 256 if idx > 127 else idx,
                        int(e.nbytes())))
        except Exception:
            continue
    out.sort(key=lambda r: r[0])  # stable: records at one time keep their order
    return out


def memory_events(records, pid=LEGACY_PID):
    """Kineto-shaped [memory] instant events for records (as
    memory_records gives them): Total Allocated is the running sum per
    device, raised by its lowest point (0 counts: the window's start)."""
    low, run = {}, {}
    for _, _, typ, dev, n in records:
        k = (typ, dev)
        run[k] = run.get(k, 0) + n
        low[k] = min(low.get(k, 0), run[k])
    run = {}
    out = []
    for ts, tid, typ, dev, n in records:
        k = (typ, dev)
        run[k] = run.get(k, 0) + n
        out.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": MEMORY,
                    "pid": pid, "tid": tid, "ts": ts,
                    "args": {"Device Type": typ, "Device Id": dev, "Bytes": n,
                             "Total Allocated": run[k] - low[k], "gnnscope": MEMORY_NOTE}})
    return out


def _tail(f, size):
    """The trace's last non-space byte and its offset (b"", -1 if none)."""
    pos = size
    while pos > 0:
        n = min(pos, 4096)
        f.seek(pos - n)
        b = f.read(n).rstrip()
        if b:
            return b[-1:], pos - n + len(b) - 1
        pos -= n
    return b"", -1


def _legacy_without_memory(f, size):
    """Whether the open trace is a bare JSON array without [memory]
    events: the offset of its closing bracket and whether anything
    precedes it, or (-1, False)."""
    last, end = _tail(f, size)
    if last != b"]":
        return -1, False
    f.seek(0)
    head, prev, items = b"", b"", False
    key = json.dumps(MEMORY).encode()
    pos = 0
    while pos < end:
        b = f.read(min(CHUNK, end - pos))
        if not b:
            return -1, False
        if pos == 0:
            head = b.lstrip()
            if head[:1] != b"[":
                return -1, False
            items = bool(head[1:].strip())
        elif b.strip():
            items = True
        if key in prev[-len(key):] + b:
            return -1, False
        prev, pos = b, pos + len(b)
    return end, items


def add_memory(prof, path):
    """Appends prof's memory records to the trace at path as [memory]
    events when it is a bare array (torch without Kineto) that has none;
    the file is copied in chunks to a temporary one that replaces it.
    Returns the number of events added."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return 0
    if size > MAX_READ:
        return 0
    with open(path, "rb") as f:
        end, items = _legacy_without_memory(f, size)
        if end < 0:
            return 0
        evs = memory_events(memory_records(prof))
        if not evs:
            return 0
        d = os.path.dirname(path) or "."
        fd, tmp = tempfile.mkstemp(dir=d, prefix=os.path.basename(path) + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                f.seek(0)
                left = end
                while left > 0:
                    b = f.read(min(CHUNK, left))
                    if not b:
                        raise OSError("%s: shorter than it was" % path)
                    out.write(b)
                    left -= len(b)
                for i, ev in enumerate(evs):
                    out.write(b", " if items or i else b"")
                    out.write(json.dumps(ev, separators=(", ", ": ")).encode())
                out.write(b"]")
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    return len(evs)


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
