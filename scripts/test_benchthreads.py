"""Tests of the thread check (scripts/benchthreads.py): run by .ci/run as
`python3 -m unittest discover -s scripts -p 'test_*.py'`."""

import threading
import unittest

import benchthreads


class FakeClocks:
    """A wall clock and a process CPU clock that a fake path advances: each
    call of a path with n threads busy for d nanoseconds moves the wall by d
    and the CPU clock by n*d, as the kernel's accounting would."""

    def __init__(self):
        self.wall_ns = 0
        self.cpu_ns = 0

    def wall(self):
        return self.wall_ns

    def cpu(self):
        return self.cpu_ns

    def path(self, running, step_ns=1_000_000):
        def run():
            # The threads really run (each one spins a little), and the
            # clocks say what they would: `running` threads for step_ns.
            ts = [threading.Thread(target=lambda: sum(range(1000))) for _ in range(running)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.wall_ns += step_ns
            self.cpu_ns += running * step_ns
        return run


def check(running, claimed):
    c = FakeClocks()
    _, _, _, wall, cpu = benchthreads.measure(c.path(running), 0.01, wall=c.wall, cpu=c.cpu)
    return benchthreads.refusal(cpu, wall, claimed)


class ThreadCheck(unittest.TestCase):
    def test_oversubscribed_path_is_refused(self):
        # Two threads spinning while the path claims one: refused.
        why = check(running=2, claimed=1)
        self.assertIn("used 2.00 threads, given 1", why)

    def test_path_ignoring_two_threads_for_four(self):
        self.assertIn("under", check(running=2, claimed=4))

    def test_honest_paths_stand(self):
        self.assertEqual(check(running=1, claimed=1), "")
        self.assertEqual(check(running=2, claimed=2), "")

    def test_bounds(self):
        self.assertEqual(benchthreads.refusal(115, 100, 1), "")
        self.assertNotEqual(benchthreads.refusal(116, 100, 1), "")
        self.assertEqual(benchthreads.refusal(30, 100, 1), "")  # one thread under load
        self.assertEqual(benchthreads.refusal(120, 100, 2), "")
        self.assertNotEqual(benchthreads.refusal(119, 100, 2), "")
        self.assertNotEqual(benchthreads.refusal(5, 0, 1), "")

    def test_measure_counts_runs(self):
        c = FakeClocks()
        n, walls, cpus, wall, cpu = benchthreads.measure(c.path(1), 0.005, wall=c.wall, cpu=c.cpu)
        self.assertEqual(n, len(walls))
        self.assertGreaterEqual(n, 5)  # 5 ms of fake 1 ms runs
        self.assertEqual(wall, sum(walls))
        self.assertEqual(cpu, sum(cpus))


if __name__ == "__main__":
    unittest.main()
