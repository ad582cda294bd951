#!/usr/bin/env python3
"""Train PyG's GraphSAGE on a dataset exported by gnnscope, with the same
settings as a gnnscope run, and print one JSON object of timings and
accuracy: the reference point for gnnscope's CUDA backend.

    gnnscope datasets export synth-products -o products.npz
    python3 scripts/pyg-compare.py products.npz --layers 3 --hidden 256 \\
        --fanout 15,10,5 --batch-size 1024 --epochs 5 --json out.json

The model is gnnscope's `sage`: PyG's SAGEConv (mean aggregation, root
weight), ReLU and dropout between layers, Adam with L2 weight decay,
cross-entropy over each batch's targets. Features are row-normalized when
the export says gnnscope does (feature_norm = "row"). Batches are the
training nodes shuffled each epoch, neighbors sampled without replacement
per hop (fanouts hop 1 first), targets first in every node list; each
epoch's features are gathered on the host and copied to the device per
batch (a loader without workers, gnnscope's baseline schedule). Evaluation
is exact layer-wise inference over all nodes, after the last epoch (and
every --eval-every epochs), timed apart from training.

Sampling uses PyG's NeighborLoader when pyg-lib or torch-sparse is
installed (--sampler pyg), otherwise a vectorized pure-PyTorch sampler on
the device (--sampler torch, the default when they are missing).

Needs: numpy, torch (CUDA build for --device cuda), torch_geometric (2.x;
written against 2.8).
"""

import argparse
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("npz", help="file written by gnnscope datasets export")
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--fanout", default="15,10,5", help="neighbors per hop, hop 1 first; -1 = all")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=0, help="evaluate every N epochs (0: after the last only)")
    p.add_argument("--eval-batch", type=int, default=8192, help="destination nodes per layer-wise inference chunk")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--sampler", choices=["auto", "pyg", "torch"], default="auto")
    p.add_argument("--workers", type=int, default=0,
                   help="sample and gather batches on the CPU in this many DataLoader worker processes "
                        "(persistent, pinned memory, prefetching) instead of on the training thread")
    p.add_argument("--resident", action="store_true",
                   help="keep the graph and every feature on the device: sample and gather there (needs the memory)")
    p.add_argument("--json", help="also write the result to this file")
    return p.parse_args()


def load(path):
    d = np.load(path)
    x = torch.from_numpy(np.ascontiguousarray(d["x"]))
    if str(d["feature_norm"]) == "row":
        s = x.sum(dim=1, keepdim=True)
        x = torch.where(s > 0, x / s.clamp_min(1e-38), x)
    return {
        "name": str(d["name"]),
        "rowptr": torch.from_numpy(d["indptr"]).long(),
        "col": torch.from_numpy(d["indices"]).long(),
        "x": x,
        "y": torch.from_numpy(d["y"]).long(),
        "train": torch.from_numpy(d["train_idx"]).long(),
        "valid": torch.from_numpy(d["valid_idx"]).long(),
        "test": torch.from_numpy(d["test_idx"]).long(),
        "num_classes": int(d["num_classes"]),
    }


