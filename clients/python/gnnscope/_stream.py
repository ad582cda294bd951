"""A rank's events streamed to a collector (docs/collector.md).

With GNNSCOPE_COLLECTOR=host:port set, the client writes through a Stream
instead of a Journal. The program's threads only append each event to the
spill file (buffered, written at least every interval, as the journal is)
and wake the sender; one background thread owns the socket: it connects
(hello with GNNSCOPE_COLLECTOR_TOKEN, welcome), measures the clock (8
exchanges, then one every 5 s, the lowest-delay sample of the 8 latest
reported as `clock`), sends the spill file's lines as {"seq":n,"ev":...}
from the welcome's `next`, and reconnects with backoff (0.1 s doubling to
5 s) whenever the connection fails. At exit it sends the rest and a bye
within 10 s; the spill file is removed when the collector has every event,
else kept and named on stderr.

A forked child (a DataLoader worker) has no sender thread and closes its
copies of the socket and the spill file (forget): it writes nothing, the
workers' timings reach the collector through the main process's events.
"""

import collections
import json
import os
import select
import socket
import sys
import tempfile
import threading
import time
from array import array

from . import _encode
from . import journal as _journal

BACKOFF_MIN = 0.1  # seconds before the first reconnection
BACKOFF_MAX = 5.0
SYNC_START = 8     # clock exchanges right after a welcome
SYNC_EVERY = 5.0   # seconds between later exchanges
SAMPLES = 8        # clock samples kept
BYE_TIMEOUT = 10.0  # seconds at exit for the rest and the bye
IO_TIMEOUT = 5.0   # seconds for a connection, an answer, a send
MAX_LINE = 4 << 20  # the protocol's line limit
READ_CHUNK = 1 << 20  # bytes of the spill file read at once


class Refused(Exception):
    """The collector answered {"refused": reason}."""


