"""Zero-change instrumentation of a PyTorch training loop.

install(torch, client) patches, once torch is imported:

* DataLoader iterators' __next__ (and PyG's DataLoaderIterator around them,
  when torch_geometric is imported): the time blocked in it is `sample`; a
  StopIteration of the iterator that fed training batches ends the epoch;
* Tensor.to / .cuda / .pin_memory on batch data (not inside Module.to or a
  forward): calls between a batch's sample and its forward are grouped into
  one `transfer` span; host-timed (without CUDA events), it starts where
  the batch's sample ended, so that the loop's own work between the two
  (unpacking the batch, releasing the previous one) is not lost;
* nn.Module.__call__, outermost call only: in training mode with grad
  enabled it is `forward`; otherwise an evaluation forward, and
  consecutive ones form one `eval` span per pass;
* Tensor.backward / torch.autograd.backward: `backward`; its loss is read
  after backward (on CUDA through an asynchronous copy read at a later
  stage boundary, see Client.loss);
* Optimizer.step (global step hooks on torch 2, a class wrapper before):
  `step`; Optimizer.zero_grad / Module.zero_grad widen the batch's `train`
  span (forward .. step) when they come right before the forward or right
  after the step.

Which DataLoader iterator feeds training is learned from the first forward
after its first batch. Epochs are counted from the training iterator's
exhaustion; without a DataLoader (full-batch training) every optimizer step
is an epoch; gnnscope.epoch() overrides both. Only the main thread of the
main process records. DataLoader workers (fork or spawn) time each batch's
fetch and collate and send the times back with the batch (_workers); the
main process writes them as `fetch` and `collate` spans on lanes
loader/0 .. loader/N-1 with the batch's epoch and index, once the batch is
received; batches outside training carry attrs phase eval or other.

Every hook runs guarded: an internal error disables the instrumentation,
is reported once on stderr with a "gnnscope:" prefix, and never reaches
the program.
"""

import functools
import itertools
import os

from . import _torchprof
from . import _workers
from ._recorder import Recorder

_gen = itertools.count(1)


def _first_tensor(tensors):
    if isinstance(tensors, (list, tuple)):
        return tensors[0] if len(tensors) == 1 else None
    return tensors


def install(torch, client):
    """Patch torch for client; returns the Recorder."""
    from torch.utils.data import dataloader as dl
    rec = Recorder(client, getattr(torch.utils.data, "get_worker_info", None))
    _patch_loader(dl._BaseDataLoaderIter, rec)
    _workers.install(dl, rec)
    _patch_module(torch, rec)
    _patch_tensor(torch, rec)
    _patch_optim(torch, rec)
    _torchprof.install(torch, client, rec)
    if hasattr(os, "register_at_fork"):
        def child():
            rec.disabled = True
        os.register_at_fork(after_in_child=child)
    return rec


def patch_iterator(cls, rec):
    """Make cls.__next__ a batch source: the time blocked in it is sample,
    its StopIteration ends a pass. Iterators that wrap another (PyG's
    DataLoaderIterator around a DataLoader's) count once, as the outer one."""
    orig_next = cls.__next__
    if getattr(orig_next, "_gnnscope", False):
        return

    @functools.wraps(orig_next)
    def __next__(self):
        if rec.ndepth or rec.off():
            return orig_next(self)
        start = rec.c.mark(False)
        rec.work = None
        rec.ndepth += 1
        try:
            b = orig_next(self)
        except StopIteration:
            rec.ndepth -= 1
            rec.guard(rec.on_stop, self, start)
            raise
        except BaseException:
            rec.ndepth -= 1
            raise
        rec.ndepth -= 1
        rec.guard(rec.on_next, self, start)
        return b

    __next__._gnnscope = True
    cls.__next__ = __next__


def _patch_loader(Base, rec):
    patch_iterator(Base, rec)
    orig_reset = Base._reset

    @functools.wraps(orig_reset)
    def _reset(self, *args, **kwargs):
        r = orig_reset(self, *args, **kwargs)
        try:
            self._gnnscope_gen = next(_gen)
            self._gnnscope_kind = None
        except Exception:
            pass
        return r

    Base._reset = _reset


