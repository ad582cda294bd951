"""A plain PyTorch training loop whose data loader is slow: its collate
function sleeps, so the trainer waits for every batch (loader-bound).
It knows nothing of gnnscope; `gnnscope run --cmd` profiles it."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.dataloader import default_collate


def slow_collate(items):
    time.sleep(0.05)  # the planted cause: a slow loader
    return default_collate(items)


torch.manual_seed(0)
X, y = torch.randn(64, 8), torch.randint(0, 2, (64,))
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True, collate_fn=slow_collate)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print("epoch", epoch, float(loss))
