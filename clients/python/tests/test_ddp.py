import os
import socket
import subprocess
import unittest

from tests import util

LOOP = os.path.join(util.HERE, "loops", "ddp.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(util.has_torch(), "torch is not installed")
class DDPTest(unittest.TestCase):
    def test_two_ranks_two_journals(self):
        d = util.tmpdir(self)
        j = os.path.join(d, "runs", "ddp.jsonl")
        port = str(free_port())
        procs = []
        for rank in range(2):
            env = util.env_for(j, extra={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
                                         "RANK": str(rank), "WORLD_SIZE": "2",
                                         "LOCAL_RANK": str(rank)})
            procs.append(subprocess.Popen([util.PYTHON, LOOP], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(sorted(os.listdir(os.path.join(d, "runs"))),
                         ["ddp.jsonl", "ddp.rank1.jsonl"])
        for rank, name in enumerate(["ddp.jsonl", "ddp.rank1.jsonl"]):
            evs = util.read_journal(os.path.join(d, "runs", name))
            start = evs[0]
            self.assertEqual(start["t"], "run_start")
            self.assertEqual((start["rank"], start["world"], start["run"]), (rank, 2, "ddp"))
            self.assertEqual(start["host"]["local_rank"], rank)
            per = {}
            for s in util.spans(evs):
                self.assertEqual(s["lane"], "compute")
                per.setdefault((s["epoch"], s["batch"]), set()).add(s["name"])
            # 256 rows over 2 ranks, batches of 32: 4 batches per epoch and rank
            self.assertEqual(sorted(per), [(e, b) for e in (1, 2) for b in range(4)])
            for names in per.values():
                self.assertEqual(names, {"sample", "transfer", "train", "forward",
                                         "backward", "step"})
            self.assertFalse(any(e["t"] == "run_end" for e in evs))


if __name__ == "__main__":
    unittest.main()
