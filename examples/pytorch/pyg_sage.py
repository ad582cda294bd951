"""GraphSAGE with PyTorch Geometric's NeighborLoader, for machines that have
PyG (2.x). gnnscope profiles it unchanged:

  gnnscope run --cmd 'python3 examples/pytorch/pyg_sage.py --epochs 3'

Cora is downloaded by Planetoid into --root unless already there.
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch_geometric.datasets import Planetoid
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv


class SAGE(torch.nn.Module):
    def __init__(self, f, hidden, classes):
        super().__init__()
        self.c1 = SAGEConv(f, hidden)
        self.c2 = SAGEConv(hidden, classes)

    def forward(self, x, edge_index):
        x = F.relu(self.c1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return self.c2(x, edge_index)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", default="/tmp/pyg-data")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--workers", type=int, default=0)
    a = p.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = Planetoid(a.root, "Cora")[0]
    kw = dict(num_neighbors=[10, 5], batch_size=a.batch_size, num_workers=a.workers,
              persistent_workers=a.workers > 0, pin_memory=dev.type == "cuda")
    train = NeighborLoader(data, input_nodes=data.train_mask, shuffle=True, **kw)
    val = NeighborLoader(data, input_nodes=data.val_mask, **kw)
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
