package summary

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// outcomes are a run that skipped a quarter of its batches, one aborted
// by an OOM after an epoch and one that failed having trained nothing.
func outcomes() []*runstate.Run {
	skip, _ := epochs("baseline", 4, 2, 0.8)
	skip.Add(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK, Summary: []byte(`{"test_acc":0.8,"best_epoch":4,"batches":9,"skipped_batches":3}`)})
	oom, _ := epochs("optimized", 1, 0.5, 0.7)
	oom.Add(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOOM, Error: "out of memory"})
	none, _ := epochs("nothing", 1, 0.5, 0)
	none.Add(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusFailed, Error: "every training batch ran out of memory: 12 of 12 batches skipped by epoch 1"})
	return []*runstate.Run{skip, oom, none}
}

// TestOutcomes: the table says how many batches a run skipped, and marks
// the figures of runs that stopped early partial; they get no speedup.
func TestOutcomes(t *testing.T) {
	runs := outcomes()
	sums := make([]profile.Summary, len(runs))
	for i, r := range runs {
		sums[i] = r.Summary()
	}
	rows := Figures(runs, sums, false)
	want := []string{"ok, skipped 3 of 12 batches (25.0 %)", "oom, partial", "failed, partial"}
	for i, w := range want {
		if got := rows[i].StatusText(); got != w {
			t.Errorf("%s: status %q, want %q", rows[i].Run, got, w)
		}
		if got := StatusText(runs[i], false); got != w {
			t.Errorf("%s: StatusText %q, want %q", rows[i].Run, got, w)
		}
		if i > 0 && rows[i].Speedup != 0 {
			t.Errorf("%s: speedup %v", rows[i].Run, rows[i].Speedup)
		}
	}
	m := New(common.New(nil, common.Options{NoColor: true}), false)
	m.SetSize(160, 4)
	out := m.View(runs, 0)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	golden.Check(t, "outcomes_160", out)
}

// TestColumnsKeepTrainAndEval: at every width, the table drops the
// stage columns of sample and transfer before those of train and eval.
func TestColumnsKeepTrainAndEval(t *testing.T) {
	runs := outcomes()
	m := New(common.New(nil, common.Options{NoColor: true}), false)
	for w := 60; w <= 220; w += 4 {
		m.SetSize(w, 4)
		head := strings.SplitN(m.View(runs, 0), "\n", 2)[0]
		minor := strings.Contains(head, "sample s") || strings.Contains(head, "transf. s")
		if minor && (!strings.Contains(head, "train s") || !strings.Contains(head, "eval s")) {
			t.Errorf("width %d keeps sample or transfer but not train and eval:\n%s", w, head)
		}
		if w >= 120 && (!strings.Contains(head, "train s") || !strings.Contains(head, "eval s")) {
			t.Errorf("width %d drops train or eval:\n%s", w, head)
		}
	}
}