def _patch_module(torch, rec):
    Module = torch.nn.Module
    orig_call = Module.__call__
    orig_apply = Module._apply
    orig_mzg = Module.zero_grad
    grad_enabled = torch.is_grad_enabled

    @functools.wraps(orig_call)
    def __call__(self, *args, **kwargs):
        if rec.depth or rec.off():
            return orig_call(self, *args, **kwargs)
        tok = rec.guard(rec.on_forward_begin, bool(self.training and grad_enabled()))
        rec.depth += 1
        try:
            return orig_call(self, *args, **kwargs)
        except BaseException as exc:
            rec.guard(rec.on_error, exc)
            raise
        finally:
            rec.depth -= 1
            if tok is not None:
                rec.guard(rec.on_forward_end, tok)

    @functools.wraps(orig_apply)
    def _apply(self, *args, **kwargs):
        rec.apply_depth += 1
        try:
            return orig_apply(self, *args, **kwargs)
        finally:
            rec.apply_depth -= 1

    Module.__call__ = __call__
    Module._apply = _apply
    Module.zero_grad = _wrap_zero_grad(orig_mzg, rec)


def _wrap_zero_grad(orig, rec):
    @functools.wraps(orig)
    def zero_grad(self, *args, **kwargs):
        if rec.depth or rec.off():
            return orig(self, *args, **kwargs)
        tok = rec.guard(rec.on_zero_grad_begin)
        try:
            return orig(self, *args, **kwargs)
        finally:
            if tok is not None:
                rec.guard(rec.on_zero_grad_end, tok)
    return zero_grad


def _patch_tensor(torch, rec):
    Tensor = torch.Tensor
    Parameter = torch.nn.Parameter

    def wrap_xfer(orig):
        @functools.wraps(orig)
        def xfer(self, *args, **kwargs):
            if (rec.depth or rec.apply_depth or rec.bdepth or rec.c.internal or rec.off()
                    or (rec.pending is None and rec.cur is None)
                    or isinstance(self, Parameter)):
                return orig(self, *args, **kwargs)
            tok = rec.guard(rec.on_xfer_begin)
            try:
                return orig(self, *args, **kwargs)
            finally:
                if tok is not None:
                    rec.guard(rec.on_xfer_end, tok)
        return xfer

    for name in ("to", "cuda", "pin_memory"):
        setattr(Tensor, name, wrap_xfer(getattr(Tensor, name)))

    def wrap_backward(orig, first):
        @functools.wraps(orig)
        def backward(*args, **kwargs):
            if rec.bdepth or rec.off():
                return orig(*args, **kwargs)
            loss = first(args, kwargs)
            tok = rec.guard(rec.on_backward_begin, loss)
            rec.bdepth += 1
            try:
                return orig(*args, **kwargs)
            except BaseException as exc:
                rec.guard(rec.on_error, exc)
                raise
            finally:
                rec.bdepth -= 1
                if tok is not None:
                    rec.guard(rec.on_backward_end, tok)
        return backward

    Tensor.backward = wrap_backward(Tensor.backward, lambda a, k: a[0] if a else None)
    torch.autograd.backward = wrap_backward(
        torch.autograd.backward,
        lambda a, k: _first_tensor(a[0] if a else k.get("tensors")))


def _patch_optim(torch, rec):
    Opt = torch.optim.Optimizer
    Opt.zero_grad = _wrap_zero_grad(Opt.zero_grad, rec)
    om = getattr(torch.optim, "optimizer", None)
    pre = getattr(om, "register_optimizer_step_pre_hook", None)
    post = getattr(om, "register_optimizer_step_post_hook", None)
    if pre is not None and post is not None:
        def pre_hook(opt, args, kwargs):
            if not rec.off():
                rec.guard(rec.on_step_begin)

        def post_hook(opt, args, kwargs):
            if not rec.off():
                rec.guard(rec.on_step_end)

        pre(pre_hook)
        post(post_hook)
        return
    orig_init = Opt.__init__

    @functools.wraps(orig_init)
    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            _wrap_step_class(type(self), rec)
        except Exception as exc:
            rec.fail(exc)

    Opt.__init__ = __init__


def _wrap_step_class(cls, rec):
    orig = cls.step
    if getattr(orig, "_gnnscope_step", False):
        return

    @functools.wraps(orig)
    def step(self, *args, **kwargs):
        if rec.off():
            return orig(self, *args, **kwargs)
        rec.guard(rec.on_step_begin)
        try:
            return orig(self, *args, **kwargs)
        except BaseException as exc:
            rec.guard(rec.on_error, exc)
            raise
        finally:
            rec.guard(rec.on_step_end)

    step._gnnscope_step = True
    cls.step = step
