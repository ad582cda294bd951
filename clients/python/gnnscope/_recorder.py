"""The per-batch state machine of the zero-change instrumentation: which
batch, epoch and stage each patched torch call belongs to (see _auto for
the patches and the rules). It does not import torch.
"""

import sys
import threading

from . import _cuda
from . import _workers


def _signalled(exc):
    """Whether exc is torch's report of a dead DataLoader worker, raised by
    its SIGCHLD handler wherever the main thread was, possibly inside a
    hook: it belongs to the program, not to the instrumentation."""
    return isinstance(exc, RuntimeError) and "DataLoader worker" in str(exc)


class Batch:
    """A training batch (or a fetched batch not yet classified)."""

    __slots__ = ("it", "epoch", "batch", "sample", "xfer", "zg", "train_start",
                 "fwd", "stepped", "last", "loss", "work")

    def __init__(self, it=None, sample=None, work=None):
        self.it = it
        self.work = work      # DataLoader worker's timings (see _workers)
        self.epoch = 0
        self.batch = 0
        self.sample = sample  # (start mark, end mark) or None
        self.xfer = None      # [start mark, end mark]
        self.zg = None        # mark of a zero_grad before the forward
        self.train_start = None
        self.fwd = False
        self.stepped = False
        self.last = None
        self.loss = None


