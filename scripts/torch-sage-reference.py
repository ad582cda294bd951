#!/usr/bin/env python3
"""Train and evaluate gnnscope's GraphSAGE in plain PyTorch on a dataset
exported by gnnscope, timed as gnnscope times it, and print one JSON object:
the PyTorch side of scripts/bench-vs-torch.sh.

    gnnscope datasets export synth-small -o small.npz
    python3 scripts/torch-sage-reference.py small.npz --layers 2 --hidden 64 \\
        --fanout 25,10 --batch-size 1024 --epochs 1 --threads 2

The flags carry the names of `gnnscope train`'s, so one argument list
configures both. The model is what `gnnscope train --model sage` trains:
SAGE layers with mean aggregation and a root weight (y = mean_j x_j Wl +
x_i Wr + b, Glorot weights, zero bias), ReLU and dropout after every hidden
layer (none on the input), cross-entropy over each batch's targets, Adam
with L2 weight decay on the weights (not the biases). A layer wider in than
out multiplies before it aggregates (mean is linear), as gnnscope's does.
Features are row-normalized when the export says gnnscope does
(feature_norm = "row").

Training: the training nodes shuffled each epoch, in batches of
--batch-size targets; a vectorized uniform sampler on the CSR (what PyG's
NeighborLoader does, in torch operations): hop h draws up to fanout[h-1]
distinct neighbors of every node reached so far, targets first in every
node list. The epoch time is the wall time of the whole loop: sampling,
feature gather, forward, backward and the optimizer step.

Evaluation: exact layer-wise inference over all nodes, layer by layer, each
layer's aggregation a sparse CSR product over every node's full
neighborhood (in chunks of --eval-chunk destination rows), as PyG's
inference examples do with full-neighborhood loaders. gnnscope computes the
first layer's neighbor mean of the features once, before training, when
that layer aggregates first (the features never change); this script does
the same in its setup (--no-agg-cache turns it off), so eval_s is the same
work on both sides. eval_s covers inference and the validation loss and
accuracies.

Threads: --threads sets torch's intra-op threads (0 = all cores). BLAS
threads follow OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, which the caller
sets (scripts/bench-vs-torch.sh does).

Needs numpy and torch (1.13 or later, CPU is enough). No PyG.
"""

