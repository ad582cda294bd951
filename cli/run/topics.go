package run

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/runner"
)

// NewHelpTopics returns the help topics of `gnnscope run`: commands
// without a run function, which cobra lists as additional help topics
// and `gnnscope help TOPIC` prints.
func NewHelpTopics() []*cobra.Command {
	return []*cobra.Command{
		{Use: "spec", Short: "Spec files, the built-in variants and what optimized adapts", Long: specHelp()},
		{Use: "external", Short: "Profiling a trainer of your own with run --cmd", Long: externalHelp()},
		{Use: "repeats", Short: "Ablations, repeated runs, speedups with intervals and the comparison table's columns", Long: repeatsHelp},
	}
}

// specHelp is the spec topic: the file's syntax and the variants.
func specHelp() string {
	return `A spec file (gnnscope run --spec FILE) holds an experiment and its
variants in TOML; flags set on the command line override its keys.

` + specExample + `
Variants are named overrides of the [train] config: a [variants.NAME]
table sets any train config key (JSON names). --variants picks among the
spec's variants and the built-in ones (default: the spec's variants, else
baseline,optimized); each becomes one run of the same name. A variant
with cmd = "COMMAND" is an external run ('gnnscope help external').
Unknown keys or variants and bad values are refused before anything
starts.

Built-in variants (the workbench's new-experiment form offers the same),
with their overrides at the default settings:
` + builtinHelp() + `

Optimized stands for the best configuration under your constraints:
what neither it nor [train] sets is sized to the machine: the sampler
workers from the cores the process may use (affinity mask and cgroup
quota) less what the trainer needs (one core to drive a GPU, else half
the cores or --threads for the CPU kernels), the prefetch depth from the
memory left, and on a CUDA device GPU sampling and the features in
device memory when they fit (else mapped host memory and the cache);
unless cache_bytes is set it caches features (a quarter of --mem-budget
in whole MiB, none under 1 MiB; else 20% of the rows); with --mem-budget
(and neighbor sampling) it runs with the memory guard (mem_guard = split,
unless it sets mem_guard itself), and once its data is loaded the engine
plans the budget: how many batches the sampler workers gather ahead (the
others wait sampled, gathered by the trainer), and whether the overlapped
evaluation runs beside training, in chunks that fit beside a training
batch, or after each epoch when that would cut edges. The run's run_start
lists each decision under "adjusted", with its sizes; the table's notes,
compare and the dashboard repeat them.`
}

// specExample is the spec topic's example file (a test loads it).
const specExample = `  name = "sage on synth-small"
  data = "synth-small"
  repeats = 1             # optional: see 'gnnscope help repeats'
  [split]                 # optional: mode (auto, per-class, frac), per_class,
  mode = "auto"           # num_valid, num_test, train_frac, valid_frac, seed
  [train]                 # any train config key
  model = "sage"
  hidden = 64
  fanouts = [15, 10]
  batch_size = 1024
  epochs = 3
  [variants.baseline]
  [variants.optimized]
  sampler_workers = 2
  prefetch = 4
  overlap_eval = true
  [variants.workers-only]
  sampler_workers = 2
`

// externalHelp is the external topic: runs of the user's own command.
func externalHelp() string {
	return `External runs profile a trainer of your own beside the engine's runs.

--cmd NAME='COMMAND' (may repeat) is one run named NAME; a command without
NAME= is named "` + runner.DefaultExternalName + `". A spec's [variants.NAME] table with
cmd = "COMMAND" does the same, with optional env (a table of strings), cwd
(relative to where run starts) and auto = false:

  [variants.opt]
  cmd = "python3 train.py --workers 4"
  env = { OMP_NUM_THREADS = "4" }
  cwd = "trainers"

The command is split into words as a shell would quote them, but no shell
runs it: for pipes, redirections or $VARIABLES use sh -c '…'. It runs in a
process group of its own with GNNSCOPE_JOURNAL, GNNSCOPE_SESSION,
GNNSCOPE_RUN, GNNSCOPE_VARIANT and GNNSCOPE_AUTO set, its output in
NAME.log, and gnnscope's Python client first on PYTHONPATH: a PyTorch
script records its stages without any change (--no-auto: only what it
records itself with 'import gnnscope').

Exit 0 ends the run ok, another status failed (the last stderr lines are
the error), a signal crashed, --cancel canceled (SIGINT to the group,
SIGTERM 5 s later). --cmd alone runs only the commands; with --variants or
--spec they run beside the engine's variants in one session.

Ranks on other machines (torchrun on several nodes, Slurm): --listen
ADDR:PORT (a spec's listen = "ADDR:PORT") runs a collector on exactly that
address while the command runs. The command gets ` + runner.EnvCollector + `
(the address, with an unspecified host such as 0.0.0.0 replaced by this
machine's name) and ` + runner.EnvCollectorToken + ` (random for each
run); the launcher passes them on (srun --export=ALL, or the variables on
the other node's command line). Each rank's client then streams its events
there instead of writing a journal, and keeps them in a spill file until
the collector has them all; the collector writes one journal per rank, refuses
connections without the token (logged in NAME.log), measures each rank's
clock against its own and moves the rank's start onto it, so the session's
ranks share one clock. After the command ends it waits up to 10 s for the
ranks to finish sending. A port in use fails the run before the command
starts. The wire protocol: docs/collector.md. A Slurm job and a two-node
torchrun, each with the lines it adds: examples/pytorch/slurm_sage.sbatch,
examples/pytorch/torchrun_two_nodes.sh.`
}

