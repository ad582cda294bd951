package main

import (
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
)

// runCLI runs the root command with args and returns stdout, stderr.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	f := cmdutil.New()
	ios, _, out, errb := iostreams.Test()
	f.IOStreams = ios
	root := newRootCmd(f)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errb.String(), err
}
