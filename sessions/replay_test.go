package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

const ms = int64(time.Millisecond)

// replayEvents is a small journal whose event times are known: spans are
// due at their end, other events at the time of the event before them,
// and a span recorded late (by another lane) at the time already reached.
func replayEvents() []profile.Event {
	return []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "r", Session: "s", Variant: "baseline",
			Config: json.RawMessage(`{"epochs":1}`), Wall: "2026-11-22T15:30:45Z"},
		{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.LaneCompute, Epoch: 1, Start: 0, Dur: 10 * ms},         // 10
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Start: 10 * ms, Dur: 20 * ms},    // 30
		{T: profile.TypeMetric, Name: "loss", Epoch: 1, Batch: -1, Value: 0.5},                                                // 30
		{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.SamplerLane(0), Epoch: 2, Start: 5 * ms, Dur: 20 * ms}, // 25 -> 30
		{T: profile.TypeGPU, Ts: 45 * ms, Used: 1, Total: 2, Util: 0.5},                                                       // 45
		{T: profile.TypeMem, Epoch: 1, Phase: profile.PhaseTrain, Peak: 100},                                                  // 45
		{T: profile.TypeSpan, Name: profile.StageEval, Lane: profile.LaneEval, Epoch: 1, Start: 50 * ms, Dur: 50 * ms},        // 100
		{T: profile.TypeRunEnd, Status: profile.StatusOK},                                                                     // 100
	}
}

