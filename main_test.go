//go:build unix

package main

import (
	"os"
	"testing"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/sessions"
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

// cliEnv makes the test binary behave as gnnscope: `gnnscope run` starts
// os.Executable() (here, the test binary) as its workers and sequencer.
const cliEnv = "GNNSCOPE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Setenv(cliEnv, "1") // for the processes the tests start
	os.Exit(m.Run())
}

// onlySession returns the one session of the store.
func onlySession(t *testing.T, home string) *sessions.Session {
	t.Helper()
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v, %v", list, err)
	}
	s, err := st.Get(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
