"""GraphSAGE with PyTorch Geometric's NeighborLoader, for machines that have
PyG (2.x). gnnscope profiles it unchanged:

  gnnscope run --cmd 'python3 examples/pytorch/pyg_sage.py --epochs 3'

Cora is downloaded by Planetoid into --root unless already there, or read
from a gnn-benchmark .npz with --npz (no network needed).

NeighborLoader samples with pyg-lib or torch-sparse. Where PyG has
neither, --loader auto (the default) samples with the plain-PyTorch loader
of torch_neighbor_loader.py beside this file instead: same fanouts, same
batch fields, an ordinary DataLoader. --loader pyg insists on
NeighborLoader, --loader torch on the plain one.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv


def load_npz(path):
    """A PyG Data from a gnn-benchmark .npz (CSR adjacency and features),
    symmetrized, with a seeded split of 20 training nodes per class, 500
    validation and 1000 test nodes."""
    import numpy as np
    from torch_geometric.data import Data
    from torch_geometric.utils import to_undirected

    d = np.load(path)
    n = int(d["adj_shape"][0])
    indptr, indices = d["adj_indptr"].astype(np.int64), d["adj_indices"].astype(np.int64)
    row = np.repeat(np.arange(n), np.diff(indptr))
    edge_index = to_undirected(torch.from_numpy(np.stack([row, indices])), num_nodes=n)
    x = np.zeros(tuple(d["attr_shape"]), dtype=np.float32)
    ap = d["attr_indptr"]
    x[np.repeat(np.arange(n), np.diff(ap)), d["attr_indices"]] = d["attr_data"]
    y = torch.from_numpy(d["labels"].astype(np.int64))
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    train = torch.zeros(n, dtype=torch.bool)
    for c in range(int(y.max()) + 1):
        train[perm[y[perm] == c][:20]] = True
    rest = perm[~train[perm]]
    val, test = torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)
    val[rest[:500]], test[rest[500:1500]] = True, True
    return Data(x=torch.from_numpy(x), edge_index=edge_index, y=y, train_mask=train, val_mask=val, test_mask=test)


class SAGE(torch.nn.Module):
    def __init__(self, f, hidden, classes):
        super().__init__()
        self.c1 = SAGEConv(f, hidden)
        self.c2 = SAGEConv(hidden, classes)

    def forward(self, x, edge_index):
        x = F.relu(self.c1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.c2(x, edge_index)


def pyg_can_sample():
    """Whether NeighborLoader can sample here (it needs pyg-lib or
    torch-sparse, and says so only once iterated)."""
    try:
        from torch_geometric import typing as pyg_typing
    except ImportError:
        return False
    return bool(getattr(pyg_typing, "WITH_PYG_LIB", False) or getattr(pyg_typing, "WITH_TORCH_SPARSE", False))


def loaders(data, kind, kw):
    """The training and validation loaders: PyG's NeighborLoader, or the
    plain-PyTorch one when kind is torch (or auto without a PyG sampler)."""
    if kind == "pyg" or (kind == "auto" and pyg_can_sample()):
        return (NeighborLoader(data, input_nodes=data.train_mask, shuffle=True, **kw),
                NeighborLoader(data, input_nodes=data.val_mask, **kw))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_neighbor_loader as tnl

    print("loader: plain PyTorch (PyG has neither pyg-lib nor torch-sparse to sample with)"
          if kind == "auto" else "loader: plain PyTorch", flush=True)
    fan = kw.pop("num_neighbors")
    if kw.get("num_workers", 0) == 0:
        kw.pop("persistent_workers", None)
    return (tnl.loader(data.x, data.y, data.edge_index, data.train_mask, fan, shuffle=True, **kw),
            tnl.loader(data.x, data.y, data.edge_index, data.val_mask, fan, **kw))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="/tmp/pyg-data")
    p.add_argument("--npz", help="read Cora from this gnn-benchmark .npz instead of Planetoid's download")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--loader", choices=["auto", "pyg", "torch"], default="auto",
                   help="NeighborLoader (pyg), the plain-PyTorch loader (torch), or pyg where it can sample")
    a = p.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = load_npz(a.npz) if a.npz else Planetoid(a.root, "Cora")[0]
    kw = dict(num_neighbors=[10, 5], batch_size=a.batch_size, num_workers=a.workers,
              persistent_workers=a.workers > 0, pin_memory=dev.type == "cuda")
    train, val = loaders(data, a.loader, kw)
    model = SAGE(data.num_features, 64, int(data.y.max()) + 1).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        for batch in train:
            batch = batch.to(dev, non_blocking=True)
            opt.zero_grad()
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = F.cross_entropy(out, batch.y[: batch.batch_size])
            loss.backward()
            opt.step()
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in val:
                batch = batch.to(dev, non_blocking=True)
                out = model(batch.x, batch.edge_index)[: batch.batch_size]
                correct += int((out.argmax(1) == batch.y[: batch.batch_size]).sum())
                total += batch.batch_size
        print("epoch %d loss %.4f val_acc %.4f time %.3fs"
              % (epoch, float(loss), correct / total, time.perf_counter() - t0), flush=True)


if __name__ == "__main__":
    main()
