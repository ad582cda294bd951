import math
import os
import unittest

from tests import util
from gnnscope import fidelity

LOOP = os.path.join(util.HERE, "loops", "plain.py")
BATCHES = math.ceil(600 / 64)


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class AutoTest(unittest.TestCase):
    def run_loop(self, *args, auto=True):
        d = util.tmpdir(self)
        j = os.path.join(d, "runs", "auto.jsonl")
        r = util.run(LOOP, j, auto=auto, args=args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        plain = util.run(LOOP, args=args)
        self.assertEqual(r.stdout, plain.stdout)  # the program's output is untouched
        return util.read_journal(j) if os.path.exists(j) else None

    def check(self, evs, epochs=3, eval_pass=False):
        self.assertEqual(evs[0]["t"], "run_start")
        self.assertNotIn("run_end", [e["t"] for e in evs])  # the runner writes it
        names = ("sample", "transfer", "train", "forward", "backward", "step")
        per = {}
        for s in util.spans(evs):
            if s["name"] in names:
                per.setdefault((s["epoch"], s["batch"]), []).append(s["name"])
        want = [(e, b) for e in range(1, epochs + 1) for b in range(BATCHES)]
        self.assertEqual(sorted(per), want)
        for k, got in per.items():
            self.assertEqual(sorted(got), sorted(names), k)
        for (e, b) in want:
            sp = {s["name"]: s for s in util.spans(evs) if (s["epoch"], s["batch"]) == (e, b)}
            tr = sp["train"]
            for child in ("forward", "backward", "step"):
                c = sp[child]
                self.assertGreaterEqual(c["start"], tr["start"])
                self.assertLessEqual(c["start"] + c["dur"], tr["start"] + tr["dur"])
            # host-timed: the transfer starts where the sample ended
            self.assertEqual(sp["sample"]["start"] + sp["sample"]["dur"],
                             sp["transfer"]["start"])
            self.assertLessEqual(sp["transfer"]["start"] + sp["transfer"]["dur"], tr["start"])
        loss = [(m["epoch"], m["batch"]) for m in evs
                if m["t"] == "metric" and m["name"] == "loss"]
        self.assertEqual(sorted(k for k in loss if k[1] >= 0), want)
        self.assertEqual(sorted(k for k in loss if k[1] < 0), [(e, -1) for e in range(1, epochs + 1)])
        ev = util.spans(evs, "eval")
        if eval_pass:
            self.assertEqual([s["epoch"] for s in ev], list(range(1, epochs + 1)))
            self.assertTrue(all(s["attrs"]["forwards"] == 2 for s in ev))
        else:
            self.assertEqual(ev, [])
        for s in util.spans(evs):
            if s["name"] in ("fetch", "collate"):  # DataLoader workers (test_workers)
                self.assertIn(s["lane"], ("loader/0", "loader/1"))
            else:
                self.assertEqual(s["lane"], "compute")

    def test_plain_loop(self):
        self.check(self.run_loop("--epochs", "3"))

    def test_loop_with_eval(self):
        self.check(self.run_loop("--epochs", "2", "--eval"), epochs=2, eval_pass=True)

    def test_other_style_and_workers(self):
        # model.zero_grad, torch.autograd.backward, DataLoader workers
        evs = self.run_loop("--epochs", "2", "--style", "b", "--workers", "2", "--eval")
        self.check(evs, epochs=2, eval_pass=True)
        fetched = sorted((s["epoch"], s["batch"]) for s in util.spans(evs, "fetch"))
        self.assertEqual(fetched, [(e, b) for e in (1, 2) for b in range(BATCHES)])

    def test_loss_values(self):
        evs = self.run_loop("--epochs", "1")
        loss = [m["value"] for m in evs if m["t"] == "metric" and m["name"] == "loss"
                and m["batch"] >= 0]
        self.assertEqual(len(loss), BATCHES)
        self.assertTrue(all(0 < v < 5 for v in loss))
        mean = [m["value"] for m in evs if m["t"] == "metric" and m["batch"] == -1]
        self.assertAlmostEqual(mean[0], sum(loss) / len(loss), places=9)

    def test_no_auto(self):
        self.assertIsNone(self.run_loop("--epochs", "1", auto=False))

    def test_fidelity_loose(self):
        # The strict 5 % check runs in scripts/bridge-fidelity.sh on real
        # batches; here only that the stages cover most of each batch.
        evs = self.run_loop("--epochs", "2", "--work", "5")
        bs = fidelity.batches(evs)
        self.assertEqual(len(bs), 2 * BATCHES)
        ratios = sorted(total / wall for _, _, total, wall in bs)
        self.assertLessEqual(ratios[-1], 1.0 + 1e-9)
        self.assertGreater(ratios[len(ratios) // 2], 0.8)


if __name__ == "__main__":
    unittest.main()


PYG_LOOP = """
import time, torch
from torch.utils.data import DataLoader, TensorDataset
from torch_geometric.loader.base import DataLoaderIterator

def build(batch):  # the batch assembly PyG does in DataLoaderIterator.__next__
    time.sleep(0.02)
    return batch

dl = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=16)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in DataLoaderIterator(iter(dl), build):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
print("ok")
"""

PYG_BASE = """
class DataLoaderIterator:
    def __init__(self, iterator, transform_fn):
        self.iterator = iterator
        self.transform_fn = transform_fn

    def __iter__(self):
        return self

    def __next__(self):
        return self.transform_fn(next(self.iterator))
"""


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class PyGIteratorTest(unittest.TestCase):
    def test_wrapping_iterator_is_the_sample(self):
        d = util.tmpdir(self)
        pkg = os.path.join(d, "torch_geometric", "loader")
        os.makedirs(pkg)
        for f, text in (("torch_geometric/__init__.py", ""), ("torch_geometric/loader/__init__.py", ""),
                        ("torch_geometric/loader/base.py", PYG_BASE), ("loop.py", PYG_LOOP)):
            with open(os.path.join(d, f), "w") as fh:
                fh.write(text)
        j = os.path.join(d, "pyg.jsonl")
        r = util.run(os.path.join(d, "loop.py"), j,
                     extra={"PYTHONPATH": util.CLIENT + os.pathsep + d})
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "ok\n", ""))
        evs = util.read_journal(j)
        samples = util.spans(evs, "sample")
        self.assertEqual([(s["epoch"], s["batch"]) for s in samples],
                         [(e, b) for e in (1, 2) for b in range(4)])
        self.assertTrue(all(s["dur"] >= 18_000_000 for s in samples))
        self.assertEqual(len(util.spans(evs, "train")), 8)


OOM_LOOP = """
import torch
from torch.utils.data import DataLoader, TensorDataset

class Big(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] > 8:
            raise torch.cuda.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 3.00 GiB (GPU 0; 79.1 GiB total)")
        return x.sum()

model = Big()
for bs in (8, 16):
    for (x,) in DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=bs):
        model(x).backward() if x.requires_grad else model(x)
"""


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class OOMTest(unittest.TestCase):
    def test_escaping_oom_ends_run_oom(self):
        d = util.tmpdir(self)
        s = os.path.join(d, "oom.py")
        with open(s, "w") as f:
            f.write(OOM_LOOP)
        j = os.path.join(d, "oom.jsonl")
        r = util.run(s, j)
        self.assertEqual(r.returncode, 1)
        self.assertIn("OutOfMemoryError", r.stderr)  # the usual traceback
        evs = util.read_journal(j)
        oom = [e for e in evs if e["t"] == "oom"]
        self.assertEqual(len(oom), 1)
        self.assertEqual((oom[0]["requested"], oom[0]["action"]), (3 << 30, "abort"))
        self.assertEqual(evs[-1]["t"], "run_end")
        self.assertEqual(evs[-1]["status"], "oom")


FULL_BATCH = """
import torch
x, y = torch.randn(50, 4), torch.randn(50, 1)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(4):
    model.train()
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        model(x)
"""

EXPLICIT = """
import torch, gnnscope
from torch.utils.data import DataLoader, TensorDataset
dl = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(1, 4):
    gnnscope.epoch(epoch)
    for i, (x, y) in enumerate(dl):
        if i == 3:
            break  # a limited number of batches per epoch
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    gnnscope.metric("val_acc", 0.1 * epoch)
"""


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class EpochTest(unittest.TestCase):
    def journal(self, code):
        d = util.tmpdir(self)
        s = os.path.join(d, "loop.py")
        with open(s, "w") as f:
            f.write(code)
        j = os.path.join(d, "j.jsonl")
        r = util.run(s, j)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        return util.read_journal(j)

    def test_full_batch_steps_are_epochs(self):
        evs = self.journal(FULL_BATCH)
        train = [(s["epoch"], s["batch"]) for s in util.spans(evs, "train")]
        self.assertEqual(train, [(e, 0) for e in range(1, 5)])
        self.assertEqual(util.spans(evs, "sample"), [])
        self.assertEqual([s["epoch"] for s in util.spans(evs, "eval")], [1, 2, 3, 4])
        for name in ("forward", "backward", "step"):
            self.assertEqual(len(util.spans(evs, name)), 4, name)

    def test_explicit_epochs_and_early_break(self):
        evs = self.journal(EXPLICIT)
        train = [(s["epoch"], s["batch"]) for s in util.spans(evs, "train")]
        self.assertEqual(train, [(e, b) for e in (1, 2, 3) for b in range(3)])
        # the batch fetched before the break took sampling time too
        samples = [(s["epoch"], s["batch"]) for s in util.spans(evs, "sample")]
        self.assertEqual(samples, [(e, b) for e in (1, 2, 3) for b in range(4)])
        acc = [(m["epoch"], m["batch"]) for m in evs if m["t"] == "metric"
               and m["name"] == "val_acc"]
        self.assertEqual(acc, [(1, -1), (2, -1), (3, -1)])
        ep = [m["epoch"] for m in evs if m["t"] == "metric" and m["name"] == "loss"
              and m["batch"] == -1]
        self.assertEqual(ep, [1, 2, 3])

    def test_early_break_counts_epochs(self):
        evs = self.journal(EXPLICIT.replace("    gnnscope.epoch(epoch)\n", ""))
        train = [(s["epoch"], s["batch"]) for s in util.spans(evs, "train")]
        self.assertEqual(train, [(e, b) for e in (1, 2, 3) for b in range(3)])
        acc = [m["epoch"] for m in evs if m["t"] == "metric" and m["name"] == "val_acc"]
        self.assertEqual(acc, [1, 2, 3])
