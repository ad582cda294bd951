package explain

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// pipelinedEvents is optimizedEvents' schedule without the overlapped
// evaluation: two workers sample ahead, evaluation runs in turn.
func pipelinedEvents(run, variant, cfg string, k int) []profile.Event {
	c := profile.LaneCompute
	evs := []profile.Event{start(run, variant, cfg), sp(profile.StageSetup, c, 0, 0, 0, 10)}
	at := int64(10)
	for ep := range 3 {
		for b := 0; b < 4; b++ {
			w := profile.SamplerLane(b % 2)
			evs = append(evs, sp(profile.StageSample, w, ep+1, b, at, at+12), sp(profile.StageTransfer, w, ep+1, b, at+12, at+14))
			evs = append(evs, sp(profile.StageWait, c, ep+1, b, at, at+6+int64(k)))
			evs = append(evs, trainAt(c, ep+1, b, at+6+int64(k), at+12+int64(k))...)
			at += 12 + int64(k)
		}
		evs = append(evs, sp(profile.StageEval, c, ep+1, 0, at, at+10), valAcc(ep+1, 0.6+0.1*float64(ep)))
		at += 10
	}
	return append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
}

// ablationStore writes a session recorded with its experiment, as run
// --ablation --repeats 2 leaves it, less the overlap-eval and cache
// parts (which the waterfall predicts): baseline, pipelined, a variant
// with a memory guard, and optimized, two repeats each.
func ablationStore(t *testing.T) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exp := runner.NewExperiment("synth-tiny", "sage")
	spec, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{ID: "20261122-160000-cd34", Created: time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC),
		Host: &profile.Host{Cores: 8}, Spec: spec,
		Variants: []sessions.Variant{{Name: "baseline"}, {Name: "pipelined"}, {Name: "mem-guard"}, {Name: "optimized"}}})
	if err != nil {
		t.Fatal(err)
	}
	pipe := `{"sampler":"neighbor","sampler_workers":2,"prefetch":4,"eval_every":1}`
	runs := map[string][]profile.Event{}
	for k := 1; k <= 2; k++ {
		r := func(v string) string { return v + ".r" + string(rune('0'+k)) }
		evs := baselineEvents()
		evs[0].Run = r("baseline")
		runs[r("baseline")] = evs
		runs[r("pipelined")] = pipelinedEvents(r("pipelined"), "pipelined", pipe, k)
		runs[r("mem-guard")] = pipelinedEvents(r("mem-guard"), "mem-guard", `{"sampler":"neighbor","sampler_workers":0,"eval_every":1,"mem_guard":"split"}`, 8)
		opt := optimizedEvents()
		opt[0].Run, opt[0].Config = r("optimized"), json.RawMessage(`{"sampler":"neighbor","sampler_workers":2,"prefetch":4,"overlap_eval":true,"eval_every":1}`)
		runs[r("optimized")] = opt
	}
	for run, evs := range runs {
		j, err := s.OpenJournal(run)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.WriteEvents(evs); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// The waterfall of a session with its experiment: the parts of the
// optimized variant in order, pipelined measured, the others predicted
// and marked so; a variant the model does not replay is not checked,
// and says why.
func TestExplainWaterfallGolden(t *testing.T) {
	st := ablationStore(t)
	out := explainWith(t, st, ExplainOptions{Ref: "last"})
	i := strings.Index(out, "\ntime to accuracy")
	if i < 0 {
		t.Fatalf("no time to accuracy:\n%s", out)
	}
	checkGolden(t, "waterfall", out[i:])
	md := explainWith(t, st, ExplainOptions{Ref: "last", Format: FormatMarkdown})
	checkGolden(t, "waterfall_md", md[strings.Index(md, "\n## time to accuracy"):])
}

func TestExplainWaterfallJSON(t *testing.T) {
	st := ablationStore(t)
	var d struct {
		WhatIf    *WhatIf           `json:"what_if"`
		Waterfall *WaterfallSection `json:"waterfall"`
		Report    struct {
			Runs []struct {
				Advice []struct {
					Try []struct{ Gain *struct{ Speedup float64 } }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(explainWith(t, st, ExplainOptions{Ref: "last", Format: FormatJSON})), &d); err != nil {
		t.Fatal(err)
	}
	wf := d.Waterfall
	if wf == nil || wf.Waterfall == nil {
		t.Fatalf("waterfall %+v", wf)
	}
	w := wf.Waterfall
	var names []string
	predicted := 0
	for _, p := range w.Parts {
		names = append(names, p.Name)
		if p.Predicted {
			predicted++
		}
	}
	if len(names) < 2 || names[0] != "pipelined" || w.Parts[0].Predicted || predicted == 0 {
		t.Errorf("parts %v (%d predicted)", names, predicted)
	}
	if math.Abs(w.Sum()-w.Total.Log) > 1e-9 || w.Check() != nil {
		t.Errorf("parts and interaction %.6f, total %.6f", w.Sum(), w.Total.Log)
	}
	if n := len(wf.Bars); n != len(w.Parts)+2 || !wf.Bars[n-1].Total || math.Abs(wf.Bars[n-2].To-w.Total.Speedup) > 1e-9 {
		t.Errorf("bars %+v", wf.Bars)
	}
	wi := d.WhatIf
	if wi == nil || len(wi.Runs) != 8 || len(wi.Checks) != 2 || len(wi.NotChecked) != 1 || !strings.HasPrefix(wi.NotChecked[0], "mem-guard:") {
		t.Fatalf("what-if %+v", wi)
	}
	for _, c := range wi.Checks {
		if len(c.Unmodeled) > 0 {
			t.Errorf("check %s shown with unmodeled %v", c.Variant, c.Unmodeled)
		}
	}
	gained := false
	for _, r := range d.Report.Runs {
		for _, a := range r.Advice {
			for _, tr := range a.Try {
				gained = gained || (tr.Gain != nil && tr.Gain.Speedup > 0)
			}
		}
	}
	if !gained {
		t.Error("no advice carries a predicted gain")
	}
}
