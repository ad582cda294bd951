#!/usr/bin/env python3
"""Writes the Planetoid-format fixtures of the planetoid package's tests with
NumPy and SciPy, as PyG's and Kipf & Welling's loaders read them:

    python3 gen.py     # writes proto2/ and proto4/ beside this file

A graph of 515 nodes and 3 classes: allx holds nodes 0-509 (x and y are its
first 3 rows, and the public split's 500 validation nodes follow), the test
nodes are 510, 511, 513 and 514 in the order 513, 510, 514, 511 (node 512 is
skipped, as CiteSeer skips some), and the graph dict lists some edges in one
direction only, some twice, and a self-loop. proto2/ is pickled with
protocol 2 (bytes through _codecs.encode), proto4/ with protocol 4 (bytes as
such). The test checks the loaded dataset against the same numbers.
"""

import os
import pickle
from collections import defaultdict

import numpy as np
import scipy.sparse as sp

here = os.path.dirname(os.path.abspath(__file__))

F = 5
allx_rows = 510
test_index = [513, 510, 514, 511]


def features(node):
    """Node v's features: a sparse row with values that identify it."""
    row = np.zeros(F, dtype=np.float32)
    row[node % F] = 1.0 + node / 8.0
    row[(node * 3 + 1) % F] = 0.5
    return row


def label(node):
    return node % 3


def onehot(nodes):
    m = np.zeros((len(nodes), 3), dtype=np.int32)
    for i, v in enumerate(nodes):
        m[i, label(v)] = 1
    return m


allx = sp.csr_matrix(np.stack([features(v) for v in range(allx_rows)]))
x = allx[:3]
tx = sp.csr_matrix(np.stack([features(v) for v in test_index]))
ally = onehot(range(allx_rows))
y = ally[:3]
ty = onehot(test_index).astype(np.float64)  # float labels, as some files have

graph = defaultdict(list)
edges = [(0, 1), (1, 0), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8),
         (8, 510), (510, 511), (511, 513), (513, 514), (514, 0), (2, 3), (5, 5), (6, 2)]
for u, v in edges:
    graph[u].append(v)
graph[512]  # an isolated node has an empty list

for proto in (2, 4):
    d = os.path.join(here, f"proto{proto}")
    os.makedirs(d, exist_ok=True)
    for name, obj in [("x", x), ("tx", tx), ("allx", allx), ("y", y), ("ty", ty), ("ally", ally), ("graph", graph)]:
        with open(os.path.join(d, f"ind.tiny.{name}"), "wb") as f:
            pickle.dump(obj, f, protocol=proto)
    with open(os.path.join(d, "ind.tiny.test.index"), "w") as f:
        f.write("".join(f"{v}\n" for v in test_index))
