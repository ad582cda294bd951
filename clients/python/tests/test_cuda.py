import os
import time
import unittest

from tests import util
from tests.fakecuda import FakeCuda, FakeNvml, FakeTensor, OutOfMemoryError
from gnnscope import _auto, _client, _cuda


class Clock:
    def __init__(self):
        self.t = 1_000_000_000

    def __call__(self):
        return self.t


class NoNvml:
    def nvmlInit(self):
        raise OSError("no NVML here")


def make(test, nvml=None):
    d = util.tmpdir(test)
    j = os.path.join(d, "runs", "gpu.jsonl")
    clk, cuda = Clock(), FakeCuda()
    c = _client.Client(j, env={"GNNSCOPE_RUN": "gpu", "LOCAL_RANK": "0"}, clock=clk,
                       cuda=cuda, nvml=nvml or NoNvml(), interval=0.05)
    return c, clk, cuda, j


def advance(clk, cuda, host_ns, device_ns=None):
    clk.t += host_ns
    cuda.device_ns += host_ns if device_ns is None else device_ns


def events(c, j):
    c._open()
    c.journal.flush()
    return util.read_journal(j)


class DeviceClockTest(unittest.TestCase):
    def test_device_span_mapped_onto_host_clock(self):
        c, clk, cuda, j = make(self, nvml=FakeNvml())
        s = c.mark()  # first mark: one synchronize for the anchor
        c.nvml.stop()
        self.assertEqual(cuda.syncs, 1)
        anchor_host = s[0]
        # the host enqueues for 1 ms, the device runs the work 3 ms later for 5 ms
        advance(clk, cuda, 1_000_000, 3_000_000)
        cuda.device_ns += 5_000_000
        e = c.mark()
        c.span("forward", s, e, 1, 0)
        c.tick()
        self.assertEqual(util.spans(events(c, j)), [])  # not done yet
        cuda.done_ns = cuda.device_ns
        c.tick()
        evs = [e for e in events(c, j) if e["t"] != "gpu"]
        sp = util.spans(evs, "forward")[0]
        self.assertEqual(sp["start"], anchor_host)
        self.assertAlmostEqual(sp["dur"], 8_000_000, delta=1_000)
        self.assertEqual(sp["attrs"]["clock"], "cuda")
        self.assertEqual(sp["attrs"]["host_dur"], 1_000_000)
        self.assertEqual(cuda.syncs, 1)  # no synchronization on the way
        self.assertEqual(evs[0]["host"]["gpu"], "Fake GPU")
        self.assertEqual(evs[0]["host"]["driver"], "550.1")

    def test_anchor_chains_over_long_runs(self):
        cuda = FakeCuda()
        clk = Clock()
        dc = _cuda.DeviceClock(cuda, clk)
        dc.mark()
        host0 = dc._anchor[1]
        marks = []
        for i in range(1, 400):  # 400 events 10.5 s apart: over an hour
            cuda.device_ns += 10_500_000_123
            marks.append(dc.mark())
            cuda.done_ns = cuda.device_ns
            got = dc.host_ns(marks[-1])
            want = host0 + i * 10_500_000_123
            # float32 milliseconds: the error grows by at most 6e-8 of the
            # time run (the device's and the host's clocks drift more)
            self.assertLess(abs(got - want), 1e-7 * (want - host0) + 1_000, i)

    def test_sample_is_host_timed(self):
        c, clk, cuda, j = make(self)
        s = c.mark(device=False)
        advance(clk, cuda, 2_000)
        c.span("sample", s, c.mark(device=False), 1, 0)
        sp = util.spans(events(c, j), "sample")[0]
        self.assertEqual(sp["dur"], 2_000)
        self.assertNotIn("attrs", sp)


