"""Tests of scripts/bench-vs-torch-summary.py's choice of the best torch
path: refused figures are never the best."""

import importlib.util
import json
import os
import tempfile
import unittest

_spec = importlib.util.spec_from_file_location(
    "bench_summary", os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench-vs-torch-summary.py"))
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)


class BestPath(unittest.TestCase):
    def test_refused_path_is_not_the_best(self):
        paths = {
            "torch.mm": ([300.0, 310.0], [150.0, 155.0], ["used 2.00 threads, given 1 (over 1.15)"]),
            "onednn": ([25.0], [25.0], []),
            "torch.addmm": ([160.0, 170.0, 165.0], [160.0, 170.0, 165.0], []),
        }
        self.assertEqual(summary.best_path(paths), ("torch.addmm", 165.0, 165.0))

    def test_no_path_left(self):
        self.assertIsNone(summary.best_path({"torch.mm": ([1.0], [1.0], ["refused"])}))
        self.assertIsNone(summary.best_path({}))

    def test_rows_carry_path_and_refusal(self):
        doc = {"gemm": [{"M": 1, "K": 2, "N": 3, "Threads": 1, "Kernel": "torch.mm", "GFLOPS": 5.0,
                         "GFLOPSPerCPUSecond": 2.5, "Refused": "used 2.00 threads"}]}
        (row,) = summary.kernel_rows(doc)
        self.assertEqual(row[1:], ("torch.mm", 5.0, 2.5, "GFLOP/s", "used 2.00 threads"))


class Paired(unittest.TestCase):
    def test_repeat_of_file_names(self):
        self.assertEqual(summary.repeat_of("/x/kernels-gnnscope-t2-r3-s4.json"), 3)
        self.assertEqual(summary.repeat_of("kernels-torch-t1-r12-s1-blas.json"), 12)
        self.assertEqual(summary.repeat_of("kernels-torch-t1-r5.json"), 5)
        self.assertIsNone(summary.repeat_of("kernels-torch.json"))

    def test_item_of_file_names(self):
        self.assertEqual(summary.item_of("kernels-gnnscope-t2-r3-s4.json"), (2, 3, 4))
        self.assertEqual(summary.item_of("kernels-torch-t2-r3-s4-blas.json"), (2, 3, 4))
        self.assertEqual(summary.item_of("kernels-torch-t1-r5.json"), (1, 5, 0))

    def test_ratios_pair_repeats(self):
        # Repeat 2's torch figure is missing: no ratio for it; the others pair by repeat.
        own = {1: 90.0, 2: 120.0, 3: 100.0}
        path = {1: 100.0, 3: 80.0}
        self.assertEqual(summary.paired_ratios(own, path), [0.9, 1.25])
        self.assertEqual(summary.spread([0.9, 1.25, 1.0]), "1.00 (0.90-1.25)")
        self.assertEqual(summary.spread([]), "-")


class Peaks(unittest.TestCase):
    def test_median_and_beside_each_item(self):
        with tempfile.TemporaryDirectory() as d:
            for name, rate in (("kernels-gnnscope-t1-r1-s1.json", 100.0), ("kernels-gnnscope-t1-r1-s2.json", 130.0),
                               ("kernels-gnnscope-t1-r2-s1.json", 120.0)):
                with open(os.path.join(d, name), "w") as f:
                    json.dump({"peak": [{"Threads": 1, "Supported": True, "GFLOPS": rate,
                                         "GFLOPSPerCPUSecond": rate - 1}]}, f)
            with open(os.path.join(d, "kernels-gnnscope-t2-r1-s1.json"), "w") as f:
                json.dump({"peak": [{"Threads": 2, "Supported": False, "GFLOPS": 1.0}]}, f)
            median, beside = summary.peaks(d)
        self.assertEqual(median, {1: (120.0, 119.0)})
        self.assertEqual(beside, {(1, 1, 1): 100.0, (1, 1, 2): 130.0, (1, 2, 1): 120.0})


class Share(unittest.TestCase):
    def test_share_by_wall_and_cpu(self):
        self.assertEqual(summary.share(80.0, 90.0, (100.0, 100.0)), "80% / 90%")
        self.assertEqual(summary.share(80.0, None, (100.0, 100.0)), "80%")
        self.assertEqual(summary.share(None, 1.0, (100.0, 100.0)), "-")
        self.assertEqual(summary.share(1.0, 1.0, None), "-")


if __name__ == "__main__":
    unittest.main()
