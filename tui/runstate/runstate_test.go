package runstate

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

const ms = int64(time.Millisecond)

func add(r *Run, evs ...profile.Event) {
	for i := range evs {
		r.Add(&evs[i])
	}
}

func TestDigest(t *testing.T) {
	r := NewRun("optimized")
	add(r,
		profile.Event{T: profile.TypeRunStart, Run: "optimized", Variant: "opt", Session: "s1", Config: []byte(`{"epochs":7,"lr":0.01}`), Host: &profile.Host{Cores: 4}},
		profile.Event{T: profile.TypeSpan, Name: "sample", Lane: "sampler/0", Epoch: 1, Batch: 0, Start: 0, Dur: 3 * ms},
		profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: 1, Batch: 0, Start: 3 * ms, Dur: 5 * ms},
		profile.Event{T: profile.TypeSpan, Name: "sample", Lane: "sampler/0", Epoch: 1, Batch: 1, Start: 3 * ms, Dur: 4 * ms},
		profile.Event{T: profile.TypeMem, Epoch: 1, Batch: 0, Phase: "train", Peak: 100, Budget: 1000, Predicted: 110},
		profile.Event{T: profile.TypeOOM, Epoch: 1, Batch: 1, Requested: 900, Budget: 1000, Action: "skip"},
		profile.Event{T: profile.TypeMem, Epoch: 1, Batch: 2, Phase: "eval", Peak: 300, Budget: 1000},
		profile.Event{T: profile.TypeStale, Epoch: 1, Batch: 0, Layer: 1, Mean: 1, Max: 2, Hist: []int64{1, 2}},
		profile.Event{T: profile.TypeStale, Epoch: 1, Batch: 1, Layer: 1, Mean: math.NaN(), Max: 5, Hist: []int64{1, 0, 4}},
		profile.Event{T: profile.TypeHistErr, Epoch: 1, Layer: 1, RelErr: 0.25},
		profile.Event{T: profile.TypeStale, Layer: 9999}, // out of range: ignored
		profile.Event{T: profile.TypeMetric, Name: "batch_loss", Epoch: 1, Batch: 0, Value: 2},
		profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: 1, Batch: -1, Value: 1.5},
		profile.Event{T: profile.TypeGPU, Ts: 20 * ms, Used: 5, Total: 10},
		profile.Event{T: profile.TypeRunEnd, Status: "", Summary: []byte(`{"test_acc":0.8}`)},
	)
	if !r.Started || r.Variant != "opt" || r.Session != "s1" || r.Epochs != 7 || r.Host.Cores != 4 {
		t.Errorf("run_start: %+v", r)
	}
	if !r.Ended || r.Status != profile.StatusOK || string(r.EndSummary) != `{"test_acc":0.8}` {
		t.Errorf("run_end: ended %v status %q", r.Ended, r.Status)
	}
	sp := &r.Spans
	if sp.Len() != 3 || r.Stages.Len() != 2 || r.Lanes.Len() != 2 {
		t.Fatalf("%d spans, %d stages, %d lanes", sp.Len(), r.Stages.Len(), r.Lanes.Len())
	}
	if r.Stages.Name(sp.Stage[1]) != "train" || r.Lanes.Name(sp.Lane[1]) != "compute" || sp.Start[1] != 3*ms || sp.Dur[1] != 5*ms || sp.Batch[2] != 1 {
		t.Errorf("span 1: stage %s lane %s start %d dur %d", r.Stages.Name(sp.Stage[1]), r.Lanes.Name(sp.Lane[1]), sp.Start[1], sp.Dur[1])
	}
	if sp.MaxEnd() != 8*ms {
		t.Errorf("max end %d", sp.MaxEnd())
	}
	m := &r.Mem
	if m.Len() != 2 || m.MaxPeak != 300 || m.MaxBudget != 1000 || !m.Eval[1] || m.Eval[0] || m.Predicted[0] != 110 {
		t.Errorf("mem: %+v", m)
	}
	// mem and oom events take the time of the event before them: the
	// last span ended at 8 ms
	if m.T[0] != 8*ms {
		t.Errorf("mem time %d", m.T[0])
	}
	if len(r.OOMs) != 1 || r.OOMs[0].MemIndex != 1 || r.OOMs[0].Action != "skip" {
		t.Errorf("ooms: %+v", r.OOMs)
	}
	if !r.HasStale() || len(r.Layers) != 2 {
		t.Fatalf("layers: %+v", r.Layers)
	}
	l := r.Layers[1]
	if l.Events != 2 || l.Hist[0] != 2 || l.Hist[1] != 2 || l.Hist[2] != 4 || l.Mean() != 1 || l.Max != 5 || l.RelErr != 0.25 {
		t.Errorf("layer 1: %+v", l)
	}
	if !math.IsNaN(r.Layers[0].RelErr) || r.Layers[0].Events != 0 {
		t.Errorf("layer 0 should be empty: %+v", r.Layers[0])
	}
	if s := r.Metric("loss"); s == nil || s.Last() != 1.5 || s.Batch[0] != -1 {
		t.Errorf("loss series: %+v", s)
	}
	if len(r.Metrics) != 2 || r.Metrics[0].Name != "batch_loss" {
		t.Errorf("metrics in order of appearance: %v", r.Metrics)
	}
	if r.GPU.Used != 5 || r.Now != 20*ms || r.Events != 15 {
		t.Errorf("gpu %+v now %d events %d", r.GPU, r.Now, r.Events)
	}
	sum := r.Summary()
	if sum.Counts[profile.TypeSpan] != 3 || sum.PeakBytes != 300 || sum.Cores != 4 {
		t.Errorf("summary: %+v", sum)
	}
	if r.EpochsDone(&sum) != 1 {
		t.Errorf("epochs done %d", r.EpochsDone(&sum))
	}
}