class LossMemOOMTest(unittest.TestCase):
    def test_deferred_loss_without_sync(self):
        c, clk, cuda, j = make(self)
        c.mark()
        cuda.device_ns += 1_000
        t = FakeTensor(0.75, cuda)
        c.loss(t, 1, 0)
        cuda.device_ns += 1_000
        c.loss(FakeTensor(0.25, cuda), 1, 1)
        c.end_epoch(1)
        c.tick()
        self.assertEqual([e for e in events(c, j) if e["t"] == "metric"], [])
        cuda.done_ns = cuda.device_ns
        c.tick()
        got = [(e["batch"], e["value"]) for e in events(c, j) if e["t"] == "metric"]
        self.assertEqual(got, [(0, 0.75), (1, 0.25), (-1, 0.5)])
        self.assertEqual(cuda.syncs, 1)

    def test_mem_per_batch(self):
        c, clk, cuda, j = make(self)
        cuda.peak, cuda.live = 7 << 30, 1 << 30
        c.mem(1, 0, "train")
        self.assertEqual(cuda.resets, 1)
        cuda.peak = 3 << 30
        c.mem(1, 1, "train")
        mem = [e for e in events(c, j) if e["t"] == "mem"]
        self.assertEqual([(m["batch"], m["peak"], m["live"], m["budget"]) for m in mem],
                         [(0, 7 << 30, 1 << 30, 80 << 30), (1, 3 << 30, 1 << 30, 80 << 30)])

    def test_oom_escaping_ends_run(self):
        c, clk, cuda, j = make(self)
        cuda.live = 70 << 30
        exc = OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; ...)")
        c.note_oom(exc, 2, 5)
        c.excepthook(exc, 2, 5)
        evs = events(c, j)
        oom = [e for e in evs if e["t"] == "oom"]
        self.assertEqual(oom, [{"t": "oom", "epoch": 2, "batch": 5, "requested": 2 << 30,
                                "live": 70 << 30, "budget": 80 << 30, "action": "abort"}])
        self.assertEqual(evs[-1]["t"], "run_end")
        self.assertEqual(evs[-1]["status"], "oom")
        self.assertIn("Tried to allocate", evs[-1]["error"])

    def test_oom_caught_is_skip(self):
        c, clk, cuda, j = make(self)
        c.note_oom(OutOfMemoryError("CUDA out of memory."), 1, 3)
        c.flush_oom("skip")
        c.excepthook(ValueError("other"), 1, 4)  # not an OOM: no run_end
        evs = events(c, j)
        self.assertEqual([(e["t"], e.get("action")) for e in evs[1:]], [("oom", "skip")])

    def test_requested_bytes(self):
        self.assertEqual(_cuda.requested_bytes("Tried to allocate 20.00 MiB"), 20 << 20)
        self.assertEqual(_cuda.requested_bytes("no size"), 0)


class NvmlTest(unittest.TestCase):
    def test_samples(self):
        nv = FakeNvml()
        c, clk, cuda, j = make(self, nvml=nv)
        c.metric("x", 1, 1, 0)  # opens the journal, CUDA found, sampler started
        deadline = time.monotonic() + 10
        evs = []
        while time.monotonic() < deadline:
            evs = [e for e in events(c, j) if e["t"] == "gpu"]
            if evs:
                break
            time.sleep(0.05)
        c.nvml.stop()
        self.assertEqual(nv.index, 0)
        self.assertEqual((evs[0]["used"], evs[0]["total"], evs[0]["util"]),
                         (3 << 30, 80 << 30, 0.42))


class AutoOnCudaTest(unittest.TestCase):
    """The auto-instrumentation's state machine on a fake CUDA device."""

    def test_batch_stages(self):
        c, clk, cuda, j = make(self)
        rec = _auto.Recorder(c)
        it = type("It", (), {})()
        for b in range(2):
            s = c.mark(False)
            advance(clk, cuda, 1_000_000)
            rec.on_next(it, s)                 # sample: 1 ms on the host
            tok = rec.on_xfer_begin()
            advance(clk, cuda, 100_000)
            rec.on_xfer_end(tok)
            tok = rec.on_forward_begin(True)
            advance(clk, cuda, 200_000, 2_000_000)
            rec.on_forward_end(tok)
            tok = rec.on_backward_begin(FakeTensor(1.0 + b, cuda))
            advance(clk, cuda, 300_000, 4_000_000)
            rec.on_backward_end(tok)
            rec.on_step_begin()
            advance(clk, cuda, 50_000, 500_000)
            cuda.peak = (b + 1) << 30
            rec.on_step_end()
        rec.on_stop(it, c.mark(False))
        cuda.done_ns = cuda.device_ns
        c.tick()
        evs = events(c, j)
        for name, dur in (("sample", 1_000_000), ("transfer", 100_000),
                          ("forward", 2_000_000), ("backward", 4_000_000), ("step", 500_000),
                          ("train", 6_500_000)):
            sp = util.spans(evs, name)
            self.assertEqual([(x["epoch"], x["batch"]) for x in sp], [(1, 0), (1, 1)], name)
            self.assertAlmostEqual(sp[0]["dur"], dur, delta=2_000, msg=name)
        mem = [(m["batch"], m["peak"]) for m in evs if m["t"] == "mem"]
        self.assertEqual(mem, [(0, 1 << 30), (1, 2 << 30)])
        loss = [(m["batch"], m["value"]) for m in evs if m["t"] == "metric"]
        self.assertEqual(loss, [(0, 1.0), (1, 2.0), (-1, 1.5)])
        self.assertEqual(cuda.syncs, 1)


if __name__ == "__main__":
    unittest.main()
