// Command gnnscope is a terminal workbench for profiling sampling-based GNN
// training: it trains with its own engine, records every stage, and compares
// baseline and optimized runs.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "gnnscope:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "gnnscope",
		Short: "Profile and compare GNN training runs",
		Long: `gnnscope trains graph neural networks with its own engine, records every
stage of every batch (sample, transfer, train, eval), and compares a baseline
run against optimized ones.

Without a command, on a terminal, gnnscope opens the workbench (as
'gnnscope ui'): sessions, live dashboards, comparisons and exports.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		// No subcommand: the workbench on a terminal, this help otherwise.
		RunE: runRoot,
	}
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands lists the constructors of every subcommand; each cmd_*.go file
// registers its own in an init function.
var subcommands []func() *cobra.Command
