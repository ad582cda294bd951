package clitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/cli/root"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// cliEnv makes a test binary behave as gnnscope: `gnnscope run` starts
// os.Executable() (there, the test binary) as its workers and sequencer.
const cliEnv = "GNNSCOPE_TEST_AS_CLI"

// Main is the TestMain of packages whose tests launch runs: started by a
// launch (cliEnv set), the test binary runs the command line as the
// gnnscope binary does; otherwise it runs the tests.
func Main(m *testing.M) {
	if os.Getenv(cliEnv) == "1" {
		f := cmdutil.New()
		if err := root.NewCmdRoot(f).Execute(); err != nil {
			fmt.Fprintln(f.IOStreams.ErrOut, "gnnscope:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Setenv(cliEnv, "1") // for the processes the tests start
	os.Exit(m.Run())
}

// Streams says what a command run by RunWith reads and which of its
// streams it takes for terminals.
type Streams struct {
	In                  string
	StdinTTY, StdoutTTY bool
}

// Run runs the command line args and returns stdout and stderr.
func Run(t testing.TB, args ...string) (string, string, error) {
	t.Helper()
	return RunWith(t, Streams{}, args...)
}

// RunWith runs the command line args over the streams s.
func RunWith(t testing.TB, s Streams, args ...string) (string, string, error) {
	t.Helper()
	f := cmdutil.New()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(s.In)
	ios.SetStdinTTY(s.StdinTTY)
	ios.SetStdoutTTY(s.StdoutTTY)
	f.IOStreams = ios
	cmd := root.NewCmdRoot(f)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// WaitFor polls cond every 50 ms until it holds or a generous deadline
// (a safety net against a hang, not a timing assertion) passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// OnlySession returns the one session of the store at home.
func OnlySession(t testing.TB, home string) *sessions.Session {
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

// EventTypes counts the events of a journal by type, checking that the
// first is run_start.
func EventTypes(t testing.TB, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	_, err = sessions.ScanJournal(f, func(e *profile.Event) error {
		if len(n) == 0 && e.T != profile.TypeRunStart {
			t.Errorf("%s: first event %s", path, e.T)
		}
		n[e.T]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sessionPids returns the process ids recorded in a session's pid files
// (its runs' and its sequencer's).
func sessionPids(s *sessions.Session) []int {
	var pids []int
	files, _ := filepath.Glob(filepath.Join(s.RunsDir(), "*.pid"))
	files = append(files, filepath.Join(s.Dir(), "sequencer.pid"))
	for _, f := range files {
		var p struct{ Pid int }
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &p) == nil && p.Pid > 0 {
			pids = append(pids, p.Pid)
		}
	}
	return pids
}

// ModuleRoot returns the folder of the module's go.mod, found from the
// working directory up.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}
