"""A plain PyTorch trainer whose DataLoader workers gnnscope shows as lanes
loader/0 .. loader/N-1 (run it with `gnnscope run --cmd`, unchanged).

--delay makes each sample's __getitem__ slow (the loader is the
bottleneck: busy workers, the trainer waiting), --compute makes each
training step slow (idle workers). The other flags exercise the worker
machinery: start method, persistent workers, prefetching, a user
worker_init_fn, an iterator abandoned midway, a worker that dies.
"""

import argparse
import os
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    """n samples of 16 features; __getitem__ sleeps delay seconds. With
    die_at, the worker that fetches that index exits at once the first
    time (a marker file remembers it)."""

    def __init__(self, n, delay=0.0, die_at=-1, marker="", spin=0.0):
        self.n, self.delay, self.die_at, self.marker = n, delay, die_at, marker
        self.spin = spin

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.die_at and self.marker and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(3)
        if self.delay:
            time.sleep(self.delay)
        if self.spin:  # CPU work, as a real transform would do: a fixed
            end = time.thread_time() + self.spin  # CPU time, whatever the load
            while time.thread_time() < end:
                pass
        x = torch.full((16,), float(i) / self.n)
        return x, i % 2


def init_worker(worker_id):
    """The user's own worker_init_fn: it must still run."""
    print("init worker %d" % worker_id, flush=True)


class Net(torch.nn.Module):
    def __init__(self, compute):
        super().__init__()
        self.l1 = torch.nn.Linear(16, 32)
        self.l2 = torch.nn.Linear(32, 2)
        self.compute = compute

    def forward(self, x):
        if self.compute:
            time.sleep(self.compute)  # a slow model step, without using the CPU
        return self.l2(torch.relu(self.l1(x)))


def loader(a, ds):
    kw = {}
    if a.workers > 0:
        kw = dict(persistent_workers=a.persistent, prefetch_factor=a.prefetch,
                  multiprocessing_context=a.start or None)
        if a.init:
            kw["worker_init_fn"] = init_worker
    return DataLoader(ds, batch_size=a.batch, num_workers=a.workers, **kw)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--samples", type=int, default=96)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--delay", type=float, default=0.0, help="seconds per sample")
    p.add_argument("--spin", type=float, default=0.0, help="seconds of CPU work per sample")
    p.add_argument("--compute", type=float, default=0.0, help="seconds per training step")
    p.add_argument("--start", default="", help="fork or spawn (default: the platform's)")
    p.add_argument("--persistent", action="store_true")
    p.add_argument("--prefetch", type=int, default=2)
    p.add_argument("--init", action="store_true", help="a worker_init_fn of the user's")
    p.add_argument("--abandon", type=int, default=-1,
                   help="leave the first epoch after this many batches")
    p.add_argument("--die-at", type=int, default=-1, help="a worker dies fetching this sample")
    p.add_argument("--marker", default="")
    a = p.parse_args()

    torch.manual_seed(0)
    ds = Samples(a.samples, a.delay, a.die_at, a.marker, a.spin)
    dl = loader(a, ds)
    model = Net(a.compute)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(a.epochs):
        seen = 0
        t0 = time.perf_counter()
        try:
            for x, y in dl:
                opt.zero_grad()
                F.cross_entropy(model(x), y).backward()
                opt.step()
                seen += 1
                if epoch == 0 and seen == a.abandon:
                    break
        except RuntimeError as err:
            if "exited unexpectedly" not in str(err):
                raise
            print("worker died after %d batches" % seen, flush=True)
            dl = loader(a, ds)  # a new loader, new workers
        print("epoch %d batches %d seconds %.6f" % (epoch, seen, time.perf_counter() - t0),
              flush=True)


if __name__ == "__main__":
    main()
