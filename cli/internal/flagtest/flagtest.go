package flagtest

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
)

// Factory returns a factory over test streams and the store on disk.
func Factory() *cmdutil.Factory {
	ios, _, _, _ := iostreams.Test()
	return &cmdutil.Factory{IOStreams: ios, OpenStore: sessions.Open}
}

// Parse builds a command with newCmd, runs it on args with a run function
// that keeps the options, and returns them (nil when parsing failed) with
// the command's error.
func Parse[O any](t testing.TB, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	cmd := newCmd(Factory(), func(o *O) error { got = o; return nil })
	return got, Execute(cmd, args...)
}

// Execute runs cmd on args with its usage and error messages silenced.
func Execute(cmd *cobra.Command, args ...string) error {
	ios, _, _, _ := iostreams.Test()
	cmd.SetArgs(args)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}
