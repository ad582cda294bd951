"""Mini-batch GraphSAGE in plain PyTorch: the trainer gnnscope profiles
without any change to it.

The graph is synthetic (generated here: labeled communities, features
drawn around each community's centre) or Cora from an .npz (--data, the
Planetoid/GNN-benchmark layout: adj_*, attr_*, labels). Neighbours are
sampled with replacement with fixed fanouts inside the DataLoader's
collate function, so sampling and feature gathering run where the
DataLoader runs them.

  --variant baseline   num_workers=0, no pinned memory
  --variant optimized  2 workers with prefetch_factor 4 and persistent
                       workers, pinned memory and non_blocking copies on CUDA

Run it under gnnscope (examples/pytorch/sage.toml) or alone:
  python3 examples/pytorch/sage_train.py --variant optimized --epochs 3

Under torchrun or srun (WORLD_SIZE > 1) it trains with DistributedDataParallel
(nccl on CUDA, gloo on the CPU), each rank on its share of the training
nodes; on several machines as one session: examples/pytorch/slurm_sage.sbatch
and examples/pytorch/torchrun_two_nodes.sh.
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def synthetic(n, classes, feats, degree, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    centres = torch.randn(classes, feats, generator=g)
    x = centres[y] + 4.0 * torch.randn(n, feats, generator=g)
    m = n * degree // 2
    src = torch.randint(0, n, (m,), generator=g)
    # 60 % of the edges stay inside a community
    by_class = [torch.nonzero(y == c).flatten() for c in range(classes)]
    same = torch.rand(m, generator=g) < 0.6
    dst = torch.randint(0, n, (m,), generator=g)
    for c in range(classes):
        sel = same & (y[src] == c)
        pool = by_class[c]
        dst[sel] = pool[torch.randint(0, len(pool), (int(sel.sum()),), generator=g)]
    return x, y, src, dst


def cora(path):
    import numpy as np

    d = np.load(path, allow_pickle=True)
    n = int(d["adj_shape"][0])
    indptr = torch.from_numpy(d["adj_indptr"].astype("int64"))
    dst = torch.from_numpy(d["adj_indices"].astype("int64"))
    src = torch.repeat_interleave(torch.arange(n), indptr[1:] - indptr[:-1])
    x = torch.zeros(n, int(d["attr_shape"][1]))
    aptr = torch.from_numpy(d["attr_indptr"].astype("int64"))
    rows = torch.repeat_interleave(torch.arange(n), aptr[1:] - aptr[:-1])
    x[rows, torch.from_numpy(d["attr_indices"].astype("int64"))] = torch.from_numpy(
        d["attr_data"].astype("float32"))
    y = torch.from_numpy(d["labels"].astype("int64"))
    return x, y, src, dst


def csr(n, src, dst):
    """Undirected CSR (indptr, indices) of the edge list."""
    s = torch.cat([src, dst])
    t = torch.cat([dst, src])
    order = torch.argsort(s)
    indptr = torch.zeros(n + 1, dtype=torch.long)
    indptr[1:] = torch.cumsum(torch.bincount(s, minlength=n), 0)
    return indptr, t[order]


class Sampler:
    """collate_fn: sample fanouts[0] neighbours of each target and
    fanouts[1] of each of those, with replacement, and gather features."""

    def __init__(self, x, y, indptr, indices, fanouts):
        self.x, self.y, self.indptr, self.indices = x, y, indptr, indices
        self.fanouts = fanouts

    def neighbours(self, nodes, k):
        start = self.indptr[nodes]
        deg = self.indptr[nodes + 1] - start
        r = (torch.rand(nodes.numel(), k) * deg.unsqueeze(1)).long()
        nb = self.indices[(start.unsqueeze(1) + r).clamp(max=self.indices.numel() - 1)]
        return torch.where(deg.unsqueeze(1) > 0, nb, nodes.unsqueeze(1))

    def __call__(self, ids):
        t = torch.as_tensor(ids)
        h1 = self.neighbours(t, self.fanouts[0])                       # [B, k1]
        h2 = self.neighbours(h1.flatten(), self.fanouts[1])            # [B*k1, k2]
        return self.x[t], self.x[h1], self.x[h2].view(t.numel(), self.fanouts[0],
                                                       self.fanouts[1], -1), self.y[t]


class SAGE(torch.nn.Module):
    """Two GraphSAGE-mean layers over the sampled tree."""

    def __init__(self, f, hidden, classes):
        super().__init__()
        self.s1 = torch.nn.Linear(f, hidden)
        self.n1 = torch.nn.Linear(f, hidden, bias=False)
        self.s2 = torch.nn.Linear(hidden, classes)
        self.n2 = torch.nn.Linear(hidden, classes, bias=False)

    def forward(self, x0, x1, x2):
        h0 = F.relu(self.s1(x0) + self.n1(x1.mean(1)))          # targets
        h1 = F.relu(self.s1(x1) + self.n1(x2.mean(2)))          # their neighbours
        return self.s2(h0) + self.n2(h1.mean(1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", choices=["baseline", "optimized"], default="baseline")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--data", help="Cora-style .npz; a synthetic graph when absent")
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--fanouts", default="10,5")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        # torchrun's variables (RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if a.device.startswith("cuda"):
            torch.cuda.set_device(local)
            a.device = "cuda:%d" % local
        dist.init_process_group("nccl" if a.device.startswith("cuda") else "gloo")
    torch.manual_seed(a.seed)
    if a.data:
        x, y, src, dst = cora(a.data)
    else:
        x, y, src, dst = synthetic(a.nodes, 8, a.features, 10, a.seed)
    n = x.shape[0]
    indptr, indices = csr(n, src, dst)
    perm = torch.randperm(n)
    train_ids, val_ids = perm[: int(0.7 * n)], perm[int(0.7 * n):]
    sampler = Sampler(x, y, indptr, indices, [int(k) for k in a.fanouts.split(",")])
    dev = torch.device(a.device)
    opt_variant = a.variant == "optimized"
    kw = dict(batch_size=a.batch_size, collate_fn=sampler)
    if opt_variant and a.workers > 0:
        kw.update(num_workers=a.workers, prefetch_factor=4, persistent_workers=True,
                  pin_memory=dev.type == "cuda")
    part = None
    if world > 1:  # every rank draws the same graph (the seed) and trains on its share
        part = DistributedSampler(train_ids.tolist(), shuffle=True, seed=a.seed)
        train = DataLoader(train_ids.tolist(), sampler=part, **kw)
    else:
        train = DataLoader(train_ids.tolist(), shuffle=True, **kw)
    val = DataLoader(val_ids.tolist(), **kw)
    nb = opt_variant and dev.type == "cuda"

    model = SAGE(x.shape[1], a.hidden, int(y.max()) + 1).to(dev)
    if world > 1:
        model = DistributedDataParallel(model, device_ids=[dev.index] if dev.type == "cuda" else None)
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    who = "rank %d of %d, " % (dist.get_rank(), world) if world > 1 else ""
    print("%svariant %s: %d nodes, %d train, device %s" % (who, a.variant, n, len(train_ids), dev))
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        if part is not None:
            part.set_epoch(epoch)
        model.train()
        total = torch.zeros((), device=dev)
        for x0, x1, x2, yb in train:
            x0, x1, x2 = (t.to(dev, non_blocking=nb) for t in (x0, x1, x2))
            yb = yb.to(dev, non_blocking=nb)
            opt.zero_grad()
            loss = F.cross_entropy(model(x0, x1, x2), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
        model.eval()
        correct = torch.zeros((), device=dev, dtype=torch.long)
        with torch.no_grad():
            for x0, x1, x2, yb in val:
                out = model(x0.to(dev, non_blocking=nb), x1.to(dev, non_blocking=nb),
                            x2.to(dev, non_blocking=nb))
                correct += (out.argmax(1) == yb.to(dev, non_blocking=nb)).sum()
        loss_v = total.item() / len(train)
        acc = correct.item() / len(val_ids)
        print("%sepoch %d loss %.4f val_acc %.4f time %.3fs"
              % (who, epoch, loss_v, acc, time.perf_counter() - t0), flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
