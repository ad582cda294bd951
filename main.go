// Command gnnscope is a terminal workbench for profiling sampling-based GNN
// training: it trains with its own engine, records every stage, and compares
// baseline and optimized runs.
package main

import (
	"fmt"
	"os"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/root"
)

func main() {
	f := cmdutil.New()
	if err := root.NewCmdRoot(f).Execute(); err != nil {
		fmt.Fprintln(f.IOStreams.ErrOut, "gnnscope:", err)
		os.Exit(1)
	}
}
