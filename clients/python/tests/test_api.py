import os
import textwrap
import time
import unittest

from tests import util


def script(test, body):
    d = util.tmpdir(test)
    path = os.path.join(d, "s.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(body))
    return d, path


class ExplicitAPITest(unittest.TestCase):
    BODY = """
        import time, gnnscope

        @gnnscope.span("forward")
        def fwd():
            time.sleep(0.002)

        for e in range(1, 3):
            gnnscope.epoch(e)
            for b in range(3):
                with gnnscope.span("sample", batch=b):
                    time.sleep(0.002)
                fwd()
                gnnscope.metric("loss", 1.0 / (e + b), batch=b)
                gnnscope.mem(peak=1000 + b, live=10, budget=4096, batch=b)
            gnnscope.metric("val_acc", 0.5 + e / 10)
        print("done")
        gnnscope.finish()
    """

    def test_events(self):
        d, s = script(self, self.BODY)
        j = os.path.join(d, "runs", "base.jsonl")
        r = util.run(s, j, auto=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "done\n")
        evs = util.read_journal(j)
        self.assertEqual(evs[0]["t"], "run_start")
        self.assertEqual((evs[0]["run"], evs[0]["session"]), ("base", "s1"))
        self.assertEqual(evs[-1], {"t": "run_end", "status": "ok"})
        samples = util.spans(evs, "sample")
        self.assertEqual([(e["epoch"], e["batch"]) for e in samples],
                         [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)])
        for e in samples:
            self.assertEqual(e["lane"], "compute")
            self.assertGreaterEqual(e["dur"], 1_500_000)
        fwd = util.spans(evs, "forward")
        self.assertEqual(len(fwd), 6)
        self.assertEqual(fwd[0]["batch"], 0)  # the current batch: not set, 0
        starts = [e["start"] for e in util.spans(evs)]
        self.assertEqual(starts, sorted(starts))
        loss = [e for e in evs if e["t"] == "metric" and e["name"] == "loss"]
        self.assertEqual(len(loss), 6)
        acc = [e for e in evs if e["t"] == "metric" and e["name"] == "val_acc"]
        self.assertEqual([(e["epoch"], e["batch"], e["value"]) for e in acc],
                         [(1, -1, 0.6), (2, -1, 0.7)])
        mem = [e for e in evs if e["t"] == "mem"]
        self.assertEqual([(m["peak"], m["live"], m["budget"], m["phase"]) for m in mem][:2],
                         [(1000, 10, 4096, "train"), (1001, 10, 4096, "train")])

    def test_no_journal_no_op(self):
        d, s = script(self, self.BODY)
        r = util.run(s)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((r.stdout, r.stderr), ("done\n", ""))
        self.assertEqual(os.listdir(d), ["s.py"])

    def test_no_events_no_journal(self):
        d, s = script(self, "import gnnscope\nprint(gnnscope.enabled())\n")
        j = os.path.join(d, "j.jsonl")
        r = util.run(s, j, auto=False)
        self.assertEqual(r.stdout, "True\n")
        self.assertFalse(os.path.exists(j))  # a process that records nothing leaves no journal

    def test_exit_without_finish_writes_no_run_end(self):
        d, s = script(self, """
            import gnnscope, sys
            gnnscope.metric("loss", 2.0, batch=0)
            sys.exit(3)
        """)
        j = os.path.join(d, "j.jsonl")
        r = util.run(s, j, auto=False)
        self.assertEqual(r.returncode, 3)
        evs = util.read_journal(j)
        self.assertEqual([e["t"] for e in evs], ["run_start", "metric"])

    def test_forked_child_records_nothing(self):
        d, s = script(self, """
            import gnnscope, os
            gnnscope.metric("loss", 1.0, batch=0)
            pid = os.fork()
            if pid == 0:
                gnnscope.metric("child", 1.0)
                with gnnscope.span("sample"):
                    pass
                os._exit(0)
            os.waitpid(pid, 0)
            gnnscope.metric("loss", 2.0, batch=1)
        """)
        j = os.path.join(d, "j.jsonl")
        r = util.run(s, j, auto=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = util.read_journal(j)
        self.assertEqual([(e["t"], e.get("name")) for e in evs],
                         [("run_start", None), ("metric", "loss"), ("metric", "loss")])

    def test_finish_failed(self):
        d, s = script(self, """
            import gnnscope
            with gnnscope.span("eval"):
                pass
            gnnscope.finish("failed", "bad data")
            gnnscope.finish("ok")
        """)
        j = os.path.join(d, "j.jsonl")
        util.run(s, j, auto=False)
        evs = util.read_journal(j)
        self.assertEqual(evs[-1], {"t": "run_end", "status": "failed", "error": "bad data"})
        self.assertEqual(sum(e["t"] == "run_end" for e in evs), 1)

    def test_flushed_while_running(self):
        d, s = script(self, """
            import gnnscope, time
            gnnscope.metric("loss", 1.0, batch=0)
            time.sleep(30)
        """)
        j = os.path.join(d, "j.jsonl")
        import subprocess
        p = subprocess.Popen([util.PYTHON, s], env=util.env_for(j, auto=False))
        try:
            deadline = time.monotonic() + 20
            n = 0
            while time.monotonic() < deadline:
                if os.path.exists(j):
                    n = len(util.read_journal(j))
                    if n == 2:
                        break
                time.sleep(0.05)
            self.assertEqual(n, 2)
        finally:
            p.kill()
            p.wait()


if __name__ == "__main__":
    unittest.main()