// repeatsHelp is the repeats topic: repeats, speedups and the columns.
const repeatsHelp = `--ablation (or a spec's top-level ablation = true, without [variants]
tables) runs what the speedup waterfall needs: the baseline, each
optimization optimized applies on its own, with the settings optimized
gets (pipelined, overlap-eval, cache, and mem-guard under --mem-budget),
and optimized, all of them together; with --repeats they interleave as
every session's runs do. 'gnnscope explain' draws the waterfall.

--repeats N (or a spec's top-level repeats = N, or the workbench form's
Repeats) runs every variant N times, named NAME.r1 ... NAME.rN, the
repeats interleaved ABBA-style (odd repeats in the order given, even ones
reversed: A B, B A, A B ...) so that drift hits every variant alike.

Each variant's epoch time is then the median over its repeats of each
repeat's median epoch. Each speedup is the median of the per-repeat ratios
(the baseline's repeat k over the variant's repeat k) with a 95 % interval
by bootstrap over those ratios (2000 resamples, fixed seed) when there are
at least 3 repeats. With fewer, the speedup is the ratio of the epoch
medians, marked "single run" for one run a variant, and has no interval:
the epochs of one run share its host's load and placement, so they are not
independent samples of its speed; six identical single runs on a loaded
two-core host ranged from 0.92x to 1.75x, each with a tight interval over
its epochs that excluded the others.

What --repeats buys: an interval that holds what varies from run to run
(drift, load, placement), at N times the run time. --repeats 3 is the
least that gives one; more repeats narrow it. The workbench's L and its
form take 3 repeats when the experiment is small enough for them to end
within a minute.

A run that failed, was aborted by an OOM, crashed or was canceled gets no
speedup; its figures are marked partial. A run whose host was busy (load
average above its CPUs, or its threads waiting for a CPU over a third of
their CPU time) is flagged "host busy: timing unreliable".

Each run writes a journal in the session folder
($GNNSCOPE_HOME/sessions/ID/runs/NAME.jsonl) and its output to NAME.log.
With --wait, run shows progress on stderr (run, epoch, loss, accuracy,
ETA) and ends with the comparison table on stdout, or with --json one
JSON object {"session", "dir", "runs": [...]}.

The table's columns: epoch wall time (mean, sample sd, min, median, max)
from the recorded spans; stage totals over all lanes; data wait (time the
trainer waited for batches); overlap (stage time over wall time,
1 = sequential); efficiency (ideal over actual wall time); speedup (the
baseline's mean epoch time over the run's); test accuracy at the best
validation epoch; HIT RATE and H2D/EPOCH (bytes host-to-device per epoch)
for runs with a feature cache. --wide prints every column; by default the
most important that fit 80 columns.`

// builtinNames lists the built-in variants' names for run's help.
func builtinNames() string {
	var names []string
	for _, v := range runner.Builtins() {
		names = append(names, string(v.Name))
	}
	return strings.Join(names, ", ")
}

// builtinHelp lists the built-in variants for the help text, one a line:
// name, what it changes and its overrides with the default settings (gas
// keeps the experiment's --parts where it sets them).
func builtinHelp() string {
	var b strings.Builder
	for i, v := range runner.Builtins() {
		over := v.Variant(runner.DefaultVariantParams()).Overrides
		keys := slices.Sorted(maps.Keys(over))
		set := make([]string, len(keys))
		for j, k := range keys {
			set[j] = fmt.Sprintf("%s = %v", k, over[k])
		}
		if len(set) == 0 {
			set = []string{"no overrides"}
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-13s %s: %s", v.Name, v.Help, strings.Join(set, ", "))
	}
	return b.String()
}
