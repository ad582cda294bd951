"""A neighbour-sampling loader in plain PyTorch, shaped like PyG's
NeighborLoader, for machines whose PyG has neither pyg-lib nor
torch-sparse (NeighborLoader needs one of them to sample).

It is an ordinary torch DataLoader over the seed nodes whose collate_fn
samples, hop by hop, up to k distinct neighbours of each node added at the
previous hop (of the seeds at hop 1), and returns a batch with
NeighborLoader's fields: the seeds first in `n_id`, `x` and `y` of those
nodes, `edge_index` of the sampled edges in local ids (row 0 the
neighbour, row 1 the node it was sampled for: messages flow from source
to target, as PyG's convolutions expect), and `batch_size`, the number of
seeds.
"""

import torch
from torch.utils.data import DataLoader


class SampledBatch:
    """One sampled subgraph. `to` moves its tensors like PyG's Data.to."""

    def __init__(self, n_id, x, y, edge_index, batch_size):
        self.n_id, self.x, self.y, self.edge_index = n_id, x, y, edge_index
        self.batch_size = batch_size

    def to(self, device, non_blocking=False):
        return SampledBatch(self.n_id.to(device, non_blocking=non_blocking),
                            self.x.to(device, non_blocking=non_blocking),
                            self.y.to(device, non_blocking=non_blocking),
                            self.edge_index.to(device, non_blocking=non_blocking), self.batch_size)

    def pin_memory(self):
        return SampledBatch(self.n_id.pin_memory(), self.x.pin_memory(), self.y.pin_memory(),
                            self.edge_index.pin_memory(), self.batch_size)


def csr_of(edge_index, n):
    """CSR (rowptr, col) of the in-neighbours of every node: col holds the
    sources of the edges that point at each target (edge_index row 1)."""
    src, dst = edge_index[0].long(), edge_index[1].long()
    order = torch.argsort(dst, stable=True)
    rowptr = torch.zeros(n + 1, dtype=torch.long)
    rowptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
    return rowptr, src[order]


class Sampler:
    """collate_fn: a list of seed ids in, a SampledBatch out."""

    def __init__(self, x, y, rowptr, col, fanouts):
        self.x, self.y, self.rowptr, self.col = x, y, rowptr, col
        self.fanouts = fanouts
        self.assoc = None  # global -> local id, made in the process that samples

    def hop(self, nodes, k):
        """Up to k distinct neighbours of each node (all when k < 0), as
        (neighbour, index of the node in nodes)."""
        start = self.rowptr[nodes]
        deg = self.rowptr[nodes + 1] - start
        total = int(deg.sum())
        seg = torch.repeat_interleave(torch.arange(nodes.numel()), deg)
        first = torch.cumsum(deg, 0) - deg
        pos = torch.arange(total) - first[seg]
        nbr = self.col[start[seg] + pos]
        if k >= 0:
            # order each node's neighbours by random keys and keep the first k
            order = torch.argsort(seg.double() + torch.rand(total, dtype=torch.double))
            nbr, seg = nbr[order], seg[order]
            keep = (torch.arange(total) - first[seg]) < k
            nbr, seg = nbr[keep], seg[keep]
        return nbr, seg

    def __call__(self, seeds):
        seeds = torch.as_tensor(seeds, dtype=torch.long)
        if self.assoc is None:
            self.assoc = torch.full((self.rowptr.numel() - 1,), -1, dtype=torch.long)
        assoc = self.assoc
        assoc[seeds] = torch.arange(seeds.numel())
        n_id, frontier, edges = seeds, seeds, []
        for k in self.fanouts:
            nbr, seg = self.hop(frontier, k)
            new = torch.unique(nbr[assoc[nbr] < 0])
            assoc[new] = n_id.numel() + torch.arange(new.numel())
            edges.append(torch.stack([assoc[nbr], assoc[frontier[seg]]]))
            n_id, frontier = torch.cat([n_id, new]), new
        assoc[n_id] = -1
        edge_index = torch.cat(edges, 1) if edges else torch.zeros(2, 0, dtype=torch.long)
        return SampledBatch(n_id, self.x[n_id], self.y[n_id], edge_index, seeds.numel())


def loader(x, y, edge_index, seeds, fanouts, **kw):
    """A DataLoader over seeds (a bool mask or ids) whose batches are
    SampledBatches; kw go to DataLoader (batch_size, shuffle, num_workers,
    pin_memory, ...)."""
    seeds = torch.as_tensor(seeds)
    if seeds.dtype == torch.bool:
        seeds = torch.nonzero(seeds).flatten()
    rowptr, col = csr_of(edge_index, x.shape[0])
    return DataLoader(seeds.tolist(), collate_fn=Sampler(x, y, rowptr, col, list(fanouts)), **kw)
