#!/usr/bin/python3
"""PyTorch reference for `gnnscope bench --only gemm,gather --json`.

Measures, at the given thread counts (torch.set_num_threads), the same
kernels at the same sizes as gnnscope's bench:

  gemm    torch.mm(a, b, out=c) at the GNN shapes below (or, with
          --gemm onednn, oneDNN's inner product torch._C._nn.mkldnn_linear
          on oneDNN tensors prepared outside the timing);
  gather  torch.index_select(src, 0, idx, out=dst) of 200,000 uniformly
          random rows of a 2,449,029 x 100 float32 matrix, once on plain
          4 KiB pages and once advised to use transparent huge pages
          (madvise MADV_HUGEPAGE before first touch), each gather timed in
          alternation with a copy of as many bytes elsewhere, as gnnscope
          does.

Each figure is the median over repeats lasting at least --min-time (and at
least 3). Needs only the standard library and torch; run it with Debian's
/usr/bin/python3 (python3-torch). It prints one JSON object on stdout
(progress goes to stderr):

  {
    "cpu": str, "cores": int, "torch": str,
    "blas": str,            # the BLAS library torch.mm runs on ("" if none)
    "gemm": [               # one per thread count and shape
      {"M": int, "K": int, "N": int,   # op(A) is MxK, op(B) KxN
       "TransA": bool, "TransB": bool, "Threads": int,
       "Kernel": "torch.mm" | "onednn",
       "Iters": int,                   # products timed
       "PerOp": int,                   # median nanoseconds of one product
       "GFLOPS": float,                # 2*M*N*K / PerOp
       "CPUTime": int,                 # median CPU nanoseconds (all threads)
       "GFLOPSPerCPUSecond": float}
    ],
    "gather": [             # one per thread count
      {"Rows": int, "Cols": int, "N": int, "Threads": int,
       "Bytes": int,                   # bytes gathered per operation
       "HugePages": bool,              # the advice was taken
       "GatherGBps": float,            # huge pages
       "GatherPerOp": int,             # median nanoseconds, huge pages
       "GatherGBpsPerCPUSecond": float,  # bytes per CPU second (all threads)
       "Gather4KGBps": float,          # plain pages
       "Gather4KPerOp": int,
       "Gather4KGBpsPerCPUSecond": float}
    ]
  }

These are the key names of gnnscope's bench JSON (its GemmResult and
GatherResult), so a wrapper can match entries on M, K, N, TransA, TransB
and Threads (gemm) or Threads (gather) and divide GFLOPS or GatherGBps.

Usage:
  /usr/bin/python3 scripts/bench-torch-kernels.py [--threads 1,2]
      [--only gemm,gather] [--min-time 3] [--gemm mm|onednn]
      [--gemm-shapes 100000x256x256,256x100000x256:tA,...]
"""

import argparse
import ctypes
import gc
import json
import mmap
import os
import statistics
import sys
import time

import torch

# The default shapes of `gnnscope bench --only gemm`: MxKxN, with ":tA" or
# ":tB" where op(A) or op(B) is transposed (the backward pass's products).
DEFAULT_SHAPES = (
    "100000x256x256,256x100000x256:tA,100000x256x256:tB,"
    "100000x602x256,602x100000x256:tA,100000x100x256,100000x256x64,1024x100x256"
)

GATHER_ROWS, GATHER_COLS, GATHER_N = 2_449_029, 100, 200_000


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def parse_shapes(text):
    shapes = []
    for item in text.split(","):
        dims, _, flag = item.strip().partition(":")
        m, k, n = (int(x) for x in dims.split("x"))
        if flag not in ("", "tA", "tB"):
            raise SystemExit(f"--gemm-shapes: {item!r}: flag must be tA or tB")
        shapes.append((m, k, n, flag == "tA", flag == "tB"))
    return shapes


def timed(fn, min_time, other=None):
    """Median wall and CPU nanoseconds of fn over >= 3 runs lasting min_time;
    with other, fn runs in alternation with it (other's figures unused)."""
    fn()  # warm up
    if other:
        other()
    walls, cpus = [], []
    start = time.perf_counter()
    while len(walls) < 3 or time.perf_counter() - start < min_time:
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        fn()
        walls.append(time.perf_counter_ns() - t0)
        cpus.append(time.process_time_ns() - c0)
        if other:
            other()
    return len(walls), int(statistics.median(walls)), int(statistics.median(cpus))


def gemm_fn(m, k, n, ta, tb, backend):
    """Operands (stored as the transposes say) and the product to time."""
    g = torch.Generator().manual_seed(1)
    a = torch.rand((k, m) if ta else (m, k), generator=g) * 2 - 1
    b = torch.rand((n, k) if tb else (k, n), generator=g) * 2 - 1
    if backend == "onednn":
        # linear(x, w) = x·wᵀ: give it op(A) and op(B)ᵀ as contiguous
        # oneDNN tensors.
        x = (a.t() if ta else a).contiguous().to_mkldnn()
        w = (b if tb else b.t()).contiguous().to_mkldnn()
        return lambda: torch._C._nn.mkldnn_linear(x, w, None)
    c = torch.empty(m, n)
    opa = a.t() if ta else a
    opb = b.t() if tb else b
    return lambda: torch.mm(opa, opb, out=c)


