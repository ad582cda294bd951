#!/usr/bin/env python3
"""Writes the hostile-input corpus that scripts/hostile.sh runs gnnscope on:

    python3 scripts/hostile-gen.py      # rewrites testdata/hostile/in/ and cases.tsv

Standard library only. Every case is a file or folder under
testdata/hostile/in/ named after the case, and a line of cases.tsv:

    id  setup  args  expect  names  what

setup   how hostile.sh prepares the case before running the binary (see
        the script): "-", "session" (copy the case's folder into the store),
        "fifo", "bigline:MiB", "nopid", "fsize:KiB", "readonly", "cache:NAME"
args    the command line; {in} is the case's input, {sid} its session id
expect  err (must fail), ok (must succeed) or any
names   what the first error line must contain ({in}: the input's base name)

The inputs are small (the largest is about 1 MB), but many expand: a 300 KB
gzip member of 300 MB, a pickle of 2e8 edges, an npz declaring 65 GB.
The base session (testdata/hostile/base/) is a real synth-tiny run.
"""

import gzip
import io
import json
import math
import os
import pickle
import random
import shutil
import struct
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "testdata", "hostile")
IN = os.path.join(ROOT, "in")
BASE_ID = "20261125-172459-cad1"
BASE = os.path.join(ROOT, "base", BASE_ID)

cases = []
rnd = random.Random(7)


def case(cid, setup, args, expect, names, what):
    assert "\t" not in what
    cases.append((cid, setup, args, expect, names, what))


def path(name):
    return os.path.join(IN, name)


def write(name, data):
    p = path(name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---------------------------------------------------------------- npz

def npy(descr, shape, data, fortran=False, header=None):
    if header is None:
        shp = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
        header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shp}, }}"
    h = header.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


def arr(fmt, values):
    return struct.pack(f"<{len(values)}{fmt}", *values)


