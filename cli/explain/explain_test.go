package explain

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

const ms = int64(1e6)

func sp(name, lane string, epoch, batch int, start, end int64) profile.Event {
	return profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: epoch, Batch: batch, Start: start * ms, Dur: (end - start) * ms}
}

func trainAt(lane string, epoch, batch int, start, end int64) []profile.Event {
	mid := (start + end) / 2
	return []profile.Event{
		sp(profile.StageForward, lane, epoch, batch, start, mid),
		sp(profile.StageBackward, lane, epoch, batch, mid, end-1),
		sp(profile.StageStep, lane, epoch, batch, end-1, end),
		sp(profile.StageTrain, lane, epoch, batch, start, end),
	}
}

func start(run, variant, cfg string) profile.Event {
	return profile.Event{T: profile.TypeRunStart, V: 1, Run: run, Variant: variant, Config: json.RawMessage(cfg),
		Host: &profile.Host{Cores: 8}, Wall: "2026-11-22T15:30:45Z"}
}

func valAcc(epoch int, v float64) profile.Event {
	return profile.Event{T: profile.TypeMetric, Name: "val_acc", Epoch: epoch, Batch: -1, Value: v}
}

// baselineEvents samples, transfers and trains 4 batches an epoch in turn on
// the trainer's lane, then evaluates: sampling-bound.
func baselineEvents() []profile.Event {
	c := profile.LaneCompute
	evs := []profile.Event{start("baseline", "baseline", `{"sampler":"neighbor","sampler_workers":0,"eval_every":1}`), sp(profile.StageSetup, c, 0, 0, 0, 10)}
	at := int64(10)
	for ep, acc := range []float64{0.60, 0.75, 0.80} {
		for b := 0; b < 4; b++ {
			evs = append(evs, sp(profile.StageSample, c, ep+1, b, at, at+12), sp(profile.StageTransfer, c, ep+1, b, at+12, at+14))
			evs = append(evs, trainAt(c, ep+1, b, at+14, at+20)...)
			at += 20
		}
		evs = append(evs, sp(profile.StageEval, c, ep+1, 0, at, at+10), valAcc(ep+1, acc))
		at += 10
	}
	return append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
}

// optimizedEvents samples on two workers ahead of training and overlaps
// evaluation with the next epoch.
func optimizedEvents() []profile.Event {
	c, e := profile.LaneCompute, profile.LaneEval
	evs := []profile.Event{start("optimized", "optimized", `{"sampler":"neighbor","sampler_workers":2,"overlap_eval":true,"eval_every":1}`), sp(profile.StageSetup, c, 0, 0, 0, 10)}
	at := int64(10)
	for ep := range 3 {
		for b := 0; b < 4; b++ {
			w := profile.SamplerLane(b % 2)
			evs = append(evs, sp(profile.StageSample, w, ep+1, b, at, at+12), sp(profile.StageTransfer, w, ep+1, b, at+12, at+14))
			evs = append(evs, sp(profile.StageWait, c, ep+1, b, at, at+7))
			evs = append(evs, trainAt(c, ep+1, b, at+7, at+13)...)
			at += 13
		}
		if ep > 0 {
			evs = append(evs, valAcc(ep, []float64{0.62, 0.79}[ep-1]))
		}
		evs = append(evs, sp(profile.StageEval, e, ep+1, 0, at, at+10))
	}
	evs = append(evs, valAcc(3, 0.81))
	return append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
}

// craftedStore writes a session with the two runs and a variant that
// never started.
func craftedStore(t *testing.T) (*sessions.Store, *sessions.Session) {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{ID: "20261122-153045-ab12", Created: time.Date(2026, 11, 22, 15, 30, 45, 0, time.UTC),
		Host: &profile.Host{Cores: 8}, Variants: []sessions.Variant{{Name: "baseline"}, {Name: "optimized"}, {Name: "gas"}}})
	if err != nil {
		t.Fatal(err)
	}
	for run, evs := range map[string][]profile.Event{"baseline": baselineEvents(), "optimized": optimizedEvents()} {
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
	return st, s
}

