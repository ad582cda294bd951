//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

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

// waitFor polls cond every 50 ms until it holds or a generous deadline
// (a safety net against a hang, not a timing assertion) passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
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

// stopAll cancels the session and waits until its processes (sequencer
// and workers) have exited, killing what is left of them after a while, so
// a test leaves nothing running or writing.
func stopAll(t *testing.T, home string, s *sessions.Session) {
	st, err := sessions.Open(home)
	if err != nil {
		return
	}
	runner.Cancel(st, s.ID())
	pids := map[int]bool{}
	files, _ := filepath.Glob(filepath.Join(s.RunsDir(), "*.pid"))
	files = append(files, filepath.Join(s.Dir(), "sequencer.pid"))
	for _, f := range files {
		var p struct{ Pid int }
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &p) == nil && p.Pid > 0 {
			pids[p.Pid] = true
		}
	}
	gone := func(pid int) bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		return err == nil && strings.Contains(string(b), ") Z ")
	}
	deadline := time.Now().Add(10 * time.Second)
	for pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Logf("killing leftover process %d", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func eventTypes(t *testing.T, path string) map[string]int {
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

func TestRunWaitJSON(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	out, stderr, err := runCLI(t, "run", "--data", "synth-tiny", "--epochs", "2", "--threads", "1",
		"--variants", "baseline,optimized", "--wait", "--json")
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, stderr)
	}
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := onlySession(t, home)
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
		n := eventTypes(t, s.JournalPath(want))
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
		resolved[0].Config.SamplerWorkers != 0 || resolved[1].Config.SamplerWorkers != 2 || !resolved[1].Config.OverlapEval {
		t.Errorf("session.json: %+v %+v", exp, resolved)
	}
	if s.Meta.Host == nil || s.Meta.Created.IsZero() {
		t.Errorf("session meta %+v", s.Meta)
	}
	// the text table of the same session
	out, _, err = runCLI(t, "run", "--attach", s.ID())
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
	out, stderr, err := runCLI(t, "run", "--spec", spec, "--epochs", "1", "--parallel", "--wait", "--json", "-q")
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
		_, _, err := runCLI(t, append([]string{"run"}, tc.args...)...)
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
	out, stderr, err := runCLI(t, "run", "--data", "synth-tiny", "--epochs", "100000", "--threads", "1", "--variants", "baseline,optimized")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := onlySession(t, home)
	t.Cleanup(func() { stopAll(t, home, s) })
	if !strings.Contains(out, s.ID()) || !strings.Contains(out, s.Dir()) {
		t.Errorf("output %q lacks the session id and folder", out)
	}
	states, err := runner.RunStates(s)
	if err != nil || len(states) != 2 || states[1].Status != runner.StatusPending {
		t.Errorf("states right after launch: %+v, %v", states, err)
	}
	waitFor(t, "an epoch of baseline", func() bool {
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
	if _, _, err := runCLI(t, "run", "--cancel", "nosuch"); !errors.Is(err, sessions.ErrNoMatch) {
		t.Errorf("--cancel nosuch: %v", err)
	}
	out, stderr, err := runCLI(t, "run", "--cancel", "last") // as every command names the newest session
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
	if n := eventTypes(t, s.JournalPath("baseline")); n[profile.TypeSpan] == 0 || n[profile.TypeRunEnd] != 1 {
		t.Errorf("baseline journal %v", n)
	}
	// the pending run never started
	if n := eventTypes(t, s.JournalPath("optimized")); n[profile.TypeSpan] != 0 || n[profile.TypeRunEnd] != 1 {
		t.Errorf("optimized journal %v", n)
	}
}

func TestWorkerKilled(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := startLong(t, home)
	st, err := s.RunState("baseline")
	if err != nil || st.Pid <= 0 || st.Status != sessions.StatusRunning {
		t.Fatalf("baseline %+v, %v", st, err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "baseline to read as crashed", func() bool {
		st, _ := s.RunState("baseline")
		return st.Status == sessions.StatusCrashed
	})
	n := eventTypes(t, s.JournalPath("baseline"))
	if n[profile.TypeRunStart] != 1 || n[profile.TypeSpan] == 0 || n[profile.TypeRunEnd] != 0 {
		t.Errorf("killed run's journal %v", n)
	}
	// the sequencer goes on with the next run; only baseline crashed
	waitFor(t, "optimized to start", func() bool {
		st, _ := s.RunState("optimized")
		return st.Status == sessions.StatusRunning
	})
	tab, err := runner.Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Runs[0].Status != sessions.StatusCrashed || tab.Runs[0].Epochs == 0 || tab.Runs[1].Status != sessions.StatusRunning {
		t.Errorf("comparison %+v", tab.Runs)
	}
}

// TestRunSpecFlagOverrides checks that every training flag given beside
// --spec overrides the spec's [train] key, zero values included.
func TestRunSpecFlagOverrides(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "exp.toml")
	if err := os.WriteFile(spec, []byte(`
data = "synth-tiny"
[train]
model = "sage"
epochs = 5
eval_cut = 0.3
cut_rule = "random"
[variants.baseline]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, f := newRunCmdFlags()
	args := []string{"--spec", spec, "--mem-budget", "64MiB", "--on-oom", "skip", "--mem-guard", "split",
		"--eval-cut", "0", "--cut-rule", "degree-product", "--cut-norm", "scale", "--fanout", "5,5", "--act", "elu"}
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	exp, _, err := runExperiment(cmd.Flags(), f)
	if err != nil {
		t.Fatal(err)
	}
	tr := exp.Train
	if tr.MemBudget != 64<<20 || tr.OnOOM != "skip" || tr.MemGuard != "split" || tr.EvalCut != 0 ||
		tr.CutRule != "degree-product" || tr.CutNorm != "scale" || tr.Activation != "elu" ||
		len(tr.Fanouts) != 2 || tr.Fanouts[0] != 5 || tr.Epochs != 5 {
		t.Errorf("overrides not applied: %+v", tr)
	}
	for _, name := range []string{"data", "split", "json", "spec", "variants"} {
		if k := flagConfigKey(name); k != "" {
			t.Errorf("flag --%s maps to config key %q", name, k)
		}
	}
}
