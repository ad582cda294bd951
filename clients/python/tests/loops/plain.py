"""An ordinary PyTorch training loop, knowing nothing of gnnscope."""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--eval", action="store_true")
p.add_argument("--workers", type=int, default=0)
p.add_argument("--style", default="a")
p.add_argument("--work", type=int, default=0, help="extra matmuls per forward")
a = p.parse_args()

torch.manual_seed(0)
X = torch.randn(600, 32)
Y = (X[:, :4].sum(1) > 0).long()
train = DataLoader(TensorDataset(X, Y), batch_size=64, shuffle=True, num_workers=a.workers,
                   persistent_workers=a.workers > 0)
val = DataLoader(TensorDataset(X[:200], Y[:200]), batch_size=100)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(32, 256)
        self.bn = torch.nn.BatchNorm1d(256)
        self.l2 = torch.nn.Linear(256, 2)

    def forward(self, x):
        h = torch.relu(self.bn(self.l1(x)))
        for _ in range(a.work):
            h = torch.tanh(h @ torch.eye(256))
        return self.l2(h)


dev = torch.device("cpu")
model = Net().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(a.epochs):
    model.train()
    total = 0.0
    for x, y in train:
        if a.style == "a":
            x, y = x.to(dev), y.to(dev, non_blocking=True)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        else:
            model.zero_grad()
            x = x.to(dev)
            y = y.to(dev)
            loss = F.nll_loss(F.log_softmax(model(x), 1), y)
            torch.autograd.backward(loss)
            opt.step()
        total += loss.item()
    line = "epoch %d loss %.5f" % (epoch, total / len(train))
    if a.eval:
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in val:
                correct += (model(x.to(dev)).argmax(1) == y).sum().item()
        line += " acc %.4f" % (correct / 200)
    print(line, flush=True)
