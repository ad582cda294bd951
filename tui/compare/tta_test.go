package compare

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// ttaStore holds one session of three runs evaluated every epoch: the
// baseline, an optimized run twice as fast per epoch that reaches the
// same accuracy, and a run that never reaches the target.
func ttaStore(t *testing.T) *sessions.Store {
	t.Helper()
	st := fixture.Store(t)
	base, opt, low := fixture.Baseline, fixture.Optimized, fixture.Optimized
	base.Epochs, opt.Epochs, low.Epochs = 5, 5, 5
	low.Name = "gas"
	sess := fixture.Add(t, st, fixture.Session{ID: "20260102-030400-tttt", Name: "time to accuracy",
		Created: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Variants: []string{"baseline", "optimized", "gas"},
		Runs: []fixture.Run{base, opt, low}})
	accs := map[string][]float64{
		"baseline":  {0.40, 0.62, 0.74, 0.79, 0.80},
		"optimized": {0.38, 0.60, 0.75, 0.80, 0.80},
		"gas":       {0.30, 0.45, 0.55, 0.60, 0.61},
	}
	for run, acc := range accs {
		b, err := os.ReadFile(sess.JournalPath(run))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			out = append(out, l)
			for ep := 1; ep <= len(acc); ep++ {
				if strings.Contains(l, fmt.Sprintf(`"name":"test_acc","epoch":%d,`, ep)) {
					out = append(out, fmt.Sprintf(`{"t":"metric","name":"val_acc","epoch":%d,"batch":-1,"value":%g}`, ep, acc[ep-1]))
				}
			}
		}
		if err := os.WriteFile(sess.JournalPath(run), []byte(strings.Join(out, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// TestGoldenTimeToAccuracy: under the table, the runs' validation
// accuracy over wall time, overlaid, with each run's time to accuracy
// against 99 % of the baseline's best; s smooths it.
func TestGoldenTimeToAccuracy(t *testing.T) {
	st := ttaStore(t)
	for _, size := range []struct {
		name string
		w, h int
	}{{"compare_tta_80x24", 80, 24}, {"compare_tta_160x48", 160, 48}} {
		hs := newHarness(t, st, size.w, size.h, "20260102-030400-tttt")
		v := ansi.Strip(hs.m.View())
		if !strings.Contains(v, "Time to accuracy") || !strings.Contains(v, "gas not reached") || !strings.Contains(v, "bound by") {
			t.Errorf("%s: no time to accuracy or verdict:\n%s", size.name, v)
		}
		fixture.Golden(t, size.name, hs.m.View())
	}
	hs := newHarness(t, st, 80, 24, "20260102-030400-tttt")
	c := hs.m.Comparison()
	if c.TTA == nil || c.Runs[1].TTA == nil || !c.Runs[1].TTA.Reached || c.Runs[1].TTA.Speedup <= 1 || c.Runs[2].TTA.Reached {
		t.Fatalf("time to accuracy %+v", c.TTA)
	}
	if v := ansi.Strip(hs.m.View()); strings.Contains(v, "waterfall:") {
		t.Errorf("80 columns: the waterfall drawn beside time to accuracy:\n%s", v)
	}
	hs.press("w")
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "waterfall:") || strings.Contains(v, "Time to accuracy") {
		t.Errorf("w did not turn to the waterfall:\n%s", v)
	}
	hs.press("w")
	hs.press("s", "s")
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "Time to accuracy (EMA 0.8)") {
		t.Errorf("s did not smooth:\n%s", v)
	}
}

// TestGoldenTimeToAccuracyByEpoch: a turns the chart's x axis to epochs,
// with the epoch each run reached the target and its speedup in epochs
// (the optimized run reaches it at epoch 4, the baseline at 5), and back.
func TestGoldenTimeToAccuracyByEpoch(t *testing.T) {
	st := ttaStore(t)
	hs := newHarness(t, st, 80, 24, "20260102-030400-tttt")
	hs.press("a")
	v := ansi.Strip(hs.m.View())
	for _, want := range []string{"Epochs to accuracy", "epoch 4 1.25x", "epoch 5", "gas not reached", "epoch 0"} {
		if !strings.Contains(v, want) {
			t.Errorf("a: no %q:\n%s", want, v)
		}
	}
	fixture.Golden(t, "compare_tta_epochs_80x24", hs.m.View())
	hs.press("a")
	if v := ansi.Strip(hs.m.View()); !strings.Contains(v, "Time to accuracy") || strings.Contains(v, "Epochs to accuracy") {
		t.Errorf("a again did not turn back to wall time:\n%s", v)
	}
}

// TestComparisonGivenTarget: a target given (compare --tta-target) is
// the one counted to, so the gas run, which never reaches 99 % of the
// baseline's best, reaches 0.6 at its fourth epoch.
func TestComparisonGivenTarget(t *testing.T) {
	st := ttaStore(t)
	refs, err := st.SelectRuns([]string{"20260102-030400-tttt"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sessions.Compare(refs, sessions.CompareOptions{TTATarget: 0.6})
	if err != nil {
		t.Fatal(err)
	}
	if c.TTA == nil || c.TTA.Target != 0.6 || c.TTA.TargetFrom != "given" {
		t.Fatalf("target %+v", c.TTA)
	}
	if g := c.Runs[2].TTA; g == nil || !g.Reached || g.Epoch != 4 {
		t.Errorf("gas %+v, want reached at epoch 4", g)
	}
}