var replayAt = []int64{0, 10, 30, 30, 30, 45, 45, 100, 100} // ms

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newTestReplay(t *testing.T, clock Clock, speed float64) *Replay {
	t.Helper()
	r, err := NewReplay([]Track{{Run: "r", Events: replayEvents()}}, ReplayOptions{Clock: clock, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// next returns the next event and the fake clock's time since t0.
func next(t *testing.T, r *Replay, c *FakeClock) (ReplayEvent, time.Duration) {
	t.Helper()
	ev, err := r.NextEvent(context.Background())
	if err != nil {
		t.Fatalf("event %d: %v", r.Delivered(), err)
	}
	return ev, c.Now().Sub(t0)
}

func TestEventTime(t *testing.T) {
	var prev int64
	for i, e := range replayEvents() {
		prev = EventTime(&e, prev)
		if prev != replayAt[i]*ms {
			t.Errorf("event %d (%s): time %d, want %d ms", i, e.T, prev, replayAt[i])
		}
	}
}

func TestReplayTiming(t *testing.T) {
	for _, speed := range []float64{1, 10} {
		c := NewFakeClock(t0)
		c.SetAutoAdvance(true)
		r := newTestReplay(t, c, speed)
		if r.Duration() != 100*time.Millisecond || r.Len() != len(replayAt) {
			t.Fatalf("duration %v, len %d", r.Duration(), r.Len())
		}
		for i, want := range replayAt {
			ev, at := next(t, r, c)
			wantAt := time.Duration(float64(want*ms) / speed)
			if at != wantAt || ev.At != time.Duration(want*ms) || ev.Run != "r" || ev.Event.T != replayEvents()[i].T {
				t.Errorf("x%g event %d: delivered at %v (want %v), At %v, %+v", speed, i, at, wantAt, ev.At, ev)
			}
		}
		if _, err := r.Next(context.Background()); !errors.Is(err, io.EOF) {
			t.Errorf("after the last event: %v", err)
		}
		if r.Position() != r.Duration() {
			t.Errorf("position at the end %v", r.Position())
		}
	}
}

func TestReplayPauseResume(t *testing.T) {
	c := NewFakeClock(t0)
	c.SetAutoAdvance(true)
	r := newTestReplay(t, c, 1)
	next(t, r, c)
	if _, at := next(t, r, c); at != 10*time.Millisecond {
		t.Fatalf("second event at %v", at)
	}
	r.Pause()
	if !r.Paused() || r.Position() != 10*time.Millisecond {
		t.Fatalf("paused %v at %v", r.Paused(), r.Position())
	}
	c.Advance(time.Hour)
	if r.Position() != 10*time.Millisecond {
		t.Errorf("position moved while paused: %v", r.Position())
	}
	// the next event is not due while paused: Next would wait
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) || r.Delivered() != 2 {
		t.Errorf("paused Next: %v, delivered %d", err, r.Delivered())
	}
	resumed := c.Now().Sub(t0)
	r.Resume()
	if _, at := next(t, r, c); at != resumed+20*time.Millisecond {
		t.Errorf("after resume: delivered at %v, want %v", at, resumed+20*time.Millisecond)
	}
}

func TestReplaySeek(t *testing.T) {
	c := NewFakeClock(t0)
	c.SetAutoAdvance(true)
	r := newTestReplay(t, c, 1)
	for range 3 { // up to 30 ms
		next(t, r, c)
	}
	// forward: the events up to 60 ms come at once, then timing resumes
	r.Seek(60 * time.Millisecond)
	now := c.Now().Sub(t0)
	for i := 3; i <= 6; i++ {
		ev, at := next(t, r, c)
		if at != now || ev.Restart || ev.At != time.Duration(replayAt[i]*ms) {
			t.Errorf("after seek, event %d at %v (want %v at once): %+v", i, at, now, ev)
		}
	}
	if _, at := next(t, r, c); at != now+40*time.Millisecond {
		t.Errorf("event at 100 ms delivered at %v, want %v", at, now+40*time.Millisecond)
	}
	// paused: a seek still delivers what is due, and nothing more
	next(t, r, c)
	r.Pause()
	r.Seek(30 * time.Millisecond) // backwards: restart
	now = c.Now().Sub(t0)
	for i := 0; i <= 4; i++ {
		ev, at := next(t, r, c)
		if at != now || ev.Restart != (i == 0) || ev.Event.T != replayEvents()[i].T {
			t.Errorf("after backward seek, event %d at %v: %+v", i, at, ev)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Next(ctx); !errors.Is(err, context.Canceled) || r.Position() != 30*time.Millisecond {
		t.Errorf("paused after seek: %v at %v", err, r.Position())
	}
	// seeking past the end clamps to the duration
	r.Seek(time.Hour)
	if r.Position() != r.Duration() {
		t.Errorf("position %v", r.Position())
	}
	for i := 5; i < len(replayAt); i++ {
		next(t, r, c)
	}
	if _, err := r.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("end: %v", err)
	}
}

// TestReplayControlsWakeNext changes a replay while another goroutine is
// blocked in Next, on a clock that moves only when the test moves it.
func TestReplayControlsWakeNext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a safety net, not a timing
	defer cancel()
	c := NewFakeClock(t0)
	r := newTestReplay(t, c, 1)
	type got struct {
		ev  ReplayEvent
		at  time.Duration
		err error
	}
	out := make(chan got)
	go func() {
		for {
			ev, err := r.NextEvent(ctx)
			out <- got{ev, c.Now().Sub(t0), err}
			if err != nil {
				return
			}
		}
	}()
	recv := func() got {
		select {
		case g := <-out:
			if g.err != nil {
				t.Fatal(g.err)
			}
			return g
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return got{}
	}
	if g := recv(); g.at != 0 || g.ev.Event.T != profile.TypeRunStart {
		t.Fatalf("first %+v", g)
	}
	// blocked until 10 ms; speed x10: due after 1 ms
	if err := c.WaitForDeadline(ctx, t0.Add(10*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := r.SetSpeed(10); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitForDeadline(ctx, t0.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Millisecond)
	if g := recv(); g.at != time.Millisecond || g.ev.At != 10*time.Millisecond {
		t.Errorf("at x10: %+v", g)
	}
	// blocked until 30 ms of replay (3 ms of clock); pause for an hour
	if err := c.WaitForDeadline(ctx, t0.Add(3*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	r.Pause()
	c.Advance(time.Hour)
	r.Resume()
	want := time.Hour + 3*time.Millisecond // 1 ms + 1 h, then 20 ms at x10
	if err := c.WaitForDeadline(ctx, t0.Add(want)); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Millisecond)
	if g := recv(); g.at != want || g.ev.At != 30*time.Millisecond {
		t.Errorf("after pause: %+v, want at %v", g, want)
	}
	// a seek wakes Next: the events up to 45 ms come without the clock moving
	for range 2 {
		recv() // the rest of 30 ms
	}
	if err := c.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.Seek(45 * time.Millisecond)
	for range 2 {
		if g := recv(); g.at != want || g.ev.At != 45*time.Millisecond {
			t.Errorf("after seek: %+v", g)
		}
	}
	cancel()
	if g := <-out; !errors.Is(g.err, context.Canceled) {
		t.Errorf("canceled: %+v", g)
	}
}

func TestReplayBadInput(t *testing.T) {
	for _, s := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := NewReplay(nil, ReplayOptions{Speed: s}); !errors.Is(err, ErrBadSpeed) {
			t.Errorf("speed %g: %v", s, err)
		}
	}
	r, err := NewReplay(nil, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetSpeed(0); !errors.Is(err, ErrBadSpeed) {
		t.Errorf("SetSpeed(0): %v", err)
	}
	if _, err := r.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("empty replay: %v", err)
	}
	if _, err := NewReplay([]Track{{Offset: -1}}, ReplayOptions{}); err == nil {
		t.Error("negative offset accepted")
	}
	if _, err := OpenReplay(filepath.Join(t.TempDir(), "none.jsonl"), ReplayOptions{}); err == nil {
		t.Error("missing journal accepted")
	}
}

// TestLiveAndReplaySameEvents reads one journal through both Sources.
func TestLiveAndReplaySameEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	evs := replayEvents()
	writeJournal(t, path, evs[:4])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	live := NewLive(NewTailer(path, TailOptions{Interval: time.Millisecond}))
	defer live.Close()
	var fromLive []profile.Event
	read := func(n int) {
		for range n {
			e, err := live.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fromLive = append(fromLive, e)
		}
	}
	read(4)
	writeJournal(t, path, evs[4:]) // the writer goes on
	read(len(evs) - 4)
	if _, err := live.Next(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("live after run_end: %v", err)
	}

	c := NewFakeClock(t0)
	c.SetAutoAdvance(true)
	r, err := OpenReplay(path, ReplayOptions{Clock: c, Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	var fromReplay []profile.Event
	var src Source = r
	for {
		e, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fromReplay = append(fromReplay, e)
	}
	if !reflect.DeepEqual(fromLive, fromReplay) || len(fromLive) != len(evs) {
		t.Errorf("live %d events, replay %d:\n%+v\n%+v", len(fromLive), len(fromReplay), fromLive, fromReplay)
	}
	if c.Now().Sub(t0) != 10*time.Millisecond {
		t.Errorf("x10 replay of 100 ms took %v", c.Now().Sub(t0))
	}
}

// twoRunSession returns a new session and the events of its two runs, a
// and b: replayEvents, b starting 20 ms after a. It writes no journal.
func twoRunSession(t *testing.T) (s *Session, a, b []profile.Event) {
	t.Helper()
	s, err := newStore(t).Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	a, b = replayEvents(), replayEvents()
	b[0].Run, b[0].Wall = "b", "2026-11-22T15:30:45.02Z"
	return s, a, b
}

func TestSessionReplayMergesRuns(t *testing.T) {
	s, a, b := twoRunSession(t)
	writeJournal(t, s.JournalPath("a"), a)
	writeJournal(t, s.JournalPath("b"), b)
	c := NewFakeClock(t0)
	c.SetAutoAdvance(true)
	r, err := s.Replay(nil, ReplayOptions{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 2*len(a) || r.Duration() != 120*time.Millisecond {
		t.Fatalf("len %d duration %v", r.Len(), r.Duration())
	}
	var last time.Duration
	n := map[string]int{}
	for {
		ev, err := r.NextEvent(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.At < last || c.Now().Sub(t0) != ev.At {
			t.Errorf("%s event at %v delivered at %v after %v", ev.Run, ev.At, c.Now().Sub(t0), last)
		}
		last = ev.At
		off := time.Duration(0)
		if ev.Run == "b" {
			off = 20 * time.Millisecond
		}
		if ev.At != off+time.Duration(replayAt[n[ev.Run]]*ms) {
			t.Errorf("%s event %d at %v", ev.Run, n[ev.Run], ev.At)
		}
		n[ev.Run]++
	}
	if n["a"] != len(a) || n["b"] != len(b) {
		t.Errorf("events per run %v", n)
	}
	// one run only; an unknown one is an error naming it
	if r, err := s.Replay([]string{"b"}, ReplayOptions{}); err != nil || r.Len() != len(b) || r.Duration() != 100*time.Millisecond {
		t.Errorf("run b: %v", err)
	}
	if _, err := s.Replay([]string{"c"}, ReplayOptions{}); err == nil {
		t.Error("unknown run accepted")
	}
}

// drainDue returns the events of a paused replay that are due at its
// position, stopping at the first one that is not.
func drainDue(t *testing.T, r *Replay) []ReplayEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out []ReplayEvent
	for {
		ev, err := r.NextEvent(ctx)
		if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

// TestJournalReplayMatchesMemory replays two journals of a session from
// their files and from memory (ReadJournal) through the same seeks,
// backward ones and a Close included: both deliver the same events at the
// same times.
func TestJournalReplayMatchesMemory(t *testing.T) {
	st := newStore(t)
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	writeSyntheticJournal(t, s.JournalPath("a"), 3000)
	writeSyntheticJournal(t, s.JournalPath("b"), 2000)
	fromFile, err := s.Replay([]string{"a", "b"}, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fromFile.Close()
	var tracks []Track
	for _, run := range []string{"a", "b"} {
		evs, _, err := ReadJournal(s.JournalPath(run))
		if err != nil {
			t.Fatal(err)
		}
		tracks = append(tracks, Track{Run: run, Events: evs})
	}
	fromMem, err := NewReplay(tracks, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Len() != 5000 || fromMem.Len() != 5000 || fromFile.Duration() != fromMem.Duration() {
		t.Fatalf("len %d and %d, duration %v and %v", fromFile.Len(), fromMem.Len(), fromFile.Duration(), fromMem.Duration())
	}
	d := fromFile.Duration()
	total := 0
	for i, at := range []time.Duration{d / 2, d / 3, d / 4, -1, d / 4 * 3, 0, d} {
		if at < 0 { // drop the open journals in the middle of the replay
			if err := fromFile.Close(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fromFile.Seek(at)
		fromMem.Seek(at)
		got, want := drainDue(t, fromFile), drainDue(t, fromMem)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seek %d to %v: %d events from the journals, %d from memory", i, at, len(got), len(want))
		}
		if fromFile.Delivered() != fromMem.Delivered() {
			t.Fatalf("seek %d: delivered %d and %d", i, fromFile.Delivered(), fromMem.Delivered())
		}
		total += len(got)
	}
	if fromFile.Delivered() != 5000 || total <= 5000 {
		t.Errorf("delivered %d at the end, %d in all", fromFile.Delivered(), total)
	}
}

// TestJournalReplaySnapshot replays a journal as it was when the replay
// opened it: lines appended later and a torn last line are not part of it,
// and a journal replaced by a shorter one is an error, not a short replay.
func TestJournalReplaySnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	evs := replayEvents()
	writeJournal(t, path, evs[:5])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"t":"span","name":"sam`); err != nil { // torn
		t.Fatal(err)
	}
	f.Close()
	r, err := OpenReplay(path, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 5 || r.Duration() != 30*time.Millisecond {
		t.Fatalf("len %d, duration %v", r.Len(), r.Duration())
	}
	r.Seek(r.Duration())
	if got := drainDue(t, r); len(got) != 5 || got[0].Run != "r" {
		t.Fatalf("%d events", len(got))
	}
	// the writer goes on: a replay from the start still ends where it did
	writeJournal(t, path, evs[5:])
	r.Seek(0)
	r.Seek(time.Hour)
	if got := drainDue(t, r); len(got) != 5 || !got[0].Restart || got[4].Event.T != evs[4].T {
		t.Fatalf("after the journal grew: %d events", len(got))
	}

	// replaced by a shorter journal while the replay reads it
	writeJournal(t, path, evs)
	r, err = OpenReplay(path, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Seek(r.Duration())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Next(ctx)
	for err == nil {
		_, err = r.Next(ctx)
	}
	if !strings.Contains(err.Error(), "replaced") {
		t.Errorf("replaced journal: %v", err)
	}
}