def bench_gemm(shapes, threads, min_time, backend):
    out = []
    for t in threads:
        torch.set_num_threads(t)
        for m, k, n, ta, tb in shapes:
            fn = gemm_fn(m, k, n, ta, tb, backend)
            iters, wall, cpu = timed(fn, min_time)
            flops = 2.0 * m * n * k
            r = {"M": m, "K": k, "N": n, "TransA": ta, "TransB": tb, "Threads": t,
                 "Kernel": "onednn" if backend == "onednn" else "torch.mm",
                 "Iters": iters, "PerOp": wall, "GFLOPS": flops / wall,
                 "CPUTime": cpu, "GFLOPSPerCPUSecond": flops / cpu if cpu > 0 else 0.0}
            log(f"gemm {m}x{k}x{n} tA={ta} tB={tb} threads={t}: {r['GFLOPS']:.1f} GFLOP/s "
                f"({r['GFLOPSPerCPUSecond']:.1f} per CPU-second)")
            out.append(r)
            del fn
            gc.collect()
    return out


def advise_huge(t):
    """madvise(MADV_HUGEPAGE) on the 2 MiB-aligned interior of t's storage."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    huge = 2 << 20
    ptr, size = t.data_ptr(), t.numel() * t.element_size()
    start = (ptr + huge - 1) // huge * huge
    end = (ptr + size) // huge * huge
    if end - start < huge:
        return False
    return libc.madvise(start, end - start, getattr(mmap, "MADV_HUGEPAGE", 14)) == 0


def gather_once(idx, huge, min_time):
    src = torch.empty(GATHER_ROWS, GATHER_COLS)  # untouched: advise first
    advised = advise_huge(src) if huge else False
    src.fill_(1.0)  # first touch, after the advice
    dst = torch.empty(GATHER_N, GATHER_COLS)
    # Alternate with a copy of as many bytes between two other buffers, as
    # gnnscope's bench does (it times that copy as memcpy bandwidth): each
    # gather then starts with caches that hold none of its rows.
    a, b = torch.ones(GATHER_N, GATHER_COLS), torch.empty(GATHER_N, GATHER_COLS)
    _, wall, cpu = timed(lambda: torch.index_select(src, 0, idx, out=dst), min_time,
                         other=lambda: b.copy_(a))
    del src, dst, a, b
    gc.collect()
    return advised, wall, cpu


def bench_gather(threads, min_time):
    g = torch.Generator().manual_seed(2)
    idx = torch.randint(GATHER_ROWS, (GATHER_N,), generator=g, dtype=torch.int64)
    nbytes = GATHER_N * GATHER_COLS * 4
    out = []
    for t in threads:
        torch.set_num_threads(t)
        _, wall4k, cpu4k = gather_once(idx, False, min_time)
        advised, wall, cpu = gather_once(idx, True, min_time)
        r = {"Rows": GATHER_ROWS, "Cols": GATHER_COLS, "N": GATHER_N, "Threads": t,
             "Bytes": nbytes, "HugePages": advised,
             "GatherGBps": nbytes / wall, "GatherPerOp": wall,
             "GatherGBpsPerCPUSecond": nbytes / cpu if cpu > 0 else 0.0,
             "Gather4KGBps": nbytes / wall4k, "Gather4KPerOp": wall4k,
             "Gather4KGBpsPerCPUSecond": nbytes / cpu4k if cpu4k > 0 else 0.0}
        log(f"gather threads={t}: huge pages={advised} {r['GatherGBps']:.2f} GB/s, "
            f"4 KiB pages {r['Gather4KGBps']:.2f} GB/s")
        out.append(r)
    return out


def blas_library():
    """The BLAS shared library mapped into this process, if any."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "blas" in os.path.basename(path).lower():
                    return os.path.realpath(path)
    except OSError:
        pass
    return ""


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name":
                    return v.strip()
    except OSError:
        pass
    return "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", default="1,2", help="thread counts (comma-separated)")
    p.add_argument("--only", default="gemm,gather", help="gemm, gather (comma-separated)")
    p.add_argument("--min-time", type=float, default=3.0, help="seconds per figure at least")
    p.add_argument("--gemm", choices=("mm", "onednn"), default="mm",
                   help="torch.mm (torch's BLAS) or oneDNN's inner product")
    p.add_argument("--gemm-shapes", default=DEFAULT_SHAPES,
                   help="MxKxN[:tA|:tB], comma-separated")
    args = p.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    if any(t < 1 for t in threads):
        raise SystemExit("--threads: thread counts must be positive")
    only = {x.strip() for x in args.only.split(",")}
    if not only <= {"gemm", "gather"}:
        raise SystemExit("--only: gemm, gather")
    torch.manual_seed(0)
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # load the BLAS library
    rep = {"cpu": cpu_model(), "cores": os.cpu_count(), "torch": torch.__version__,
           "blas": blas_library()}
    if "gemm" in only:
        rep["gemm"] = bench_gemm(parse_shapes(args.gemm_shapes), threads, args.min_time, args.gemm)
    if "gather" in only:
        rep["gather"] = bench_gather(threads, args.min_time)
    json.dump(rep, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
