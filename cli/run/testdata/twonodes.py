"""Two "nodes" on one machine, as srun or two torchruns would start them.

  twonodes.py PROXY NPROC TRAINER [ARGS...]

starts one launcher per node (NODE_RANK 0 and 1), each starting NPROC ranks
of TRAINER with the variables torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE,
GROUP_RANK, MASTER_ADDR 127.0.0.1: gloo over loopback). Node 0's ranks get
this process's environment, as srun --export=ALL passes it on; node 1's
reach the collector through PROXY (GNNSCOPE_COLLECTOR=PROXY) and read a
wall clock 250 ms ahead (GNNSCOPE_TEST_CLOCK_OFFSET_NS), as a second
machine whose clock is off would. Exits with the worst status of the ranks.
"""
import os
import socket
import subprocess
import sys

NODES = 2
OFFSET_NS = "250000000"


def node(rank, nproc, argv):
    procs = []
    for local in range(nproc):
        env = dict(os.environ, RANK=str(rank * nproc + local), LOCAL_RANK=str(local),
                   WORLD_SIZE=str(NODES * nproc), GROUP_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(nproc), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(argv, env=env))
    return max(p.wait() for p in procs)


def main():
    if sys.argv[1] == "--node":
        sys.exit(node(int(os.environ["NODE_RANK"]), int(sys.argv[2]), sys.argv[3:]))
    proxy, nproc, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    procs = []
    for rank in range(NODES):
        env = dict(os.environ, NODE_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        if rank == 1:
            env.update(GNNSCOPE_COLLECTOR=proxy, GNNSCOPE_TEST_CLOCK_OFFSET_NS=OFFSET_NS)
        procs.append(subprocess.Popen([sys.executable, __file__, "--node", nproc] + argv, env=env))
    sys.exit(max(p.wait() for p in procs))


if __name__ == "__main__":
    main()