class SAGE(torch.nn.Module):
    def __init__(self, dims, dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def forward(self, x, blocks):
        """blocks: outermost first, each (edge_index [src local, dst local], num_src, num_dst)."""
        for i, (ei, ns, nd) in enumerate(blocks):
            x = self.convs[i]((x, x[:nd]), ei, size=(ns, nd))
            if i < len(self.convs) - 1:
                x = F.relu(x)
                x = F.dropout(x, p=self.dropout, training=self.training)
        return x


class TorchSampler:
    """Vectorized neighbor sampling without replacement on the device."""

    def __init__(self, rowptr, col, fanouts, device):
        self.rowptr = rowptr.to(device)
        self.col = col.to(device)
        self.fanouts = fanouts
        self.device = device
        self.assoc = torch.full((rowptr.numel() - 1,), -1, dtype=torch.long, device=device)

    def hop(self, nodes, k):
        start, deg = self.rowptr[nodes], self.rowptr[nodes + 1] - self.rowptr[nodes]
        total = int(deg.sum())
        seg = torch.repeat_interleave(torch.arange(nodes.numel(), device=self.device), deg)
        first = torch.cumsum(deg, 0) - deg
        pos = torch.arange(total, device=self.device) - first[seg]
        nbr = self.col[start[seg] + pos]
        if k >= 0:
            # k distinct neighbors per node: order each node's neighbors by
            # random keys and keep the first k.
            key = seg.double() + torch.rand(total, device=self.device, dtype=torch.double)
            order = torch.argsort(key)
            nbr, seg = nbr[order], seg[order]
            keep = (torch.arange(total, device=self.device) - first[seg]) < k
            nbr, seg = nbr[keep], seg[keep]
        return nbr, seg

    def sample(self, targets):
        """Returns the input nodes (targets first in every list) and the blocks, outermost first."""
        nodes = targets.to(self.device)
        self.assoc[nodes] = torch.arange(nodes.numel(), device=self.device)
        blocks, all_nodes = [], nodes
        for k in self.fanouts:
            nbr, dst = self.hop(nodes, k)
            new = torch.unique(nbr[self.assoc[nbr] < 0])
            self.assoc[new] = all_nodes.numel() + torch.arange(new.numel(), device=self.device)
            prev = nodes.numel()
            all_nodes = torch.cat([all_nodes, new])
            src = self.assoc[nbr]
            blocks.append((torch.stack([src, dst]), all_nodes.numel(), prev))
            nodes = all_nodes
        self.assoc[all_nodes] = -1
        return all_nodes, blocks[::-1]


class WorkerBatches:
    """collate_fn of the --workers loader: samples a batch of targets on the
    CPU and gathers its features and labels, in a DataLoader worker
    process."""

    def __init__(self, data, fanouts):
        self.data, self.fanouts, self.ts = data, fanouts, None

    def __call__(self, targets):
        targets = torch.stack(targets) if isinstance(targets, list) else targets
        if self.ts is None:
            self.ts = TorchSampler(self.data["rowptr"], self.data["col"], self.fanouts, torch.device("cpu"))
        nodes, blocks = self.ts.sample(targets)
        # Pinned by the loader's pin thread in the main process (pin_memory
        # in a forked worker would initialize CUDA there).
        return targets, blocks, self.data["x"][nodes], self.data["y"][targets]


def worker_loader(data, fanouts, batch_size, workers, pin, seed):
    from torch.utils.data import DataLoader

    g = torch.Generator()
    g.manual_seed(seed)
    # one thread per worker: N workers of a process-wide thread pool each
    # would oversubscribe the cores
    return DataLoader(data["train"], batch_size=batch_size, shuffle=True, generator=g, num_workers=workers,
                      worker_init_fn=lambda _: torch.set_num_threads(1),
                      collate_fn=WorkerBatches(data, fanouts), pin_memory=pin, persistent_workers=True,
                      prefetch_factor=4)


def pyg_loader(data, fanouts, batch_size, train, seed):
    from torch_geometric.data import Data
    from torch_geometric.loader import NeighborLoader

    n = data["rowptr"].numel() - 1
    row = torch.repeat_interleave(torch.arange(n), data["rowptr"][1:] - data["rowptr"][:-1])
    g = Data(edge_index=torch.stack([data["col"], row]), num_nodes=n)
    g.n_id = torch.arange(n)
    torch.manual_seed(seed)
    return NeighborLoader(g, num_neighbors=fanouts, batch_size=batch_size, input_nodes=train, shuffle=True)


def pyg_blocks(batch, layers):
    """Blocks (outermost first) from a NeighborLoader batch via its per-hop counts."""
    ns, ne = batch.num_sampled_nodes, batch.num_sampled_edges
    blocks = []
    for l in range(layers):
        nd = sum(ns[: layers - l])
        nsrc = sum(ns[: layers - l + 1])
        e = sum(ne[: layers - l])
        blocks.append((batch.edge_index[:, :e], nsrc, nd))
    return blocks


@torch.no_grad()
def infer(model, data, dev, chunk, x_dev=None):
    """Exact layer-wise inference over all nodes (full neighborhoods); with
    x_dev (the features on the device) every layer's input stays there."""
    model.eval()
    x = data["x"] if x_dev is None else x_dev
    rowptr, col = data["rowptr"], data["col"]
    n = rowptr.numel() - 1
    for i, conv in enumerate(model.convs):
        out = []
        for lo in range(0, n, chunk):
            hi = min(lo + chunk, n)
            a, b = int(rowptr[lo]), int(rowptr[hi])
            nbr = col[a:b]
            dst = torch.repeat_interleave(torch.arange(hi - lo), rowptr[lo + 1 : hi + 1] - rowptr[lo:hi])
            # Targets first, then their other neighbors.
            inside = (nbr >= lo) & (nbr < hi)
            extra = torch.unique(nbr[~inside])
            nodes = torch.cat([torch.arange(lo, hi), extra])
            src_local = torch.where(inside, nbr - lo, hi - lo + torch.searchsorted(extra, nbr))
            ei = torch.stack([src_local, dst]).to(dev)
            xs = x[nodes.to(x.device)].to(dev)
            h = conv((xs, xs[: hi - lo]), ei, size=(nodes.numel(), hi - lo))
            if i < len(model.convs) - 1:
                h = F.relu(h)
            out.append(h if x_dev is not None else h.cpu())
        x = torch.cat(out)
    return x.argmax(dim=1).cpu()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    dev = torch.device(args.device)
    data = load(args.npz)
    fanouts = [int(f) for f in args.fanout.split(",")]
    if len(fanouts) != args.layers:
        sys.exit(f"{len(fanouts)} fanouts for {args.layers} layers")
    sampler = args.sampler
    if sampler == "auto":
        try:
            import pyg_lib  # noqa: F401

            sampler = "pyg"
        except ImportError:
            try:
                import torch_sparse  # noqa: F401

                sampler = "pyg"
            except ImportError:
                sampler = "torch"
    dims = [data["x"].shape[1]] + [args.hidden] * (args.layers - 1) + [data["num_classes"]]
    model = SAGE(dims, args.dropout).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    x, y = data["x"], data["y"]
    if args.resident:
        x, y = x.to(dev), y.to(dev)
    elif dev.type == "cuda":
        x = x.pin_memory()
    ts = TorchSampler(data["rowptr"], data["col"], fanouts, dev) if sampler == "torch" and not args.workers else None
    loader = pyg_loader(data, fanouts, args.batch_size, data["train"], args.seed) if sampler == "pyg" else None
    if args.workers:
        sampler = f"torch-cpu in {args.workers} workers"
        loader = worker_loader(data, fanouts, args.batch_size, args.workers, dev.type == "cuda", args.seed)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    epochs, evals = [], []
    for epoch in range(1, args.epochs + 1):
        model.train()
        sync()
        t0 = time.perf_counter()
        loss_sum, seen, t_sample = 0.0, 0, 0.0
        if ts is not None:
            perm = data["train"][torch.randperm(data["train"].numel())]
            batches = perm.split(args.batch_size)
        else:
            batches = loader
        it = iter(batches)
        while True:
            s0 = time.perf_counter()
            try:
                b = next(it)
            except StopIteration:
                break
            if args.workers:
                targets, blocks, xb, yb = b
                blocks = [(ei.to(dev, non_blocking=True), ns, nd) for ei, ns, nd in blocks]
                xb, yb = xb.to(dev, non_blocking=True), yb.to(dev, non_blocking=True)
            elif ts is not None:
                nodes, blocks = ts.sample(b)
                nodes_cpu = nodes if args.resident else nodes.cpu()
                targets = b.to(dev) if args.resident else b
            else:
                blocks = [(ei.to(dev), ns, nd) for ei, ns, nd in pyg_blocks(b, args.layers)]
                nodes_cpu = b.n_id
                targets = b.n_id[: b.batch_size]
            t_sample += time.perf_counter() - s0
            if not args.workers:
                xb = x[nodes_cpu].to(dev, non_blocking=True)
                yb = y[targets].to(dev, non_blocking=True)
            opt.zero_grad()
            out = model(xb, blocks)
            loss = F.cross_entropy(out, yb)
            loss.backward()
            opt.step()
            loss_sum += float(loss) * targets.numel()
            seen += targets.numel()
        sync()
        ep = {"epoch": epoch, "train_s": time.perf_counter() - t0, "sample_s": t_sample, "loss": loss_sum / max(seen, 1)}
        if (args.eval_every and epoch % args.eval_every == 0) or epoch == args.epochs:
            e0 = time.perf_counter()
            pred = infer(model, data, dev, args.eval_batch, x if args.resident else None)
            sync()
            ep["eval_s"] = time.perf_counter() - e0
            ep["val_acc"] = float((pred[data["valid"]] == data["y"][data["valid"]]).float().mean())
            ep["test_acc"] = float((pred[data["test"]] == data["y"][data["test"]]).float().mean())
            evals.append(ep)
        epochs.append(ep)
        print(json.dumps(ep), file=sys.stderr)
    res = {
        "framework": "pyg",
        "torch": torch.__version__,
        "pyg": __import__("torch_geometric").__version__,
        "sampler": sampler + (", graph and features resident on the device" if args.resident else ""),
        "device": str(dev) + (f" ({torch.cuda.get_device_name(dev)})" if dev.type == "cuda" else ""),
        "dataset": data["name"],
        "config": {k: getattr(args, k) for k in ["layers", "hidden", "fanout", "batch_size", "epochs", "lr", "weight_decay", "dropout", "seed"]},
        "epoch_s": sum(e["train_s"] for e in epochs) / len(epochs),
        # the first epoch includes warm-up (allocator, kernels): also report the rest
        "epoch_s_after_first": (sum(e["train_s"] for e in epochs[1:]) / (len(epochs) - 1)) if len(epochs) > 1 else None,
        "val_acc": evals[-1]["val_acc"],
        "test_acc": evals[-1]["test_acc"],
        "peak_bytes": torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None,
        "epochs": epochs,
    }
    txt = json.dumps(res, indent=2)
    print(txt)
    if args.json:
        with open(args.json, "w") as f:
            f.write(txt + "\n")


if __name__ == "__main__":
    main()
