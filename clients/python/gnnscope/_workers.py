"""DataLoader worker lanes: what each worker process spent on each batch.

A DataLoader with workers starts them with its worker_init_fn; install()
makes the iterator start them with that function wrapped in WorkerInit
(the user's own still runs, after it). In the worker, WorkerInit finds the
worker loop's index and result queues (torch's _worker_loop, or the
_base_worker_loop of later versions) and wraps, on those queue objects
only:

* index_queue.get: a task (idx, indices) arriving starts the batch's
  fetch (dataset __getitem__ / __getitems__, or an IterableDataset's
  next);
* the fetcher's collate_fn: its call is the batch's collate (with PyG's
  loaders the sampler runs here);
* data_queue.put: the task index sent back with the batch becomes a
  WorkIdx, an int that carries the worker's timings (raw monotonic_ns).

The worker writes nothing. The main process reads the timings where the
iterator takes a result off its queue (_get_data) and, once the batch is
handed to the program (_process_data), gives them to the recorder, which
writes them as spans `fetch` and `collate` on lane loader/<worker> with the
epoch and batch of the batch the program received. So the journal keeps
one writer, every batch received is recorded once (persistent workers,
prefetching and out-of-order arrival included), and batches that were
prefetched but never received (an iterator abandoned midway, a worker
that died) are not recorded: nobody waited for them.

GNNSCOPE_LOADER_LANES=0 leaves the DataLoader alone (the rest of the
instrumentation stays; scripts/loader-overhead.py measures the cost so).

A WorkIdx behaves as the int it is everywhere torch uses it, so if the
main process did not read it the program still runs unchanged. Any
internal error leaves the batch unrecorded and the program untouched.
"""

import functools
import os
import sys
import threading
import time

LANE_PREFIX = "loader/"

# names of the worker loop's functions and the locals read from them
_LOOPS = ("_worker_loop", "_base_worker_loop", "_process_worker_loop")
_SKIP = ("ExceptionWrapper", "_IterableDatasetStopIteration")


def lane(worker_id):
    """The lane of DataLoader worker worker_id: loader/<id>."""
    return LANE_PREFIX + str(int(worker_id))


class WorkIdx(int):
    """A task index sent back by a worker, carrying its timings of the
    batch: (worker id, fetch start, collate start, collate end, samples),
    times in raw time.monotonic_ns, samples -1 when unknown."""

    def __new__(cls, idx, work):
        o = int.__new__(cls, idx)
        o.work = work
        return o

    def __reduce__(self):
        return (WorkIdx, (int(self), self.work))


class WorkerInit:
    """A DataLoader worker_init_fn that instruments the worker, then calls
    the user's own (fn, may be None). Picklable when fn is, so that spawned
    workers get it too."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, worker_id):
        try:
            attach(worker_id, sys._getframe(1))
        except Exception:
            pass
        if self.fn is not None:
            return self.fn(worker_id)
        return None


def _loop_frame(frame, depth=8):
    """The worker loop's frame at or above frame (WorkerInit may be called
    through wrappers such as torch's sharding init function)."""
    while frame is not None and depth > 0:
        code = frame.f_code
        if code.co_name in _LOOPS and "index_queue" in code.co_varnames \
                and "data_queue" in code.co_varnames:
            return frame
        frame = frame.f_back
        depth -= 1
    return None


class _Worker:
    """One worker's batch in progress."""

    def __init__(self, worker_id, frame, clock=time.monotonic_ns):
        self.id = int(worker_id)
        self.frame = frame
        self.clock = clock
        self.tid = threading.get_ident()
        self.fetcher = None
        self.stale = True  # the loop may have made a new fetcher
        self.t0 = None     # fetch start of the task in progress
        self.c0 = None     # first collate call's start
        self.c1 = None     # last collate call's end
        self.n = -1

    def begin(self, index):
        """A task arrived: its fetch starts now."""
        self.t0 = self.clock()
        self.c0 = self.c1 = None
        try:
            self.n = len(index)
        except Exception:
            self.n = -1
        if self.stale:
            self.stale = False
            self._wrap_fetcher()

    def _wrap_fetcher(self):
        fe = self.frame.f_locals.get("fetcher")
        if fe is None or fe is self.fetcher:
            return
        self.fetcher = fe
        orig = getattr(fe, "collate_fn", None)
        if orig is None or getattr(orig, "_gnnscope_collate", False):
            return
        w = self

        def collate_fn(*args, **kwargs):
            start = w.clock()
            try:
                return orig(*args, **kwargs)
            finally:
                if w.t0 is not None:
                    if w.c0 is None:
                        w.c0 = start
                    w.c1 = w.clock()

        collate_fn._gnnscope_collate = True
        fe.collate_fn = collate_fn

    def take(self):
        """The finished task's timings, or None."""
        t0, self.t0 = self.t0, None
        if t0 is None:
            return None
        end = self.clock()
        c0 = end if self.c0 is None else self.c0
        c1 = end if self.c1 is None else self.c1
        return (self.id, t0, c0, c1, self.n)


