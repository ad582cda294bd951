import json
import os
import re
import signal
import subprocess
import textwrap
import time
import unittest

from tests import util
from gnnscope import _encode, journal


class EncodeTest(unittest.TestCase):
    def test_order_and_always_match_go_encoder(self):
        go = util.go_encode_keys()
        if go is None:
            self.skipTest("profile/encode.go not found")
        order, always = go
        ours = list(_encode.ORDER)
        # node and node_rank (docs/collector.md) are the last keys of
        # AppendEvent; where profile/encode.go does not write them yet,
        # every other key must still be in its order
        self.assertEqual([k for k in ours if k in order], order)
        self.assertLessEqual(set(ours) - set(order), {"node", "node_rank"})
        self.assertEqual(ours[-2:], ["node", "node_rank"])
        self.assertEqual({t: sorted(f) for t, f in _encode.ALWAYS.items()}, always)

    def test_span_line_is_go_encoders(self):
        line = _encode.encode({"t": "span", "name": "sample", "lane": "compute",
                               "epoch": 1, "batch": 0, "start": 0, "dur": 1500})
        self.assertEqual(line, '{"t":"span","name":"sample","lane":"compute","epoch":1,'
                               '"batch":0,"start":0,"dur":1500}')

    def test_zero_fields_and_floats(self):
        self.assertEqual(_encode.encode({"t": "metric", "name": "loss", "epoch": 2,
                                         "batch": -1, "value": 0.0}),
                         '{"t":"metric","name":"loss","epoch":2,"batch":-1,"value":0}')
        self.assertEqual(_encode.encode({"t": "metric", "name": "x", "value": float("nan")}),
                         '{"t":"metric","name":"x","epoch":0,"batch":0,"value":"NaN"}')
        self.assertIn('"value":0.25', _encode.encode({"t": "metric", "name": "x", "value": 0.25}))
        self.assertIn('"util":"-Inf"', _encode.encode({"t": "gpu", "util": float("-inf")}))
        # a non-zero optional field of another type is written, a zero one not
        line = _encode.encode({"t": "run_end", "status": "ok", "epoch": 0, "error": ""})
        self.assertEqual(line, '{"t":"run_end","status":"ok"}')

    def test_raw_and_strings(self):
        line = _encode.encode({"t": "span", "name": 'a"b\n', "attrs": {"k": [1, 2]},
                               "start": 5, "dur": 1})
        ev = util.check_line(line)
        self.assertEqual(ev["name"], 'a"b\n')
        self.assertEqual(ev["attrs"], {"k": [1, 2]})
        self.assertNotIn("\n", line)
        ev = util.check_line(_encode.encode({"t": "span", "attrs": {"x": float("nan")}}))
        self.assertIsInstance(ev["attrs"], str)

    def test_unknown_field_rejected(self):
        with self.assertRaises(ValueError):
            _encode.encode({"t": "span", "nme": "x"})

    def test_run_start(self):
        ev = journal.run_start(1_700_000_000_123_456_789, rank=1, world=2, local_rank=1,
                               env={"GNNSCOPE_RUN": "base", "GNNSCOPE_SESSION": "s"})
        line = _encode.encode(ev)
        got = util.check_line(line)
        self.assertEqual(got["v"], 1)
        self.assertEqual((got["run"], got["variant"], got["session"]), ("base", "base", "s"))
        self.assertEqual((got["rank"], got["world"]), (1, 2))
        self.assertEqual(got["wall"], "2023-11-14T22:13:20.123456789Z")
        self.assertEqual(got["config"]["external"], True)
        self.assertEqual(got["config"]["client"], "python")
        self.assertIsInstance(got["config"]["cmd"], list)
        self.assertGreaterEqual(got["host"]["cores"], 1)
        self.assertEqual(got["host"]["local_rank"], 1)
        ev = journal.run_start(0, rank=0, world=2, env={})
        self.assertIn('"rank":0,"world":2', _encode.encode(ev))
        self.assertNotIn('"rank"', _encode.encode(journal.run_start(0, env={})))

    def test_run_start_node(self):
        line = _encode.encode(journal.run_start(0, env={}))
        self.assertTrue(line.endswith(',"node":"%s","node_rank":0}' % journal.socket.gethostname()),
                        line)  # the last keys, node_rank written even when 0
        got = util.check_line(line)
        self.assertEqual(got["node"], journal.socket.gethostname())
        for env, want in (({"SLURM_NODEID": "3"}, 3), ({"NODE_RANK": "2", "SLURM_NODEID": "3"}, 2),
                          ({"GROUP_RANK": "1", "NODE_RANK": "2"}, 1),
                          ({"GROUP_RANK": "x", "NODE_RANK": "4"}, 4)):
            with self.subTest(env=env):
                self.assertEqual(journal.run_start(0, env=env)["node_rank"], want)

    def test_test_clock_offset(self):
        base = journal.wall_ns({})
        off = journal.wall_ns({"GNNSCOPE_TEST_CLOCK_OFFSET_NS": "-250000000000"})
        # 250 s behind, whatever the time between the two readings
        self.assertLess(off - base, -249 * 10**9)
        self.assertGreater(off - base, -251 * 10**9)


