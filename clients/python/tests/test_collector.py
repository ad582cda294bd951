"""Streaming to a collector (gnnscope._stream, docs/collector.md): a child
program's client against a collector played here on loopback, in threads
that end by themselves."""

import json
import os
import socket
import subprocess
import threading
import time
import unittest

from tests import util
from gnnscope import _client, _stream

TOKEN = "ab" * 32
RUN = "r1"
DDP = os.path.join(util.HERE, "loops", "ddp.py")
LIFETIME = 240  # seconds: every thread of the fake ends by then

PLAIN = """
import sys, time
import gnnscope
from gnnscope import _stream
_stream.BYE_TIMEOUT = float(sys.argv[2])
print("before", time.time_ns(), flush=True)
gnnscope.epoch(1)
for i in range(int(sys.argv[1])):
    gnnscope.metric("m", i, batch=i)
    if i % 10 == 9:
        time.sleep(0.01)
"""

LOADER = """
import sys
import torch
from torch.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    X, Y = torch.randn(64, 4), torch.randn(64, 1)
    tr = DataLoader(TensorDataset(X, Y), batch_size=16, num_workers=2,
                    multiprocessing_context=sys.argv[1])
    m = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    for ep in range(2):
        for x, y in tr:
            opt.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            opt.step()
"""


