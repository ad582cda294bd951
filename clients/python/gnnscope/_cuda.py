"""CUDA support: device-timed spans, per-batch memory, OOM, NVML samples.

Everything here takes the torch.cuda module (or an object with the same
attributes) as an argument, so that the logic runs under tests with a fake.

Mapping device time onto the host clock: the first device-timed span
synchronizes the device once, records an anchor event and waits for it; the
host time right after that wait is the anchor's host time (the device was
idle, so it reached the anchor within the wait's latency). A span records one
event at its start and one at its end on the current stream, with no wait.
The flusher and later stage boundaries ask end.query() (which never blocks);
once the end event has completed, start and end map to
anchor_host + anchor.elapsed_time(event). Because elapsed_time is a float in
milliseconds, an event more than ANCHOR_SPAN_MS after the anchor becomes the
new anchor (its host time computed the same way): each link adds at most
half a float32 ulp (under a microsecond), so the mapping drifts by at most
about 6e-8 of the time run, less than the device and host clocks drift
apart anyway. Pending spans are written when resolved,
so device-timed spans can come after later host-timed lines in the journal.
"""

import re
import threading

ANCHOR_SPAN_MS = 10_000.0

_REQ = re.compile(r"Tried to allocate ([0-9.]+) ?([KMGT]?i?B)")
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
          "KB": 1000, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def requested_bytes(msg):
    """Bytes of the failed allocation in a CUDA out-of-memory message (0 if
    the message does not say)."""
    m = _REQ.search(str(msg))
    if not m:
        return 0
    return int(float(m.group(1)) * _UNITS.get(m.group(2), 1))


def is_oom(cuda, exc):
    """Whether exc is a CUDA out-of-memory error."""
    cls = getattr(cuda, "OutOfMemoryError", None) if cuda is not None else None
    if cls is not None and isinstance(exc, cls):
        return True
    return isinstance(exc, RuntimeError) and "CUDA out of memory" in str(exc)


class DeviceClock:
    """Times spans with CUDA events and maps them onto the host clock."""

    def __init__(self, cuda, now):
        self.cuda = cuda
        self.now = now  # host ns since the run's start
        self._anchor = None
        self._lock = threading.Lock()

    def _ensure_anchor(self):
        if self._anchor is None:
            self.cuda.synchronize()
            ev = self.cuda.Event(enable_timing=True)
            ev.record()
            ev.synchronize()
            self._anchor = (ev, self.now())

    def mark(self):
        """Record an event on the current stream; no wait."""
        self._ensure_anchor()
        ev = self.cuda.Event(enable_timing=True)
        ev.record()
        return ev

    @staticmethod
    def ready(ev):
        """Whether ev has completed (never blocks)."""
        return ev.query()

    def host_ns(self, ev):
        """The host time at which the device reached the completed event ev."""
        with self._lock:
            a_ev, a_host = self._anchor
            ms = a_ev.elapsed_time(ev)
            t = a_host + int(round(ms * 1e6))
            if ms > ANCHOR_SPAN_MS:
                self._anchor = (ev, t)
            return t


class Memory:
    """Per-batch peak memory from the caching allocator."""

    def __init__(self, cuda):
        self.cuda = cuda
        self._total = {}

    def budget(self, dev=None):
        dev = self.cuda.current_device() if dev is None else dev
        if dev not in self._total:
            self._total[dev] = int(self.cuda.get_device_properties(dev).total_memory)
        return self._total[dev]

    def sample(self, reset=True):
        """(peak, live, budget) of the current device since the last reset;
        resets the peak when reset is true. Reads allocator counters only:
        no synchronization."""
        dev = self.cuda.current_device()
        peak = int(self.cuda.max_memory_allocated(dev))
        live = int(self.cuda.memory_allocated(dev))
        if reset:
            self.cuda.reset_peak_memory_stats(dev)
        return peak, live, self.budget(dev)


class NvmlSampler:
    """Samples one device through pynvml every interval seconds into gpu
    events, on a daemon thread."""

    def __init__(self, nvml, index, emit, now, interval=0.5):
        self.nvml = nvml
        self.emit = emit
        self.now = now
        self.interval = interval
        nvml.nvmlInit()
        self.handle = nvml.nvmlDeviceGetHandleByIndex(index)
        self._stop = threading.Event()
        self._thread = None

    def info(self):
        """(name, driver, total bytes) of the device."""
        name = self.nvml.nvmlDeviceGetName(self.handle)
        driver = self.nvml.nvmlSystemGetDriverVersion()
        mem = self.nvml.nvmlDeviceGetMemoryInfo(self.handle)
        dec = lambda s: s.decode() if isinstance(s, bytes) else str(s)
        return dec(name), dec(driver), int(mem.total)

    def sample(self):
        mem = self.nvml.nvmlDeviceGetMemoryInfo(self.handle)
        try:
            util = self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu / 100.0
        except Exception:  # not supported on some devices
            util = -1.0
        self.emit({"t": "gpu", "ts": self.now(), "used": int(mem.used),
                   "total": int(mem.total), "util": util})

    def start(self):
        self._thread = threading.Thread(target=self._run, name="gnnscope-nvml",
                                        daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            try:
                self.sample()
            except Exception:
                return
            if self._stop.wait(self.interval):
                return

    def stop(self):
        self._stop.set()