def small_graph(n=200, deg=4, feats=16, classes=4):
    """A symmetric random graph in CSR, sparse features, labels."""
    adj = [set() for _ in range(n)]
    for u in range(n):
        for _ in range(deg // 2):
            v = rnd.randrange(n)
            if v != u:
                adj[u].add(v)
                adj[v].add(u)
    indptr, indices = [0], []
    for u in range(n):
        indices += sorted(adj[u])
        indptr.append(len(indices))
    aptr, aidx, adata = [0], [], []
    for u in range(n):
        cols = sorted(rnd.sample(range(feats), 3))
        aidx += cols
        adata += [1.0] * 3
        aptr.append(len(aidx))
    labels = [u % classes for u in range(n)]
    return dict(n=n, f=feats, c=classes, indptr=indptr, indices=indices,
                aptr=aptr, aidx=aidx, adata=adata, labels=labels)


G = small_graph()


def npz_members(g=G, **override):
    m = {
        "adj_data": npy("<f4", (len(g["indices"]),), arr("f", [1.0] * len(g["indices"]))),
        "adj_indices": npy("<i4", (len(g["indices"]),), arr("i", g["indices"])),
        "adj_indptr": npy("<i4", (g["n"] + 1,), arr("i", g["indptr"])),
        "adj_shape": npy("<i8", (2,), arr("q", [g["n"], g["n"]])),
        "attr_data": npy("<f4", (len(g["adata"]),), arr("f", g["adata"])),
        "attr_indices": npy("<i4", (len(g["aidx"]),), arr("i", g["aidx"])),
        "attr_indptr": npy("<i4", (g["n"] + 1,), arr("i", g["aptr"])),
        "attr_shape": npy("<i8", (2,), arr("q", [g["n"], g["f"]])),
        "labels": npy("<i8", (g["n"],), arr("q", g["labels"])),
    }
    for k, v in override.items():
        if v is None:
            m.pop(k, None)
        else:
            m[k] = v
    return m


def zput(z, name, data):
    """Writes a zip member with a fixed date, so that the corpus is the same
    on every run."""
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = z.compression
    z.writestr(info, data)


def npz(name, members, compress=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compress) as z:
        for k, v in members.items():
            zput(z, k + ".npy", v)
    write(name, buf.getvalue())
    return buf.getvalue()


def npz_cases():
    st = "datasets stats {in}"
    npz("npz-ok.npz", npz_members())
    case("npz-ok", "-", st, "ok", "-", "control: a valid 200-node gnn-benchmark npz")
    for cid, shape, what in [
        ("npz-attr-shape-48g", (G["n"], 60_000_000), "F2: attr_shape (200, 6e7): 600 stored values ask for 48 GB of dense features"),
        ("npz-attr-shape-8g", (G["n"], 10_000_000), "F2: attr_shape (200, 1e7) asks for 8 GB"),
        ("npz-shape-overflow", (2**62, 2**62), "attr_shape whose product overflows int64"),
    ]:
        npz(cid + ".npz", npz_members(attr_shape=npy("<i8", (2,), arr("q", list(shape)))))
        case(cid, "-", st, "err", "{in}", what)
    labels = list(G["labels"])
    labels[5] = 2_000_000_000
    npz("npz-label-2e9.npz", npz_members(labels=npy("<i8", (G["n"],), arr("q", labels))))
    case("npz-label-2e9", "-", st, "err", "{in}", "F3: one label of 2e9 without class names")
    npz("npz-label-2e9-train.npz", npz_members(labels=npy("<i8", (G["n"],), arr("q", labels))))
    case("npz-label-2e9-train", "-", "train --data {in} --epochs 1", "err", "{in}", "F3: the same file through train")
    labels[5] = -5
    npz("npz-label-negative.npz", npz_members(labels=npy("<i8", (G["n"],), arr("q", labels))))
    case("npz-label-negative", "-", st, "ok", "-", "a label of -5: unlabeled, as documented")
    npz("npz-array-size-lie.npz", npz_members(adj_indices=npy("<i4", (1_000_000_000,), arr("i", G["indices"]))))
    case("npz-array-size-lie", "-", st, "err", "{in}", "adj_indices declares 1e9 entries and holds 800")
    bomb = npy("<f4", (len(G["adata"]),), arr("f", G["adata"]) + bytes(300 << 20))
    npz("npz-deflate-bomb.npz", npz_members(attr_data=bomb), zipfile.ZIP_DEFLATED)
    case("npz-deflate-bomb", "-", st, "err", "{in}", "a 300 KB deflated member that expands to 300 MB past its declared array")
    raw = npz("npz-zip-size-lie.npz", npz_members(), zipfile.ZIP_DEFLATED)
    write("npz-zip-size-lie.npz", lie_zip_sizes(raw, b"attr_data.npy", 100))
    case("npz-zip-size-lie", "-", st, "err", "{in}", "zip headers declare 100 bytes for a member that inflates to more")
    nan = list(G["adata"])
    nan[7] = float("nan")
    npz("npz-nan-feature.npz", npz_members(attr_data=npy("<f4", (len(nan),), arr("f", nan))))
    case("npz-nan-feature", "-", st, "err", "{in}", "a NaN feature")
    nan[7] = float("inf")
    npz("npz-inf-feature.npz", npz_members(attr_data=npy("<f4", (len(nan),), arr("f", nan))))
    case("npz-inf-feature", "-", "train --data {in} --epochs 1", "err", "{in}", "an Inf feature, through train")
    ptr = list(G["indptr"])
    ptr[-1] += 1000
    npz("npz-indptr-past.npz", npz_members(adj_indptr=npy("<i4", (len(ptr),), arr("i", ptr))))
    case("npz-indptr-past", "-", st, "err", "{in}", "adj_indptr points past adj_indices")
    idx = list(G["indices"])
    idx[3] = 1_000_000
    npz("npz-index-out-of-range.npz", npz_members(adj_indices=npy("<i4", (len(idx),), arr("i", idx))))
    case("npz-index-out-of-range", "-", st, "err", "{in}", "an edge to node 1e6 of a 200-node graph")
    good = open(path("npz-ok.npz"), "rb").read()
    write("npz-truncated.npz", good[: len(good) // 2])
    case("npz-truncated", "-", st, "err", "{in}", "the valid npz cut in half")
    write("npz-empty.npz", b"")
    case("npz-empty", "-", st, "err", "{in}", "an empty file")
    write("npz-random.npz", bytes(rnd.randrange(256) for _ in range(4096)))
    case("npz-random", "-", st, "err", "{in}", "4 KB of random bytes")
    npz("npz-complex-dtype.npz", npz_members(attr_data=npy("<c16", (len(G["adata"]),), bytes(16 * len(G["adata"])))))
    case("npz-complex-dtype", "-", st, "err", "{in}", "complex128 features")
    npz("npz-bad-header.npz", npz_members(adj_shape=npy("", (), arr("q", [200, 200]), header="{'descr': '<i8', 'shape': (2,")))
    case("npz-bad-header", "-", st, "err", "{in}", "an npy header dict cut mid-tuple")
    npz("npz-negative-shape.npz", npz_members(adj_indptr=npy("<i4", (-1,), arr("i", G["indptr"]))))
    case("npz-negative-shape", "-", st, "err", "{in}", "an npy shape of (-1,)")
    hlen = npy("<i8", (2,), arr("q", [200, 200]))
    hlen = hlen[:8] + struct.pack("<H", 65535) + hlen[10:]
    npz("npz-header-len-huge.npz", npz_members(adj_shape=hlen))
    case("npz-header-len-huge", "-", st, "err", "{in}", "an npy header length of 65535 in a 144-byte member")
    npz("npz-missing-adj.npz", npz_members(adj_data=None, adj_indices=None, adj_indptr=None, adj_shape=None))
    case("npz-missing-adj", "-", st, "err", "{in}", "no adjacency arrays")
    m = npz_members()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in m.items():
            zput(z, k + ".npy", v)
        zput(z, "labels.npy", npy("<i8", (3,), arr("q", [1, 2, 3])))
    write("npz-duplicate-member.npz", buf.getvalue())
    case("npz-duplicate-member", "-", st, "any", "{in}", "labels.npy twice, the second of the wrong length")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in m.items():
            zput(z, k + ".npy", v)
        for i in range(20000):
            zput(z, f"extra{i}.npy", b"")
    write("npz-many-members.npz", buf.getvalue())
    case("npz-many-members", "-", st, "any", "{in}", "20000 extra empty members")
    write("npz-not-zip-text.npz", "adj_indices,1,2,3\n")
    case("npz-not-zip-text", "-", st, "err", "{in}", "a text file named .npz")


def lie_zip_sizes(raw, member, size):
    """Rewrites the uncompressed size of member in the local and central
    headers of a zip file."""
    b = bytearray(raw)
    i = 0
    while True:
        i = b.find(b"PK\x03\x04", i)
        if i < 0:
            break
        nlen = struct.unpack_from("<H", b, i + 26)[0]
        if bytes(b[i + 30:i + 30 + nlen]) == member:
            struct.pack_into("<I", b, i + 22, size)
        i += 4
    i = 0
    while True:
        i = b.find(b"PK\x01\x02", i)
        if i < 0:
            break
        nlen = struct.unpack_from("<H", b, i + 28)[0]
        if bytes(b[i + 46:i + 46 + nlen]) == member:
            struct.pack_into("<I", b, i + 24, size)
        i += 4
    return bytes(b)


# ---------------------------------------------------------------- OGB

def gz(data):
    return gzip.compress(data if isinstance(data, bytes) else data.encode(), 9, mtime=0)


def ogb(cid, g=G, edges=None, feat=None, label=None, nodes=None, train=None, drop=()):
    d = cid
    if edges is None:
        edges = "".join(f"{u},{v}\n" for u in range(g["n"]) for v in g["indices"][g["indptr"][u]:g["indptr"][u + 1]] if u < v)
    if feat is None:
        feat = "".join(",".join("1.0" if j in g["aidx"][g["aptr"][u]:g["aptr"][u + 1]] else "0.0" for j in range(g["f"])) + "\n" for u in range(g["n"]))
    if label is None:
        label = "".join(f"{y}\n" for y in g["labels"])
    if nodes is None:
        nodes = f"{g['n']}\n"
    if train is None:
        train = "".join(f"{u}\n" for u in range(0, 120))
    files = {
        "raw/edge.csv.gz": edges, "raw/node-feat.csv.gz": feat, "raw/node-label.csv.gz": label,
        "raw/num-node-list.csv.gz": nodes, "split/random/train.csv.gz": train,
        "split/random/valid.csv.gz": "".join(f"{u}\n" for u in range(120, 160)),
        "split/random/test.csv.gz": "".join(f"{u}\n" for u in range(160, 200)),
    }
    for k, v in files.items():
        if k in drop:
            continue
        if isinstance(v, str) or not v.startswith(b"\x1f\x8b"):
            v = gz(v)
        write(os.path.join(d, k), v)


def ogb_cases():
    st = "datasets stats {in}"
    ogb("ogb-ok")
    case("ogb-ok", "-", st, "ok", "-", "control: a valid 200-node OGB folder")
    ogb("ogb-duplicate-edges", edges=gz(b"0,1\n" * (300 << 20 >> 2)))
    case("ogb-duplicate-edges", "-", st, "err", "edge.csv", "F5: a 300 KB edge.csv.gz holding 300 MB of one duplicate edge")
    ogb("ogb-long-line", edges=gz(b"1" * (192 << 20)))
    case("ogb-long-line", "-", st, "err", "edge.csv", "F5: a single 192 MB line")
    ogb("ogb-long-feature-line", feat=gz(b"1.0," * (32 << 20) + b"1.0\n"))
    case("ogb-long-feature-line", "-", st, "err", "node-feat", "a 128 MB feature row")
    ogb("ogb-label-2e9", label="".join(f"{y if u != 9 else 2000000000}\n" for u, y in enumerate(G["labels"])))
    case("ogb-label-2e9", "-", st, "err", "node-label", "F3: one label of 2e9")
    ogb("ogb-num-nodes-huge", nodes="1000000000000\n")
    case("ogb-num-nodes-huge", "-", st, "err", "num-node-list", "num-node-list says 1e12 nodes")
    ogb("ogb-edge-out-of-range", edges="0,1\n1,1000000000\n")
    case("ogb-edge-out-of-range", "-", st, "err", "edge.csv", "an edge to node 1e9")
    ogb("ogb-negative-node", edges="0,1\n-1,3\n")
    case("ogb-negative-node", "-", st, "err", "edge.csv", "an edge from node -1")
    ogb("ogb-feature-nan", feat="nan,1.0\n" + "0.0,1.0\n" * 199)
    case("ogb-feature-nan", "-", st, "err", "node-feat", "a NaN feature")
    ogb("ogb-feature-garbage", feat="abc,def\n" * 200)
    case("ogb-feature-garbage", "-", st, "err", "node-feat", "features that are not numbers")
    ogb("ogb-feature-ragged", feat="1.0,2.0\n1.0\n" * 100)
    case("ogb-feature-ragged", "-", st, "err", "node-feat", "rows of 2 and 1 features")
    ogb("ogb-split-out-of-range", train="0\n1\n5000000\n")
    case("ogb-split-out-of-range", "-", st, "err", "train", "a training node id of 5e6")
    ogb("ogb-gzip-truncated", edges=gz("".join(f"{u},{u + 1}\n" for u in range(199)))[:40])
    case("ogb-gzip-truncated", "-", st, "err", "edge.csv", "edge.csv.gz cut after 40 bytes")
    ogb("ogb-missing-features", drop=("raw/node-feat.csv.gz",))
    case("ogb-missing-features", "-", st, "err", "node-feat", "no node-feat.csv.gz")
    ogb("ogb-gzip-bomb-labels", label=gz(b"1\n" * (200 << 20 >> 1)))
    case("ogb-gzip-bomb-labels", "-", st, "err", "node-label", "200 MB of labels for 200 nodes")


# ---------------------------------------------------------------- Planetoid

def planetoid(cid, replace=None):
    src = os.path.join(HERE, "..", "gnn", "data", "planetoid", "testdata", "proto2")
    d = path(cid)
    os.makedirs(d, exist_ok=True)
    for f in sorted(os.listdir(src)):
        shutil.copy(os.path.join(src, f), os.path.join(d, f))
    for k, v in (replace or {}).items():
        write(os.path.join(cid, "ind.tiny." + k), v)


def planetoid_cases():
    st = "datasets stats {in}"
    planetoid("planetoid-ok")
    case("planetoid-ok", "-", st, "ok", "-", "control: a valid 515-node Planetoid folder")
    shared = [v % 500 for v in range(400_000)]
    planetoid("planetoid-shared-list", {"graph": pickle.dumps({u: shared for u in range(515)}, protocol=2)})
    case("planetoid-shared-list", "-", st, "err", "graph", "F4: one 400k-entry neighbour list reused by 515 nodes (2e8 edges in 800 KB)")
    planetoid("planetoid-test-index-huge", {"test.index": "99999999999\n"})
    case("planetoid-test-index-huge", "-", st, "err", "test.index", "a test index of 1e11")
    planetoid("planetoid-test-index-negative", {"test.index": "513\n-4\n"})
    case("planetoid-test-index-negative", "-", st, "err", "test.index", "a test index of -4")
    planetoid("planetoid-test-index-garbage", {"test.index": "513\nabc\n"})
    case("planetoid-test-index-garbage", "-", st, "err", "test.index", "a test index that is not a number")
    planetoid("planetoid-test-index-long", {"test.index": "5" * (1 << 20)})
    case("planetoid-test-index-long", "-", st, "err", "test.index", "a 1 MB line of digits")
    g = open(path("planetoid-ok/ind.tiny.graph"), "rb").read()
    planetoid("planetoid-graph-truncated", {"graph": g[: len(g) // 2]})
    case("planetoid-graph-truncated", "-", st, "err", "graph", "the graph pickle cut in half")
    planetoid("planetoid-pickle-exec", {"graph": b"\x80\x02cos\nsystem\nq\x00X\x08\x00\x00\x00touch hq\x01\x85q\x02Rq\x03."})
    case("planetoid-pickle-exec", "-", st, "err", "graph", "a pickle that calls os.system (must not run it)")
    planetoid("planetoid-pickle-deep", {"graph": b"\x80\x02" + b"(" * 1_000_000 + b"."})
    case("planetoid-pickle-deep", "-", st, "err", "graph", "a million nested MARKs")
    planetoid("planetoid-x-random", {"x": bytes(rnd.randrange(256) for _ in range(2048))})
    case("planetoid-x-random", "-", st, "err", "ind.tiny.x", "ind.tiny.x replaced by random bytes")
    planetoid("planetoid-two-datasets", {})
    write("planetoid-two-datasets/ind.other.test.index", "1\n")
    case("planetoid-two-datasets", "-", st, "err", "planetoid-two-datasets", "two datasets in one folder")


# ---------------------------------------------------------------- .gsd

def crc32c(data):
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def gsd(g=G, feats=None, hdr=None, indices=None, crc_ok=True):
    n, f = g["n"], g["f"]
    x = feats if feats is not None else [0.0] * (n * f)
    if feats is None:
        for u in range(n):
            for j in g["aidx"][g["aptr"][u]:g["aptr"][u + 1]]:
                x[u * f + j] = 1.0
    train, valid, test = list(range(120)), list(range(120, 160)), list(range(160, 200))
    idx = indices if indices is not None else g["indices"]
    sections = [b"hostile", arr("q", g["indptr"]), arr("i", idx), arr("f", x), arr("i", g["labels"]),
                arr("i", train), arr("i", valid), arr("i", test)]
    body, off = b"", 256
    for s in sections:
        pad = (-off) % 64
        body += bytes(pad) + s
        off += pad + len(s)
    h = dict(version=1, size=256, flags=1, nodes=n, edges=len(idx), features=f, classes=g["c"],
             name=7, train=120, valid=40, test=40, total=off)
    h.update(hdr or {})
    head = b"GNNSGSD\x00" + struct.pack("<II", h["version"], h["size"]) + struct.pack(
        "<10Q", h["flags"], h["nodes"], h["edges"], h["features"], h["classes"], h["name"],
        h["train"], h["valid"], h["test"], h["total"])
    head += bytes(252 - len(head))
    crc = crc32c(head)
    head += struct.pack("<I", crc if crc_ok else crc ^ 1)
    return head + body


def gsd_cases():
    st = "datasets stats {in}"
    write("gsd-ok.gsd", gsd())
    case("gsd-ok", "-", st, "ok", "-", "control: a valid 200-node cache file")
    write("gsd-classes-2e9.gsd", gsd(hdr=dict(classes=2_000_000_000)))
    case("gsd-classes-2e9", "-", st, "err", "{in}", "F3: a header of 2e9 classes")
    ok = gsd()
    write("gsd-truncated.gsd", ok[: len(ok) - 1000])
    case("gsd-truncated", "-", st, "err", "{in}", "a cache file missing its last 1000 bytes")
    write("gsd-size-lie.gsd", gsd(hdr=dict(total=1 << 40)))
    case("gsd-size-lie", "-", st, "err", "{in}", "a header that says the file has 1 TiB")
    write("gsd-nodes-huge.gsd", gsd(hdr=dict(nodes=1 << 40)))
    case("gsd-nodes-huge", "-", st, "err", "{in}", "a header of 2^40 nodes with a valid CRC")
    write("gsd-edges-huge.gsd", gsd(hdr=dict(edges=(1 << 62) - 1)))
    case("gsd-edges-huge", "-", st, "err", "{in}", "a header of 2^62 edges: section sizes overflow")
    write("gsd-bad-crc.gsd", gsd(crc_ok=False))
    case("gsd-bad-crc", "-", st, "err", "{in}", "a header with a wrong CRC")
    write("gsd-empty.gsd", b"")
    case("gsd-empty", "-", st, "err", "{in}", "an empty cache file")
    write("gsd-version-99.gsd", gsd(hdr=dict(version=99)))
    case("gsd-version-99", "-", st, "err", "{in}", "cache format version 99")
    x = [0.0] * (G["n"] * G["f"])
    x[33] = float("nan")
    write("gsd-nan-features.gsd", gsd(feats=x))
    case("gsd-nan-features", "-", "train --data {in} --epochs 1", "err", "{in}", "a NaN feature, through train")
    idx = list(G["indices"])
    idx[0] = 1 << 30
    write("gsd-index-out-of-range.gsd", gsd(indices=idx))
    case("gsd-index-out-of-range", "-", "train --data {in} --epochs 1", "err", "{in}", "an edge to node 2^30")
    write("gsd-in-cache.gsd", gsd(hdr=dict(classes=2_000_000_000)))
    case("gsd-in-cache", "cache:synth-tiny", "datasets stats synth-tiny", "any", "gsd", "F3: a hostile header in the cache, under the synth-tiny preset's name")
    case("gsd-fifo", "fifo:gsd-fifo.gsd", st, "err", "{in}", "a FIFO named .gsd (must not hang)")
    case("data-dev-zero", "-", "datasets stats /dev/zero", "err", "/dev/zero", "a character device as the dataset")


# ---------------------------------------------------------------- archives

def base_files():
    out = {}
    for dirpath, _, files in os.walk(BASE):
        for f in files:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, BASE).replace(os.sep, "/")] = open(p, "rb").read()
    return out


def archive(name, files=None, sid=BASE_ID, manifest=None, extra=(), raw_manifest=None, listed=None):
    files = base_files() if files is None else files
    man = {"format": "gnnscope-session-archive", "v": 1, "id": sid, "name": "hostile",
           "created": "2026-11-25T17:24:59Z", "exported": "2026-11-25T17:26:02Z", "host": "vm",
           "files": [{"path": p, "size": len(b)} for p, b in sorted(files.items())] if listed is None else listed}
    man.update(manifest or {})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        mb = raw_manifest if raw_manifest is not None else json.dumps(man, indent=2).encode()
        add(t, "gnnscope-archive.json", mb)
        for p, b in sorted(files.items()):
            add(t, f"{sid}/{p}", b)
        for info, data in extra:
            t.addfile(info, io.BytesIO(data) if data is not None else None)
    data = gz(buf.getvalue())
    write(name, data)
    return data


def add(t, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1795000000
    info.mode = 0o644
    t.addfile(info, io.BytesIO(data))


def special(name, kind, target=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    info.mtime = 1795000000
    return info, None


def with_launch(runs):
    files = base_files()
    launch = json.loads(files["launch.json"])
    launch["runs"] = runs
    files["launch.json"] = json.dumps(launch, indent=2).encode()
    return files


def archive_cases():
    imp = "sessions import {in}"
    archive("archive-ok.tar.gz")
    case("archive-ok", "-", imp, "ok", "-", "control: a valid archive of a real synth-tiny session")
    archive("archive-run-escape.tar.gz", with_launch(["../../../../tmp/x"]))
    case("archive-run-escape", "-", imp, "err", "{in}", "F1: launch.json runs [\"../../../../tmp/x\"]")
    archive("archive-run-slash.tar.gz", with_launch(["baseline", "a/b"]))
    case("archive-run-slash", "-", imp, "err", "{in}", "F1: a run named a/b")
    archive("archive-run-dotdot.tar.gz", with_launch([".."]))
    case("archive-run-dotdot", "-", imp, "err", "{in}", "F1: a run named ..")
    archive("archive-run-nul.tar.gz", with_launch(["base\u0000line"]))
    case("archive-run-nul", "-", imp, "err", "{in}", "F1: a run name holding NUL")
    archive("archive-run-long.tar.gz", with_launch(["r" * 300]))
    case("archive-run-long", "-", imp, "err", "{in}", "F1: a 300-character run name")
    files = base_files()
    sess = json.loads(files["session.json"])
    sess["variants"] = [{"name": "../../x", "spec": {}}]
    files["session.json"] = json.dumps(sess).encode()
    archive("archive-variant-escape.tar.gz", files)
    case("archive-variant-escape", "-", imp, "err", "{in}", "F1: a variant named ../../x in session.json")
    archive("archive-id-dotdot.tar.gz", sid="..")
    case("archive-id-dotdot", "-", imp, "err", "{in}", "a session id of ..")
    archive("archive-id-slash.tar.gz", manifest={"id": "a/../../b"})
    case("archive-id-slash", "-", imp, "err", "{in}", "a manifest id of a/../../b")
    archive("archive-member-dotdot.tar.gz", extra=[tar_file(f"{BASE_ID}/../escape", b"x")])
    case("archive-member-dotdot", "-", imp, "err", "{in}", "a member named ID/../escape")
    archive("archive-member-absolute.tar.gz", extra=[tar_file("/tmp/hostile-abs", b"x")])
    case("archive-member-absolute", "-", imp, "err", "{in}", "a member with an absolute path")
    archive("archive-symlink.tar.gz", extra=[special(f"{BASE_ID}/runs/evil.jsonl", tarfile.SYMTYPE, "/etc/passwd")])
    case("archive-symlink", "-", imp, "err", "{in}", "a symlink member to /etc/passwd")
    archive("archive-hardlink.tar.gz", extra=[special(f"{BASE_ID}/runs/evil.jsonl", tarfile.LNKTYPE, "/etc/passwd")])
    case("archive-hardlink", "-", imp, "err", "{in}", "a hard link member to /etc/passwd")
    archive("archive-device.tar.gz", extra=[special(f"{BASE_ID}/runs/evil.jsonl", tarfile.CHRTYPE)])
    case("archive-device", "-", imp, "err", "{in}", "a character device member")
    archive("archive-fifo-member.tar.gz", extra=[special(f"{BASE_ID}/runs/evil.jsonl", tarfile.FIFOTYPE)])
    case("archive-fifo-member", "-", imp, "err", "{in}", "a FIFO member")
    files = base_files()
    files["runs/baseline.log"] = bytes(300 << 20)
    archive("archive-bomb.tar.gz", files)
    case("archive-bomb", "-", imp, "err", "{in}", "a 300 KB archive whose log expands to 300 MB (ratio limit)")
    files = base_files()
    for i in range(12000):
        files[f"runs/r{i}.log"] = b""
    archive("archive-many-files.tar.gz", files)
    case("archive-many-files", "-", imp, "err", "{in}", "12000 members")
    archive("archive-duplicate.tar.gz", extra=[tar_file(f"{BASE_ID}/session.json", b"{}")])
    case("archive-duplicate", "-", imp, "err", "{in}", "session.json twice")
    archive("archive-case-duplicate.tar.gz", extra=[tar_file(f"{BASE_ID}/Session.json", b"{}")])
    case("archive-case-duplicate", "-", imp, "err", "{in}", "session.json and Session.json")
    write("archive-not-gzip.tar.gz", bytes(rnd.randrange(256) for _ in range(4096)))
    case("archive-not-gzip", "-", imp, "err", "{in}", "random bytes")
    good = open(path("archive-ok.tar.gz"), "rb").read()
    write("archive-truncated.tar.gz", good[: len(good) * 2 // 3])
    case("archive-truncated", "-", imp, "err", "{in}", "the valid archive cut at two thirds")
    archive("archive-manifest-huge.tar.gz", raw_manifest=b'{"format":"gnnscope-session-archive","pad":"' + b"x" * (8 << 20) + b'"}')
    case("archive-manifest-huge", "-", imp, "err", "{in}", "an 8 MB manifest")
    archive("archive-version-99.tar.gz", manifest={"v": 99})
    case("archive-version-99", "-", imp, "err", "{in}", "archive layout version 99")
    archive("archive-size-lie.tar.gz", listed=[{"path": "session.json", "size": 10}])
    case("archive-size-lie", "-", imp, "err", "{in}", "a manifest whose files and sizes disagree with the members")
    archive("archive-manifest-not-first.tar.gz", raw_manifest=b"[1,2,3]")
    case("archive-manifest-not-first", "-", imp, "err", "{in}", "a manifest that is a JSON array")


def tar_file(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1795000000
    return info, data


# ---------------------------------------------------------------- sessions and journals

def session(cid, sid=BASE_ID, change=None):
    d = path(os.path.join(cid, sid))
    shutil.copytree(BASE, d)
    for rel, data in (change or {}).items():
        p = os.path.join(d, rel)
        if data is None:
            os.remove(p)
        else:
            with open(p, "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())


def journal_lines():
    return open(os.path.join(BASE, "runs", "baseline.jsonl"), "rb").read().splitlines(keepends=True)


def session_cases():
    show = "sessions show {sid}"
    session("session-launch-escape", change={"launch.json": json.dumps({"mode": "sequential", "runs": ["../../../../x"]})})
    case("session-launch-escape", "session", show, "err", "{sid}", "F1: a stored session whose launch.json names run ../../../../x")
    session("session-launch-escape-cancel", change={"launch.json": json.dumps({"mode": "sequential", "runs": ["../../../../x"]})})
    case("session-launch-escape-cancel", "session", "run --cancel {sid}", "err", "{sid}", "F1: run --cancel on it (must not create ../x.jsonl)")
    session("session-launch-escape-rm", change={"launch.json": json.dumps({"mode": "sequential", "runs": ["../../../../x"]})})
    case("session-launch-escape-rm", "session", "sessions rm --yes {sid}", "any", "{sid}", "F1: sessions rm on it (must not touch anything outside)")
    for cid, cmd in [("journal-bigline-show", show), ("journal-bigline-replay", "replay {sid} --speed max --headless"),
                     ("journal-bigline-attach", "run --attach {sid}"), ("journal-bigline-trace", "export trace {sid} -o {home}/trace.json")]:
        session(cid)
        case(cid, "session bigline:100", cmd, "any", "{sid}", f"F6: a 100 MB line in the journal, through {cmd.split()[0]} {cmd.split()[1]}")
    lines = journal_lines()
    newer = lines[0].replace(b'"v":1', b'"v":99', 1)
    session("journal-newer-schema", change={"runs/baseline.jsonl": newer + b"".join(lines[1:])})
    case("journal-newer-schema", "session", show, "any", "baseline.jsonl", "a journal of schema version 99")
    session("journal-garbage", change={"runs/baseline.jsonl": bytes(rnd.randrange(256) for _ in range(8192))})
    case("journal-garbage", "session", show, "any", "{sid}", "8 KB of random bytes as the journal")
    session("journal-fifo", change={"runs/baseline.jsonl": None})
    case("journal-fifo", "session fifo:runs/baseline.jsonl", "sessions ls", "any", "-", "a FIFO in place of a journal: sessions ls must not hang")
    session("journal-fifo-show", change={"runs/baseline.jsonl": None})
    case("journal-fifo-show", "session fifo:runs/baseline.jsonl", show, "any", "baseline.jsonl", "the same through sessions show")
    late = []
    for ln in lines:
        if ln.startswith(b'{"t":"span"') and b'"name":"eval"' in ln:
            ev = json.loads(ln)
            ev["start"] += 365 * 24 * 3600 * 10**9
            ln = json.dumps(ev, separators=(",", ":")).encode() + b"\n"
        late.append(ln)
    session("journal-year-gap", change={"runs/baseline.jsonl": b"".join(late)})
    case("journal-year-gap", "session", "replay {sid} --headless", "ok", "-", "a span dated a year late: real-time replay must not wait a year")
    session("journal-deep-json", change={"runs/baseline.jsonl": lines[0] + b'{"t":"metric","value":' + b"[" * 100000 + b"\n" + b"".join(lines[1:])})
    case("journal-deep-json", "session", show, "any", "{sid}", "a line of 100000 nested arrays")
    session("session-json-garbage", change={"session.json": bytes(rnd.randrange(256) for _ in range(1024))})
    case("session-json-garbage", "session", show, "err", "session.json", "random bytes as session.json")
    session("session-json-deep", change={"session.json": b"[" * 1_000_000})
    case("session-json-deep", "session", "sessions ls", "any", "-", "a million nested arrays as session.json")
    session("pid-garbage", change={"runs/baseline.pid": b"\x00\xffnot a pid\n" * 10})
    case("pid-garbage", "session", show, "any", "{sid}", "a pid file of garbage")
    session("pid-foreign", change={"sequencer.pid": json.dumps({"pid": 1, "start": 1, "host": "vm"})})
    case("pid-foreign", "session", "sessions rm --yes {sid}", "ok", "-", "a pid file naming pid 1 with another start time: not running")
    session("launch-many-runs", change={"launch.json": json.dumps({"mode": "sequential", "runs": [f"r{i}" for i in range(100000)]})})
    case("launch-many-runs", "session", show, "any", "{sid}", "a launch.json of 100000 runs")
    session("session-readonly")
    case("session-readonly", "session readonly", show, "any", "{sid}", "a read-only session folder (skipped as root)")
    case("running-no-pid-rm", "nopid", "sessions rm --yes {sid}", "err", "{sid}", "F7: a running session without pid files must not be deletable")
    case("running-no-pid-cancel", "nopid", "run --cancel {sid}", "ok", "-", "F7: cancel reaches it anyway")
    case("run-full-disk", "fsize:3", "run --data synth-tiny --epochs 1 --variants baseline --wait", "any", "-", "a journal write past a 3 KiB file size limit (a full disk)")
    case("ref-dotdot", "-", "sessions show ../..", "err", "../..", "a session reference of ../..")
    case("ref-absolute", "-", "replay /etc --headless", "err", "/etc", "a session reference that is an absolute path")


# ---------------------------------------------------------------- specs and flags

def spec_cases():
    run = "run --spec {in} --wait"
    base = 'name = "hostile"\ndata = "synth-tiny"\n\n[train]\nmodel = "sage"\nepochs = 1\n'
    specs = [
        ("spec-hidden-huge", base + "hidden = 100000000\n\n[variants.baseline]\n", "err", "F8: hidden = 100000000: the run fails with the estimate, no fatal error"),
        ("spec-layers-huge", base.replace('"sage"', '"gcn"') + "layers = 1000000000\n\n[variants.baseline]\n", "err", "layers = 1e9"),
        ("spec-heads-huge", base.replace('"sage"', '"gat"') + "heads = 100000000\n\n[variants.baseline]\n", "err", "gat heads = 1e8"),
        ("spec-fanout-bad", base + "fanouts = [15, -7, 99999999999]\n\n[variants.baseline]\n", "err", "fanouts of -7 and 1e11"),
        ("spec-unknown-key", base + "hiden = 64\n\n[variants.baseline]\n", "err", "a misspelled key"),
        ("spec-budget-overflow", base + 'mem_budget = "99999999999999999999GiB"\n\n[variants.baseline]\n', "err", "a memory budget that overflows"),
        ("spec-variant-escape", base + '\n[variants."../../x"]\n', "err", "a variant named ../../x"),
        ("spec-many-variants", base + "".join(f"\n[variants.v{i}]\n" for i in range(5000)), "err", "5000 variants"),
        ("spec-deep-array", base + "fanouts = " + "[" * 50000 + "\n", "err", "50000 nested arrays"),
        ("spec-random", None, "err", "random bytes"),
        ("spec-epochs-negative", base.replace("epochs = 1", "epochs = -1") + "\n[variants.baseline]\n", "err", "epochs = -1"),
        ("spec-data-escape", base.replace('"synth-tiny"', '"../../../../etc/passwd"') + "\n[variants.baseline]\n", "err", "data = ../../../../etc/passwd"),
    ]
    names = {"spec-hidden-huge": "-", "spec-data-escape": "etc/passwd"}
    for cid, text, expect, what in specs:
        write(cid + ".toml", text if text is not None else bytes(rnd.randrange(256) for _ in range(2048)))
        case(cid, "-", run, expect, names.get(cid, "{in}"), what)
    for cid, args, names, what in [
        ("flag-budget-overflow", "train --mem-budget 1e30GiB", "1e30GiB", "--mem-budget 1e30GiB"),
        ("flag-budget-negative", "train --mem-budget -5MiB", "-5MiB", "--mem-budget -5MiB"),
        ("flag-fanout-overflow", "train --fanout 99999999999999999999", "99999999999999999999", "--fanout beyond int64"),
        ("flag-fanout-garbage", "train --fanout 10,,x", "--fanout", "--fanout 10,,x"),
        ("flag-hidden-huge", "train --hidden 100000000 --epochs 1", "hidden", "F8 through flags: --hidden 1e8"),
        ("flag-from-huge", "replay last --from 99999999999h --headless", "99999999999h", "--from beyond time.Duration"),
    ]:
        case(cid, "-", args, "err", names, what)


def main():
    if os.path.isdir(IN):
        shutil.rmtree(IN)
    os.makedirs(IN)
    npz_cases()
    ogb_cases()
    planetoid_cases()
    gsd_cases()
    archive_cases()
    session_cases()
    spec_cases()
    with open(os.path.join(ROOT, "cases.tsv"), "w") as f:
        f.write("# id\tsetup\targs\texpect\tnames\twhat (written by scripts/hostile-gen.py)\n")
        for c in cases:
            f.write("\t".join(c) + "\n")
    print(f"{len(cases)} cases in {os.path.relpath(ROOT)}")


if __name__ == "__main__":
    main()
