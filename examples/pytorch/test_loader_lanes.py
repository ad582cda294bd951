"""loader_lanes.py run as `gnnscope run --cmd` runs it (the client first on
PYTHONPATH, GNNSCOPE_JOURNAL set): the journal shows the DataLoader's
workers as lanes loader/0 and loader/1 beside the trainer's own spans.

Busy and idle are told by margins that sleeps guarantee, not by timing
thresholds: a slow __getitem__ sleeps at least its delay, a slow model
step at least its compute time.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "..", "..", "clients", "python")
SCRIPT = os.path.join(HERE, "loader_lanes.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def run(test, *args):
    """Run loader_lanes.py under the client; returns (stdout, events)."""
    d = tempfile.mkdtemp(prefix="gnnscope-lanes-")
    test.addCleanup(shutil.rmtree, d, True)
    j = os.path.join(d, "runs", "lanes.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GNNSCOPE_")}
    env.update(PYTHONPATH=CLIENT, GNNSCOPE_JOURNAL=j, GNNSCOPE_RUN="lanes",
               GNNSCOPE_SESSION="s1", OMP_NUM_THREADS="1")
    r = subprocess.run([PYTHON, SCRIPT] + list(args), env=env, capture_output=True,
                       text=True, timeout=600)
    test.assertEqual(r.returncode, 0, r.stderr)
    test.assertNotIn("gnnscope:", r.stderr)
    with open(j, encoding="utf-8") as f:
        evs = [json.loads(line) for line in f]
    return r.stdout, evs


def spans(evs, name, lane=None):
    return [e for e in evs if e["t"] == "span" and e["name"] == name
            and (lane is None or e["lane"] == lane)]


def busy(evs, lane):
    return sum(s["dur"] for s in evs if s["t"] == "span" and s["lane"] == lane
               and s["name"] in ("fetch", "collate"))


class LoaderLanesTest(unittest.TestCase):
    def check_lanes(self, evs, epochs, batches):
        """Every training batch has one fetch and one collate, on the lane
        of the worker that made it (round robin: batch b on worker b % 2),
        finished before the trainer received it."""
        keys = [(e, b) for e in range(1, epochs + 1) for b in range(batches)]
        samples = {(s["epoch"], s["batch"]): s for s in spans(evs, "sample", "compute")}
        self.assertEqual(sorted(samples), keys)
        for name in ("fetch", "collate"):
            got = sorted((s["epoch"], s["batch"], s["lane"]) for s in spans(evs, name))
            self.assertEqual(got, [(e, b, "loader/%d" % (b % 2)) for e, b in keys], name)
        fetch = {(s["epoch"], s["batch"]): s for s in spans(evs, "fetch")}
        collate = {(s["epoch"], s["batch"]): s for s in spans(evs, "collate")}
        for k in keys:
            f, c, s = fetch[k], collate[k], samples[k]
            self.assertEqual(f["start"] + f["dur"], c["start"])
            self.assertLessEqual(c["start"] + c["dur"], s["start"] + s["dur"])
            self.assertEqual(f["attrs"], {"samples": 8})

    def test_slow_getitem_busy_workers_waiting_trainer(self):
        out, evs = run(self, "--delay", "0.02", "--epochs", "2", "--samples", "64")
        self.assertIn("epoch 1 batches 8", out)
        self.check_lanes(evs, 2, 8)
        # each batch sleeps 8 x 20 ms in its worker
        for s in spans(evs, "fetch"):
            self.assertGreaterEqual(s["dur"], 8 * 20_000_000)
        # the trainer waits: its sample spans take most of its time, far
        # more than its (tiny) training steps
        wait = sum(s["dur"] for s in spans(evs, "sample", "compute"))
        train = sum(s["dur"] for s in spans(evs, "train", "compute"))
        self.assertGreater(wait, 4 * train)
        for lane in ("loader/0", "loader/1"):
            self.assertGreater(busy(evs, lane), wait / 4)

    def test_fast_dataset_idle_workers(self):
        out, evs = run(self, "--compute", "0.05", "--epochs", "2", "--samples", "64")
        self.check_lanes(evs, 2, 8)
        train = sum(s["dur"] for s in spans(evs, "train", "compute"))
        self.assertGreaterEqual(train, 16 * 50_000_000)
        # the workers work a small part of the time the model computes
        for lane in ("loader/0", "loader/1"):
            self.assertLess(busy(evs, lane), train / 8)

    def test_persistent_workers_not_duplicated(self):
        out, evs = run(self, "--persistent", "--epochs", "3", "--samples", "48", "--init",
                       "--delay", "0.002")
        self.assertEqual(out.count("init worker 0"), 1)  # the same workers all along
        self.assertEqual(out.count("init worker 1"), 1)
        self.check_lanes(evs, 3, 6)


if __name__ == "__main__":
    unittest.main()
