package analysis

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func window(exposed map[Category]float64) *Window {
	w := &Window{}
	for c, v := range exposed {
		w.Exposed[c] = v
		w.WallS += v
	}
	return w
}

func TestVerdictBound(t *testing.T) {
	v := VerdictOf(window(map[Category]float64{Sample: 61, Train: 30, Idle: 9}), false)
	if v.Kind != VerdictBound || v.First != Sample || v.Second != Train {
		t.Fatalf("%+v", v)
	}
	if want := "bound by sampling (61 % of wall time exposed; next: training compute 30 %)"; v.Text != want {
		t.Errorf("text %q, want %q", v.Text, want)
	}
	v = VerdictOf(window(map[Category]float64{Sample: 61, Train: 30, Idle: 9}), true)
	if !strings.HasPrefix(v.Text, "bound by data loading") {
		t.Errorf("external: %q", v.Text)
	}
}

func TestVerdictMixed(t *testing.T) {
	v := VerdictOf(window(map[Category]float64{Transfer: 45, Train: 36, Eval: 19}), false)
	if v.Kind != VerdictMixed || v.First != Transfer || v.Second != Train {
		t.Fatalf("%+v", v)
	}
	if want := "mixed: transfer 45 % and training compute 36 % of wall time exposed (within 10 points)"; v.Text != want {
		t.Errorf("text %q, want %q", v.Text, want)
	}
}

// An external run's wait for the next batch (a sample span on the
// trainer's lane, as the Python client writes it) is exposed loading.
func TestVerdictExternalLoader(t *testing.T) {
	c := profile.LaneCompute
	evs := []profile.Event{runStart("torch", map[string]any{"external": true, "client": "python", "cmd": []string{"python", "train.py"}}, 8)}
	var at int64
	for i := 0; i < 10; i++ {
		evs = append(evs, sp(profile.StageSample, c, 1, i, at, at+7), sp(profile.StageTransfer, c, 1, i, at+7, at+8))
		evs = append(evs, trainSpans(c, 1, i, at+8, at+11)...)
		at += 11
	}
	r := runOf(evs)
	if !r.Config.External || r.Verdict.Kind != VerdictBound || r.Verdict.First != Sample {
		t.Fatalf("config %+v verdict %+v", r.Config, r.Verdict)
	}
	if !strings.HasPrefix(r.Verdict.Text, "bound by data loading (64 %") {
		t.Errorf("verdict %q", r.Verdict.Text)
	}
	checkLedgerSums(t, &r.Ledger)
}
