// Command gnnscope is a terminal workbench for profiling sampling-based GNN
// training: it trains with its own engine, records every stage, and compares
// baseline and optimized runs.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/root"
)

func main() {
	f := cmdutil.New()
	if err := newRootCmd(f).Execute(); err != nil {
		fmt.Fprintln(f.IOStreams.ErrOut, "gnnscope:", err)
		os.Exit(1)
	}
}

// newRootCmd returns the command tree: cli/root's commands and, listed
// here, the commands this package still defines.
func newRootCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := root.NewCmdRoot(f)
	cmd.AddCommand(
		newCompareCmd(),
		newExportCmd(),
		newReplayCmd(),
		newSessionsCmd(),
	)
	return cmd
}
