"""GNNSCOPE_TORCH_PROFILE: a window of training steps captured with
torch.profiler, its Chrome trace beside the journal, and the offset that
puts the trace on the run's clock (gnnscope._torchprof)."""

import importlib.util
import json
import os
import stat
import unittest

from tests import util
from gnnscope import _torchprof

LOOP = os.path.join(util.HERE, "loops", "plain.py")
MS = 1_000_000


class FakeRecord:
    """A memory record as torch's profiler gives one (kineto_results)."""

    def __init__(self, us, n, typ=0, dev=255, tid=1, name="[memory]"):
        self.v = (us, n, typ, dev, tid, name)

    def start_us(self):
        return self.v[0]

    def nbytes(self):
        return self.v[1]

    def device_type(self):
        return self.v[2]

    def device_index(self):
        return self.v[3]

    def start_thread_id(self):
        return self.v[4]

    def name(self):
        return self.v[5]


class FakeProf:
    """torch.profiler.profile as add_memory reads it."""

    def __init__(self, start, records):
        res = type("Results", (), {"trace_start_us": lambda _: start,
                                   "events": lambda _: records})()
        self.profiler = type("Profiler", (), {"kineto_results": res})()


def memory_of(trace):
    with open(trace) as f:
        doc = json.load(f)
    return [e for e in doc if e.get("name") == "[memory]"] if isinstance(doc, list) else []


class ParseTest(unittest.TestCase):
    def test_env(self):
        self.assertEqual(_torchprof.steps_from_env({}), (0, 3))
        self.assertEqual(_torchprof.steps_from_env({"GNNSCOPE_TORCH_PROFILE": "10"}), (10, 3))
        self.assertEqual(_torchprof.steps_from_env({"GNNSCOPE_TORCH_PROFILE": "x",
                                                    "GNNSCOPE_TORCH_PROFILE_WARMUP": "0"}), (0, 1))
        self.assertEqual(_torchprof.steps_from_env({"GNNSCOPE_TORCH_PROFILE": "-4",
                                                    "GNNSCOPE_TORCH_PROFILE_WARMUP": "7"}), (0, 7))

    def test_trace_path(self):
        self.assertEqual(_torchprof.trace_path("/s/runs/a.jsonl"), "/s/runs/a.torch.json")
        self.assertEqual(_torchprof.trace_path("/s/runs/a.rank2.jsonl"), "/s/runs/a.rank2.torch.json")

    def write(self, doc):
        d = util.tmpdir(self)
        p = os.path.join(d, "t.json")
        with open(p, "w") as f:
            json.dump(doc, f)
        return p

    def test_read_steps_both_shapes(self):
        evs = [{"name": "ProfilerStep#2", "ph": "X", "ts": 30.5, "dur": 10},
               {"name": "aten::mm", "ph": "X", "ts": 31, "dur": 1},
               {"name": "ProfilerStep#1", "ph": "X", "ts": 10, "dur": 20},
               {"name": "ProfilerStep#3", "ph": "i", "ts": 50},
               {"name": "ProfilerStep#1", "ph": "X", "ts": 12, "dur": 5,
                "cat": "gpu_user_annotation"},
               {"name": "ProfilerStep#4", "ph": "X", "ts": "bad", "dur": 1}, 7]
        self.assertEqual(_torchprof.read_steps(self.write(evs)),
                         [(10_000, 30_000), (30_500, 40_500)])
        doc = {"traceEvents": evs, "baseTimeNanoseconds": 1_000_000_000}
        self.assertEqual(_torchprof.read_steps(self.write(doc)),
                         [(1_000_010_000, 1_000_030_000), (1_000_030_500, 1_000_040_500)])
        self.assertIsNone(_torchprof.read_steps(self.write({"traceEvents": 3})))
        self.assertIsNone(_torchprof.read_steps(os.path.join(util.tmpdir(self), "none.json")))

    def test_measured_offset(self):
        p = self.write([{"name": "ProfilerStep#0", "ph": "X", "ts": 100, "dur": 50},
                        {"name": "ProfilerStep#1", "ph": "X", "ts": 150, "dur": 60}])
        steps = [(1_000, 51_000, 1, 4), (51_000, 111_000, 1, 5)]
        self.assertEqual(_torchprof.measured_offset(p, steps), (99_000, "steps"))
        self.assertEqual(_torchprof.measured_offset(p, steps[:1]), (None, ""))


