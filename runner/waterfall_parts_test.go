package runner

import (
	"encoding/json"
	"testing"

	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/sessions"
)

// The waterfall's parts of a session are its experiment's ablation
// parts, in order, each with a config the what-if model reads as the
// part's schedule.
func TestWaterfallParts(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	spec, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := WaterfallParts(s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := AblationParts(exp, VariantParamsFor(exp.Train))
	if err != nil || len(parts) != len(want) || len(parts) == 0 {
		t.Fatalf("parts %v, ablation %v (%v)", parts, want, err)
	}
	for i, p := range parts {
		if p.Name != want[i].Name {
			t.Errorf("part %d: %s, want %s", i, p.Name, want[i].Name)
		}
	}
	sc, err := whatif.ScenarioFromConfig(parts[0].Name, parts[0].Config, 0)
	if err != nil || parts[0].Name != string(Pipelined) || sc.Workers == 0 {
		t.Errorf("first part %s: %+v (%v)", parts[0].Name, sc, err)
	}
	bare, err := st.Create(sessions.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WaterfallParts(bare); err == nil {
		t.Error("parts of a session without an experiment")
	}
}
