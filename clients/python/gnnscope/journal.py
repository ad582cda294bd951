"""The journal writer: schema-v1 JSON Lines on an append-only file.

Lines are buffered in memory and written whole with os.write on a file
opened with O_APPEND, at least every 200 ms (a background thread, plus a
check on every write) and at exit, so that a killed process leaves a journal
of whole lines up to its last flush (lines longer than WRITE_CHUNK
excepted).
"""

import atexit
import datetime
import os
import platform
import socket
import sys
import threading
import time

from . import _encode

FLUSH_INTERVAL = 0.2  # seconds
WRITE_CHUNK = 4096  # bytes per write: one page, written whole even under SIGKILL


def rank_world(env=None):
    """Return (rank, world, local_rank) from RANK, WORLD_SIZE, LOCAL_RANK.

    world is None when WORLD_SIZE is unset (not a distributed run).
    """
    env = os.environ if env is None else env

    def num(name):
        try:
            return int(env.get(name, ""))
        except ValueError:
            return None

    world = num("WORLD_SIZE")
    rank = num("RANK")
    local = num("LOCAL_RANK")
    if rank is None:
        rank = local if local is not None else 0
    return rank, world, local


def node_rank(env=None):
    """The machine's index in a multi-node job: the first of GROUP_RANK
    (torchrun), NODE_RANK, SLURM_NODEID that is set to an integer, else 0."""
    env = os.environ if env is None else env
    for name in ("GROUP_RANK", "NODE_RANK", "SLURM_NODEID"):
        try:
            return int(env.get(name, ""))
        except ValueError:
            continue
    return 0


def wall_ns(env=None):
    """The wall clock (Unix ns) as the client reads it: time.time_ns() plus
    GNNSCOPE_TEST_CLOCK_OFFSET_NS (tests only: a node whose clock is off)."""
    env = os.environ if env is None else env
    try:
        off = int(env.get("GNNSCOPE_TEST_CLOCK_OFFSET_NS", "") or 0)
    except ValueError:
        off = 0
    return time.time_ns() + off


def rank_path(path, rank, world):
    """Return the journal path of a rank: the main journal for rank 0 or a
    single process, <dir>/<run>.rank<R>.jsonl for rank R > 0."""
    if not world or world <= 1 or not rank:
        return path
    d, base = os.path.split(path)
    if base.endswith(".jsonl"):
        base = base[: -len(".jsonl")]
    return os.path.join(d, "%s.rank%d.jsonl" % (base, rank))


