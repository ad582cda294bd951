"""DataLoader worker lanes (gnnscope._workers): the worker side against a
stand-in worker loop, and the whole path through real DataLoaders with the
start methods, persistent workers, prefetching, an abandoned iterator and
a worker that dies (examples/pytorch/loader_lanes.py)."""

import os
import pickle
import queue
import re
import unittest

from tests import util
from gnnscope import _workers

LANES = os.path.join(util.REPO, "examples", "pytorch", "loader_lanes.py")


class Fetcher:
    def __init__(self, collate_fn):
        self.collate_fn = collate_fn

    def fetch(self, index):
        return self.collate_fn([i * 10 for i in index])


def _worker_loop(index_queue, data_queue, init_fn, worker_id):
    """The shape of torch's loop: init_fn, a fetcher, tasks until None."""
    init_fn(worker_id)
    fetcher = Fetcher(sum)
    while True:
        r = index_queue.get(timeout=1)
        if r is None:
            break
        if r == "resume":
            data_queue.put((r, None))
            fetcher = Fetcher(max)
            continue
        idx, index = r
        data_queue.put((idx, fetcher.fetch(index)))


class WorkerSideTest(unittest.TestCase):
    def loop(self, tasks, init=None):
        iq, dq = queue.Queue(), queue.Queue()
        for t in tasks + [None]:
            iq.put(t)
        _worker_loop(iq, dq, _workers.WorkerInit(init), 3)
        out = []
        while not dq.empty():
            out.append(dq.get())
        return out

    def test_results_carry_timings(self):
        seen = []
        out = self.loop([(0, [1, 2]), (1, [3]), "resume", (0, [4, 5, 6])], seen.append)
        self.assertEqual(seen, [3])  # the user's worker_init_fn ran
        self.assertEqual([(r[0], r[1]) for r in out], [(0, 30), (1, 30), ("resume", None), (0, 60)])
        for r, n in zip([out[0], out[1], out[3]], (2, 1, 3)):
            self.assertIs(type(r[0]), _workers.WorkIdx)
            wid, t0, c0, c1, samples = r[0].work
            self.assertEqual((wid, samples), (3, n))
            self.assertTrue(t0 <= c0 <= c1)
        self.assertIs(type(out[2][0]), str)

    def test_work_idx_is_an_int_that_pickles(self):
        w = _workers.WorkIdx(7, (1, 2, 3, 4, 5))
        self.assertEqual(w, 7)
        self.assertEqual({7: "x"}[w], "x")
        back = pickle.loads(pickle.dumps(w))
        self.assertEqual((int(back), back.work, type(back)), (7, (1, 2, 3, 4, 5), _workers.WorkIdx))

    def test_outside_a_worker_loop_nothing_changes(self):
        init = _workers.WorkerInit(None)
        init(0)  # no loop frame above: no error, nothing wrapped
        self.assertFalse(_workers.attach(0, None))

    def test_worker_init_pickles_with_the_users_function(self):
        w = pickle.loads(pickle.dumps(_workers.WorkerInit(len)))
        self.assertIs(w.fn, len)


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class LoaderPathsTest(unittest.TestCase):
    def run_lanes(self, *args):
        d = util.tmpdir(self)
        j = os.path.join(d, "runs", "lanes.jsonl")
        r = util.run(LANES, j, args=list(args) + ["--marker", os.path.join(d, "died")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("gnnscope:", r.stderr)
        return r.stdout, util.read_journal(j)

    def loader_keys(self, evs, name="fetch"):
        keys = [(s["epoch"], s["batch"]) for s in util.spans(evs, name)
                if "phase" not in s.get("attrs", {})]
        self.assertEqual(len(keys), len(set(keys)), "duplicated %s spans" % name)
        return sorted(keys)

    def check(self, evs, want):
        """Exactly the trained batches want have loader spans, each on the
        lane of the worker that made it, before the trainer got it."""
        train = sorted((s["epoch"], s["batch"]) for s in util.spans(evs, "train"))
        self.assertEqual(train, want)
        self.assertEqual(self.loader_keys(evs, "fetch"), want)
        self.assertEqual(self.loader_keys(evs, "collate"), want)
        samples = {(s["epoch"], s["batch"]): s for s in util.spans(evs, "sample")}
        for c in util.spans(evs, "collate"):
            if "phase" in c.get("attrs", {}):
                continue
            s = samples[(c["epoch"], c["batch"])]
            self.assertLessEqual(c["start"] + c["dur"], s["start"] + s["dur"])
            self.assertIn(c["lane"], ("loader/0", "loader/1"))

    def test_spawn_persistent_with_init(self):
        out, evs = self.run_lanes("--start", "spawn", "--persistent", "--init",
                                  "--epochs", "2", "--samples", "32")
        self.assertEqual(out.count("init worker"), 2)
        self.check(evs, [(e, b) for e in (1, 2) for b in range(4)])
        for s in util.spans(evs, "fetch"):
            self.assertEqual(s["lane"], "loader/%d" % (s["batch"] % 2))

    def test_fork_prefetch_deep(self):
        out, evs = self.run_lanes("--start", "fork", "--prefetch", "4", "--epochs", "2",
                                  "--samples", "64", "--init")
        self.assertEqual(out.count("init worker"), 4)  # new workers each epoch
        self.check(evs, [(e, b) for e in (1, 2) for b in range(8)])

    def test_abandoned_iterator(self):
        for extra in ([], ["--persistent"]):
            with self.subTest(extra=extra):
                out, evs = self.run_lanes("--abandon", "3", "--epochs", "3", "--samples", "64",
                                          "--prefetch", "4", *extra)
                self.assertIn("epoch 0 batches 3", out)
                want = [(1, b) for b in range(3)] + [(e, b) for e in (2, 3) for b in range(8)]
                self.check(evs, want)

    def test_worker_that_dies(self):
        # sample 44 is in batch 5 (of 8 samples), made by worker 1; the
        # trainer learns of its death (SIGCHLD) after some batches
        out, evs = self.run_lanes("--die-at", "44", "--epochs", "2", "--samples", "64",
                                  "--delay", "0.005")
        m = re.search(r"worker died after (\d+) batches", out)
        self.assertIsNotNone(m, out)
        n = int(m.group(1))
        self.assertLessEqual(n, 5)
        second = 2 if n else 1  # an epoch without training is not counted
        self.check(evs, [(1, b) for b in range(n)] + [(second, b) for b in range(8)])


PHASES = """
import torch
from torch.utils.data import DataLoader, TensorDataset
X, Y = torch.randn(64, 4), torch.randn(64, 1)
tr = DataLoader(TensorDataset(X, Y), batch_size=16, num_workers=2)
va = DataLoader(TensorDataset(X, Y), batch_size=32, num_workers=2)
m = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
next(iter(tr))  # a peek: received, never trained
for ep in range(2):
    for x, y in tr:
        opt.zero_grad()
        torch.nn.functional.mse_loss(m(x), y).backward()
        opt.step()
    with torch.no_grad():
        for x, y in va:
            m(x)
"""


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class PhasesTest(unittest.TestCase):
    def test_eval_and_unused_batches(self):
        d = util.tmpdir(self)
        script = os.path.join(d, "phases.py")
        with open(script, "w") as f:
            f.write(PHASES)
        j = os.path.join(d, "phases.jsonl")
        r = util.run(script, j)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        got = [(s["epoch"], s["batch"], s["lane"], s["attrs"].get("phase"))
               for s in util.spans(util.read_journal(j), "fetch")]
        want = [(1, 0, "loader/0", "other")]
        for e in (1, 2):
            want += [(e, b, "loader/%d" % (b % 2), None) for b in range(4)]
            want += [(e, b, "loader/%d" % b, "eval") for b in range(2)]
        self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
