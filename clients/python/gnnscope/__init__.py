"""gnnscope's Python client: write a trainer's stages and metrics into a
gnnscope journal.

Standard library only; torch is used when the program has imported it. Every
function is a no-op unless GNNSCOPE_JOURNAL is set (gnnscope run sets it) or
GNNSCOPE_COLLECTOR (the events go to a collector, docs/collector.md), so
instrumented scripts run unchanged outside gnnscope.

    import gnnscope
    for e in range(1, epochs + 1):
        gnnscope.epoch(e)
        for b, batch in enumerate(loader):
            with gnnscope.span("sample", batch=b): ...
            gnnscope.metric("loss", loss.item(), batch=b)
    gnnscope.finish()

Under `gnnscope run` the zero-change instrumentation (sitecustomize) records
the same stages without any of these calls.
"""

import functools
import os
import sys
import threading

from . import _client
from . import journal as _journal

__all__ = ["span", "metric", "epoch", "mem", "finish", "enabled", "client"]

_lock = threading.Lock()
_client_obj = None
_made = False


def client():
    """The process's Client, or None when neither GNNSCOPE_JOURNAL nor
    GNNSCOPE_COLLECTOR is set."""
    global _client_obj, _made
    if _made:
        return _client_obj
    with _lock:
        if not _made:
            path = _journal_path(os.environ)
            if path:
                _client_obj = _client.Client(os.path.abspath(path))
                _install_excepthook(_client_obj)
            _made = True
    return _client_obj


def _journal_path(env):
    """GNNSCOPE_JOURNAL; on a node that streams to a collector without it,
    <GNNSCOPE_RUN>.jsonl in the working folder (torch.profiler traces are
    written beside it). "" when neither is set."""
    path = env.get("GNNSCOPE_JOURNAL", "")
    if not path and env.get("GNNSCOPE_COLLECTOR", ""):
        path = (env.get("GNNSCOPE_RUN", "") or "run") + ".jsonl"
    return path


def enabled():
    """Whether events are being recorded (GNNSCOPE_JOURNAL or
    GNNSCOPE_COLLECTOR is set)."""
    return client() is not None


def _install_excepthook(c):
    prev = sys.excepthook

    def hook(etype, value, tb):
        try:
            c.excepthook(value, c.epoch, c.batch)
        except Exception:
            pass
        prev(etype, value, tb)

    sys.excepthook = hook


def _after_fork():
    if _client_obj is not None:
        _client_obj.after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class span:
    """Time a stage: `with gnnscope.span("sample", epoch=e, batch=b):` or as
    a decorator, `@gnnscope.span("forward")`.

    epoch and batch default to the current ones; lane defaults to "compute".
    On CUDA the stages that run on the device (transfer, train, forward,
    backward, step, eval) are timed with CUDA events and mapped onto the
    host clock; device=True/False forces either.
    """

    def __init__(self, name, epoch=None, batch=None, lane="compute", attrs=None,
                 device=None):
        self.name = name
        self.epoch_ = epoch
        self.batch_ = batch
        self.lane = lane
        self.attrs = attrs
        self.device = name in _client.DEVICE_STAGES if device is None else device
        self._c = None
        self._start = None

    def __enter__(self):
        c = client()
        if c is not None:
            self._c = c
            self._start = c.mark(self.device)
        return self

    def __exit__(self, etype, exc, tb):
        c = self._c
        if c is None:
            return False
        try:
            end = c.mark(self.device)
            ep = c.epoch if self.epoch_ is None else self.epoch_
            b = c.batch if self.batch_ is None else self.batch_
            if exc is not None:
                from . import _cuda
                if _cuda.is_oom(c.cuda(), exc):
                    c.note_oom(exc, ep, b)
            c.span(self.name, self._start, end, ep, b, self.lane, self.attrs)
        except Exception:
            pass
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with span(self.name, self.epoch_, self.batch_, self.lane, self.attrs,
                      self.device):
                return fn(*args, **kwargs)
        return wrapper


def metric(name, value, epoch=None, batch=None):
    """Record a metric. epoch defaults to the current one, batch to -1 (a
    per-epoch value). value may be a number or a one-element tensor (a CUDA
    tensor's "loss" is read without forcing a synchronization)."""
    c = client()
    if c is None:
        return
    ep = c.epoch if epoch is None else int(epoch)
    b = -1 if batch is None else int(batch)
    if name == "loss" and not isinstance(value, (int, float)):
        c.loss(value, ep, b)
        return
    try:
        value = float(value)
    except (TypeError, ValueError):
        return
    c.metric(name, value, ep, b)


def epoch(e):
    """Set the current epoch (from 1, like the engine) for later spans and
    metrics. Epochs set this way replace the automatic epoch counting."""
    c = client()
    if c is not None:
        c.set_epoch(int(e))


def mem(peak=None, live=None, budget=None, epoch=None, batch=None, phase="train",
        predicted=None):
    """Record device memory of a batch. On CUDA, missing values come from
    torch.cuda (peak = max_memory_allocated since the last mem call, live =
    memory_allocated, budget = the device's total memory)."""
    c = client()
    if c is None:
        return
    ep = c.epoch if epoch is None else int(epoch)
    b = c.batch if batch is None else int(batch)
    c.mem(ep, b, phase, peak, live, budget, predicted)


def finish(status="ok", error=""):
    """Write run_end with status (ok, oom, failed, canceled) and error.
    Without it, gnnscope writes run_end from the process's exit status."""
    c = client()
    if c is not None:
        c.finish(status, error)


def _reset_for_tests(c=None):
    """Replace the process's client (tests only)."""
    global _client_obj, _made
    with _lock:
        _client_obj = c
        _made = True
