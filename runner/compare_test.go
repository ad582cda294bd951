package runner

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// newSession opens a store in a temporary folder and creates a session
// named name in it.
func newSession(t *testing.T, name string) (*sessions.Store, *sessions.Session) {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return st, s
}

// writeRun writes a finished journal: epochs of one sample and one train
// span each, epochS seconds apart, and run_end with res as summary.
func writeRun(t *testing.T, s *sessions.Session, run string, epochS []float64, status profile.Status, res any) {
	t.Helper()
	variant := run // a repeat NAME.rK runs variant NAME, as the worker writes it
	if i := strings.LastIndex(run, ".r"); i > 0 {
		variant = run[:i]
	}
	recordJournal(t, s, run, func(rec *profile.Recorder) error {
		rec.RunStart(run, s.ID(), variant, json.RawMessage(`{"epochs":2}`), &profile.Host{Cores: 2})
		var at int64
		for i, sec := range epochS {
			d := int64(sec * 1e9)
			rec.Span(profile.StageSample, profile.LaneCompute, i+1, 0, at, d/4)
			rec.Span(profile.StageTrain, profile.LaneCompute, i+1, 0, at+d/4, d-d/4)
			at += d
		}
		return rec.Close(status, nil, res)
	})
}

// recordJournal writes run's journal in s through a recorder: record
// writes its events and ends it (rec.Close).
func recordJournal(t *testing.T, s *sessions.Session, run string, record func(rec *profile.Recorder) error) {
	t.Helper()
	jw, err := s.OpenJournal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := record(profile.NewRecorder(jw, profile.RecorderOptions{})); err != nil {
		t.Fatal(err)
	}
	if err := jw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCompare(t *testing.T) {
	_, s := newSession(t, "cmp")
	writeRun(t, s, "optimized", []float64{1, 1}, profile.StatusOK, &train.Result{TestAcc: 0.75, ValAcc: 0.8, BestEpoch: 2})
	writeRun(t, s, "baseline", []float64{2, 3, 1}, profile.StatusOK, &train.Result{TestAcc: 0.5, ValAcc: 0.6, BestEpoch: 1})
	writeRun(t, s, "broken", []float64{4}, profile.StatusFailed, nil)
	ls := launchState{Mode: ModeSequential, Runs: []string{"optimized", "baseline", "broken", "later"}, Launcher: thisProc(os.Getpid())}
	b, _ := json.Marshal(ls)
	if err := os.WriteFile(filepath.Join(s.Dir(), launchFile), b, 0o644); err != nil {
		t.Fatal(err)
	}

	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Session != s.ID() || tab.Baseline != "baseline" || len(tab.Runs) != 4 {
		t.Fatalf("table %+v", tab)
	}
	opt, base, broken, later := tab.Runs[0], tab.Runs[1], tab.Runs[2], tab.Runs[3]
	if opt.Run != "optimized" || base.Run != "baseline" || later.Run != "later" {
		t.Fatalf("order: %s %s %s %s", opt.Run, base.Run, broken.Run, later.Run)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	if base.Epochs != 3 || !near(base.EpochMeanS, 2) || !near(base.EpochMinS, 1) || !near(base.EpochMedianS, 2) || !near(base.EpochMaxS, 3) || !near(base.EpochStdS, 1) {
		t.Errorf("baseline epochs %+v", base)
	}
	if !near(base.SampleS, 1.5) || !near(base.TrainS, 4.5) || base.Spans != 6 || base.EpochSource != "spans" {
		t.Errorf("baseline stages %+v", base)
	}
	if !near(opt.Speedup, 2) || !near(base.Speedup, 1) || broken.Speedup != 0 || !broken.Partial {
		t.Errorf("speedups %g %g %g (a failed run has none), partial %v", opt.Speedup, base.Speedup, broken.Speedup, broken.Partial)
	}
	if opt.TestAcc == nil || *opt.TestAcc != 0.75 || opt.BestEpoch != 2 || broken.TestAcc != nil {
		t.Errorf("accuracy %+v %+v", opt, broken)
	}
	if broken.Status != profile.StatusFailed || later.Status != profile.StatusPending || later.Epochs != 0 {
		t.Errorf("statuses %s %s", broken.Status, later.Status)
	}

	var out bytes.Buffer
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"VARIANT", "SPEEDUP", "TEST ACC", "2.00x (single run)", "0.7500", "2.000    1.000  1.000  2.000   3.000", "pending",
		"failed, partial", "broken: partial figures"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendering lacks %q:\n%s", want, text)
		}
	}
	lines := strings.Split(text, "\n")
	var hdr, row string
	for i, l := range lines {
		if strings.HasPrefix(l, "VARIANT") {
			hdr, row = l, lines[i+1]
		}
	}
	if strings.Index(hdr, "STATUS") != strings.Index(row, "ok") {
		t.Errorf("columns not aligned:\n%s\n%s", hdr, row)
	}
	if _, err := json.Marshal(tab); err != nil {
		t.Errorf("json: %v", err)
	}

	// at 80 columns: the variant, status, median epoch, train, eval and
	// speedup stay, sample and transfer go first, and a note says so
	narrow := tab
	narrow.Width = 80
	out.Reset()
	if err := narrow.Render(&out); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "VARIANT") && (!strings.Contains(l, "MEDIAN") || !strings.Contains(l, "TRAIN s") ||
			!strings.Contains(l, "TEST ACC") || !strings.Contains(l, "SPEEDUP") || strings.Contains(l, "SAMPLE s")) {
			t.Errorf("narrow header: %q", l)
		}
		if len(l) > 80 {
			t.Errorf("line over 80 columns: %q", l)
		}
	}
	if !strings.Contains(out.String(), "columns shown to fit 80 columns (--wide shows all)") {
		t.Errorf("no note of the dropped columns:\n%s", out.String())
	}

	// no spans: epoch times from the result's history
	writeRun(t, s, "nospans", nil, profile.StatusOK, &train.Result{BestEpoch: -1, TestAcc: 0.9,
		History: []train.EpochStat{{Epoch: 1, TrainS: 1, EvalS: 1}, {Epoch: 2, TrainS: 3, EvalS: 1}}})
	tab, err = Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	ns := tab.Runs[len(tab.Runs)-1]
	if ns.Run != "nospans" || ns.EpochSource != "summary" || !near(ns.EpochMeanS, 3) || ns.TestAcc != nil {
		t.Errorf("no spans: %+v", ns)
	}
	out.Reset()
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "STALE") || strings.Contains(out.String(), "UNCUT") {
		t.Errorf("history or uncut columns without a GAS run or a cut:\n%s", out.String())
	}

	// a run with an inference cut: its uncut reference in a column
	uncutAcc := 0.8125
	writeRun(t, s, "cut", []float64{1}, profile.StatusOK, &train.Result{BestEpoch: 1, TestAcc: 0.75, TestAccUncut: &uncutAcc, EvalCutEdges: 9})
	tab, err = Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Runs {
		if r.Run == "cut" && (r.TestAccUncut == nil || *r.TestAccUncut != uncutAcc) || r.Run != "cut" && r.TestAccUncut != nil {
			t.Errorf("run %s: uncut test accuracy %v", r.Run, r.TestAccUncut)
		}
	}
	out.Reset()
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"UNCUT ACC", "0.8125"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendering lacks %q:\n%s", want, out.String())
		}
	}

	// a GAS run: history figures from its summary, rendered in columns
	relErr := 0.125
	writeRun(t, s, "gas", []float64{1}, profile.StatusOK, &train.Result{BestEpoch: 1, TestAcc: 0.8, HistoryRelErr: &relErr, HistoryBytes: 3 << 20})
	tab, err = Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	var g sessions.RunFigures
	for _, r := range tab.Runs {
		if r.Run == "gas" {
			g = r
		}
	}
	if g.HistoryRelErr == nil || *g.HistoryRelErr != relErr || g.HistoryBytes == nil || *g.HistoryBytes != 3<<20 || g.StaleMean != nil {
		t.Errorf("gas run %+v", g)
	}
	out.Reset()
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STALE MEAN", "HIST ERR", "0.1250", "3.0 MiB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rendering lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCompareRuns: runs a launch has not started yet are compared in the
// state RunStates gives them, not reported missing.
func TestCompareRuns(t *testing.T) {
	_, s := newSession(t, "cmp")
	writeRun(t, s, "baseline", []float64{2, 2}, profile.StatusOK, &train.Result{TestAcc: 0.5})
	ls := launchState{Mode: ModeSequential, Runs: []string{"baseline", "optimized"}, Launcher: thisProc(os.Getpid())}
	b, _ := json.Marshal(ls)
	if err := os.WriteFile(filepath.Join(s.Dir(), launchFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	refs := []sessions.RunRef{{Session: s, Run: "baseline"}, {Session: s, Run: "optimized"}}
	c, err := CompareRuns(refs, sessions.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 2 || c.Runs[0].Status != profile.StatusOK || c.Runs[1].Status != profile.StatusPending || c.Baseline == "" {
		t.Errorf("comparison: baseline %q, runs %+v", c.Baseline, c.Runs)
	}
	if refs[0].State != nil || refs[1].State != nil {
		t.Error("CompareRuns changed its refs")
	}
}

// A distributed run (two rank journals) gets a STRAGGLER column; a run of
// one process beside it shows none.
func TestCompareStraggler(t *testing.T) {
	_, s := newSession(t, "ddp")
	writeRun(t, s, "baseline", []float64{1, 1}, profile.StatusOK, nil)
	rank0 := `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00Z","rank":0,"world":2,"config":{"cmd":["python3","train.py"],"external":true}}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":1000000000}
{"t":"run_end","status":"ok"}
`
	rank1 := `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00.5Z","rank":1,"world":2}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":1500000000}
`
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(rank0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(rank1), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Runs) != 2 {
		t.Fatalf("runs %+v", tab.Runs)
	}
	var buf bytes.Buffer
	if err := tab.Render(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	var header, ddp, base []string
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && f[0] == "VARIANT":
			header = f
		case len(f) > 0 && f[0] == "ddp":
			ddp = f
		case len(f) > 0 && f[0] == "baseline":
			base = f
		}
	}
	// EPOCH s is two fields in the header ("EPOCH s")
	col := -1
	for i, h := range header {
		if h == "STRAGGLER" {
			col = i - 1
		}
	}
	if col < 0 || len(ddp) <= col || len(base) <= col {
		t.Fatalf("no STRAGGLER column:\n%s", buf.String())
	}
	if ddp[col] != "1.20" || base[col] != "-" || ddp[3] != "1.500" {
		t.Errorf("straggler %q and %q, epoch %q; want 1.20 (1.5 s over the median 1.25 s), - and 1.500:\n%s", ddp[col], base[col], ddp[3], buf.String())
	}
}

// TestCompareRepeats renders the table of a launch with repeats: one row
// per run, then per variant its median epoch time, its speedup with the
// interval and the per-repeat ratios; a busy host is flagged.
func TestCompareRepeats(t *testing.T) {
	_, s := newSession(t, "rep")
	runs, of, err := repeatRuns([]Resolved{{Variant: Variant{Name: "baseline"}}, {Variant: Variant{Name: "optimized"}}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 3; k++ {
		writeRun(t, s, RepeatName("baseline", k), []float64{2, 2}, profile.StatusOK, nil)
		writeRun(t, s, RepeatName("optimized", k), []float64{1, 1}, profile.StatusOK, nil)
	}
	ls := launchState{Mode: ModeSequential, Runs: runs, Variants: of, Launcher: thisProc(os.Getpid())}
	b, _ := json.Marshal(ls)
	if err := os.WriteFile(filepath.Join(s.Dir(), launchFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := Compare(s)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"optimized.r2", "MEDIAN EPOCH s", "2.00x [2.00, 2.00]", "2.00 2.00 2.00", "median epoch time of variant baseline over"} {
		if !strings.Contains(text, want) {
			t.Errorf("rendering lacks %q:\n%s", want, text)
		}
	}
	tab.Runs[1].HostBusy = "load 3.00 above 2 CPUs at the start"
	out.Reset()
	if err := tab.Render(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), sessions.HostBusyLabel) || !strings.Contains(out.String(), "busy in 1 of 3 runs") {
		t.Errorf("busy host not flagged:\n%s", out.String())
	}
}
