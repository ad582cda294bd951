"""A Lightning callback that records the same stages and metrics as the
zero-change instrumentation:

    from gnnscope.lightning import Callback
    trainer = L.Trainer(callbacks=[Callback()])

Hook mapping (Lightning 2.x, automatic or manual optimization):

* sample: from the end of the previous batch (or the epoch's start, or the
  end of a validation pass) to the batch's transfer or on_train_batch_start;
* transfer: the LightningModule's transfer_batch_to_device (wrapped at
  setup), wherever Lightning calls it;
* train: on_train_batch_start (or the end of a later transfer) to
  on_train_batch_end, with children forward (up to on_before_zero_grad or
  on_before_backward), backward (on_before_backward .. on_after_backward)
  and step (on_before_optimizer_step .. on_train_batch_end);
* eval: on_validation_epoch_start .. on_validation_epoch_end (not during
  the sanity check), batches counted by the validation batch hooks;
* metrics: the loss given to on_before_backward, per batch and its epoch
  mean; trainer.callback_metrics at the ends of validation and training
  epochs (batch -1), each value once per epoch;
* mem per batch on CUDA, OOM through on_exception.

Epochs are trainer.current_epoch + 1, batches batch_idx. Under DDP each rank
writes its own journal (trainer.global_rank, trainer.world_size). The
callback turns the zero-change instrumentation off in its process, so
that nothing is recorded twice. Lightning is imported only with this
module; without Lightning the callback is a plain class with the same
hooks.
"""

import functools
import importlib

import gnnscope
from gnnscope import _cuda


def _base():
    for name in ("lightning.pytorch", "pytorch_lightning"):
        try:
            return importlib.import_module(name).Callback
        except Exception:
            continue
    return object


def _value(v):
    try:
        if hasattr(v, "numel") and v.numel() != 1:
            return None
        return float(v.item() if hasattr(v, "item") else v)
    except Exception:
        return None