class Fake:
    """A collector per docs/collector.md: hello, welcome with the rank's
    count, clock answers, events in sequence, bye. drop_after closes the
    first connection after that many events; refuse answers every hello
    with refused; short makes the bye's count one less than the truth."""

    def __init__(self, test, drop_after=None, refuse=None, short=False, port=0, late=False):
        self.drop_after, self.refuse, self.short = drop_after, refuse, short
        self.lock = threading.Lock()
        self.events = {}      # rank -> events written, in order
        self.conns = []       # per connection: dict of what it saw
        self.byes = []
        self.dropped_resends = 0
        self.errors = []      # protocol breaches seen
        self.stop = threading.Event()
        self.go = threading.Event()  # a late fake listens once it is set
        self.deadline = time.monotonic() + LIFETIME
        self.srv = None
        if not late:
            self.listen(port)
        self.threads = [threading.Thread(target=self.accept, args=(port, late), daemon=True)]
        self.threads[0].start()
        test.addCleanup(self.close)

    def listen(self, port):
        self.srv = socket.create_server(("127.0.0.1", port))
        self.srv.settimeout(0.2)
        self.addr = "127.0.0.1:%d" % self.srv.getsockname()[1]

    def close(self):
        self.stop.set()
        for t in list(self.threads):
            t.join(5)
        if self.srv is not None:
            self.srv.close()

    def live(self):
        return not self.stop.is_set() and time.monotonic() < self.deadline

    def accept(self, port, late):
        if late:  # a collector not there yet when the program starts
            while not self.go.wait(0.2):
                if not self.live():
                    return
            self.listen(port)
        while self.live():
            try:
                sock, _ = self.srv.accept()
            except socket.timeout:
                continue
            t = threading.Thread(target=self.serve, args=(sock,), daemon=True)
            self.threads.append(t)
            t.start()

    def lines(self, sock):
        sock.settimeout(0.2)
        buf = b""
        while self.live():
            i = buf.find(b"\n")
            if i >= 0:
                line, buf = buf[:i], buf[i + 1:]
                yield json.loads(line)
                continue
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            buf += data

    def send(self, sock, obj):
        sock.sendall((json.dumps(obj) + "\n").encode())

    def serve(self, sock):
        with sock:
            c = {"hello": None, "hello_ns": None, "syncs": 0, "clocks": [], "seqs": [],
                 "syncs_before_clock": None, "events_before_clock": 0}
            with self.lock:
                self.conns.append(c)
            msgs = self.lines(sock)
            hello = next(msgs, None)
            c["hello"], c["hello_ns"] = hello, time.time_ns()
            if hello is None:
                return
            if self.refuse:
                self.send(sock, {"refused": self.refuse})
                return
            rank = hello["rank"]
            with self.lock:
                got = self.events.setdefault(rank, [])
                self.send(sock, {"welcome": 1, "next": len(got)})
            n = 0
            for msg in msgs:
                if "sync" in msg:
                    t2 = time.time_ns()
                    c["syncs"] += 1
                    self.send(sock, {"sync": msg["sync"], "t2": t2, "t3": time.time_ns()})
                elif "clock" in msg:
                    if not c["clocks"]:
                        c["syncs_before_clock"] = c["syncs"]
                    c["clocks"].append(msg["clock"])
                elif "seq" in msg:
                    if not c["clocks"]:
                        c["events_before_clock"] += 1
                    c["seqs"].append(msg["seq"])
                    with self.lock:
                        if msg["seq"] < len(got):
                            self.dropped_resends += 1
                        elif msg["seq"] > len(got):
                            self.send(sock, {"refused": "gap: expected seq %d, got %d"
                                             % (len(got), msg["seq"])})
                            return
                        else:
                            got.append(msg["ev"])
                    n += 1
                    if self.drop_after and n == self.drop_after and len(self.conns) == 1:
                        return  # the connection killed midway
                elif "bye" in msg:
                    with self.lock:
                        self.byes.append(msg["bye"])
                        have = len(got) - (1 if self.short else 0)
                    self.send(sock, {"bye": have})
                else:
                    self.errors.append("unexpected %r" % msg)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CollectorTest(unittest.TestCase):
    def run_plain(self, fake, n=200, bye_timeout=10.0, extra=None, timeout=120, addr=None):
        p, spill, journal = self.start_plain(fake, n, bye_timeout, extra, addr)
        out, err = p.communicate(timeout=timeout)
        r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.dirname(journal)), "a local journal was written")
        return r, spill

    def start_plain(self, fake, n, bye_timeout, extra, addr):
        d = util.tmpdir(self)
        script = os.path.join(d, "plain.py")
        with open(script, "w") as f:
            f.write(PLAIN)
        spill = os.path.join(d, "spill")
        env = {"GNNSCOPE_COLLECTOR": addr or fake.addr, "GNNSCOPE_COLLECTOR_TOKEN": TOKEN,
               "GNNSCOPE_SPILL_DIR": spill, "RANK": "1", "WORLD_SIZE": "2",
               "GROUP_RANK": "1", "GNNSCOPE_TEST_CLOCK_OFFSET_NS": "250000000"}
        env.update(extra or {})
        journal = os.path.join(d, "runs", RUN + ".jsonl")
        p = subprocess.Popen([util.PYTHON, script, str(n), str(bye_timeout)],
                             env=util.env_for(journal, extra=env), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(p.kill)
        return p, spill, journal

    def check_events(self, fake, n):
        evs = fake.events[1]
        self.assertEqual(evs[0]["t"], "run_start")
        values = [e["value"] for e in evs if e["t"] == "metric"]
        self.assertEqual(values, list(range(n)))  # nothing lost, nothing doubled
        return evs

    def test_stream_hello_clock_sequence_and_bye(self):
        fake = Fake(self)
        r, spill = self.run_plain(fake)
        before = int(r.stdout.split()[1])
        self.assertEqual(len(fake.conns), 1)
        c = fake.conns[0]
        h = c["hello"]
        self.assertEqual((h["hello"], h["token"], h["run"], h["rank"], h["world"]),
                         (1, TOKEN, RUN, 1, 2))
        self.assertEqual((h["node"], h["node_rank"]), (socket.gethostname(), 1))
        self.assertEqual(c["events_before_clock"], 0)
        self.assertEqual(c["syncs_before_clock"], 8)
        clock = c["clocks"][0]
        self.assertEqual(clock["samples"], 8)
        # the client's clock is 250 ms ahead: the collector's is -250 ms
        # off, within half the round trip (both clocks are this machine's)
        self.assertGreaterEqual(clock["delay"], 0)
        self.assertLess(clock["delay"], 10**10, clock)
        self.assertLessEqual(abs(clock["offset"] + 250_000_000), clock["delay"] // 2 + 1, clock)
        self.assertEqual(c["seqs"], list(range(len(c["seqs"]))))
        evs = self.check_events(fake, 200)
        start = evs[0]
        self.assertEqual((start["node"], start["node_rank"], start["rank"], start["world"]),
                         (socket.gethostname(), 1, 1, 2))
        # run_start's wall is read with the offset: at least 250 ms after
        # the program's own reading just before it
        wall = util.wall_ns(start["wall"])
        self.assertGreaterEqual(wall - before, 249_000_000)
        self.assertLess(wall - before, 60 * 10**9)
        self.assertEqual(fake.byes, [len(evs)])
        self.assertEqual(os.listdir(spill), [])  # complete: the spill file is gone
        self.assertNotIn("gnnscope:", r.stderr)
        self.assertEqual(fake.errors, [])

    def test_dropped_connection_resends(self):
        fake = Fake(self, drop_after=30)
        r, spill = self.run_plain(fake, n=300)
        self.assertGreaterEqual(len(fake.conns), 2)
        second = fake.conns[1]
        self.assertEqual(second["syncs_before_clock"], 8)
        self.assertEqual(second["events_before_clock"], 0)
        self.assertEqual(second["seqs"][0], 30)  # from the welcome's next
        evs = self.check_events(fake, 300)
        self.assertEqual(fake.byes, [len(evs)])
        self.assertEqual(os.listdir(spill), [])
        self.assertEqual(fake.errors, [])

    def test_collector_reached_late(self):
        port = free_port()
        fake = Fake(self, port=port, late=True)
        p, spill, _ = self.start_plain(fake, 50, 10.0, None, "127.0.0.1:%d" % port)
        # the program runs before the collector listens, and says so once
        first = p.stderr.readline()
        self.assertIn("cannot reach the collector at 127.0.0.1:%d" % port, first)
        fake.go.set()
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        self.assertNotIn("cannot reach", err)
        self.assertEqual(len(fake.conns), 1)
        self.assertEqual(fake.conns[0]["seqs"][0], 0)
        evs = self.check_events(fake, 50)
        self.assertEqual(fake.byes, [len(evs)])
        self.assertEqual(os.listdir(spill), [])

    def test_incomplete_bye_keeps_the_spill_file(self):
        fake = Fake(self, short=True)
        r, spill = self.run_plain(fake, n=20)
        files = os.listdir(spill)
        self.assertEqual(files, ["gnnscope-s1-%s-rank1.spill.jsonl" % RUN])
        path = os.path.join(spill, files[0])
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        with open(path) as f:
            lines = [json.loads(l) for l in f]
        self.assertEqual(lines, fake.events[1])  # line i is event i
        self.assertIn("lacks 1 of this rank's %d events" % len(lines), r.stderr)
        self.assertIn(path, r.stderr)

    def test_refused_hello(self):
        fake = Fake(self, refuse="wrong token")
        r, spill = self.run_plain(fake, n=20, bye_timeout=5.0)
        self.assertGreaterEqual(len(fake.conns), 1)
        self.assertEqual(fake.events, {})
        self.assertIn("refused the connection: wrong token", r.stderr)
        self.assertEqual(r.stderr.count("wrong token"), 1)  # said once
        self.assertEqual(len(os.listdir(spill)), 1)
        self.assertIn(os.path.join(spill, os.listdir(spill)[0]), r.stderr)

    def test_restarted_rank_follows_its_predecessor(self):
        fake = Fake(self)
        fake.events[1] = [{"t": "metric", "name": "old", "value": -1}] * 5
        r, spill = self.run_plain(fake, n=20)
        self.assertEqual(fake.conns[0]["seqs"][0], 5)
        evs = fake.events[1]
        self.assertEqual(evs[5]["t"], "run_start")
        self.assertEqual([e["value"] for e in evs[6:] if e["t"] == "metric"], list(range(20)))
        self.assertEqual(fake.byes, [len(evs)])
        self.assertEqual(os.listdir(spill), [])

    @unittest.skipUnless(util.has_torch(), "torch is not installed")
    def test_loader_workers_spans_arrive(self):
        for start in ("fork", "spawn"):
            with self.subTest(start=start):
                self.loader(start)

    def loader(self, start):
        fake = Fake(self)
        d = util.tmpdir(self)
        script = os.path.join(d, "loader.py")
        with open(script, "w") as f:
            f.write(LOADER)
        env = {"GNNSCOPE_COLLECTOR": fake.addr, "GNNSCOPE_COLLECTOR_TOKEN": TOKEN,
               "GNNSCOPE_SPILL_DIR": d}
        r = util.run(script, os.path.join(d, "runs", RUN + ".jsonl"), extra=env, args=[start])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(fake.conns), 1)  # the workers did not connect
        evs = fake.events[0]
        for name in ("fetch", "collate"):
            got = sorted((s["epoch"], s["batch"], s["lane"]) for s in util.spans(evs, name))
            self.assertEqual(got, [(e, b, "loader/%d" % (b % 2)) for e in (1, 2)
                                   for b in range(4)], name)
        self.assertEqual(len(util.spans(evs, "train")), 8)
        self.assertEqual(fake.byes, [len(evs)])
        self.assertFalse(os.path.exists(os.path.join(d, "runs")))
        self.assertEqual([f for f in os.listdir(d) if f.endswith(".spill.jsonl")], [])


    @unittest.skipUnless(util.has_torch(), "torch is not installed")
    def test_ddp_ranks_stream_apart(self):
        fake = Fake(self)
        d = util.tmpdir(self)
        port = str(free_port())
        procs = []
        for rank in range(2):
            env = util.env_for(os.path.join(d, "runs", RUN + ".jsonl"), extra={
                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "RANK": str(rank),
                "WORLD_SIZE": "2", "LOCAL_RANK": str(rank), "GNNSCOPE_COLLECTOR": fake.addr,
                "GNNSCOPE_COLLECTOR_TOKEN": TOKEN, "GNNSCOPE_SPILL_DIR": d})
            procs.append(subprocess.Popen([util.PYTHON, DDP], env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True))
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(sorted((c["hello"]["rank"], c["hello"]["world"]) for c in fake.conns),
                         [(0, 2), (1, 2)])
        for rank in range(2):
            evs = fake.events[rank]
            self.assertEqual((evs[0]["t"], evs[0]["rank"], evs[0]["world"]),
                             ("run_start", rank, 2))
            keys = sorted((s["epoch"], s["batch"]) for s in util.spans(evs, "backward"))
            self.assertEqual(keys, [(e, b) for e in (1, 2) for b in range(4)])
        self.assertEqual(sorted(fake.byes), sorted(len(fake.events[r]) for r in range(2)))
        self.assertFalse(os.path.exists(os.path.join(d, "runs")))


class StreamUnitTest(unittest.TestCase):
    def test_parse_addr(self):
        self.assertEqual(_stream.parse_addr("node1:7077"), ("node1", 7077))
        self.assertEqual(_stream.parse_addr("[::1]:7077"), ("::1", 7077))
        for bad in ("node1", ":7077", "node1:x"):
            with self.subTest(addr=bad), self.assertRaises(ValueError):
                _stream.parse_addr(bad)

    def test_rank_and_world_of_the_hello(self):
        for rank, world, want in ((1, None, (0, 1)), (1, 1, (0, 1)), (0, None, (0, 1)),
                                  (3, 4, (3, 4))):
            s = _stream.Stream("h:1", {}, rank, world, "j.jsonl")
            self.assertEqual((s.rank, s.world), want, (rank, world))
        self.assertTrue(s.spill.endswith("gnnscope-_-_-rank3.spill.jsonl"), s.spill)

    @unittest.skipUnless(hasattr(os, "fork"), "no fork")
    def test_forked_child_closes_its_copies(self):
        fake = Fake(self)
        d = util.tmpdir(self)
        env = {"GNNSCOPE_COLLECTOR": fake.addr, "GNNSCOPE_COLLECTOR_TOKEN": TOKEN,
               "GNNSCOPE_SPILL_DIR": d, "GNNSCOPE_RUN": RUN, "GNNSCOPE_SESSION": "s1"}
        c = _client.Client(os.path.join(d, RUN + ".jsonl"), env=env)
        c.metric("m", 1, 1, 0)
        s = c.journal
        for _ in range(600):  # the sender's connection, within a minute
            if s.connections:
                break
            time.sleep(0.1)
        sock, fd = s._sock, s._fd
        self.assertIsNotNone(sock)
        sockfd = sock.fileno()
        pid = os.fork()
        if pid == 0:  # the child: forget, then both descriptors must be gone
            code = 0
            try:
                c.after_fork()
                c.metric("m", 2, 1, 1)  # a child records nothing
                for n in (sockfd, fd):
                    try:
                        os.fstat(n)
                        code = 1
                    except OSError:
                        pass
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        os.fstat(sockfd)  # the parent's stay open
        c.metric("m", 3, 1, 2)
        c.shutdown()
        self.assertEqual([e["value"] for e in fake.events[0] if e["t"] == "metric"], [1, 3])
        self.assertEqual(fake.byes, [3])
        self.assertEqual(os.listdir(d), [])


if __name__ == "__main__":
    unittest.main()