def attach(worker_id, frame):
    """Instrument the worker loop running at or above frame; False when
    it is not found (nothing is changed then)."""
    loop = _loop_frame(frame)
    if loop is None:
        return False
    loc = loop.f_locals
    iq, dq = loc.get("index_queue"), loc.get("data_queue")
    if iq is None or dq is None:
        return False
    w = _Worker(worker_id, loop)
    orig_get, orig_put = iq.get, dq.put

    @functools.wraps(orig_get)
    def get(*args, **kwargs):
        r = orig_get(*args, **kwargs)
        if w.tid == threading.get_ident():
            try:
                if type(r) is tuple and len(r) == 2:
                    w.begin(r[1])
                elif r is not None:
                    w.stale = True  # a resume: the loop makes a new fetcher
                    w.t0 = None
            except Exception:
                pass
        return r

    @functools.wraps(orig_put)
    def put(obj, *args, **kwargs):
        if w.tid == threading.get_ident():
            try:
                work = w.take()
                if (work is not None and type(obj) is tuple and len(obj) == 2
                        and type(obj[0]) is int and type(obj[1]).__name__ not in _SKIP):
                    obj = (WorkIdx(obj[0], work), obj[1])
            except Exception:
                pass
        return orig_put(obj, *args, **kwargs)

    iq.get = get
    dq.put = put
    return True


# ---- the main process ---------------------------------------------------------


def multiprocess_iter(dl):
    """The DataLoader iterator class that starts worker processes."""
    return (getattr(dl, "_MultiProcessingDataLoaderIter", None)
            or getattr(dl, "_MultiProcessDataLoaderIter", None))


def install(dl, rec):
    """Patch the multi-process DataLoader iterator of module dl (torch's
    dataloader) so that its workers' timings reach rec (a Recorder): it
    sets rec.work = ((worker, t0, c0, c1, n), idx) when a batch is handed
    to the program."""
    MP = multiprocess_iter(dl)
    if MP is None or getattr(MP.__init__, "_gnnscope", False):
        return
    if os.environ.get("GNNSCOPE_LOADER_LANES") == "0":
        return
    orig_init, orig_get, orig_proc = MP.__init__, MP._get_data, MP._process_data
    orig_reset = MP.__dict__.get("_reset")

    @functools.wraps(orig_init)
    def __init__(self, loader, *args, **kwargs):
        self._gnnscope_stash = {}
        fn = getattr(loader, "worker_init_fn", None)
        swapped = False
        if not rec.off() and not isinstance(fn, WorkerInit):
            try:
                loader.worker_init_fn = WorkerInit(fn)
                swapped = True
            except Exception:
                pass
        try:
            orig_init(self, loader, *args, **kwargs)
        finally:
            if swapped:
                try:
                    loader.worker_init_fn = fn
                except Exception:
                    pass

    @functools.wraps(orig_get)
    def _get_data(self, *args, **kwargs):
        r = orig_get(self, *args, **kwargs)
        if type(r) is tuple and len(r) == 2 and type(r[0]) is WorkIdx:
            idx, data = r
            try:
                stash = self.__dict__.setdefault("_gnnscope_stash", {})
                stash[id(data)] = (data, idx.work, int(idx))
            except Exception:
                pass
            r = (int(idx), data)
        return r

    @functools.wraps(orig_proc)
    def _process_data(self, data, *args, **kwargs):
        ent = None
        stash = self.__dict__.get("_gnnscope_stash")
        if stash:
            ent = stash.pop(id(data), None)
        out = orig_proc(self, data, *args, **kwargs)
        if ent is not None and ent[0] is data and not rec.off():
            rec.work = (ent[1], ent[2])
        return out

    MP.__init__ = __init__
    MP._get_data = _get_data
    MP._process_data = _process_data
    MP.__init__._gnnscope = True
    if orig_reset is not None:
        @functools.wraps(orig_reset)
        def _reset(self, *args, **kwargs):
            try:
                return orig_reset(self, *args, **kwargs)
            finally:
                # results of the previous pass read while resuming
                self._gnnscope_stash = {}

        MP._reset = _reset
