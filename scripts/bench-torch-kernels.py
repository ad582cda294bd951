#!/usr/bin/python3
"""PyTorch reference for `gnnscope bench --only gemm,gather --json`.

Measures, at the given thread counts (torch.set_num_threads), the same
kernels at the same sizes as gnnscope's bench:

  gemm    every product path torch has (--gemm, default all of them) at
          the GNN shapes below: torch.mm(a, b, out=c), torch.addmm(c, a,
          b, beta=0, out=c) and torch.matmul(a, b, out=c) on the BLAS
          torch loads, and oneDNN's inner product
          torch._C._nn.mkldnn_linear on oneDNN tensors prepared outside the
          timing;
  gather  torch.index_select(src, 0, idx, out=dst) of 200,000 uniformly
          random rows of a 2,449,029 x 100 float32 matrix, once on plain
          4 KiB pages and once advised to use transparent huge pages
          (madvise MADV_HUGEPAGE before first touch), each gather timed in
          alternation with a copy of as many bytes elsewhere, as gnnscope
          does.

Each figure is the median over repeats lasting at least --min-time (and at
least 3). Every figure is checked for the threads it really used (CPU time
over wall time of the timed loop, scripts/benchthreads.py): one that used
more than 1.15x the threads it was given, or (above one thread) fewer than
0.6x, carries its reason in "Refused" and is no peer's best. Run it with
the BLAS's own thread variables set to the thread count and processor
overrides (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) unset, as
scripts/bench-vs-torch.sh does. Needs only the standard library and torch; run it with Debian's
/usr/bin/python3 (python3-torch). It prints one JSON object on stdout
(progress goes to stderr):

  {
    "cpu": str, "cores": int, "torch": str,
    "blas": str,            # the BLAS library torch.mm runs on ("" if none)
    "gemm": [               # one per thread count and shape
      {"M": int, "K": int, "N": int,   # op(A) is MxK, op(B) KxN
       "TransA": bool, "TransB": bool, "Threads": int,
       "Kernel": "torch.mm" | "torch.addmm" | "torch.matmul" | "onednn",
                                       # with --label L: "torch.mm@L", ...
       "Iters": int,                   # products timed
       "PerOp": int,                   # median nanoseconds of one product
       "GFLOPS": float,                # 2*M*N*K / PerOp
       "CPUTime": int,                 # median CPU nanoseconds (all threads)
       "GFLOPSPerCPUSecond": float,
       "ThreadsUsed": float,           # CPU over wall time of the loop
       "Refused": str}                 # "" or why the figure is refused
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
       "Gather4KGBpsPerCPUSecond": float,
       "ThreadsUsed": float, "Refused": str}  # of both gathers
    ]
  }

These are the key names of gnnscope's bench JSON (its GemmResult and
GatherResult), so a wrapper can match entries on M, K, N, TransA, TransB
and Threads (gemm) or Threads (gather) and divide GFLOPS or GatherGBps.

Usage:
  /usr/bin/python3 scripts/bench-torch-kernels.py [--threads 1,2]
      [--only gemm,gather] [--min-time 3]
      [--gemm mm,addmm,matmul,onednn] [--label L]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchthreads  # noqa: E402  (beside this script)

PATHS = ("mm", "addmm", "matmul", "onednn")
KERNEL = {"mm": "torch.mm", "addmm": "torch.addmm", "matmul": "torch.matmul", "onednn": "onednn"}

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
    """Median wall and CPU nanoseconds of fn over >= 3 runs lasting min_time,
    and the loop's totals (wall, CPU); with other, fn runs in alternation
    with it (other's figures unused)."""
    n, walls, cpus, wall, cpu = benchthreads.measure(fn, min_time, other)
    return n, int(statistics.median(walls)), int(statistics.median(cpus)), wall, cpu


def gemm_fn(m, k, n, ta, tb, backend):
    """Operands (stored as the transposes say) and the product to time."""
    g = torch.Generator().manual_seed(1)
    a = torch.rand((k, m) if ta else (m, k), generator=g) * 2 - 1
    b = torch.rand((n, k) if tb else (k, n), generator=g) * 2 - 1
    c = torch.empty(m, n)
    opa = a.t() if ta else a
    opb = b.t() if tb else b
    if backend == "addmm":
        return lambda: torch.addmm(c, opa, opb, beta=0, out=c)
    if backend == "matmul":
        return lambda: torch.matmul(opa, opb, out=c)
    if backend == "onednn":
        # linear(x, w) = x·wᵀ: give it op(A) and op(B)ᵀ as contiguous
        # oneDNN tensors.
        x = (a.t() if ta else a).contiguous().to_mkldnn()
        w = (b if tb else b.t()).contiguous().to_mkldnn()
        return lambda: torch._C._nn.mkldnn_linear(x, w, None)
    return lambda: torch.mm(opa, opb, out=c)


def bench_gemm(shapes, threads, min_time, paths, label):
    out = []
    for t in threads:
        torch.set_num_threads(t)
        for m, k, n, ta, tb in shapes:
            for path in paths:
                fn = gemm_fn(m, k, n, ta, tb, path)
                iters, wall, cpu, total_wall, total_cpu = timed(fn, min_time)
                flops = 2.0 * m * n * k
                name = KERNEL[path] + (f"@{label}" if label else "")
                r = {"M": m, "K": k, "N": n, "TransA": ta, "TransB": tb, "Threads": t,
                     "Kernel": name, "Iters": iters, "PerOp": wall, "GFLOPS": flops / wall,
                     "CPUTime": cpu, "GFLOPSPerCPUSecond": flops / cpu if cpu > 0 else 0.0,
                     "ThreadsUsed": benchthreads.threads_used(total_cpu, total_wall),
                     "Refused": benchthreads.refusal(total_cpu, total_wall, t)}
                log(f"gemm {m}x{k}x{n} tA={ta} tB={tb} threads={t} {name}: {r['GFLOPS']:.1f} GFLOP/s "
                    f"({r['GFLOPSPerCPUSecond']:.1f} per CPU-second, {r['ThreadsUsed']:.2f} threads used)"
                    + (f" REFUSED: {r['Refused']}" if r["Refused"] else ""))
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
    _, wall, cpu, total_wall, total_cpu = timed(lambda: torch.index_select(src, 0, idx, out=dst),
                                                min_time, other=lambda: b.copy_(a))
    del src, dst, a, b
    gc.collect()
    return advised, wall, cpu, total_wall, total_cpu


def bench_gather(threads, min_time, label):
    g = torch.Generator().manual_seed(2)
    idx = torch.randint(GATHER_ROWS, (GATHER_N,), generator=g, dtype=torch.int64)
    nbytes = GATHER_N * GATHER_COLS * 4
    out = []
    for t in threads:
        torch.set_num_threads(t)
        _, wall4k, cpu4k, w4, c4 = gather_once(idx, False, min_time)
        advised, wall, cpu, w, c = gather_once(idx, True, min_time)
        r = {"Rows": GATHER_ROWS, "Cols": GATHER_COLS, "N": GATHER_N, "Threads": t,
             "Bytes": nbytes, "HugePages": advised,
             "GatherGBps": nbytes / wall, "GatherPerOp": wall,
             "GatherGBpsPerCPUSecond": nbytes / cpu if cpu > 0 else 0.0,
             "Gather4KGBps": nbytes / wall4k, "Gather4KPerOp": wall4k,
             "Gather4KGBpsPerCPUSecond": nbytes / cpu4k if cpu4k > 0 else 0.0,
             "Kernel": "index_select" + (f"@{label}" if label else ""),
             "ThreadsUsed": benchthreads.threads_used(c + c4, w + w4),
             "Refused": benchthreads.refusal(c + c4, w + w4, t)}
        log(f"gather threads={t}: huge pages={advised} {r['GatherGBps']:.2f} GB/s, "
            f"4 KiB pages {r['Gather4KGBps']:.2f} GB/s, {r['ThreadsUsed']:.2f} threads used"
            + (f" REFUSED: {r['Refused']}" if r["Refused"] else ""))
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
    p.add_argument("--gemm", default=",".join(PATHS),
                   help="product paths, comma-separated: mm, addmm, matmul (torch's BLAS), "
                        "onednn (oneDNN's inner product)")
    p.add_argument("--label", default="",
                   help="appended to each path's name (Kernel) as @LABEL: which BLAS it ran on")
    p.add_argument("--gemm-shapes", default=DEFAULT_SHAPES,
                   help="MxKxN[:tA|:tB], comma-separated")
    args = p.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    if any(t < 1 for t in threads):
        raise SystemExit("--threads: thread counts must be positive")
    paths = [x.strip() for x in args.gemm.split(",") if x.strip()]
    if not paths or not set(paths) <= set(PATHS):
        raise SystemExit("--gemm: " + ", ".join(PATHS))
    only = {x.strip() for x in args.only.split(",")}
    if not only <= {"gemm", "gather"}:
        raise SystemExit("--only: gemm, gather")
    torch.manual_seed(0)
    torch.mm(torch.ones(2, 2), torch.ones(2, 2))  # load the BLAS library
    rep = {"cpu": cpu_model(), "cores": os.cpu_count(), "torch": torch.__version__,
           "blas": blas_library(),
           "env": {k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                   "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
                                                   "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}}
    if "gemm" in only:
        rep["gemm"] = bench_gemm(parse_shapes(args.gemm_shapes), threads, args.min_time, paths,
                                 args.label)
    if "gather" in only:
        rep["gather"] = bench_gather(threads, args.min_time, args.label)
    json.dump(rep, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
