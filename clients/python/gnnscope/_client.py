"""The per-process client: a lazily opened journal and the recording logic
shared by the explicit API, the auto-instrumentation and the Lightning
callback."""

import os
import sys
import threading
import time

from . import _cuda
from . import _stream
from . import journal as _journal

# Stages timed on the device (CUDA events) when CUDA is in use; the others
# (sample, custom names) are timed on the host.
DEVICE_STAGES = frozenset(("transfer", "train", "forward", "backward", "step", "eval"))


class Client:
    """Records events for one process into its journal, or streams them to
    a collector when GNNSCOPE_COLLECTOR is set (_stream).

    The journal opens on the first event, so that processes that never
    record anything (launchers, helper scripts, data-loader workers) leave
    no trace; times are from t0, the client's creation.
    """

    def __init__(self, path, env=None, clock=time.monotonic_ns, cuda=None,
                 nvml=None, interval=_journal.FLUSH_INTERVAL):
        self.env = os.environ if env is None else env
        self.path = path
        self.clock = clock
        self.t0 = clock()
        self.wall0 = _journal.wall_ns(self.env) - (clock() - self.t0)
        self.interval = interval
        self.journal = None
        self.lock = threading.RLock()
        self.epoch = 1
        self.batch = 0
        self.explicit_epoch = False
        self.epoch_hooks = []  # callables(new_epoch) run before an explicit epoch change
        self.rank = None
        self.world = None
        self.internal = False  # set while the client itself calls torch
        self.finished = False
        self.recorder = None  # the auto-instrumentation's, when installed
        self.closing = []  # callables run before finish and at exit
        self._cuda_override = cuda
        self._nvml_override = nvml
        self._cuda = None
        self.dclock = None
        self.memory = None
        self.nvml = None
        self._pending = []
        self._eloss = {}
        self._oom = None
        self._disabled = False

    # ---- journal ----------------------------------------------------------

    def now(self):
        return self.clock() - self.t0

    def configure(self, rank=None, world=None):
        """Set the rank and world size before the journal opens (later
        calls have no effect on an open journal)."""
        if rank is not None:
            self.rank = int(rank)
        if world is not None:
            self.world = int(world)

    def _rank_world(self):
        rank, world, local = _journal.rank_world(self.env)
        if world is None:
            dist = getattr(sys.modules.get("torch"), "distributed", None)
            try:
                if dist is not None and dist.is_available() and dist.is_initialized():
                    rank, world = dist.get_rank(), dist.get_world_size()
            except Exception:
                pass
        if self.rank is not None:
            rank = self.rank
        if self.world is not None:
            world = self.world
        return rank, world, local

    def _gpu_info(self):
        if self.nvml is not None:
            try:
                return self.nvml.info()
            except Exception:
                pass
        c = self._cuda
        if c is None:
            return None
        try:
            dev = c.current_device()
            return c.get_device_name(dev), "", c.get_device_properties(dev).total_memory
        except Exception:
            return None

    def _open(self):
        if self.journal is not None or self._disabled:
            return self.journal
        with self.lock:
            if self.journal is not None:
                return self.journal
            self.cuda()
            rank, world, local = self._rank_world()
            path = _journal.rank_path(self.path, rank, world)
            addr = self.env.get("GNNSCOPE_COLLECTOR", "")
            if addr:
                j = _stream.Stream(addr, self.env, rank, world, path, t0=self.t0,
                                   clock=self.clock, interval=self.interval)
            else:
                j = _journal.Journal(path, t0=self.t0, clock=self.clock,
                                     interval=self.interval)
            ev = _journal.run_start(self.wall0, rank, world, local, self._gpu_info(), self.env)
            j.ticks.append(self.tick)
            j.open(ev)
            self.journal = j
            _journal.register_exit(self.shutdown)
        return j

    def emit(self, ev):
        """Write one event (opening the journal first if needed)."""
        j = self.journal or self._open()
        if j is not None:
            j.write(ev)

    def after_fork(self):
        """In a forked child (a DataLoader worker): forget the parent's
        journal and record nothing, so that the journal keeps one writer."""
        if self.journal is not None:
            self.journal.forget()
        self.journal = None
        self._pending = []
        self._oom = None
        self.nvml = None
        self._disabled = True

    # ---- CUDA ---------------------------------------------------------------

    def cuda(self):
        """The torch.cuda module once CUDA is initialized in this process,
        else None. Never initializes CUDA itself."""
        if self._cuda is not None:
            return self._cuda
        c = self._cuda_override
        if c is None:
            torch = sys.modules.get("torch")
            c = getattr(torch, "cuda", None) if torch is not None else None
            try:
                if c is None or not c.is_initialized():
                    return None
            except Exception:
                return None
        self._cuda = c
        self.dclock = _cuda.DeviceClock(c, self.now)
        self.memory = _cuda.Memory(c)
        self._start_nvml(c)
        return c

    def _start_nvml(self, c):
        nvml = self._nvml_override
        if nvml is None:
            try:
                import pynvml as nvml  # optional
            except Exception:
                return
        try:
            index = c.current_device()
            vis = self.env.get("CUDA_VISIBLE_DEVICES", "")
            ids = [s.strip() for s in vis.split(",") if s.strip()]
            if ids and all(s.isdigit() for s in ids) and index < len(ids):
                index = int(ids[index])
            self.nvml = _cuda.NvmlSampler(nvml, index, self.emit, self.now)
            self.nvml.start()
        except Exception:
            self.nvml = None

    def mark(self, device=True):
        """A stage boundary: (host ns, CUDA event or None)."""
        host = self.clock() - self.t0
        if device and self.cuda() is not None:
            try:
                return host, self.dclock.mark()
            except Exception:
                pass
        return host, None

    # ---- events -------------------------------------------------------------

    def span(self, name, start, end, epoch, batch, lane="compute", attrs=None):
        """Write a span between two marks: device-timed when both carry
        events (written once they have completed), else host-timed."""
        if start[1] is not None and end[1] is not None:
            with self.lock:
                self._pending.append(("span", name, start, end, epoch, batch, lane, attrs))
            return
        ev = {"t": "span", "name": name, "lane": lane, "epoch": epoch, "batch": batch,
              "start": start[0], "dur": max(end[0] - start[0], 0)}
        if attrs:
            ev["attrs"] = attrs
        self.emit(ev)

    def metric(self, name, value, epoch, batch):
        self.emit({"t": "metric", "name": name, "epoch": epoch, "batch": batch,
                   "value": float(value)})

    def loss(self, value, epoch, batch):
        """Record a batch loss. A CUDA tensor is copied to the host without
        waiting and read once its copy has completed (tick); anything else is
        read now."""
        acc = self._eloss.setdefault(epoch, [0.0, 0, 0, False])
        if isinstance(value, (int, float)):
            self._loss_done(float(value), epoch, batch)
            return
        try:
            if value.numel() != 1:
                return
            v = value.detach()
            c = self.cuda() if getattr(v, "is_cuda", False) else None
            if c is None:
                self._loss_done(float(v.item()), epoch, batch)
                return
            self.internal = True
            try:
                host = v.to("cpu", non_blocking=True)
                ev = c.Event()
                ev.record()
            finally:
                self.internal = False
            with self.lock:
                acc[2] += 1
                self._pending.append(("loss", ev, host, epoch, batch))
        except Exception:
            return

    def _loss_done(self, value, epoch, batch, pending=False):
        self.metric("loss", value, epoch, batch)
        with self.lock:
            acc = self._eloss.setdefault(epoch, [0.0, 0, 0, False])
            acc[0] += value
            acc[1] += 1
            if pending:
                acc[2] -= 1
            self._maybe_epoch_loss(epoch)

    def end_epoch(self, epoch):
        """Close an epoch: its mean batch loss is written (batch -1) once
        every batch loss is known."""
        with self.lock:
            acc = self._eloss.get(epoch)
            if acc is not None:
                acc[3] = True
                self._maybe_epoch_loss(epoch)

    def _maybe_epoch_loss(self, epoch):
        acc = self._eloss[epoch]
        if acc[3] and acc[2] == 0:
            del self._eloss[epoch]
            if acc[1]:
                self.metric("loss", acc[0] / acc[1], epoch, -1)

    def set_epoch(self, e):
        """Make e the current epoch (explicit epochs: automatic epoch
        counting stops). The previous epoch is closed."""
        for fn in list(self.epoch_hooks):
            try:
                fn(e)
            except Exception:
                pass
        if self.explicit_epoch or self.epoch != e:
            self.end_epoch(self.epoch)
        self.explicit_epoch = True
        self.epoch = int(e)
        self.batch = 0

    def tick(self, block=False):
        """Write the device-timed spans and deferred losses whose events
        have completed; with block, wait for the device first."""
        if not self._pending:
            return
        if block and self._cuda is not None:
            try:
                self._cuda.synchronize()
            except Exception:
                pass
        with self.lock:
            pending, self._pending = self._pending, []
        keep = []
        for i, item in enumerate(pending):
            try:
                if not self._resolve(item, block):
                    keep.append(item)
            except Exception:
                continue  # a broken event must not stop the others
        if keep:
            with self.lock:
                self._pending = keep + self._pending

    def _resolve(self, item, block):
        if item[0] == "span":
            _, name, start, end, epoch, batch, lane, attrs = item
            if not block and not self.dclock.ready(end[1]):
                return False
            s = self.dclock.host_ns(start[1])
            e = self.dclock.host_ns(end[1])
            a = dict(attrs or {})
            a["clock"] = "cuda"
            a["host_start"] = start[0]
            a["host_dur"] = end[0] - start[0]
            self.emit({"t": "span", "name": name, "lane": lane, "epoch": epoch,
                       "batch": batch, "start": s, "dur": max(e - s, 0), "attrs": a})
            return True
        _, ev, host, epoch, batch = item
        if not block and not ev.query():
            return False
        self._loss_done(float(host.item()), epoch, batch, pending=True)
        return True

    def mem(self, epoch, batch, phase="train", peak=None, live=None, budget=None,
            predicted=None):
        """Write a mem event; missing values come from torch.cuda (peak reset
        after reading). Without values and without CUDA nothing is written."""
        if peak is None and self.cuda() is not None:
            try:
                p, l, b = self.memory.sample(reset=True)
            except Exception:
                return
            peak = p
            live = l if live is None else live
            budget = b if budget is None else budget
        elif budget is None and self.cuda() is not None:
            try:
                budget = self.memory.budget()
            except Exception:
                pass
        if peak is None and live is None:
            return
        self.emit({"t": "mem", "epoch": epoch, "batch": batch, "phase": phase,
                   "peak": peak or 0, "live": live or 0, "budget": budget or 0,
                   "predicted": predicted or 0})

    # ---- OOM and the end ----------------------------------------------------

    def note_oom(self, exc, epoch, batch):
        """Remember an out-of-memory error seen at a stage; it is written as
        an oom event with action abort if it ends the program, skip if the
        program goes on."""
        if self._oom is not None and self._oom[0] is exc:
            return
        self.flush_oom("skip")
        live = budget = 0
        if self.cuda() is not None:
            try:
                _, live, budget = self.memory.sample(reset=False)
            except Exception:
                pass
        self._oom = (exc, epoch, batch, live, budget)

    def flush_oom(self, action):
        o, self._oom = self._oom, None
        if o is None:
            return
        exc, epoch, batch, live, budget = o
        self.emit({"t": "oom", "epoch": epoch, "batch": batch,
                   "requested": _cuda.requested_bytes(exc), "live": live,
                   "budget": budget, "action": action})

    def excepthook(self, exc, epoch, batch):
        """An exception escaped the program: a CUDA OOM becomes an oom event
        and run_end status oom."""
        if not _cuda.is_oom(self._cuda or self._cuda_override, exc):
            return
        if self._oom is None or self._oom[0] is not exc:
            self.flush_oom("skip")
            self.note_oom(exc, epoch, batch)
        self.flush_oom("abort")
        self.finish("oom", str(exc)[:2048])

    def _run_closing(self):
        for fn in list(self.closing):
            try:
                fn()
            except Exception:
                pass

    def finish(self, status="ok", error=""):
        """Close open stages and write run_end (once)."""
        if self.finished:
            return
        self._run_closing()
        self.flush_oom("skip")
        self.tick(block=True)
        ev = {"t": "run_end", "status": status}
        if error:
            ev["error"] = error
        self.emit(ev)
        self.finished = True
        if self.journal is not None:
            self.journal.flush()

    def shutdown(self):
        """At exit: close open stages, write what is pending and flush. No
        run_end: the runner knows the exit status."""
        self._run_closing()
        self.flush_oom("skip")
        self.tick(block=True)
        if self.nvml is not None:
            self.nvml.stop()
        if self.journal is not None:
            self.journal.close()