// TestSummaryMatchesProfile: the run's summary is profile.Summarize of
// the same events.
func TestSummaryMatchesProfile(t *testing.T) {
	var evs []profile.Event
	for b := range 50 {
		st := int64(b) * 10 * ms
		evs = append(evs,
			profile.Event{T: profile.TypeSpan, Name: "sample", Lane: "sampler/0", Epoch: 1 + b/10, Batch: b, Start: st, Dur: 4 * ms},
			profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: 1 + b/10, Batch: b, Start: st + 4*ms, Dur: 6 * ms})
	}
	r := NewRun("x")
	add(r, evs...)
	got, want := r.Summary(), profile.Summarize(evs)
	if got.WallS != want.WallS || got.Overlap != want.Overlap || got.Efficiency != want.Efficiency || got.EpochStats != want.EpochStats {
		t.Errorf("summary differs:\n%+v\n%+v", got, want)
	}
}

// TestFrom: the window index never skips a span that ends after t, even
// when spans arrive out of order across lanes.
func TestFrom(t *testing.T) {
	r := NewRun("x")
	n := 5000
	// a long eval span early in the journal ends last of all
	add(r, profile.Event{T: profile.TypeSpan, Name: "eval", Lane: "eval", Start: 0, Dur: int64(n) * ms * 2})
	for i := 1; i < n; i++ {
		start := int64(i) * ms
		if i%7 == 0 {
			start -= 3 * ms // recorded late
		}
		add(r, profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: start, Dur: ms})
	}
	sp := &r.Spans
	for _, tq := range []int64{-1, 0, 10 * ms, 1234 * ms, 4000 * ms, 4998 * ms, 6000 * ms, 20000 * ms} {
		from := sp.From(tq)
		for i := 0; i < from; i++ {
			if sp.Start[i]+sp.Dur[i] > tq {
				t.Fatalf("From(%d) = %d skips span %d ending at %d", tq, from, i, sp.Start[i]+sp.Dur[i])
			}
		}
	}
	if sp.From(0) != 0 {
		t.Error("From(0) must include the long span")
	}
	// without the long span, a late window skips nearly everything
	r2 := NewRun("y")
	for i := range n {
		add(r2, profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: int64(i) * ms, Dur: ms})
	}
	if f := r2.Spans.From(4500 * ms); f < 4000 || f > 4500 {
		t.Errorf("From(4.5 s) = %d, want the block just before span 4500", f)
	}
}

