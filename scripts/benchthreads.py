"""The thread check of scripts/bench-torch-kernels.py: is a figure's thread
count what it claims? Standard library only, so that its tests run anywhere.

A timed loop that was given T threads should have received about T seconds
of CPU per second of wall time. A BLAS that ignores the thread count torch
gives it (OpenBLAS with its own pool when OPENBLAS_NUM_THREADS is unset)
uses more; a loaded machine, or a library that runs single-threaded where
it was asked for several, gives less. Such a figure compares unlike things
and is refused (kept in the JSON, left out of the best path).

Bounds (CPU seconds over wall seconds, "used"):
  used > T * 1.15           refused at any T: more threads ran than claimed
                            (the 15 % allows for the interpreter's own work
                            and the kernel's bookkeeping around the loop)
  used < T * 0.6, T > 1     refused: fewer threads ran (or the machine was
                            too busy for T threads to run together)
At T = 1 there is no lower bound: one thread descheduled by load is slower,
not a different configuration.
"""

import time

UPPER = 1.15
LOWER = 0.6


def threads_used(cpu_ns, wall_ns):
    """CPU time over wall time: the threads that ran on average."""
    return cpu_ns / wall_ns if wall_ns > 0 else 0.0


def refusal(cpu_ns, wall_ns, threads):
    """Why a figure of `threads` threads is refused, or "" if it stands."""
    used = threads_used(cpu_ns, wall_ns)
    if wall_ns <= 0:
        return "no wall time measured"
    if used > threads * UPPER:
        return f"used {used:.2f} threads, given {threads} (over {threads * UPPER:.2f})"
    if threads > 1 and used < threads * LOWER:
        return f"used {used:.2f} threads, given {threads} (under {threads * LOWER:.2f})"
    return ""


def measure(fn, min_time, other=None, wall=time.perf_counter_ns, cpu=time.process_time_ns):
    """Runs fn at least 3 times and for at least min_time seconds (with
    other between runs, untimed). Returns (iterations, per-run wall
    nanoseconds, per-run CPU nanoseconds, total wall of the timed runs,
    total CPU of the timed runs); the totals feed refusal(). The clocks
    are parameters so that a test can drive a fake path."""
    fn()  # warm up
    if other:
        other()
    walls, cpus = [], []
    start = wall()
    while len(walls) < 3 or wall() - start < min_time * 1e9:
        c0, t0 = cpu(), wall()
        fn()
        walls.append(wall() - t0)
        cpus.append(cpu() - c0)
        if other:
            other()
    return len(walls), walls, cpus, sum(walls), sum(cpus)
