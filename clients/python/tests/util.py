"""Helpers of the client's tests: run children, read and check journals."""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.dirname(HERE)  # clients/python
REPO = os.path.dirname(os.path.dirname(CLIENT))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

sys.path.insert(0, CLIENT)

from gnnscope import _encode  # noqa: E402

INT_FIELDS = _encode.INTS
FLOAT_FIELDS = _encode.FLOATS


def has_torch():
    r = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True)
    return r.returncode == 0


def env_for(journal=None, auto=True, extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GNNSCOPE_") and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = CLIENT
    env["OMP_NUM_THREADS"] = "1"
    if journal:
        env["GNNSCOPE_JOURNAL"] = journal
        env["GNNSCOPE_RUN"] = os.path.basename(journal)[:-len(".jsonl")]
        env["GNNSCOPE_SESSION"] = "s1"
        env["GNNSCOPE_AUTO"] = "1" if auto else "0"
    if extra:
        env.update(extra)
    return env


def run(script, journal=None, auto=True, extra=None, args=(), timeout=300, cwd=None):
    """Run a Python script file in a child; returns CompletedProcess."""
    return subprocess.run([PYTHON, script] + list(args), env=env_for(journal, auto, extra),
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def tmpdir(test):
    d = tempfile.mkdtemp(prefix="gnnscope-test-")
    test.addCleanup(lambda: subprocess.run(["rm", "-rf", d]))
    return d


def check_line(line):
    """Decode one journal line as profile.DecodeEvent would accept it:
    a JSON object with a "t", integer fields as integers, float fields as
    numbers or the non-finite strings, strings as strings."""
    ev = json.loads(line)
    assert isinstance(ev, dict) and isinstance(ev.get("t"), str) and ev["t"], line
    for k, v in ev.items():
        if k in INT_FIELDS:
            assert isinstance(v, int) and not isinstance(v, bool), (k, line)
        elif k in FLOAT_FIELDS:
            assert (isinstance(v, (int, float)) and not isinstance(v, bool)) or \
                v in ("NaN", "Inf", "-Inf"), (k, line)
        elif k in _encode.STRINGS:
            assert isinstance(v, str), (k, line)
        elif k in ("host", "config", "summary", "attrs"):
            assert isinstance(v, (dict, list, str)), (k, line)
        elif k == "hist":
            assert all(isinstance(c, int) for c in v), line
        else:
            raise AssertionError("unknown field %r in %s" % (k, line))
    return ev


def read_journal(path):
    """All events of a journal; every line must be whole and decode."""
    with open(path, encoding="utf-8") as f:
        data = f.read()
    assert data == "" or data.endswith("\n"), "journal ends inside a line"
    return [check_line(l) for l in data.splitlines()]


def spans(evs, name=None):
    return [e for e in evs if e["t"] == "span" and (name is None or e["name"] == name)]


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def go_encode_keys():
    """(key order, always map) parsed from profile/encode.go, or None."""
    path = os.path.join(REPO, "profile", "encode.go")
    if not os.path.exists(path):
        return None
    src = _read(path)
    body = src[src.index("func AppendEvent"):src.index("func AppendLine")]
    order = ["t"] + re.findall(r'`,"(\w+)":', body)
    ev_src = _read(os.path.join(REPO, "profile", "event.go"))
    types = dict(re.findall(r'(Type\w+)\s*=\s*"(\w+)"', ev_src))
    snake = lambda f: re.sub(r"([a-z])([A-Z])", r"\1_\2", f[1:]).lower()
    always = {}
    sw = src[src.index("func always"):src.index("func AppendEvent")]
    for case, fields in re.findall(r"case (Type\w+):\s*return ([^\n]+)", sw):
        always[types[case]] = sorted(snake(f) for f in re.findall(r"f[A-Z]\w*", fields))
    return order, always


def wall_ns(rfc3339):
    """Unix ns of a run_start wall (RFC 3339 UTC with nanoseconds)."""
    import calendar
    import time as _time
    sec, _, frac = rfc3339.rstrip("Z").partition(".")
    base = calendar.timegm(_time.strptime(sec, "%Y-%m-%dT%H:%M:%S"))
    return base * 10**9 + int((frac + "000000000")[:9])
