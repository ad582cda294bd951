//go:build linux

package runner

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// TestWorkerRecordsPlan: the optimized variant under a budget records, in
// its run_start (the journal's first line), the launcher's adjustment and
// then the engine's budget plan, and its log repeats the plan.
func TestWorkerRecordsPlan(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs, exp.Train.Threads = 1, 1
	exp.Train.MemBudget = memory.Size(64 << 20)
	resolved, err := Resolve(exp, DefaultVariants()[1:])
	if err != nil {
		t.Fatal(err)
	}
	s, err := createSession(st, exp, resolved, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(os.Args[0], workerCommand, "--store", st.Root(), "--session", s.ID(), "--run", "optimized").CombinedOutput()
	if err != nil {
		t.Fatalf("worker: %v\n%s", err, out)
	}
	evs, _, err := sessions.ReadJournal(s.JournalPath("optimized"))
	if err != nil || len(evs) < 2 {
		t.Fatalf("journal: %d events, %v", len(evs), err)
	}
	start := evs[0]
	want := []string{"sampler_workers ", "cache_bytes off->16MiB: a quarter of the memory budget 64.0MiB", "mem_guard off->split: memory budget 64.0MiB", "prefetch ", "feature cache: degree policy", "prefetch: ", "overlapped evaluation: chunks sized"}
	if start.T != profile.TypeRunStart || len(start.Adjusted) != len(want) {
		t.Fatalf("first event %q, adjusted %q", start.T, start.Adjusted)
	}
	for i, w := range want {
		if !strings.HasPrefix(start.Adjusted[i], w) {
			t.Errorf("adjusted[%d] = %q, want it to start %q", i, start.Adjusted[i], w)
		}
	}
	if !strings.Contains(string(out), "plan: prefetch: ") {
		t.Errorf("the log does not repeat the plan:\n%s", out)
	}
	if end := evs[len(evs)-1]; end.T != profile.TypeRunEnd || end.Status != profile.StatusOK {
		t.Errorf("last event %+v", end)
	}
}