func explainWith(t *testing.T, st *sessions.Store, opts ExplainOptions) string {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	opts.IO = ios
	opts.OpenStore = func(string) (*sessions.Store, error) { return st, nil }
	if opts.Format == "" {
		opts.Format = FormatText
	}
	if err := explainRun(&opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestExplainGolden(t *testing.T) {
	st, _ := craftedStore(t)
	checkGolden(t, "session", explainWith(t, st, ExplainOptions{Ref: "last", Epochs: true}))
	checkGolden(t, "session_md", explainWith(t, st, ExplainOptions{Ref: "2026", Format: FormatMarkdown}))
}

func TestExplainJSON(t *testing.T) {
	st, _ := craftedStore(t)
	out := explainWith(t, st, ExplainOptions{Ref: "last", Format: FormatJSON, TTATarget: 0.7})
	var d struct {
		Session string
		Report  struct {
			Runs []struct {
				Run     string
				Verdict struct{ Kind, First, Text string }
				Ledger  struct {
					Whole struct {
						WallS  float64 `json:"wall_s"`
						Stages map[string]struct {
							ExposedS float64 `json:"exposed_s"`
						}
					}
				}
				Advice []struct {
					Rule  string
					Fired bool
				}
			}
			TTA struct {
				Target float64
				Runs   []struct {
					Run     string
					Reached bool
					Speedup float64
				}
			} `json:"time_to_accuracy"`
		}
		Skipped []string
		WhatIf  any `json:"what_if"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := d.Report
	if len(r.Runs) != 2 || r.Runs[0].Verdict.First != "sample" || r.Runs[0].Verdict.Kind != "bound" {
		t.Fatalf("runs %+v", r.Runs)
	}
	var sum float64
	for _, s := range r.Runs[0].Ledger.Whole.Stages {
		sum += s.ExposedS
	}
	if w := r.Runs[0].Ledger.Whole.WallS; w <= 0 || sum < 0.99*w || sum > 1.01*w {
		t.Errorf("exposed %.6f of wall %.6f", sum, w)
	}
	if r.TTA.Target != 0.7 || !r.TTA.Runs[1].Reached || r.TTA.Runs[1].Speedup <= 1 {
		t.Errorf("tta %+v", r.TTA)
	}
	if len(d.Skipped) != 1 || !strings.HasPrefix(d.Skipped[0], "gas:") {
		t.Errorf("skipped %v", d.Skipped)
	}
}

// One run: its report alone, timed to accuracy against the session's
// baseline.
func TestExplainOneRun(t *testing.T) {
	st, _ := craftedStore(t)
	out := explainWith(t, st, ExplainOptions{Ref: "last/opt"})
	if strings.Contains(out, "run baseline (") || !strings.Contains(out, "run optimized (") {
		t.Errorf("runs:\n%s", out)
	}
	if !strings.Contains(out, "99 % of the baseline's best (baseline: 0.8000)") {
		t.Errorf("target:\n%s", out)
	}
}

// --baseline takes a run name's unique prefix.
func TestExplainBaselinePrefix(t *testing.T) {
	st, _ := craftedStore(t)
	out := explainWith(t, st, ExplainOptions{Ref: "last", Baseline: "opt"})
	if !strings.Contains(out, "99 % of the baseline's best (optimized: 0.8100)") {
		t.Errorf("target:\n%s", out)
	}
}

// A session exported to an archive and imported into another store is
// explained from its files alone, as in the store it came from.
func TestExplainImportedArchive(t *testing.T) {
	st, s := craftedStore(t)
	var buf bytes.Buffer
	if _, err := s.Export(&buf, sessions.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	other, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Import(&buf, sessions.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := explainWith(t, st, ExplainOptions{Ref: "last", Epochs: true})
	if got := explainWith(t, other, ExplainOptions{Ref: "last", Epochs: true}); got != want {
		t.Errorf("imported session explained differently:\n%s\n--- original\n%s", got, want)
	}
}

func TestExplainRejects(t *testing.T) {
	st, _ := craftedStore(t)
	ios, _, _, _ := iostreams.Test()
	for _, o := range []ExplainOptions{
		{Ref: "last", Format: "csv"},
		{Ref: "last", Format: FormatText, TTATarget: 2},
		{Ref: "nosuch", Format: FormatText},
		{Ref: "last/gas", Format: FormatText},
		{Ref: "last", Format: FormatText, Baseline: "nosuch"},
	} {
		o.IO, o.OpenStore = ios, func(string) (*sessions.Store, error) { return st, nil }
		if err := explainRun(&o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