def parse_addr(addr):
    """(host, port) of "host:port" ("[v6]:port" too)."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not host:
        raise ValueError("collector address %r is not host:port" % addr)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def _safe(s):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in s) or "_"


def spill_path(env, rank):
    """<GNNSCOPE_SPILL_DIR or the temporary folder>/
    gnnscope-<session>-<run>-rank<R>.spill.jsonl"""
    d = env.get("GNNSCOPE_SPILL_DIR") or tempfile.gettempdir()
    name = "gnnscope-%s-%s-rank%d.spill.jsonl" % (
        _safe(env.get("GNNSCOPE_SESSION", "")), _safe(env.get("GNNSCOPE_RUN", "")), rank)
    return os.path.join(d, name)


class _Conn:
    """One connection's line I/O; reads keep at most one line buffered."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def send_obj(self, obj):
        self.send((json.dumps(obj, separators=(",", ":")) + "\n").encode("utf-8"))

    def _line(self):
        i = self.buf.find(b"\n")
        if i < 0:
            if len(self.buf) > MAX_LINE:
                raise ValueError("collector line over 4 MiB")
            return None
        line, self.buf = self.buf[:i], self.buf[i + 1:]
        msg = json.loads(line.decode("utf-8"))
        if not isinstance(msg, dict):
            raise ValueError("collector line is not an object")
        if "refused" in msg:
            raise Refused(str(msg["refused"]))
        return msg

    def _recv(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("collector closed the connection")
        self.buf += data

    def read(self):
        """The next message (blocking up to the socket's timeout)."""
        while True:
            msg = self._line()
            if msg is not None:
                return msg
            self._recv()

    def poll(self):
        """Messages already arrived, without waiting; raises when the
        collector refused (a gap) or closed the connection."""
        out = []
        while select.select([self.sock], [], [], 0)[0]:
            self._recv()
            while True:
                msg = self._line()
                if msg is None:
                    break
                out.append(msg)
        return out


class Stream:
    """Journal's interface (open, write, flush, close, forget, ticks) over
    a collector connection and a spill file."""

    def __init__(self, addr, env, rank, world, path, clock=time.monotonic_ns, t0=None,
                 interval=_journal.FLUSH_INTERVAL):
        self.addr = addr
        self.env = env
        # a process outside a distributed run is rank 0 of 1, as its
        # journal would be the run's main one (journal.rank_path)
        distributed = bool(world and world > 1)
        self.rank = (rank or 0) if distributed else 0
        self.world = world if distributed else 1
        self.path = path  # the local journal's path (traces are written beside it)
        self.spill = spill_path(env, self.rank)
        self.clock = clock
        self.t0 = clock() if t0 is None else t0
        self.interval = interval
        self._interval_ns = int(interval * 1e9)
        self.ticks = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._deadline = None
        self._pid = os.getpid()
        self._fd = None
        self._buf = []
        self._last = clock()
        self._offsets = array("q")  # byte offset of each spill line
        self._end = 0               # bytes in the spill file
        self._base = None  # seq of spill line 0: the first welcome's next
        self._sent = 0     # spill lines sent on this connection (or known had)
        self._had = 0      # the last welcome's next
        self._bye = None   # the collector's count in its bye
        self._samples = collections.deque(maxlen=SAMPLES)  # (delay, offset, ts)
        self._reported = None
        self._said = set()  # kinds of trouble said on stderr
        self._sock = None
        self._thread = None
        self._last_tick = 0.0
        self.connections = 0  # welcomes received (tests)

    # ---- the program's side -------------------------------------------------

    @property
    def opened(self):
        return self._fd is not None

    def open(self, run_start, thread=True):
        """Create the spill file with run_start as its line 0 and start the
        sender."""
        d = os.path.dirname(self.spill)
        if d:
            os.makedirs(d, mode=0o700, exist_ok=True)
        fd = os.open(self.spill, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        self._fd = fd
        with self._lock:
            self._buf.append(_encode.encode(run_start) + "\n")
            self._flush_locked()
        if thread:
            self._thread = threading.Thread(target=self._run, name="gnnscope-send",
                                            daemon=True)
            self._thread.start()

    def write(self, ev):
        """Queue one event for the spill file; written (and the sender
        woken) when the last write is older than the interval."""
        line = _encode.encode(ev) + "\n"
        with self._lock:
            if self._fd is None or os.getpid() != self._pid:
                return
            self._buf.append(line)
            if self.clock() - self._last >= self._interval_ns:
                self._flush_locked()
                self._wake.set()

    def flush(self):
        """Write every queued line to the spill file and wake the sender."""
        with self._lock:
            self._flush_locked()
        self._wake.set()

    def _flush_locked(self):
        self._last = self.clock()
        if not self._buf or self._fd is None or os.getpid() != self._pid:
            return
        lines, self._buf = self._buf, []
        data = []
        for line in lines:
            b = line.encode("utf-8")
            self._offsets.append(self._end)
            self._end += len(b)
            data.append(b)
        view = memoryview(b"".join(data))
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    @property
    def count(self):
        """Events written to the spill file."""
        return len(self._offsets)

    def close(self):
        """At exit: send the rest and the bye within BYE_TIMEOUT; remove the
        spill file when the collector has every event, else keep it and say
        so on stderr."""
        if self._fd is None or os.getpid() != self._pid:
            return
        with self._lock:
            self._flush_locked()
        self._deadline = time.monotonic() + BYE_TIMEOUT
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(BYE_TIMEOUT + 1)
        with self._lock:
            fd, self._fd = self._fd, None
            total = (self._base or 0) + self.count
        os.close(fd)
        if self._bye is not None and self._bye == total:
            try:
                os.remove(self.spill)
            except OSError:
                pass
            return
        if self._bye is not None:
            missing = "%d" % max(total - self._bye, 0)
        else:
            missing = "up to %d" % max(total - self._had, 0)
        sys.stderr.write("gnnscope: the collector at %s lacks %s of this rank's %d events; "
                         "they are kept in %s\n" % (self.addr, missing, total, self.spill))
        sys.stderr.flush()

    def forget(self):
        """In a forked child: close the copies of the socket and the spill
        file (the parent's stay open) and write nothing."""
        sock, fd = self._sock, self._fd
        self._sock = self._fd = None
        self._buf = []
        self._thread = None
        self._closing.set()
        if sock is not None:
            try:
                sock.close()  # this process's copy only: no shutdown
            except OSError:
                pass
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    # ---- the sender ---------------------------------------------------------

    def _time_left(self):
        if self._deadline is None:
            return None
        return self._deadline - time.monotonic()

    def _run(self):
        backoff = BACKOFF_MIN
        while True:
            left = self._time_left()
            if left is not None and left <= 0:
                return
            conn = None
            try:
                conn = self._connect()
                backoff = BACKOFF_MIN
                self._serve(conn)
                return  # the bye was answered
            except Refused as err:
                self._note_refusal(str(err))
            except (OSError, ValueError, KeyError, TypeError) as err:
                if not self.connections:
                    self._say_once("cannot reach the collector at %s (%s); retrying"
                                   % (self.addr, err))
            finally:
                self._drop(conn)
            self._pause(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _drop(self, conn):
        self._sock = None
        if conn is not None:
            try:
                conn.sock.close()
            except OSError:
                pass

    def _note_refusal(self, reason):
        if not reason.startswith("gap"):
            self._say_once("the collector at %s refused the connection: %s"
                           % (self.addr, reason))

    def _say_once(self, what):
        """One line on stderr, the first time only for each kind."""
        kind = what.partition(" (")[0]
        if kind in self._said:
            return
        self._said.add(kind)
        sys.stderr.write("gnnscope: %s (events are kept in %s)\n" % (what, self.spill))
        sys.stderr.flush()

    def _pause(self, seconds):
        """Wait seconds (less when closing), running the ticks."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            dl = self._time_left()
            if dl is not None:
                left = min(left, dl)
            if left <= 0:
                return
            time.sleep(min(left, self.interval))
            self._tick()

    def _tick(self):
        now = time.monotonic()
        if now - self._last_tick < self.interval:
            return
        self._last_tick = now
        for fn in list(self.ticks):
            try:
                fn()
            except Exception:  # a failing tick must not stop sending
                pass
        with self._lock:
            self._flush_locked()

    def _timeout(self):
        left = self._time_left()
        if left is None:
            return IO_TIMEOUT
        if left <= 0:
            raise TimeoutError("no time left for the collector")
        return min(IO_TIMEOUT, left)

    def _connect(self):
        host, port = parse_addr(self.addr)
        sock = socket.create_connection((host, port), timeout=self._timeout())
        self._sock = sock
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        conn = _Conn(sock)
        conn.send_obj({"hello": 1, "token": self.env.get("GNNSCOPE_COLLECTOR_TOKEN", ""),
                       "run": self.env.get("GNNSCOPE_RUN", ""), "rank": self.rank,
                       "world": self.world, "node": socket.gethostname(),
                       "node_rank": _journal.node_rank(self.env)})
        msg = conn.read()
        if msg.get("welcome") != 1:
            raise ValueError("collector answered %r to the hello" % msg)
        had = int(msg["next"])
        if self._base is None:
            # a first welcome with next > 0: this rank's earlier process
            # (a restart) sent that many; ours follow them
            self._base = had
        self._had = had
        self._sent = min(max(had - self._base, 0), self.count)
        self.connections += 1
        for _ in range(SYNC_START):
            sock.settimeout(self._timeout())
            self._exchange(conn)
        self._report(conn, force=True)
        return conn

    def _exchange(self, conn):
        """One clock exchange: T1 out, (T1, T2, T3) back, T4 on arrival."""
        t1 = _journal.wall_ns(self.env)
        conn.send(b'{"sync":%d}\n' % t1)
        while True:
            msg = conn.read()
            if msg.get("sync") == t1 and "t2" in msg and "t3" in msg:
                break
        t4 = _journal.wall_ns(self.env)
        ts = self.clock() - self.t0
        t2, t3 = int(msg["t2"]), int(msg["t3"])
        offset = ((t2 - t1) + (t3 - t4)) // 2
        delay = (t4 - t1) - (t3 - t2)
        self._samples.append((delay, offset, ts))

    def _report(self, conn, force=False):
        """Send the estimate (the lowest-delay sample kept) when it changed
        (or force)."""
        delay, offset, ts = min(self._samples)
        if not force and self._reported == (offset, delay):
            return
        conn.send(b'{"clock":{"ts":%d,"offset":%d,"delay":%d,"samples":%d}}\n'
                  % (ts, offset, delay, len(self._samples)))
        self._reported = (offset, delay)

    def _serve(self, conn):
        """Send events as they come, a clock exchange every SYNC_EVERY, and
        at the end the bye; returns once the bye is answered."""
        next_sync = time.monotonic() + SYNC_EVERY
        while True:
            self._tick()
            with self._lock:
                self._flush_locked()
            closing = self._closing.is_set()
            conn.sock.settimeout(self._timeout())
            self._send_events(conn)
            conn.poll()  # a gap refused, or a closed connection, shows here
            if closing and self._sent >= self.count:
                self._say_bye(conn)
                return
            if time.monotonic() >= next_sync:
                self._exchange(conn)
                self._report(conn)
                next_sync = time.monotonic() + SYNC_EVERY
            wait = min(self.interval, max(next_sync - time.monotonic(), 0))
            if not closing:
                self._wake.wait(wait)
                self._wake.clear()

    def _send_events(self, conn):
        """Send the spill file's lines from _sent on, READ_CHUNK at a time."""
        while True:
            with self._lock:
                count = self.count
                if self._sent >= count:
                    return
                first = self._sent
                start = self._offsets[first]
                last = first
                while last < count and self._offsets[last] - start < READ_CHUNK:
                    last += 1
                end = self._offsets[last] if last < count else self._end
            data = os.pread(self._spill_fd(), end - start, start)
            if len(data) != end - start:
                raise OSError("spill file %s is shorter than written" % self.spill)
            out = []
            seq = self._base + first
            for line in data.split(b"\n")[: last - first]:
                out.append(b'{"seq":%d,"ev":%s}\n' % (seq, line))
                seq += 1
            conn.send(b"".join(out))
            self._sent = last

    def _spill_fd(self):
        fd = self._fd
        if fd is None:
            raise OSError("spill file closed")
        return fd

    def _say_bye(self, conn):
        total = self._base + self.count
        conn.send(b'{"bye":%d}\n' % total)
        while True:
            msg = conn.read()
            if "bye" in msg:
                self._bye = int(msg["bye"])
                return
