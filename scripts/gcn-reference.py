#!/usr/bin/env python3
"""Train Kipf & Welling's two-layer GCN in plain PyTorch on a dataset exported
by gnnscope, on exactly the split a gnnscope run uses, and print one JSON
line: the reference point for gnnscope's full-batch GCN accuracy.

    gnnscope datasets export ../shared/datasets/cora.npz --seed 3 -o cora3.npz
    python3 scripts/gcn-reference.py cora3.npz --seed 3

The model is what `gnnscope train --model gcn --sampler full` trains:
dropout on the input features, GCN layer (symmetric normalization with
self-loops, Glorot weights, a zero-initialized bias added after the
propagation), ReLU, dropout, GCN layer; Adam with
L2 weight decay on every parameter (--wd-out sets the output layer's, as
gnnscope's flag of that name does); cross-entropy over the training nodes.
Features are row-normalized when the export says gnnscope does. Each epoch
evaluates the whole graph without dropout; the reported test accuracy is
the one at the epoch of highest validation accuracy (the first such epoch).

--eval-cut FRAC also evaluates every epoch on a graph without that fraction
of the edges, dropped by --cut-rule as the optimize_pygs study did: the
edges whose endpoints have the largest degree product (or sum) first, or a
random choice; self-loops are added after the cut and the cut graph is
normalized with its own degrees. It reports that graph's test accuracy of
the same selected epoch (test_acc_cut): the accuracy a 30 % cut costs one
trained model, without gnnscope's per-node floor.

Needs numpy and torch (any 1.x or 2.x; CPU is enough). No PyG.
"""

import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("npz", help="file written by gnnscope datasets export")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--wd-out", type=float, default=None, help="weight decay of the output layer (default: --weight-decay)")
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0, help="torch's seed (initialization and dropout)")
    p.add_argument("--eval-cut", type=float, default=0.0, help="fraction of the edges to drop for a second evaluation")
    p.add_argument("--cut-rule", choices=["degree-product", "degree-sum", "random"], default="degree-product")
    return p.parse_args()


def load(path):
    z = np.load(path, allow_pickle=False)
    n = int(z["indptr"].shape[0] - 1)
    indptr = z["indptr"].astype(np.int64)
    cols = z["indices"].astype(np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    x = torch.from_numpy(z["x"].astype(np.float32))
    if str(z["feature_norm"]) == "row":
        s = x.sum(1, keepdim=True)
        x = x / torch.where(s == 0, torch.ones_like(s), s)
    # Â = D^-1/2 (A + I) D^-1/2, as a sparse matrix.
    adj = normalized(rows, cols, n)
    y = torch.from_numpy(z["y"].astype(np.int64))
    idx = {k: torch.from_numpy(z[k].astype(np.int64)) for k in ("train_idx", "valid_idx", "test_idx")}
    return x, adj, y, idx, int(z["num_classes"]), (rows, cols, n)


def normalized(rows, cols, n):
    """D^-1/2 (A + I) D^-1/2 of the edges (rows, cols), degrees counted
    from them, as a sparse matrix."""
    loops = np.arange(n, dtype=np.int64)
    r = np.concatenate([rows, loops])
    c = np.concatenate([cols, loops])
    deg = np.bincount(r, minlength=n).astype(np.float64)
    w = 1.0 / np.sqrt(deg[r] * deg[c])
    return torch.sparse_coo_tensor(
        torch.from_numpy(np.stack([r, c])), torch.from_numpy(w.astype(np.float32)), (n, n)
    ).coalesce()


def cut(edges, frac, rule, seed):
    """The normalized adjacency without frac of the edges, dropped by rule."""
    rows, cols, n = edges
    deg = np.bincount(rows, minlength=n).astype(np.float64)
    if rule == "random":
        order = np.random.default_rng(seed).permutation(len(rows))
    else:
        score = deg[rows] * deg[cols] if rule == "degree-product" else deg[rows] + deg[cols]
        order = np.argsort(-score, kind="stable")
    keep = np.sort(order[int(round(frac * len(rows))):])
    return normalized(rows[keep], cols[keep], n)


class GCN(torch.nn.Module):
    def __init__(self, fin, hidden, out, dropout):
        super().__init__()
        self.w1 = torch.nn.Linear(fin, hidden, bias=False)
        self.w2 = torch.nn.Linear(hidden, out, bias=False)
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.b2 = torch.nn.Parameter(torch.zeros(out))
        for lin in (self.w1, self.w2):
            torch.nn.init.xavier_uniform_(lin.weight)
        self.dropout = dropout

    def forward(self, x, adj):
        # Bias after the propagation, as PyG's GCNConv adds it.
        x = F.dropout(x, self.dropout, self.training)
        x = F.relu(torch.sparse.mm(adj, self.w1(x)) + self.b1)
        x = F.dropout(x, self.dropout, self.training)
        return torch.sparse.mm(adj, self.w2(x)) + self.b2


def main():
    a = parse_args()
    torch.manual_seed(a.seed)
    x, adj, y, idx, k, edges = load(a.npz)
    adj_cut = cut(edges, a.eval_cut, a.cut_rule, a.seed) if a.eval_cut > 0 else None
    model = GCN(x.shape[1], a.hidden, k, a.dropout)
    wd_out = a.weight_decay if a.wd_out is None else a.wd_out
    opt = torch.optim.Adam(
        [
            {"params": [model.w1.weight, model.b1], "weight_decay": a.weight_decay},
            {"params": [model.w2.weight, model.b2], "weight_decay": wd_out},
        ],
        lr=a.lr,
    )
    best_val, test_at_best, best_epoch, cut_at_best = -1.0, 0.0, 0, None
    for epoch in range(1, a.epochs + 1):
        model.train()
        opt.zero_grad()
        out = model(x, adj)
        F.cross_entropy(out[idx["train_idx"]], y[idx["train_idx"]]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(x, adj).argmax(1)
        acc = {s: (pred[idx[s]] == y[idx[s]]).float().mean().item() for s in ("valid_idx", "test_idx")}
        if acc["valid_idx"] > best_val:
            best_val, test_at_best, best_epoch = acc["valid_idx"], acc["test_idx"], epoch
            if adj_cut is not None:
                with torch.no_grad():
                    pc = model(x, adj_cut).argmax(1)
                cut_at_best = (pc[idx["test_idx"]] == y[idx["test_idx"]]).float().mean().item()
    res = {"test_acc": test_at_best, "val_acc": best_val, "best_epoch": best_epoch, "seed": a.seed}
    if cut_at_best is not None:
        res.update(test_acc_cut=cut_at_best, eval_cut=a.eval_cut, cut_rule=a.cut_rule)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
