"""The Lightning callback driven by a fake trainer in the hook order that
Lightning 2.x documents (LightningModule "Hooks" pseudocode):

    on_train_epoch_start
    for batch: on_train_batch_start, transfer_batch_to_device,
               training_step, on_before_zero_grad, optimizer_zero_grad,
               on_before_backward, backward, on_after_backward,
               on_before_optimizer_step, optimizer_step, on_train_batch_end
    validation: on_validation_epoch_start, per batch
               on_validation_batch_start/end, on_validation_epoch_end
    on_train_epoch_end

Lightning 2.x itself moves the batch to the device before
on_train_batch_start; both placements are driven.
"""

import os
import time
import unittest

from tests import util
import gnnscope
from gnnscope import _client
from gnnscope import lightning as gl


class Trainer:
    def __init__(self, rank=0, world=1):
        self.current_epoch = 0
        self.global_rank = rank
        self.world_size = world
        self.sanity_checking = False
        self.callback_metrics = {}


class Module:
    def transfer_batch_to_device(self, batch, device, dataloader_idx):
        time.sleep(0.001)
        return batch


class Loss:
    def __init__(self, v):
        self.v = v

    def detach(self):
        return self

    def numel(self):
        return 1

    def item(self):
        return self.v


def work(s=0.002):
    time.sleep(s)


def drive(cb, trainer, module, epochs=2, batches=3, transfer_first=True, val=True):
    cb.setup(trainer, module, "fit")
    if val:  # the sanity check: not recorded
        trainer.sanity_checking = True
        cb.on_validation_epoch_start(trainer, module)
        cb.on_validation_batch_start(trainer, module, None, 0)
        cb.on_validation_batch_end(trainer, module, None, None, 0)
        cb.on_validation_epoch_end(trainer, module)
        trainer.sanity_checking = False
    for e in range(epochs):
        trainer.current_epoch = e
        cb.on_train_epoch_start(trainer, module)
        for b in range(batches):
            work()  # fetching the batch
            if transfer_first:
                module.transfer_batch_to_device(b, "cpu", 0)
            cb.on_train_batch_start(trainer, module, b, b)
            if not transfer_first:
                module.transfer_batch_to_device(b, "cpu", 0)
            work()  # training_step
            cb.on_before_zero_grad(trainer, module, None)
            cb.on_before_backward(trainer, module, Loss(1.0 + b))
            work()  # backward
            cb.on_after_backward(trainer, module)
            cb.on_before_optimizer_step(trainer, module, None)
            work(0.001)  # the optimizer's update
            cb.on_train_batch_end(trainer, module, {"loss": None}, b, b)
        if val:
            cb.on_validation_epoch_start(trainer, module)
            for vb in range(2):
                cb.on_validation_batch_start(trainer, module, vb, vb)
                work()
                cb.on_validation_batch_end(trainer, module, None, vb, vb)
            trainer.callback_metrics = {"val_acc": Loss(0.5 + e / 10)}
            cb.on_validation_epoch_end(trainer, module)
        trainer.callback_metrics = {"val_acc": Loss(0.5 + e / 10), "train_loss": Loss(2.0 - e)}
        cb.on_train_epoch_end(trainer, module)


class CallbackTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(gnnscope._reset_for_tests, None)

    def client(self, env=None):
        d = util.tmpdir(self)
        j = os.path.join(d, "runs", "pl.jsonl")
        c = _client.Client(j, env=env or {})
        gnnscope._reset_for_tests(c)
        return c, j

    def check(self, evs, transfer_first):
        per = {}
        for s in util.spans(evs):
            per.setdefault((s["epoch"], s["batch"], s["name"]), s)
        for e in (1, 2):
            for b in range(3):
                names = {k[2] for k in per if k[:2] == (e, b)} - {"eval"}
                self.assertEqual(names, {"sample", "transfer", "train", "forward",
                                         "backward", "step"}, (e, b))
                sp = {n: per[(e, b, n)] for n in names}
                end = lambda x: x["start"] + x["dur"]
                tr = sp["train"]
                for n in ("forward", "backward", "step"):
                    self.assertGreaterEqual(sp[n]["start"], tr["start"])
                    self.assertLessEqual(end(sp[n]), end(tr))
                self.assertGreaterEqual(sp["sample"]["dur"], 1_500_000)
                self.assertGreaterEqual(sp["forward"]["dur"], 1_500_000)
                self.assertGreaterEqual(sp["backward"]["dur"], 1_500_000)
                self.assertGreaterEqual(sp["transfer"]["dur"], 500_000)
                if transfer_first:
                    self.assertLessEqual(end(sp["sample"]), sp["transfer"]["start"])
                    self.assertLessEqual(end(sp["transfer"]), tr["start"])
                else:
                    self.assertLessEqual(end(sp["transfer"]), sp["forward"]["start"])
        ev = util.spans(evs, "eval")
        self.assertEqual([(s["epoch"], s["attrs"]["batches"]) for s in ev], [(1, 2), (2, 2)])
        m = [(x["name"], x["epoch"], x["batch"], x["value"]) for x in evs if x["t"] == "metric"]
        self.assertEqual([x for x in m if x[0] == "loss" and x[2] >= 0],
                         [("loss", e, b, 1.0 + b) for e in (1, 2) for b in range(3)])
        self.assertEqual([x for x in m if x[0] == "loss" and x[2] < 0],
                         [("loss", 1, -1, 2.0), ("loss", 2, -1, 2.0)])
        self.assertEqual([x for x in m if x[0] == "val_acc"],
                         [("val_acc", 1, -1, 0.5), ("val_acc", 2, -1, 0.6)])
        self.assertEqual([x for x in m if x[0] == "train_loss"],
                         [("train_loss", 1, -1, 2.0), ("train_loss", 2, -1, 1.0)])

    def test_hook_order_transfer_before_batch_start(self):
        c, j = self.client()
        drive(gl.Callback(), Trainer(), Module(), transfer_first=True)
        c.journal.flush()
        self.check(util.read_journal(j), True)

    def test_hook_order_documented(self):
        c, j = self.client()
        drive(gl.Callback(), Trainer(), Module(), transfer_first=False)
        c.journal.flush()
        self.check(util.read_journal(j), False)

    def test_rank_journal_and_auto_off(self):
        c, j = self.client()

        class Rec:
            disabled = False

        c.recorder = Rec()
        drive(gl.Callback(), Trainer(rank=1, world=2), Module(), epochs=1, val=False)
        self.assertTrue(c.recorder.disabled)
        c.journal.flush()
        self.assertFalse(os.path.exists(j))
        evs = util.read_journal(j.replace("pl.jsonl", "pl.rank1.jsonl"))
        self.assertEqual((evs[0]["rank"], evs[0]["world"]), (1, 2))
        self.assertEqual(len(util.spans(evs, "train")), 3)

    def test_no_journal_no_op(self):
        gnnscope._reset_for_tests(None)
        drive(gl.Callback(), Trainer(), Module(), epochs=1)

    def test_base_class_without_lightning(self):
        self.assertTrue(issubclass(gl.Callback, gl._base()))


if __name__ == "__main__":
    unittest.main()
