"""Schema-v1 event encoding, field for field as profile/encode.go writes it.

Every event is a dict with "t" and the schema's field names. Fields that the
event type always carries (e.g. a span's epoch, batch, start and dur) are
written even when zero; the others only when set and not zero. Integers are
written as JSON integers, floats in their shortest form (whole numbers as
integers, non-finite values as the strings "NaN", "Inf", "-Inf"), raw JSON
fields (host, config, summary, attrs) as compact JSON objects.
"""

import json
import math

# Key order of profile.AppendEvent; rank and world (run_start of DDP runs)
# follow the wall-clock start; node and node_rank (the machine, added with
# the collector, docs/collector.md) come last. The collector's own keys
# (wall_local, clock) are never written by a client.
ORDER = (
    "t", "v", "run", "session", "variant", "wall", "rank", "world", "host",
    "config", "adjusted", "name", "lane", "epoch", "batch", "layer", "start",
    "dur", "ts", "phase", "peak", "live", "budget", "predicted", "used",
    "total", "util", "requested", "action", "actual", "hits", "misses",
    "bytes_h2d", "mean", "max", "hist", "rel_err", "value", "status", "error",
    "summary", "usage", "attrs", "node", "node_rank",
)

STRINGS = frozenset(("t", "run", "session", "variant", "wall", "node", "name",
                     "lane", "phase", "action", "status", "error"))
FLOATS = frozenset(("util", "mean", "max", "rel_err", "value"))
RAW = frozenset(("host", "config", "adjusted", "summary", "usage", "attrs"))
INTS = frozenset(ORDER) - STRINGS - FLOATS - RAW - {"hist"}

# Fields written even when zero, per event type (profile's always()).
ALWAYS = {
    "span": ("epoch", "batch", "start", "dur"),
    "mem": ("epoch", "batch", "peak", "live", "budget", "predicted"),
    "metric": ("epoch", "batch", "value"),
    "gpu": ("ts", "used", "total", "util"),
    "oom": ("epoch", "batch", "requested", "live", "budget"),
    "guard": ("epoch", "batch", "predicted", "actual", "budget"),
    "cache": ("epoch", "batch", "hits", "misses", "bytes_h2d"),
    "stale": ("epoch", "batch", "layer", "mean", "max"),
    "hist_err": ("epoch", "layer", "rel_err"),
    "run_start": ("v",),
}

# Integer fields written when present even if zero (rank 0, node 0).
_ZERO_OK = frozenset(("rank", "node_rank"))

_KNOWN = frozenset(ORDER)


def _float(v):
    v = float(v)
    if math.isnan(v):
        return '"NaN"'
    if math.isinf(v):
        return '"Inf"' if v > 0 else '"-Inf"'
    if v == math.trunc(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def _str(s):
    return json.dumps(str(s))


def _raw(v):
    try:
        return json.dumps(v, separators=(",", ":"), default=str, allow_nan=False)
    except ValueError:  # NaN or Inf inside: keep the line parseable
        return json.dumps(str(v))


def encode(ev):
    """Return the event dict ev as one journal line, without the newline.

    Unknown keys raise ValueError: the schema is closed.
    """
    t = ev["t"]
    unknown = ev.keys() - _KNOWN
    if unknown:
        raise ValueError("unknown event fields: %s" % ", ".join(sorted(unknown)))
    always = ALWAYS.get(t, ())
    parts = ['{"t":', _str(t)]
    for k in ORDER[1:]:
        v = ev.get(k)
        if v is None:
            if k not in always:
                continue
            v = 0
        if k in STRINGS:
            if v == "":
                continue
            parts.append(',"%s":%s' % (k, _str(v)))
        elif k in INTS:
            v = int(v)
            if v == 0 and k not in always and k not in _ZERO_OK:
                continue
            parts.append(',"%s":%d' % (k, v))
        elif k in FLOATS:
            f = float(v)
            if f == 0 and k not in always:
                continue
            parts.append(',"%s":%s' % (k, _float(f)))
        elif k == "hist":
            parts.append(',"hist":[%s]' % ",".join(str(int(c)) for c in v))
        else:
            parts.append(',"%s":%s' % (k, _raw(v)))
    parts.append("}")
    return "".join(parts)