class PathTest(unittest.TestCase):
    def test_rank_world(self):
        self.assertEqual(journal.rank_world({}), (0, None, None))
        self.assertEqual(journal.rank_world({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}),
                         (3, 4, 1))
        self.assertEqual(journal.rank_world({"LOCAL_RANK": "2", "WORLD_SIZE": "4"}), (2, 4, 2))

    def test_rank_path(self):
        p = "/s/runs/base.jsonl"
        self.assertEqual(journal.rank_path(p, 0, 2), p)
        self.assertEqual(journal.rank_path(p, 0, None), p)
        self.assertEqual(journal.rank_path(p, 1, 2), "/s/runs/base.rank1.jsonl")
        self.assertEqual(journal.rank_path(p, 3, 1), p)


class FakeClock:
    def __init__(self):
        self.t = 1_000

    def __call__(self):
        return self.t


class JournalTest(unittest.TestCase):
    def lines(self, path):
        with open(path) as f:
            return f.read().splitlines()

    def test_flush_interval(self):
        path = os.path.join(util.tmpdir(self), "r", "j.jsonl")
        clk = FakeClock()
        j = journal.Journal(path, clock=clk, interval=0.2)
        j.open({"t": "run_start", "v": 1}, thread=False)
        self.assertEqual(len(self.lines(path)), 1)  # run_start is written at once
        clk.t += 100_000_000
        j.write({"t": "metric", "name": "a", "value": 1})
        self.assertEqual(len(self.lines(path)), 1)  # buffered: 100 ms since the last flush
        clk.t += 150_000_000
        j.write({"t": "metric", "name": "b", "value": 2})
        self.assertEqual(len(self.lines(path)), 3)  # 250 ms: both lines written
        j.write({"t": "metric", "name": "c", "value": 3})
        j.close()
        self.assertEqual(len(self.lines(path)), 4)
        j.write({"t": "metric", "name": "d", "value": 4})  # after close: dropped
        self.assertEqual(len(self.lines(path)), 4)

    def test_flush_writes_whole_lines_in_pages(self):
        # A write of at most one page is never cut by SIGKILL: a flush of
        # many lines goes out in such writes, each ending at a line's end.
        path = os.path.join(util.tmpdir(self), "j.jsonl")
        clk = FakeClock()
        j = journal.Journal(path, clock=clk, interval=0.2)
        j.open({"t": "run_start", "v": 1}, thread=False)
        sizes = []
        real = os.write
        def spy(fd, data):
            b = bytes(data)
            sizes.append((len(b), b.endswith(b"\n")))
            return real(fd, b)
        journal.os.write = spy
        try:
            for i in range(400):
                j.write({"t": "metric", "name": "m", "value": i, "batch": i})
            j.write({"t": "metric", "name": "long", "value": 0, "attrs": {"pad": "x" * 9000}})
            j.flush()
        finally:
            journal.os.write = real
        j.close()
        self.assertGreater(len(sizes), 2)
        self.assertTrue(all(end for _, end in sizes), sizes)
        self.assertEqual(sum(1 for n, _ in sizes if n > journal.WRITE_CHUNK), 1)  # the one longer line alone
        self.assertEqual(len(self.lines(path)), 402)

    def test_background_flush(self):
        path = os.path.join(util.tmpdir(self), "j.jsonl")
        j = journal.Journal(path, interval=0.2)
        j.open({"t": "run_start", "v": 1})
        j.write({"t": "metric", "name": "a", "value": 1})
        deadline = time.monotonic() + 5
        while len(self.lines(path)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(len(self.lines(path)), 2)
        j.close()

    def test_threads_write_whole_lines(self):
        import threading
        path = os.path.join(util.tmpdir(self), "j.jsonl")
        j = journal.Journal(path, interval=0.01)
        j.open({"t": "run_start", "v": 1})

        def work(k):
            for i in range(500):
                j.write({"t": "metric", "name": "w%d" % k, "batch": i, "value": i})

        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        j.close()
        evs = util.read_journal(path)
        self.assertEqual(len(evs), 2001)
        for k in range(4):
            self.assertEqual([e["batch"] for e in evs if e.get("name") == "w%d" % k],
                             list(range(500)))

    def test_killed_process_leaves_whole_lines(self):
        d = util.tmpdir(self)
        path = os.path.join(d, "j.jsonl")
        script = os.path.join(d, "w.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent("""
                import gnnscope, time
                i = 0
                while True:
                    gnnscope.metric("m", i * 0.5, batch=i)
                    with gnnscope.span("sample", batch=i, attrs={"pad": "x" * 200}):
                        pass
                    i += 1
                    if i % 50 == 0:
                        time.sleep(0.001)
            """))
        p = subprocess.Popen([util.PYTHON, script], env=util.env_for(path, auto=False))
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if os.path.exists(path) and os.path.getsize(path) > 200_000:
                    break
                time.sleep(0.05)
        finally:
            p.send_signal(signal.SIGKILL)
            p.wait()
        evs = util.read_journal(path)
        self.assertEqual(evs[0]["t"], "run_start")
        self.assertGreater(len(evs), 100)
        ms = [e["batch"] for e in evs if e["t"] == "metric"]
        self.assertEqual(ms, list(range(len(ms))))  # nothing lost in the middle


if __name__ == "__main__":
    unittest.main()
