#!/bin/bash
# Two nodes under torchrun, without a scheduler, as one gnnscope session on
# one clock. On the first node (HEAD), from the repository's root:
#
#   gnnscope run --listen 0.0.0.0:7000 --wait \
#     --cmd 'sage=bash examples/pytorch/torchrun_two_nodes.sh HEAD OTHER'
#
# gnnscope runs this script on HEAD with the collector's variables in its
# environment: GNNSCOPE_COLLECTOR (the address ranks stream to: HEAD's name
# and the port of --listen) and GNNSCOPE_COLLECTOR_TOKEN (the run's token),
# beside GNNSCOPE_SESSION, GNNSCOPE_RUN and PYTHONPATH with the client
# first. The script starts node 1's torchrun on OTHER over ssh with those
# variables on its command line (the env line below: the one line a
# two-node torchrun needs), and node 0's here. Every rank streams its
# events to the collector, which measures the rank's clock against its own.
#
# The repository and the client's folder (the session's pyclient/, under
# GNNSCOPE_HOME, else ~/.local/share/gnnscope) must be at the same paths on
# OTHER: a shared home does it. Ports 7000 (the collector) and 29500
# (torch's rendezvous) on HEAD must be reachable from OTHER. The token shows
# in the process lists (ssh's command line) while node 1 runs; srun
# --export=ALL, in slurm_sage.sbatch, does not show it. Canceling the run
# ends node 0's ranks; node 1's fail at their next collective, once node 0's
# are gone.
set -euo pipefail
head=${1:?usage: torchrun_two_nodes.sh HEAD OTHER}
other=${2:?usage: torchrun_two_nodes.sh HEAD OTHER}
nproc=${NPROC_PER_NODE:-2} # ranks per node
repo=$(cd "$(dirname "$0")/../.." && pwd)
launch=(torchrun --nnodes 2 --nproc_per_node "$nproc" --master_addr "$head" --master_port 29500)
train=("$repo/examples/pytorch/sage_train.py" --epochs 3)

ssh "$other" "cd $(printf %q "$repo") && $(printf '%q ' env \
  GNNSCOPE_COLLECTOR="$GNNSCOPE_COLLECTOR" GNNSCOPE_COLLECTOR_TOKEN="$GNNSCOPE_COLLECTOR_TOKEN" \
  GNNSCOPE_SESSION="$GNNSCOPE_SESSION" GNNSCOPE_RUN="$GNNSCOPE_RUN" PYTHONPATH="$PYTHONPATH" \
  "${launch[@]}" --node_rank 1 "${train[@]}")" &
remote=$!
"${launch[@]}" --node_rank 0 "${train[@]}"
wait "$remote"
