import torch, torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.profiler import profile, schedule, ProfilerActivity
torch.manual_seed(0)
ds = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
dl = DataLoader(ds, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
lossf = nn.CrossEntropyLoss()
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3),
             record_shapes=True, profile_memory=True, with_stack=False,
             on_trace_ready=lambda p: p.export_chrome_trace("cpu_trace.json")) as prof:
    for i, (x, y) in enumerate(dl):
        if i >= 6: break
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        prof.step()