def wall_rfc3339(ns):
    """Format a time.time_ns() value as RFC 3339 UTC with nanoseconds."""
    sec, frac = divmod(ns, 1_000_000_000)
    dt = datetime.datetime.fromtimestamp(sec, tz=datetime.timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % frac


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.partition(":")
                if sep and k.strip() in ("model name", "Model", "cpu model"):
                    return v.strip()
    except OSError:
        pass
    return platform.processor()


def local_host(local_rank=None, gpu=None):
    """The run_start host object: cpu, cores, os, hostname, cpus, load, and the GPU
    name, driver and memory when known (gpu = (name, driver, bytes))."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    h = {"cpu": _cpu_model(), "cores": cores,
         "os": "%s/%s" % (sys.platform, platform.machine()),
         "hostname": socket.gethostname(),
         # logical CPUs online and the 1-minute load average: readers flag
         # a run whose host was busier than its CPUs ("host busy")
         "cpus": os.cpu_count() or 0}
    try:
        h["load"] = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        pass
    if gpu:
        name, driver, mem = gpu
        if name:
            h["gpu"] = name
        if driver:
            h["driver"] = driver
        if mem:
            h["gpu_mem"] = int(mem)
    h = {k: v for k, v in h.items() if v}
    if local_rank is not None:
        h["local_rank"] = local_rank
    return h


class Journal:
    """An append-only journal of events, safe for use from several threads.

    t0 is the monotonic_ns origin of every time the caller writes; the
    journal is opened by open() with its run_start line.
    """

    def __init__(self, path, t0=None, clock=time.monotonic_ns,
                 interval=FLUSH_INTERVAL):
        self.path = path
        self.clock = clock
        self.t0 = clock() if t0 is None else t0
        self.interval = interval
        self._interval_ns = int(interval * 1e9)
        self._lock = threading.Lock()
        self._buf = []
        self._fd = None
        self._pid = os.getpid()
        self._last = self.clock()
        self._stop = threading.Event()
        self._thread = None
        self.ticks = []  # callables run by the flusher before each flush

    def now(self):
        """Nanoseconds since t0."""
        return self.clock() - self.t0

    @property
    def opened(self):
        return self._fd is not None

    def open(self, run_start, thread=True):
        """Create (or append to) the file, write run_start and start the
        background flusher."""
        d = os.path.dirname(self.path)
        if d:
            os.makedirs(d, mode=0o700, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._write_bytes((_encode.encode(run_start) + "\n").encode("utf-8"))
        self._last = self.clock()
        if thread:
            self._thread = threading.Thread(target=self._run, name="gnnscope-flush",
                                            daemon=True)
            self._thread.start()

    def write(self, ev):
        """Queue one event; flushes when the last flush is older than the
        interval."""
        line = _encode.encode(ev) + "\n"
        with self._lock:
            if self._fd is None or os.getpid() != self._pid:
                return
            self._buf.append(line)
            if self.clock() - self._last >= self._interval_ns:
                self._flush_locked()

    def flush(self):
        """Write every queued line now."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self):
        self._last = self.clock()
        if not self._buf or self._fd is None or os.getpid() != self._pid:
            return
        lines, self._buf = self._buf, []
        # Whole lines in writes of at most one page: Linux checks for a
        # fatal signal between the pages of a write, so a larger write
        # killed midway can end inside a line; one of a page cannot.
        chunk, size = [], 0
        for line in lines:
            b = line.encode("utf-8")
            if chunk and size + len(b) > WRITE_CHUNK:
                self._write_bytes(b"".join(chunk))
                chunk, size = [], 0
            chunk.append(b)
            size += len(b)
        if chunk:
            self._write_bytes(b"".join(chunk))

    def _write_bytes(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    def _run(self):
        while not self._stop.wait(self.interval):
            for tick in list(self.ticks):
                try:
                    tick()
                except Exception:  # a failing tick must not stop flushing
                    pass
            try:
                self.flush()
            except OSError:
                return

    def close(self):
        """Flush and close; later writes are dropped."""
        self._stop.set()
        with self._lock:
            try:
                self._flush_locked()
            finally:
                if self._fd is not None and os.getpid() == self._pid:
                    os.close(self._fd)
                self._fd = None

    def forget(self):
        """Drop the buffer and the file without writing (a forked child)."""
        self._buf = []
        self._fd = None
        self._stop.set()


def run_start(t0_wall_ns, rank=None, world=None, local_rank=None, gpu=None,
              env=None):
    """The run_start event of a journal per the bridge contract."""
    env = os.environ if env is None else env
    run = env.get("GNNSCOPE_RUN", "")
    if not run:
        base = os.path.basename(env.get("GNNSCOPE_JOURNAL", ""))
        run = base[:-6] if base.endswith(".jsonl") else base
    argv = list(getattr(sys, "orig_argv", None) or [sys.executable] + sys.argv)
    ev = {"t": "run_start", "v": 1, "run": run,
          "session": env.get("GNNSCOPE_SESSION", ""),
          "variant": env.get("GNNSCOPE_VARIANT", "") or run,
          "wall": wall_rfc3339(t0_wall_ns),
          "node": socket.gethostname(), "node_rank": node_rank(env),
          "host": local_host(local_rank, gpu),
          "config": {"cmd": argv, "external": True, "client": "python"}}
    if world is not None:
        ev["rank"] = rank or 0
        ev["world"] = world
    return ev


_registered = []


def register_exit(fn):
    """Run fn at interpreter exit (once)."""
    if fn not in _registered:
        _registered.append(fn)
        atexit.register(fn)
