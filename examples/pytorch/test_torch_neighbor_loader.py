"""Tests of the plain-PyTorch neighbour loader (run with
python3 -m unittest discover -s examples/pytorch)."""

import unittest

import torch

import torch_neighbor_loader as tnl


def ring(n):
    """A symmetric ring with chords: node i links i±1 and i±5."""
    src, dst = [], []
    for i in range(n):
        for d in (1, 5):
            src += [i, (i + d) % n]
            dst += [(i + d) % n, i]
    return torch.tensor([src, dst])


class LoaderTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.n = 60
        self.ei = ring(self.n)
        self.x = torch.arange(self.n, dtype=torch.float32).unsqueeze(1).repeat(1, 3)
        self.y = torch.arange(self.n) % 4

    def test_batches_are_subgraphs_with_seeds_first(self):
        seeds = torch.zeros(self.n, dtype=torch.bool)
        seeds[::3] = True
        edges = set(zip(self.ei[0].tolist(), self.ei[1].tolist()))
        seen = []
        for b in tnl.loader(self.x, self.y, self.ei, seeds, [2, 3], batch_size=7, shuffle=True):
            n_id = b.n_id.tolist()
            self.assertEqual(len(set(n_id)), len(n_id))
            seen += n_id[: b.batch_size]
            self.assertTrue(all(v % 3 == 0 for v in n_id[: b.batch_size]))
            self.assertTrue(torch.equal(b.x[:, 0], b.n_id.float()))
            self.assertTrue(torch.equal(b.y, b.n_id % 4))
            src, dst = b.edge_index
            for s, d in zip(src.tolist(), dst.tolist()):
                self.assertIn((n_id[s], n_id[d]), edges)
            # hop 1: at most 2 distinct neighbours per seed
            hop1 = [(s, d) for s, d in zip(src.tolist(), dst.tolist()) if d < b.batch_size]
            per = torch.bincount(torch.tensor([d for _, d in hop1]), minlength=b.batch_size)
            self.assertTrue(bool((per <= 2).all()) and bool((per >= 1).all()))
            self.assertEqual(len(set(hop1)), len(hop1))
        self.assertEqual(sorted(seen), list(range(0, self.n, 3)))

    def test_all_neighbours(self):
        b = tnl.loader(self.x, self.y, self.ei, [10], [-1], batch_size=1)
        b = next(iter(b))
        nbrs = sorted(b.n_id[b.edge_index[0]].tolist())
        self.assertEqual(nbrs, [5, 9, 11, 15])
        self.assertEqual(set(b.edge_index[1].tolist()), {0})

    def test_every_neighbour_can_be_drawn(self):
        s = tnl.Sampler(self.x, self.y, *tnl.csr_of(self.ei, self.n), [1])
        got = {int(s([20]).n_id[1]) for _ in range(200)}
        self.assertEqual(got, {15, 19, 21, 25})

    def test_workers(self):
        seeds = list(range(0, self.n, 2))
        got = []
        for b in tnl.loader(self.x, self.y, self.ei, seeds, [2], batch_size=8, num_workers=2):
            got += b.n_id[: b.batch_size].tolist()
        self.assertEqual(got, seeds)


if __name__ == "__main__":
    unittest.main()
