package root

import (
	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/bench"
	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/compare"
	"github.com/gnnscope/gnnscope/cli/datasets"
	"github.com/gnnscope/gnnscope/cli/explain"
	"github.com/gnnscope/gnnscope/cli/export"
	"github.com/gnnscope/gnnscope/cli/gpucheck"
	"github.com/gnnscope/gnnscope/cli/importcmd"
	"github.com/gnnscope/gnnscope/cli/partition"
	"github.com/gnnscope/gnnscope/cli/replay"
	"github.com/gnnscope/gnnscope/cli/run"
	"github.com/gnnscope/gnnscope/cli/sessions"
	"github.com/gnnscope/gnnscope/cli/train"
	"github.com/gnnscope/gnnscope/cli/trainflags"
	"github.com/gnnscope/gnnscope/cli/ui"
	"github.com/gnnscope/gnnscope/cli/worker"
)

// NewCmdRoot returns the gnnscope command with every command under it.
// Without a command it opens the workbench when stdin and stdout are
// terminals, and prints its help otherwise (in a pipe or a script).
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gnnscope",
		Short: "Profile and compare GNN training runs",
		Long: `gnnscope trains graph neural networks with its own engine, records every
stage of every batch (sample, transfer, train, eval), and compares a baseline
run against optimized ones.

Without a command, on a terminal, gnnscope opens the workbench (as
'gnnscope ui'): sessions, live dashboards, comparisons and exports.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.IOStreams.IsStdoutTTY() || !f.IOStreams.IsStdinTTY() {
				return cmd.Help()
			}
			return ui.Workbench(f)
		},
	}
	cmd.SetVersionTemplate("gnnscope {{.Version}}\n")
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	cmd.SetIn(f.IOStreams.In)
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.AddCommand(
		bench.NewCmdBench(f, nil),
		compare.NewCmdCompare(f, nil),
		datasets.NewCmdDatasets(f, nil),
		explain.NewCmdExplain(f, nil),
		export.NewCmdExport(f),
		importcmd.NewCmdImport(f),
		gpucheck.NewCmdGPUCheck(f, nil),
		partition.NewCmdPartition(f, nil),
		replay.NewCmdReplay(f, nil),
		run.NewCmdRun(f, nil),
		sessions.NewCmdSessions(f),
		train.NewCmdTrain(f, nil),
		ui.NewCmdUI(f, nil),
		worker.NewCmdWorker(f, nil),
	)
	cmd.AddCommand(run.NewHelpTopics()...)
	cmd.AddCommand(trainflags.NewHelpTopic())
	return cmd
}