class Recorder:
    """The per-batch state machine behind the patches (torch-agnostic)."""

    def __init__(self, client, worker_info=None):
        self.c = client
        self.main = threading.main_thread().ident
        self.worker_info = worker_info
        self.disabled = False
        self.depth = 0        # outermost module call in progress
        self.ndepth = 0       # a batch source's __next__ in progress
        self.bdepth = 0       # backward in progress
        self.sdepth = 0       # optimizer step in progress
        self.apply_depth = 0  # Module._apply (Module.to, .cuda) in progress
        self.pending = None   # fetched batch not yet classified
        self.cur = None       # current training batch
        self.ev = None        # open eval pass: [start, end, forwards, epoch]
        self.work = None      # worker timings of the batch being received
        self.tprof = None     # the torch.profiler window (_torchprof), if asked for
        self.step_tok = None
        self.train_key = None
        self.next_batch = 0
        self.epoch_done = False
        self.seen_train = False
        self.reported = False
        client.closing.append(self.close)
        client.recorder = self
        client.epoch_hooks.append(self.on_explicit_epoch)

    # ---- guards -------------------------------------------------------------

    def off(self):
        return self.disabled or threading.get_ident() != self.main

    def guard(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # never let the instrumentation break the program
            if _signalled(exc):
                raise
            self.fail(exc)
            return None

    def fail(self, exc):
        self.disabled = True
        if not self.reported:
            self.reported = True
            try:
                sys.stderr.write("gnnscope: instrumentation off after an internal error: %r\n"
                                 % (exc,))
            except Exception:
                pass

    def in_worker(self):
        try:
            return self.worker_info is not None and self.worker_info() is not None
        except Exception:
            return False

    # ---- batches and epochs -------------------------------------------------

    def _advance_epoch(self):
        c = self.c
        c.end_epoch(c.epoch)
        c.epoch += 1
        self.next_batch = 0
        self.epoch_done = False

    def _start_batch(self, b, from_loader):
        """Make b the current training batch."""
        self._finalize()
        self._close_eval()
        c = self.c
        if not c.explicit_epoch:
            if from_loader:
                key = (id(b.it), getattr(b.it, "_gnnscope_gen", 0))
                if self.epoch_done or (self.train_key is not None and key != self.train_key
                                       and self.next_batch > 0):
                    self._advance_epoch()
                self.train_key = key
            elif self.seen_train:
                self._advance_epoch()  # full-batch training: one step per epoch
        self.seen_train = True
        b.epoch, b.batch = c.epoch, self.next_batch
        self.next_batch += 1
        c.batch = b.batch
        self.cur = b
        self.sdepth = 0
        if b.sample is not None:
            c.span("sample", b.sample[0], b.sample[1], b.epoch, b.batch)
        self._loader_spans(b, b.epoch, b.batch)
        return b

    def _loader_spans(self, b, epoch, batch=None, phase=None):
        """Write the DataLoader worker's fetch and collate spans of b, once:
        batch None = the loader's own index (batches outside training)."""
        w, b.work = b.work, None
        if w is None:
            return
        (wid, t0, c0, c1, n), idx = w
        c = self.c
        base = c.t0
        lane = _workers.lane(wid)
        batch = idx if batch is None else batch
        a = {"samples": n} if n >= 0 else {}
        if phase:
            a["phase"] = phase
        c.span("fetch", (t0 - base, None), (c0 - base, None), epoch, batch, lane, a or None)
        c.span("collate", (c0 - base, None), (c1 - base, None), epoch, batch, lane,
               {"phase": phase} if phase else None)

    def _finalize(self):
        b, self.cur = self.cur, None
        if b is None:
            return
        c = self.c
        if b.train_start is not None and b.last is not None:
            c.span("train", b.train_start, b.last, b.epoch, b.batch)
        if b.loss is not None:
            c.loss(b.loss, b.epoch, b.batch)
        if b.fwd:
            c.mem(b.epoch, b.batch, "train")

    def _close_eval(self):
        ev, self.ev = self.ev, None
        if ev is None:
            return
        c = self.c
        c.span("eval", ev[0], ev[1], ev[3], 0, attrs={"forwards": ev[2]})
        c.mem(ev[3], 0, "eval")

    def _open_eval(self, start):
        if self.ev is None:
            self.ev = [start, start, 0, self.c.epoch]

    def on_explicit_epoch(self, e):
        self._finalize()
        self._close_eval()
        self.next_batch = 0
        self.epoch_done = False
        self.train_key = None

    def close(self):
        """At exit or finish: close the open batch, eval pass and epoch."""
        if self.disabled:
            return
        self._drop_pending()
        self._finalize()
        self._close_eval()
        if self.seen_train:
            self.c.end_epoch(self.c.epoch)

    # ---- DataLoader ---------------------------------------------------------

    def on_next(self, it, start):
        c = self.c
        end = c.mark(False)
        work, self.work = self.work, None
        if c._oom is not None:
            c.flush_oom("skip")
        c.tick()
        kind = getattr(it, "_gnnscope_kind", None)
        b = Batch(it, (start, end), work)
        if kind == "eval":
            self._open_eval(start)
            self.ev[1] = end
            self._loader_spans(b, self.ev[3], phase="eval")
        elif kind == "train":
            self._start_batch(b, True)
        else:
            self._drop_pending()
            self.pending = b

    def _drop_pending(self):
        """A fetched batch that neither trained nor evaluated."""
        b, self.pending = self.pending, None
        if b is not None:
            self._loader_spans(b, self.c.epoch, phase="other")

    def on_stop(self, it, start):
        end = self.c.mark(False)
        kind = getattr(it, "_gnnscope_kind", None)
        try:
            it._gnnscope_kind = None
        except Exception:
            pass
        if self.pending is not None and self.pending.it is it:
            self._drop_pending()
        if kind == "eval" and self.ev is not None:
            self.ev[1] = end
            self._close_eval()
        elif kind == "train":
            self._finalize()
            if not self.c.explicit_epoch:
                self.c.end_epoch(self.c.epoch)
                self.epoch_done = True

    # ---- transfer -----------------------------------------------------------

    def xfer_target(self):
        if self.pending is not None:
            return self.pending
        if self.cur is not None and self.cur.train_start is None:
            return self.cur
        return None

    def on_xfer_begin(self):
        b = self.xfer_target()
        if b is None:
            return None
        return b, self.c.mark(True)

    def on_xfer_end(self, tok):
        b, start = tok
        end = self.c.mark(True)
        if b.xfer is None:
            b.xfer = [start, end]
        else:
            b.xfer[1] = end

    def on_zero_grad_begin(self):
        b = self.xfer_target()
        if b is not None:
            if b.zg is None:
                b.zg = self.c.mark(True)
            return None
        if self.cur is not None and self.cur.stepped:
            return self.cur
        return None

    def on_zero_grad_end(self, b):
        if b is not None and b is self.cur:
            b.last = self.c.mark(True)

    # ---- forward, backward, step --------------------------------------------

    def on_forward_begin(self, train):
        c = self.c
        if self.cur is not None and self.cur.fwd and not self.cur.stepped:
            if not train:
                return None  # e.g. a frozen model inside a training batch
        if self.in_worker():
            self.disabled = True
            return None
        now = c.mark(True)
        if not train:
            return self._eval_forward(now)
        b = self._train_batch(now)
        b.fwd = True
        return b, now

    def _train_batch(self, now):
        """The training batch that a forward or backward at now belongs to,
        entering its compute part (which closes its transfer window)."""
        if self.pending is not None:
            b, self.pending = self.pending, None
            b.it._gnnscope_kind = "train"
            self._start_batch(b, True)
        elif self.cur is None or self.cur.stepped:
            self._start_batch(Batch(), False)
        b = self.cur
        if b.train_start is None:
            if b.xfer is not None:
                start = b.xfer[0]
                if start[1] is None and b.sample is not None and b.sample[1][0] <= start[0]:
                    # host-timed: the batch is in transfer from the moment
                    # its sample hands it over (unpacking, the previous
                    # batch's release) until it is on the device
                    start = b.sample[1]
                self.c.span("transfer", start, b.xfer[1], b.epoch, b.batch)
            zg = b.zg
            if zg is not None and b.xfer is not None and b.xfer[0][0] >= zg[0]:
                zg = None  # zero_grad before the transfer: not part of train
            b.train_start = zg or now
        return b

    def _eval_forward(self, now):
        start = now
        if self.pending is not None:
            b, self.pending = self.pending, None
            b.it._gnnscope_kind = "eval"
            start = b.sample[0]
            self._loader_spans(b, self.c.epoch, phase="eval")
        self._finalize()
        self._open_eval(start)
        return None, now

    def on_forward_end(self, tok):
        b, start = tok
        end = self.c.mark(True)
        if b is None:
            if self.ev is not None:
                self.ev[1] = end
                self.ev[2] += 1
            return
        self.c.span("forward", start, end, b.epoch, b.batch)
        b.last = end

    def on_backward_begin(self, loss):
        if self.in_worker():
            return None
        now = self.c.mark(True)
        return self._train_batch(now), now, loss

    def on_backward_end(self, tok):
        b, start, loss = tok
        end = self.c.mark(True)
        self.c.span("backward", start, end, b.epoch, b.batch)
        b.last = end
        try:
            if loss is not None and loss.numel() == 1:
                b.loss = loss.detach()
        except Exception:
            pass

    def on_step_begin(self):
        self.sdepth += 1
        if self.sdepth > 1 or self.cur is None:
            return
        self.step_tok = (self.cur, self.c.mark(True))

    def on_step_end(self):
        self.sdepth = max(self.sdepth - 1, 0)
        if self.sdepth or self.step_tok is None:
            return
        (b, start), self.step_tok = self.step_tok, None
        end = self.c.mark(True)
        if self.tprof is not None:
            self._profile_step(end[0], b)  # first: its range ends where the step did
        self.c.span("step", start, end, b.epoch, b.batch)
        b.stepped = True
        b.last = end
        if b.train_start is None:
            b.train_start = start

    def _profile_step(self, end_ns, b):
        """Drive the torch.profiler window (see _torchprof); a failure ends
        the capture, never the rest of the instrumentation."""
        try:
            self.tprof.on_step(end_ns, b.epoch, b.batch)
        except Exception as exc:
            self.tprof = None
            try:
                sys.stderr.write("gnnscope: torch profile off after an error: %r\n" % (exc,))
            except Exception:
                pass

    def on_error(self, exc):
        c = self.c
        if _cuda.is_oom(c.cuda(), exc):
            c.note_oom(exc, c.epoch, c.batch)
