"""The GraphSAGE trainer of sage_train.py under Lightning (2.x), recorded by
gnnscope's Lightning callback:

  gnnscope run --cmd 'python3 examples/pytorch/lightning_sage.py --epochs 3'

Runs with any strategy; under DDP each rank writes its own journal.
"""

import argparse
import os
import sys

import lightning.pytorch as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sage_train as st  # noqa: E402  (graph, sampler and model)

try:  # on PYTHONPATH under gnnscope run; the script runs without it too
    from gnnscope.lightning import Callback
except ImportError:
    Callback = None


class Module(L.LightningModule):
    def __init__(self, f, hidden, classes):
        super().__init__()
        self.model = st.SAGE(f, hidden, classes)

    def training_step(self, batch, batch_idx):
        x0, x1, x2, y = batch
        loss = F.cross_entropy(self.model(x0, x1, x2), y)
        self.log("train_loss", loss, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        x0, x1, x2, y = batch
        acc = (self.model(x0, x1, x2).argmax(1) == y).float().mean()
        self.log("val_acc", acc, on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.005)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--nodes", type=int, default=20000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--devices", default="auto")
    a = p.parse_args()
    x, y, src, dst = st.synthetic(a.nodes, 8, 128, 10, 0)
    indptr, indices = st.csr(x.shape[0], src, dst)
    perm = torch.randperm(x.shape[0])
    cut = int(0.7 * x.shape[0])
    sampler = st.Sampler(x, y, indptr, indices, [10, 5])
    kw = dict(batch_size=512, collate_fn=sampler, num_workers=a.workers,
              persistent_workers=a.workers > 0)
    train = DataLoader(perm[:cut].tolist(), shuffle=True, **kw)
    val = DataLoader(perm[cut:].tolist(), **kw)
    trainer = L.Trainer(max_epochs=a.epochs, devices=a.devices, callbacks=[Callback()] if Callback else [],
                        enable_progress_bar=False, logger=False, enable_checkpointing=False)
    trainer.fit(Module(x.shape[1], 128, 8), train, val)


if __name__ == "__main__":
    main()