class Callback(_base()):
    """Records Lightning's training stages into the gnnscope journal."""

    def __init__(self):
        super().__init__()
        self._c = None
        self._prev = None      # end of the previous batch (sample start)
        self._xfer = None      # (start, end) marks of the last transfer
        self._in_batch = False
        self._fwd_open = False
        self._train_start = None
        self._fwd_end = None
        self._bwd_start = None
        self._step_start = None
        self._loss = None
        self._eval = None
        self._eval_batches = 0
        self._emitted = {}
        self._epoch = 1
        self._batch = 0

    # ---- helpers ----------------------------------------------------------

    def _client(self):
        if self._c is None:
            self._c = gnnscope.client()
        return self._c

    def _mark(self, device=True):
        return self._c.mark(device)

    def _span(self, name, start, end, batch):
        if start is not None and end is not None:
            self._c.span(name, start, end, self._epoch, batch)

    def _metrics(self, trainer):
        for name, v in dict(getattr(trainer, "callback_metrics", {}) or {}).items():
            x = _value(v)
            key = (self._epoch, name)
            if x is None or self._emitted.get(key) == x:
                continue
            self._emitted[key] = x
            self._c.metric(name, x, self._epoch, -1)

    # ---- setup ------------------------------------------------------------

    def setup(self, trainer, pl_module, stage=None):
        c = self._client()
        if c is None:
            return
        world = int(getattr(trainer, "world_size", 1) or 1)
        if world > 1:
            c.configure(rank=getattr(trainer, "global_rank", 0), world=world)
        if c.recorder is not None:
            c.recorder.disabled = True  # the callback records instead
        self._wrap_transfer(pl_module)

    def _wrap_transfer(self, pl_module):
        orig = getattr(pl_module, "transfer_batch_to_device", None)
        if orig is None or getattr(orig, "_gnnscope", False):
            return
        cb = self

        @functools.wraps(orig)
        def transfer_batch_to_device(*args, **kwargs):
            s = cb._mark()
            try:
                return orig(*args, **kwargs)
            finally:
                cb._on_transfer(s, cb._mark())

        transfer_batch_to_device._gnnscope = True
        try:
            pl_module.transfer_batch_to_device = transfer_batch_to_device
        except Exception:
            pass

    def _on_transfer(self, start, end):
        if self._in_batch and self._fwd_open and self._fwd_end is None:
            # transfer inside the batch (the documented hook order): the
            # forward starts after it
            self._span("transfer", start, end, self._batch)
            self._train_start = end
            return
        self._xfer = (start, end)

    # ---- training ---------------------------------------------------------

    def on_train_epoch_start(self, trainer, pl_module):
        if self._client() is None:
            return
        self._epoch = int(trainer.current_epoch) + 1
        self._c.epoch, self._c.batch, self._c.explicit_epoch = self._epoch, 0, True
        self._prev = self._mark(False)
        self._xfer = None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if self._client() is None:
            return
        now = self._mark()
        self._batch = int(batch_idx)
        self._c.batch = self._batch
        xfer, self._xfer = self._xfer, None
        if xfer is not None and self._prev is not None and xfer[0][0] < self._prev[0]:
            xfer = None
        sample_end = xfer[0] if xfer is not None else now
        if self._prev is not None:
            self._span("sample", self._prev, (sample_end[0], None), self._batch)
        if xfer is not None:
            self._span("transfer", xfer[0], xfer[1], self._batch)
        self._in_batch = True
        self._fwd_open = True
        self._train_start = now
        self._fwd_end = self._bwd_start = self._step_start = self._loss = None

    def _end_forward(self):
        if self._in_batch and self._fwd_end is None:
            self._fwd_end = self._mark()
            self._span("forward", self._train_start, self._fwd_end, self._batch)

    def on_before_zero_grad(self, trainer, pl_module, optimizer):
        if self._client() is not None:
            self._end_forward()

    def on_before_backward(self, trainer, pl_module, loss):
        if self._client() is None:
            return
        self._end_forward()
        self._bwd_start = self._mark()
        try:
            self._loss = loss.detach()
        except Exception:
            self._loss = loss

    def on_after_backward(self, trainer, pl_module):
        if self._client() is None or self._bwd_start is None:
            return
        self._span("backward", self._bwd_start, self._mark(), self._batch)
        self._bwd_start = None

    def on_before_optimizer_step(self, trainer, pl_module, optimizer, *args):
        if self._client() is not None and self._in_batch:
            self._step_start = self._mark()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        c = self._client()
        if c is None or not self._in_batch:
            return
        end = self._mark()
        self._end_forward()
        if self._step_start is not None:
            self._span("step", self._step_start, end, self._batch)
        self._span("train", self._train_start, end, self._batch)
        if self._loss is not None:
            c.loss(self._loss, self._epoch, self._batch)
        c.mem(self._epoch, self._batch, "train")
        self._in_batch = False
        self._prev = (end[0], None)

    def on_train_epoch_end(self, trainer, pl_module):
        if self._client() is None:
            return
        self._metrics(trainer)
        self._c.end_epoch(self._epoch)

    # ---- validation -------------------------------------------------------

    def on_validation_epoch_start(self, trainer, pl_module):
        if self._client() is None or getattr(trainer, "sanity_checking", False):
            return
        self._eval = self._mark(False)
        self._eval_batches = 0

    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx,
                                  dataloader_idx=0):
        pass

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx=0):
        if self._eval is not None:
            self._eval_batches += 1

    def on_validation_epoch_end(self, trainer, pl_module):
        if self._client() is None or self._eval is None:
            return
        end = self._mark(False)
        self._c.span("eval", self._eval, end, self._epoch, 0,
                     attrs={"batches": self._eval_batches})
        self._c.mem(self._epoch, 0, "eval")
        self._eval = None
        self._prev = end
        self._metrics(trainer)

    # ---- failures ---------------------------------------------------------

    def on_exception(self, trainer, pl_module, exception):
        c = self._client()
        if c is not None and _cuda.is_oom(c.cuda(), exception):
            c.note_oom(exception, self._epoch, getattr(self, "_batch", 0))
