//go:build unix

package run_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestMain(m *testing.M) { clitest.Main(m) }

func TestRunWaitJSON(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	out, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "2", "--threads", "1",
		"--variants", "baseline,optimized", "--wait", "--json")
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr)
	}
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := clitest.OnlySession(t, home)
	if tab.Session != s.ID() || tab.Dir != s.Dir() || len(tab.Runs) != 2 || tab.Baseline != "baseline" {
		t.Fatalf("table %+v", tab)
	}
	for i, want := range []string{"baseline", "optimized"} {
		r := tab.Runs[i]
		if r.Run != want || r.Variant != want || r.Status != profile.StatusOK {
			t.Errorf("run %d: %+v", i, r)
		}
		if r.Epochs != 2 || r.EpochMeanS <= 0 || r.Speedup <= 0 || r.TestAcc == nil || r.Spans == 0 {
			t.Errorf("figures of %s: %+v", want, r)
		}
		n := clitest.EventTypes(t, s.JournalPath(want))
		if n[profile.TypeRunStart] != 1 || n[profile.TypeSpan] == 0 || n[profile.TypeRunEnd] != 1 {
			t.Errorf("journal of %s: %v", want, n)
		}
	}
	// session.json records the experiment and each variant's resolved config
	exp, resolved, err := runner.LoadSession(s)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Data != "synth-tiny" || exp.Train.Epochs != 2 || len(resolved) != 2 ||
		resolved[0].Config.SamplerWorkers != 0 || resolved[1].Config.SamplerWorkers < 1 || !resolved[1].Config.OverlapEval {
		t.Errorf("session.json: %+v %+v", exp, resolved)
	}
	if s.Meta.Host == nil || s.Meta.Created.IsZero() {
		t.Errorf("session meta %+v", s.Meta)
	}
	// the text table of the same session
	out, _, err = clitest.Run(t, "run", "--attach", s.ID())
	if err != nil || !strings.Contains(out, "SPEEDUP") || !strings.Contains(out, "optimized") {
		t.Errorf("attach: %v\n%s", err, out)
	}
}

func TestRunSpecParallel(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	spec := filepath.Join(t.TempDir(), "exp.toml")
	os.WriteFile(spec, []byte(`
name = "spec test"
data = "synth-tiny"
[train]
model = "sage"
epochs = 5
threads = 1
[variants.baseline]
[variants.workers-only]
sampler_workers = 2
`), 0o644)
	// --epochs on the command line overrides the spec
	out, stderr, err := clitest.Run(t, "run", "--spec", spec, "--epochs", "1", "--parallel", "--wait", "--json", "-q")
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr)
	}
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatal(err)
	}
	if tab.Name != "spec test" || len(tab.Runs) != 2 || tab.Runs[1].Run != "workers-only" || tab.Runs[1].Status != "ok" || tab.Runs[1].Epochs != 1 {
		t.Errorf("table %+v", tab)
	}
}

func TestRunRefusesBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("data = \"synth-tiny\"\n[train]\nmodel = \"sage\"\nepochz = 3\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--variants", "baseline,turbo"}, `unknown variant "turbo"`},
		{[]string{"--spec", bad}, "bad.toml:4:"},
		{[]string{"--spec", filepath.Join(dir, "none.toml")}, "none.toml"},
		{[]string{"--model", "gcn"}, `variant "optimized": key "sampler_workers"`},
		{[]string{"--data", "no-such-dataset"}, "no-such-dataset"},
		{[]string{"--epochs", "0"}, "epochs"},
		{[]string{"--bogus"}, "unknown flag"},
		{[]string{"--cancel", "x", "--wait"}, "--wait"},
	} {
		_, _, err := clitest.Run(t, append([]string{"run"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(ents) != 0 {
		t.Errorf("a refused run created sessions: %v", ents)
	}
}

// startLong launches a long sequential session and waits until its
// baseline run has finished an epoch.
func startLong(t *testing.T, home string) *sessions.Session {
	t.Helper()
	out, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "100000", "--threads", "1", "--variants", "baseline,optimized")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	t.Cleanup(func() { clitest.StopAll(t, home, s) })
	if !strings.Contains(out, s.ID()) || !strings.Contains(out, s.Dir()) {
		t.Errorf("output %q lacks the session id and folder", out)
	}
	states, err := runner.RunStates(s)
	if err != nil || len(states) != 2 || states[1].Status != profile.StatusPending {
		t.Errorf("states right after launch: %+v, %v", states, err)
	}
	clitest.WaitFor(t, "an epoch of baseline", func() bool {
		js, err := sessions.SummarizeJournal(s.JournalPath("baseline"))
		_, ok := js.Summary.Metrics["loss"]
		return err == nil && ok
	})
	return s
}

func TestRunCancel(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := startLong(t, home)
	// an unknown session is refused before anything is canceled
	if _, _, err := clitest.Run(t, "run", "--cancel", "nosuch"); !errors.Is(err, sessions.ErrNoMatch) {
		t.Errorf("--cancel nosuch: %v", err)
	}
	out, stderr, err := clitest.Run(t, "run", "--cancel", "last") // as every command names the newest session
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "session "+s.ID()+" canceled") || !strings.Contains(stderr, "baseline") {
		t.Errorf("cancel output %q, %q", out, stderr)
	}
	states, err := runner.RunStates(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range states {
		if r.Status != profile.StatusCanceled {
			t.Errorf("run %s: %s", r.Run, r.Status)
		}
	}
	if n := clitest.EventTypes(t, s.JournalPath("baseline")); n[profile.TypeSpan] == 0 || n[profile.TypeRunEnd] != 1 {
		t.Errorf("baseline journal %v", n)
	}
	// the pending run never started
	if n := clitest.EventTypes(t, s.JournalPath("optimized")); n[profile.TypeSpan] != 0 || n[profile.TypeRunEnd] != 1 {
		t.Errorf("optimized journal %v", n)
	}
}

func TestWorkerKilled(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := startLong(t, home)
	st, err := s.RunState("baseline")
	if err != nil || st.Pid <= 0 || st.Status != profile.StatusRunning {
		t.Fatalf("baseline %+v, %v", st, err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	clitest.WaitFor(t, "baseline to read as crashed", func() bool {
		st, _ := s.RunState("baseline")
		return st.Status == profile.StatusCrashed
	})
	n := clitest.EventTypes(t, s.JournalPath("baseline"))
	if n[profile.TypeRunStart] != 1 || n[profile.TypeSpan] == 0 || n[profile.TypeRunEnd] != 0 {
		t.Errorf("killed run's journal %v", n)
	}
	// the sequencer goes on with the next run; only baseline crashed
	clitest.WaitFor(t, "optimized to start", func() bool {
		st, _ := s.RunState("optimized")
		return st.Status == profile.StatusRunning
	})
	tab, err := runner.Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Runs[0].Status != profile.StatusCrashed || tab.Runs[0].Epochs == 0 || tab.Runs[1].Status != profile.StatusRunning {
		t.Errorf("comparison %+v", tab.Runs)
	}
}
