"""Runs pyg_sage.py through its plain-PyTorch loader on this CPU.

PyG cannot be installed everywhere the tests run, so the script imports a
small stand-in of the five PyG names it uses (SAGEConv as mean aggregation
plus a root weight, Data, to_undirected, and a Planetoid and NeighborLoader
that must not be reached), written to a temporary folder. What it checks
is the script's own plumbing: --loader auto picks the plain loader where
PyG cannot sample, batches reach the model in PyG's shape, and training
runs its epochs. Needs ../shared/datasets/cora.npz beside the repository.
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CORA = os.path.join(HERE, "..", "..", "..", "shared", "datasets", "cora.npz")

STUB = {
    "__init__.py": "",
    "typing.py": "WITH_PYG_LIB = False\nWITH_TORCH_SPARSE = False\n",
    "datasets.py": "def Planetoid(*a, **k):\n    raise AssertionError('Planetoid reached')\n",
    "loader.py": "def NeighborLoader(*a, **k):\n    raise AssertionError('NeighborLoader reached')\n",
    "data.py": textwrap.dedent("""
        class Data:
            def __init__(self, **kw):
                self.__dict__.update(kw)

            @property
            def num_features(self):
                return self.x.shape[1]
        """),
    "utils.py": textwrap.dedent("""
        import torch

        def to_undirected(ei, num_nodes=None):
            both = torch.cat([ei, ei.flip(0)], 1)
            return torch.unique(both, dim=1)
        """),
    "nn.py": textwrap.dedent("""
        import torch

        class SAGEConv(torch.nn.Module):
            def __init__(self, a, b):
                super().__init__()
                self.lin_l = torch.nn.Linear(a, b)
                self.lin_r = torch.nn.Linear(a, b, bias=False)

            def forward(self, x, edge_index):
                src, dst = edge_index
                agg = torch.zeros_like(x).index_add_(0, dst, x[src])
                deg = torch.bincount(dst, minlength=x.shape[0]).clamp(min=1).unsqueeze(1)
                return self.lin_l(agg / deg) + self.lin_r(x)
        """),
}


@unittest.skipUnless(os.path.exists(CORA), "needs ../shared/datasets/cora.npz beside the repository")
class FallbackTest(unittest.TestCase):
    def test_plain_loader_trains(self):
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "torch_geometric")
            os.mkdir(pkg)
            for name, src in STUB.items():
                with open(os.path.join(pkg, name), "w") as f:
                    f.write(src)
            env = dict(os.environ, PYTHONPATH=d)
            out = subprocess.run([sys.executable, os.path.join(HERE, "pyg_sage.py"), "--npz", CORA,
                                  "--epochs", "2", "--workers", "1"],
                                 env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertIn("plain PyTorch", lines[0])
        epochs = [l for l in lines if l.startswith("epoch ")]
        self.assertEqual(len(epochs), 2, out.stdout)
        acc = float(epochs[-1].split()[5])
        self.assertGreater(acc, 0.3, out.stdout)  # 7 classes: chance is about 0.14-0.3


if __name__ == "__main__":
    unittest.main()