class MemoryTest(unittest.TestCase):
    """The memory records a trace without Kineto lacks, appended."""

    def write(self, text):
        p = os.path.join(util.tmpdir(self), "t.json")
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_running_sum_from_its_lowest_point(self):
        # 100 bytes freed that were allocated before the window: the sum
        # goes to -100 and is raised by it; the CUDA device has its own
        recs = [(5, 1, 0, -1, 40), (6, 1, 1, 0, 512), (7, 2, 0, -1, -100),
                (9, 1, 0, -1, 30), (9, 1, 1, 0, -512)]
        evs = _torchprof.memory_events(recs)
        self.assertEqual([(e["ts"], e["tid"], e["args"]["Device Type"], e["args"]["Device Id"],
                           e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in evs],
                         [(5, 1, 0, -1, 40, 100), (6, 1, 1, 0, 512, 512), (7, 2, 0, -1, -100, 0),
                          (9, 1, 0, -1, 30, 30), (9, 1, 1, 0, -512, 0)])
        for e in evs:
            self.assertEqual((e["ph"], e["s"], e["cat"], e["name"], e["pid"]),
                             ("i", "t", "cpu_instant_event", "[memory]", "CPU functions"))
            self.assertNotIn("Total Reserved", e["args"])
            self.assertIn("lowest point", e["args"]["gnnscope"])
        # allocations only: the sum from the window's start
        evs = _torchprof.memory_events([(1, 1, 0, -1, 8), (2, 1, 0, -1, 8)])
        self.assertEqual([e["args"]["Total Allocated"] for e in evs], [8, 16])

    def test_records_on_the_traces_time_base(self):
        prof = FakeProf(1_000, [FakeRecord(1_300, -4), FakeRecord(1_200, 16, tid=3),
                                FakeRecord(1_250, 0, name="aten::mm"),
                                FakeRecord(1_310, 64, typ=1, dev=0)])
        self.assertEqual(_torchprof.memory_records(prof),
                         [(200, 3, 0, -1, 16), (300, 1, 0, -1, -4), (310, 1, 1, 0, 64)])
        self.assertEqual(_torchprof.memory_records(object()), [])

    def test_added_to_a_bare_array(self):
        prof = FakeProf(1_000, [FakeRecord(1_020, 16), FakeRecord(1_030, -16)])
        ops = '[{"name": "aten::mm", "ph": "X", "ts": 10, "dur": 30, "tid": 1, ' \
              '"pid": "CPU functions", "args": {}}]'
        for text, n in ((ops, 3), ("[]", 2), ("  [ ]\n", 2)):
            p = self.write(text)
            self.assertEqual(_torchprof.add_memory(prof, p), 2)
            with open(p) as f:
                doc = json.load(f)
            self.assertEqual(len(doc), n, doc)
            mem = memory_of(p)
            self.assertEqual([(e["ts"], e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in mem],
                             [(20, 16, 16), (30, -16, 0)])
            self.assertEqual([f for f in os.listdir(os.path.dirname(p))], ["t.json"])

    def test_left_alone(self):
        prof = FakeProf(1_000, [FakeRecord(1_020, 16)])
        kineto = '{"traceEvents": [{"name": "aten::mm", "ph": "X", "ts": 1, "dur": 2}]}'
        has = '[{"ph": "i", "name": "[memory]", "ts": 5, "args": {"Total Allocated": 3}}]'
        for text in (kineto, has, "[{\"name\": \"aten::mm\"", ""):
            p = self.write(text)
            self.assertEqual(_torchprof.add_memory(prof, p), 0, text)
            with open(p) as f:
                self.assertEqual(f.read(), text)
        # nothing recorded, no file
        p = self.write("[]")
        self.assertEqual(_torchprof.add_memory(FakeProf(0, []), p), 0)
        self.assertEqual(_torchprof.add_memory(prof, p + ".none"), 0)

    def test_found_across_chunks(self):
        # a [memory] name that straddles two chunks is still found
        pad = " " * (_torchprof.CHUNK - 20)
        text = '[{"name": "x", "args": {"a": "' + pad + '"}}, {"ph": "i", "name": "[memory]"}]'
        p = self.write(text)
        self.assertEqual(_torchprof.add_memory(FakeProf(0, [FakeRecord(5, 1)]), p), 0)
        p = self.write(text.replace("[memory]", "[memoryx]"))
        self.assertEqual(_torchprof.add_memory(FakeProf(0, [FakeRecord(5, 1)]), p), 1)
        self.assertEqual(len(memory_of(p)), 1)


@unittest.skipUnless(importlib.util.find_spec("torch"), "this interpreter has no torch")
class RecordedMemoryTest(unittest.TestCase):
    """A real capture with torch 1.13 on the CPU: the memory records in
    the trace agree with the profiler's own accounting of its operators."""

    def test_memory_matches_the_profilers_per_operator_memory(self):
        import torch
        tp = torch.profiler
        p = os.path.join(util.tmpdir(self), "t.json")
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 32), torch.randint(0, 4, (16,))
        with tp.profile(activities=[tp.ProfilerActivity.CPU], profile_memory=True,
                        schedule=tp.schedule(wait=0, warmup=1, active=3, repeat=1),
                        on_trace_ready=lambda prof: _torchprof.export(prof, p)) as prof:
            for _ in range(5):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                prof.step()
        self.assertEqual(stat.S_IMODE(os.stat(p).st_mode), 0o600)
        mem = memory_of(p)
        self.assertGreater(len(mem), 10)
        if torch.autograd.kineto_available():
            return  # Kineto wrote its own; the rest is about a build without it
        recs = [r for r in prof.profiler.kineto_results.events() if r.name() == "[memory]"]
        self.assertEqual(len(mem), len(recs))
        self.assertEqual(sum(e["args"]["Bytes"] for e in mem), sum(r.nbytes() for r in recs))
        # the running sum: every step by the event's bytes, its low at 0
        totals = [e["args"]["Total Allocated"] for e in mem]
        self.assertEqual(min(totals + [0]), 0)
        for a, b in zip(mem, mem[1:]):
            self.assertEqual(b["args"]["Total Allocated"] - a["args"]["Total Allocated"],
                             b["args"]["Bytes"])
        # each top-level operator's memory, as the profiler counts it (the
        # records within its start and end, ends included), is the sum of
        # the trace's records within it: the records are on the trace's
        # time base
        tops = [e for e in prof.events() if e.cpu_parent is None and e.name != "[memory]"]
        self.assertTrue(any(e.cpu_memory_usage for e in tops))
        for e in tops:
            s, t = e.time_range.start, e.time_range.end
            self.assertEqual(sum(m["args"]["Bytes"] for m in mem if s <= m["ts"] <= t),
                             e.cpu_memory_usage, e.name)
        # and those within no operator are the profiler's own top-level
        # [memory] events
        loose = [e.cpu_memory_usage for e in prof.events() if e.name == "[memory]"]
        inside = [m for m in mem if any(e.time_range.start <= m["ts"] <= e.time_range.end
                                        for e in tops)]
        self.assertEqual(len(loose), len(mem) - len(inside))


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class CaptureTest(unittest.TestCase):
    def run_loop(self, steps, epochs):
        d = util.tmpdir(self)
        j = os.path.join(d, "runs", "prof.jsonl")
        r = util.run(LOOP, j, args=["--epochs", str(epochs)],
                     extra={"GNNSCOPE_TORCH_PROFILE": str(steps)})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("gnnscope:", r.stderr)
        return j, util.read_journal(j)

    def check_aligned(self, j, evs, steps):
        trace = os.path.join(os.path.dirname(j), "prof.torch.json")
        self.assertTrue(os.path.exists(trace))
        self.assertEqual(stat.S_IMODE(os.stat(trace).st_mode), 0o600)
        win = util.spans(evs, "torch.profile")
        self.assertEqual(len(win), 1)
        a = win[0]["attrs"]
        self.assertEqual((a["trace"], a["steps"], a["align"]), ("prof.torch.json", steps, "steps"))
        off = a["offset_ns"]
        mine = util.spans(evs, "profiler.step")
        self.assertEqual([s["attrs"]["step"] for s in mine], list(range(steps)))
        got = _torchprof.read_steps(trace)
        self.assertEqual(len(got), steps)
        by_batch = {(s["name"], s["epoch"], s["batch"]): s for s in util.spans(evs)}
        # Every ProfilerStep range, moved by the one offset, lands on the
        # client's step, start and end, within a millisecond; and ends
        # where the batch's optimizer step ended, the batch's training
        # inside it. The client marks a boundary a few calls away from
        # the profiler's own mark: a trainer preempted between the two (a
        # loaded machine) moves one boundary by the preemption, so one in
        # ten may be off by more, none by more than 50 ms.
        off_by = []
        for (ts, te), s in zip(got, mine):
            off_by += [abs(ts - off - s["start"]), abs(te - off - (s["start"] + s["dur"]))]
            if s["attrs"].get("tail"):
                continue
            k = (s["epoch"], s["batch"])
            st, tr = by_batch[("step",) + k], by_batch[("train",) + k]
            self.assertEqual(st["start"] + st["dur"], s["start"] + s["dur"])
            self.assertGreaterEqual(tr["start"], s["start"])
            self.assertLessEqual(tr["start"] + tr["dur"], s["start"] + s["dur"])
        late = [d for d in off_by if d >= MS]
        self.assertLessEqual(len(late), len(off_by) // 10, off_by)
        self.assertLess(max(off_by), 50 * MS, off_by)
        self.check_memory(trace, got)

    def check_memory(self, trace, steps):
        """The trace holds the window's memory records, inside the
        recording: from its start (0) to the last step's end."""
        mem = memory_of(trace)
        self.assertGreater(len(mem), len(steps))
        last = steps[-1][1]
        for m in mem:
            self.assertLessEqual(0, m["ts"])
            self.assertLessEqual(round(m["ts"] * 1000), last)
            self.assertGreaterEqual(m["args"]["Total Allocated"], 0)
        in_steps = [m for m in mem if any(a <= m["ts"] * 1000 <= b for a, b in steps)]
        self.assertGreater(len(in_steps), len(mem) // 2)

    def test_window_aligned_with_the_clients_steps(self):
        j, evs = self.run_loop(5, 2)
        self.check_aligned(j, evs, 5)
        # 3 warm-up steps, one profiler warm-up step: batch 4 is the first
        self.assertEqual([(s["epoch"], s["batch"]) for s in util.spans(evs, "profiler.step")],
                         [(1, b) for b in range(4, 9)])

    def test_window_cut_short_by_the_end(self):
        j, evs = self.run_loop(50, 2)  # 20 steps in all
        # started after step 3, ended by steps 4 .. 20, and the exit
        self.check_aligned(j, evs, 17)
        mine = util.spans(evs, "profiler.step")
        self.assertEqual([s["attrs"].get("tail", False) for s in mine], [False] * 16 + [True])
        self.assertEqual((mine[-1]["epoch"], mine[-1]["batch"]), (2, 9))


if __name__ == "__main__":
    unittest.main()