import argparse
import json
import os
import resource
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("npz", help="file written by gnnscope datasets export")
    p.add_argument("--model", default="sage", choices=["sage"], help="only sage (accepted for gnnscope's flag)")
    p.add_argument("--sampler", default="neighbor", choices=["neighbor"], help="only neighbor (as gnnscope's flag)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--fanout", default="25,10", help="neighbors per hop, hop 1 first; -1 = all")
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=1,
                   help="training epochs, each followed by an evaluation (0: evaluate the initial weights only)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = all cores)")
    p.add_argument("--eval-chunk", type=int, default=1 << 18, help="destination rows per sparse product in inference")
    p.add_argument("--no-agg-cache", action="store_true", help="aggregate the features afresh in every evaluation")
    p.add_argument("--check", action="store_true",
                   help="also compare the layer-wise inference with a forward pass over full-neighborhood "
                        "blocks of the first 256 nodes (check_max_abs_diff)")
    p.add_argument("--json", action="store_true", help="accepted for gnnscope's flag: the output is always JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p.parse_args(argv)


def load(path):
    d = np.load(path, allow_pickle=False)
    x = torch.from_numpy(np.ascontiguousarray(d["x"], dtype=np.float32))
    if str(d["feature_norm"]) == "row":
        s = x.sum(dim=1, keepdim=True)
        x = torch.where(s > 0, x / s.clamp_min(1e-38), x)
    rowptr = torch.from_numpy(d["indptr"]).long()
    col = torch.from_numpy(d["indices"]).long()
    return {
        "name": str(d["name"]),
        "rowptr": rowptr,
        "col": col,
        "x": x,
        "y": torch.from_numpy(d["y"]).long(),
        "train": torch.from_numpy(d["train_idx"]).long(),
        "valid": torch.from_numpy(d["valid_idx"]).long(),
        "test": torch.from_numpy(d["test_idx"]).long(),
        "num_classes": int(d["num_classes"]),
    }


class SAGEConv(torch.nn.Module):
    """gnnscope's SAGEConv: mean_j x_j Wl + x_i Wr + b."""

    def __init__(self, fin, fout):
        super().__init__()
        self.lin_l = torch.nn.Linear(fin, fout, bias=False)
        self.lin_r = torch.nn.Linear(fin, fout, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(fout))
        torch.nn.init.xavier_uniform_(self.lin_l.weight)
        torch.nn.init.xavier_uniform_(self.lin_r.weight)
        self.transform_first = fin > fout

    def forward(self, x, src, dst, deg, nd):
        """x: the block's source rows (destinations first); edge (src, dst)
        local ids; deg: in-degree of each destination in the block."""
        h = self.lin_l(x) if self.transform_first else x
        agg = torch.zeros(nd, h.shape[1], dtype=h.dtype).index_add_(0, dst, h[src])
        agg = agg / deg.clamp_min(1).unsqueeze(1).to(h.dtype)
        if not self.transform_first:
            agg = self.lin_l(agg)
        return agg + self.lin_r(x[:nd]) + self.bias


class SAGE(torch.nn.Module):
    def __init__(self, dims, dropout):
        super().__init__()
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout

    def forward(self, x, blocks):
        """blocks: outermost first, each (src, dst, deg, num_dst)."""
        for i, (src, dst, deg, nd) in enumerate(blocks):
            x = self.convs[i](x, src, dst, deg, nd)
            if i < len(self.convs) - 1:
                x = F.dropout(F.relu(x), p=self.dropout, training=self.training)
        return x


class Sampler:
    """Vectorized uniform neighbor sampling without replacement on the CSR."""

    def __init__(self, rowptr, col, fanouts):
        self.rowptr, self.col, self.fanouts = rowptr, col, fanouts
        self.assoc = torch.full((rowptr.numel() - 1,), -1, dtype=torch.long)

    def hop(self, nodes, k):
        """Samples up to k distinct neighbors of every node (all with k < 0):
        returns the neighbors, the index of their node in nodes, and each
        node's number of sampled neighbors."""
        start = self.rowptr[nodes]
        deg = self.rowptr[nodes + 1] - start
        seg = torch.repeat_interleave(torch.arange(nodes.numel()), deg)
        pos = torch.arange(seg.numel()) - (torch.cumsum(deg, 0) - deg)[seg]
        if k < 0 or not bool((deg > k).any()):
            return self.col[start[seg] + pos], seg, deg
        # rows with at most k neighbors keep them all; the others keep the
        # k entries with the smallest random keys
        big = deg > k
        eb = big[seg]
        sb, pb = seg[eb], pos[eb]
        order = torch.argsort(sb.double() + torch.rand(sb.numel(), dtype=torch.double))
        sb, pb = sb[order], pb[order]
        degb = torch.where(big, deg, torch.zeros_like(deg))
        rank = torch.arange(sb.numel()) - (torch.cumsum(degb, 0) - degb)[sb]
        keep = rank < k
        seg = torch.cat([seg[~eb], sb[keep]])
        pos = torch.cat([pos[~eb], pb[keep]])
        return self.col[start[seg] + pos], seg, torch.clamp(deg, max=k)

    def sample(self, targets):
        """Returns the input nodes (targets first) and the blocks, outermost first."""
        nodes = targets
        self.assoc[nodes] = torch.arange(nodes.numel())
        blocks, all_nodes = [], nodes
        for k in self.fanouts:
            nbr, dst, deg = self.hop(nodes, k)
            new = torch.unique(nbr[self.assoc[nbr] < 0])
            self.assoc[new] = all_nodes.numel() + torch.arange(new.numel())
            all_nodes = torch.cat([all_nodes, new])
            blocks.append((self.assoc[nbr], dst, deg, nodes.numel()))
            nodes = all_nodes
        self.assoc[all_nodes] = -1
        return all_nodes, blocks[::-1]


def mean_weights(rowptr):
    """The weight of every CSR entry in its row's mean: 1 / degree."""
    deg = rowptr[1:] - rowptr[:-1]
    return torch.repeat_interleave(1.0 / deg.float().clamp_min(1), deg)


def adjacency_chunks(rowptr, col, w, chunk):
    """The row-normalized adjacency as CSR tensors of --eval-chunk rows each,
    with their first and last row: (lo, hi, A[lo:hi])."""
    n = rowptr.numel() - 1
    out = []
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        a, b = int(rowptr[lo]), int(rowptr[hi])
        with warnings.catch_warnings():  # "sparse CSR support is in beta"
            warnings.simplefilter("ignore")
            out.append((lo, hi, torch.sparse_csr_tensor(rowptr[lo : hi + 1] - a, col[a:b], w[a:b], size=(hi - lo, n))))
    return out


def spmm_mean(chunks, h):
    """The mean over each node's neighbors of the rows of h."""
    out = torch.empty(h.shape[0], h.shape[1], dtype=h.dtype)
    for lo, hi, A in chunks:
        out[lo:hi] = A @ h
    return out


@torch.no_grad()
def infer(model, h, chunks, agg0):
    """Exact layer-wise inference over all nodes from the features h;
    returns the logits. Each layer holds its input and its output (N rows
    each) and one chunk's temporaries."""
    model.eval()
    for i, conv in enumerate(model.convs):
        # transform-first layers aggregate h Wl, computed once for all nodes
        src = conv.lin_l(h) if conv.transform_first else h
        out = torch.empty(h.shape[0], conv.bias.numel())
        for lo, hi, A in chunks:
            if i == 0 and agg0 is not None:
                agg = agg0[lo:hi]
            else:
                agg = A @ src
            if not conv.transform_first:
                agg = conv.lin_l(agg)
            torch.addmm(agg, h[lo:hi], conv.lin_r.weight.t(), out=out[lo:hi])
            out[lo:hi] += conv.bias
        if i < len(model.convs) - 1:
            out.relu_()
        h = out
    return h


@torch.no_grad()
def check(model, data, chunks, agg0):
    """The largest difference between the layer-wise logits and those of a
    sampled forward pass that takes every neighbor (fanouts -1)."""
    logits = infer(model, data["x"], chunks, agg0)
    targets = torch.arange(min(256, logits.shape[0]))
    nodes, blocks = Sampler(data["rowptr"], data["col"], [-1] * len(model.convs)).sample(targets)
    model.eval()
    return float((model(data["x"][nodes], blocks) - logits[targets]).abs().max())


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def blas_library():
    """The BLAS shared library this process loaded (from /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and ".so" in line}
        return sorted(libs)
    except OSError:
        return []


def train_epoch(model, opt, data, sampler, batch_size, log):
    model.train()
    perm = data["train"][torch.randperm(data["train"].numel())]
    loss_sum, seen, t_sample = 0.0, 0, 0.0
    batches = perm.split(batch_size)
    step = max(len(batches) // 10, 1)
    for b, targets in enumerate(batches):
        if b and b % step == 0:
            log(f"torch: batch {b}/{len(batches)}")
        s0 = time.perf_counter()
        nodes, blocks = sampler.sample(targets)
        t_sample += time.perf_counter() - s0
        xb = data["x"][nodes]
        yb = data["y"][targets]
        opt.zero_grad()
        loss = F.cross_entropy(model(xb, blocks), yb)
        loss.backward()
        opt.step()
        loss_sum += float(loss) * targets.numel()
        seen += targets.numel()
    return loss_sum / max(seen, 1), t_sample


def evaluate(model, data, chunks, agg0):
    logits = infer(model, data["x"], chunks, agg0)
    y, va, te = data["y"], data["valid"], data["test"]
    pred = logits.argmax(dim=1)
    return {
        "val_acc": float((pred[va] == y[va]).float().mean()),
        "val_loss": float(F.cross_entropy(logits[va], y[va])),
        "test_acc": float((pred[te] == y[te]).float().mean()),
    }


def main(argv=None):
    args = parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    else:
        torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(args.seed)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    data = load(args.npz)
    load_s = time.perf_counter() - t0
    fanouts = [int(f) for f in args.fanout.split(",")]
    if len(fanouts) != args.layers:
        sys.exit(f"torch-sage-reference: {len(fanouts)} fanouts for {args.layers} layers")
    n, f = data["x"].shape
    dims = [f] + [args.hidden] * (args.layers - 1) + [data["num_classes"]]
    model = SAGE(dims, args.dropout)
    decay = [p for name, p in model.named_parameters() if not name.endswith("bias")]
    nodecay = [p for name, p in model.named_parameters() if name.endswith("bias")]
    opt = torch.optim.Adam([{"params": decay, "weight_decay": args.weight_decay},
                            {"params": nodecay, "weight_decay": 0.0}], lr=args.lr)
    # setup: the inference adjacency and, as gnnscope, the first layer's
    # input aggregate when that layer aggregates first
    s0 = time.perf_counter()
    chunks = adjacency_chunks(data["rowptr"], data["col"], mean_weights(data["rowptr"]), args.eval_chunk)
    agg0 = None
    if not args.no_agg_cache and not model.convs[0].transform_first:
        agg0 = spmm_mean(chunks, data["x"])
    sampler = Sampler(data["rowptr"], data["col"], fanouts)
    setup_s = time.perf_counter() - s0
    log(f"torch: {data['name']} loaded in {load_s:.1f}s, setup {setup_s:.1f}s, {torch.get_num_threads()} threads")
    epochs = []
    for epoch in range(min(args.epochs, 1), args.epochs + 1):
        loss, t_sample, train_s = None, None, None
        if epoch > 0:
            e0 = time.perf_counter()
            loss, t_sample = train_epoch(model, opt, data, sampler, args.batch_size, log)
            train_s = time.perf_counter() - e0
        v0 = time.perf_counter()
        ev = evaluate(model, data, chunks, agg0)
        eval_s = time.perf_counter() - v0
        epochs.append({"epoch": epoch, "loss": loss, "train_s": train_s, "sample_s": t_sample, "eval_s": eval_s, **ev})
        if epoch > 0:
            log(f"torch: epoch {epoch} train {train_s:.2f}s (sampling {t_sample:.2f}s)")
        log(f"torch: epoch {epoch} eval {eval_s:.2f}s test_acc {ev['test_acc']:.4f}")
    last = epochs[-1]
    extra = {"check_max_abs_diff": check(model, data, chunks, agg0)} if args.check else {}
    res = {
        "framework": "torch",
        "torch": torch.__version__,
        "blas": blas_library(),
        "threads": torch.get_num_threads(),
        "dataset": data["name"],
        "nodes": n,
        "edges": int(data["col"].numel()),
        "features": f,
        "classes": data["num_classes"],
        "config": {k: getattr(args, k) for k in ["layers", "hidden", "fanout", "batch_size", "epochs", "lr",
                                                  "weight_decay", "dropout", "seed", "eval_chunk"]},
        "agg_cache": agg0 is not None,
        "load_s": load_s,
        "setup_s": setup_s,
        "epoch_s": (sum(e["train_s"] for e in epochs) / args.epochs) if args.epochs else None,
        "eval_s": last["eval_s"],
        "val_acc": last["val_acc"],
        "val_loss": last["val_loss"],
        "test_acc": last["test_acc"],
        "max_rss_bytes": max_rss_bytes(),
        "history": epochs,
        **extra,
    }
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
