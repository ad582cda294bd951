"""yield_after_backward.py TRAINER [ARGS...] runs the trainer script with a
2 ms pause after every backward, once the backward has returned (and
gnnscope's client has read its end).

Under DDP a rank's backward returns when the gradient all-reduce has
ended on every rank, so the ranks' backward ends of a step agree, as far
as each rank is running when its all-reduce ends. Where ranks outnumber
the free cores, the rank woken first would run on into its next step and
the other would read its end only when the scheduler takes the core away:
milliseconds later. The pause hands the core over at once.
"""
import runpy
import sys
import time

import torch  # gnnscope's client patches backward here (sitecustomize)

PAUSE = 0.002  # seconds

_backward = torch.Tensor.backward


def backward(self, *args, **kwargs):
    out = _backward(self, *args, **kwargs)
    time.sleep(PAUSE)
    return out


torch.Tensor.backward = backward
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
