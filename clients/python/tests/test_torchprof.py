"""GNNSCOPE_TORCH_PROFILE: a window of training steps captured with
torch.profiler, its Chrome trace beside the journal, and the offset that
puts the trace on the run's clock (gnnscope._torchprof)."""

import json
import os
import stat
import unittest

from tests import util
from gnnscope import _torchprof

LOOP = os.path.join(util.HERE, "loops", "plain.py")
MS = 1_000_000


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
