//go:build unix

package run_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// TestOptimizedSizedToThisMachine: `run --variants baseline,optimized`
// gives optimized the sampler workers PlanWorkers picks for this
// machine's usable cores and a prefetch depth from the memory left, and
// its run_start records both with the reason; the baseline stays on the
// training goroutine.
func TestOptimizedSizedToThisMachine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "1",
		"--variants", "baseline,optimized", "--wait", "-q"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	start := func(run string) profile.Event {
		evs, _, err := sessions.ReadJournal(s.JournalPath(run))
		if err != nil || len(evs) == 0 || evs[0].T != profile.TypeRunStart {
			t.Fatalf("journal of %s: %v, %d events", run, err, len(evs))
		}
		return evs[0]
	}
	var cfg train.Config
	opt := start("optimized")
	if err := json.Unmarshal(opt.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	m := runner.DescribeMachine(nil)
	want, _ := runner.PlanWorkers(m, cfg)
	if cfg.SamplerWorkers != want || cfg.Prefetch < 1 {
		t.Errorf("optimized: %d workers, prefetch %d; want %d workers on %s", cfg.SamplerWorkers, cfg.Prefetch, want, m)
	}
	adj := strings.Join(opt.Adjusted, "\n")
	for _, line := range []string{
		fmt.Sprintf("sampler_workers %d: %d cores usable", want, m.Cores()),
		fmt.Sprintf("prefetch %d: 2 a worker", cfg.Prefetch),
	} {
		if !strings.Contains(adj, line) {
			t.Errorf("adjusted lacks %q:\n%s", line, adj)
		}
	}
	var base train.Config
	if err := json.Unmarshal(start("baseline").Config, &base); err != nil || base.SamplerWorkers != 0 {
		t.Errorf("baseline: %v, %d workers", err, base.SamplerWorkers)
	}
}