func TestNames(t *testing.T) {
	var n Names
	if n.ID("a") != 0 || n.ID("b") != 1 || n.ID("a") != 0 {
		t.Fatal("ids")
	}
	for i := range 2 * MaxNames {
		n.ID(string(rune('A'+i%26)) + string(rune('0'+i)))
	}
	if n.Len() != MaxNames {
		t.Errorf("%d names interned, cap %d", n.Len(), MaxNames)
	}
	if id := n.ID("yet another"); n.Name(id) != Other {
		t.Errorf("overflow name maps to %q", n.Name(id))
	}
	if _, ok := n.Lookup("never"); ok {
		t.Error("Lookup of an unknown name")
	}
}

// chanSource is a Source fed by a test.
type chanSource struct {
	ch     chan profile.Event
	err    error
	mu     sync.Mutex
	closed bool
}

func (s *chanSource) Next(ctx context.Context) (profile.Event, error) {
	select {
	case e, ok := <-s.ch:
		if !ok {
			return profile.Event{}, s.err
		}
		return e, nil
	case <-ctx.Done():
		return profile.Event{}, ctx.Err()
	}
}

func (s *chanSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSetLive(t *testing.T) {
	a := &chanSource{ch: make(chan profile.Event, 8), err: io.EOF}
	b := &chanSource{ch: make(chan profile.Event, 8), err: sessions.ErrWriterGone}
	s := NewSet([]string{"a", "b"})
	if err := s.StartLive([]sessions.Source{a, b}); err != nil {
		t.Fatal(err)
	}
	if !s.Active() {
		t.Fatal("feeders not active")
	}
	v0 := s.Version()
	a.ch <- profile.Event{T: profile.TypeRunStart, Run: "a"}
	b.ch <- profile.Event{T: profile.TypeRunStart, Run: "b"}
	waitFor(t, func() bool { return s.Version() == v0+2 })
	close(a.ch) // a ends (run_end's EOF)
	close(b.ch) // b's writer died
	waitFor(t, func() bool { return !s.Active() })
	s.Lock()
	ra, rb := s.Runs()[0], s.Runs()[1]
	if !ra.Started || ra.Err != nil || !errors.Is(rb.Err, sessions.ErrWriterGone) {
		t.Errorf("a: %v %v; b: %v", ra.Started, ra.Err, rb.Err)
	}
	s.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !a.closed || !b.closed {
		t.Error("sources not closed")
	}
	if err := s.StartLive(nil); err == nil {
		t.Error("started a closed set")
	}
}

// TestSetCloseStopsWaitingFeeders: Close returns while sources wait.
func TestSetCloseStopsWaitingFeeders(t *testing.T) {
	src := &chanSource{ch: make(chan profile.Event)}
	s := NewSet([]string{"x"})
	if err := s.StartLive([]sessions.Source{src}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
}

// TestSetReplayRestart: a backward seek empties the runs and replays
// up to the new position; at the end the feeder waits for a poke.
func TestSetReplayRestart(t *testing.T) {
	clock := sessions.NewFakeClock(time.Unix(0, 0))
	var evs []profile.Event
	evs = append(evs, profile.Event{T: profile.TypeRunStart, Run: "r"})
	for i := range int64(10) {
		evs = append(evs, profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: i * 100 * ms, Dur: 100 * ms})
	}
	rp, err := sessions.NewReplay([]sessions.Track{{Run: "r", Events: evs}}, sessions.ReplayOptions{Clock: clock, Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet([]string{"r"})
	defer s.Close()
	if err := s.StartReplay(rp); err != nil {
		t.Fatal(err)
	}
	events := func() int64 {
		s.Lock()
		defer s.Unlock()
		return s.Runs()[0].Events
	}
	rp.Seek(rp.Duration())
	waitFor(t, func() bool { return events() == 11 })
	waitFor(t, func() bool { return !s.Active() })
	s.Lock()
	run := s.Runs()[0]
	v := run.Version()
	s.Unlock()
	rp.Seek(250 * time.Millisecond)
	s.Poke()
	waitFor(t, func() bool { return events() == 3 }) // run_start, spans ending at 100 and 200 ms
	s.Lock()
	if run != s.Runs()[0] || run.Version() <= v || run.Spans.Len() != 2 || !run.Started {
		t.Errorf("after restart: same run %v, version %d (was %d), %d spans", run == s.Runs()[0], run.Version(), v, run.Spans.Len())
	}
	s.Unlock()
}

// TestSetReplayError: a replay whose journal is replaced under it stops,
// and every run says why.
func TestSetReplayError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	var buf []byte
	for i := range int64(10) {
		e := profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: i * 100 * ms, Dur: 100 * ms}
		buf = profile.AppendLine(buf, &e)
	}
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	rp, err := sessions.OpenReplay(path, sessions.ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf[:len(buf)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewSet([]string{"r"})
	defer s.Close()
	if err := s.StartReplay(rp); err != nil {
		t.Fatal(err)
	}
	rp.Seek(rp.Duration())
	waitFor(t, func() bool {
		s.Lock()
		defer s.Unlock()
		return s.Runs()[0].Err != nil
	})
	waitFor(t, func() bool { return !s.Active() })
	s.Lock()
	defer s.Unlock()
	if r := s.Runs()[0]; r.Events != 5 || !strings.Contains(r.Err.Error(), "replaced") {
		t.Errorf("%d events, error %v", r.Events, r.Err)
	}
}

// The budget is known from run_start's config, before any mem event: as
// bytes or as a size string; anything else is no budget.
func TestConfigBudget(t *testing.T) {
	for cfg, want := range map[string]int64{
		`{"mem_budget":3145728}`:  3 << 20,
		`{"mem_budget":"3MiB"}`:   3 << 20,
		`{"mem_budget":0}`:        0,
		`{"mem_budget":-5}`:       0,
		`{"mem_budget":"lots"}`:   0,
		`{"mem_budget":[1]}`:      0,
		`{"epochs":3}`:            0,
		`not json`:                0,
		`{"mem_budget":1e300}`:    0,
		`{"mem_budget":"0.5KiB"}`: 512,
	} {
		r := NewRun("r")
		r.Add(&profile.Event{T: profile.TypeRunStart, Config: []byte(cfg)})
		if r.Budget != want {
			t.Errorf("%s: budget %d, want %d", cfg, r.Budget, want)
		}
	}
}

func TestGPUSeriesBounded(t *testing.T) {
	r := NewRun("r")
	n := 3*MaxGPUSamples + 5
	for i := range n {
		r.Add(&profile.Event{T: profile.TypeGPU, Ts: int64(i + 1), Used: int64(i), Total: 100, Util: float64(i%10) / 10})
	}
	g := &r.GPUs
	if g.Len() > MaxGPUSamples || g.Len() < MaxGPUSamples/2 {
		t.Fatalf("kept %d samples, bound %d", g.Len(), MaxGPUSamples)
	}
	if g.T[0] != 1 || g.T[g.Len()-1] != int64(n) {
		t.Errorf("span %d..%d, want 1..%d", g.T[0], g.T[g.Len()-1], n)
	}
	for i := 1; i < g.Len(); i++ {
		if g.T[i] <= g.T[i-1] || g.Used[i] != g.T[i]-1 {
			t.Fatalf("sample %d: t %d after %d, used %d", i, g.T[i], g.T[i-1], g.Used[i])
		}
	}
	if g.Step < 2 || r.GPU.Ts != int64(n) {
		t.Errorf("step %d, last %d", g.Step, r.GPU.Ts)
	}
}
