package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// TestReplayCapsLongWaits: a span dated a year late does not make a
// replay wait a year: the wait stops at MaxWait (DefaultMaxWait unless
// set), the position jumps to the event, and the event says how much of
// the timeline was skipped.
func TestReplayCapsLongWaits(t *testing.T) {
	const year = 8760 * time.Hour
	evs := []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "r"},
		{T: profile.TypeSpan, Name: profile.StageTrain, Start: 0, Dur: 10 * ms},
		{T: profile.TypeSpan, Name: profile.StageTrain, Start: int64(year), Dur: ms},
		{T: profile.TypeRunEnd, Status: profile.StatusOK},
	}
	late := year + time.Millisecond
	for _, tc := range []struct {
		name    string
		speed   float64
		maxWait time.Duration
		waited  time.Duration // real time from the second event to the third
	}{
		{"default", 1, 0, DefaultMaxWait},
		{"faster", 10, 0, DefaultMaxWait},
		{"set", 1, 50 * time.Millisecond, 50 * time.Millisecond},
		{"no cap", 1, -1, late - 10*time.Millisecond},
	} {
		c := NewFakeClock(t0)
		c.SetAutoAdvance(true)
		r, err := NewReplay([]Track{{Run: "r", Events: evs}}, ReplayOptions{Clock: c, Speed: tc.speed, MaxWait: tc.maxWait})
		if err != nil {
			t.Fatal(err)
		}
		var got []ReplayEvent
		var clock []time.Duration
		for range evs {
			ev, err := r.NextEvent(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, ev)
			clock = append(clock, c.Now().Sub(t0))
		}
		// the span is due 10 ms after the start at 1x, 1 ms at 10x
		first := time.Duration(float64(10*time.Millisecond) / tc.speed)
		if clock[1] != first || clock[2]-clock[1] != tc.waited || clock[3] != clock[2] {
			t.Errorf("%s: delivered at %v, want the third %v after the second", tc.name, clock, tc.waited)
		}
		skipped := late - 10*time.Millisecond - time.Duration(float64(tc.waited)*tc.speed)
		if got[2].At != late || got[2].Skipped != skipped || got[1].Skipped != 0 || got[3].Skipped != 0 {
			t.Errorf("%s: third event at %v skipped %v (others %v, %v), want %v", tc.name, got[2].At, got[2].Skipped, got[1].Skipped, got[3].Skipped, skipped)
		}
		if r.Skipped() != skipped || r.Position() != r.Duration() {
			t.Errorf("%s: skipped %v, position %v of %v", tc.name, r.Skipped(), r.Position(), r.Duration())
		}
	}
}

// TestReplayGapAndControls: a control during a capped wait (here a
// pause) takes precedence: nothing is skipped until the wait runs out
// while the replay plays.
func TestReplayGapAndControls(t *testing.T) {
	evs := []profile.Event{
		{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: "r"},
		{T: profile.TypeSpan, Name: profile.StageTrain, Start: 0, Dur: int64(time.Hour)},
	}
	c := NewFakeClock(t0)
	r, err := NewReplay([]Track{{Run: "r", Events: evs}}, ReplayOptions{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.NextEvent(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan ReplayEvent)
	go func() {
		ev, _ := r.NextEvent(ctx)
		done <- ev
	}()
	if err := c.WaitForDeadline(ctx, t0.Add(DefaultMaxWait)); err != nil {
		t.Fatal(err)
	}
	r.Pause()
	c.Advance(time.Minute) // paused: no timer, no skip
	if r.Skipped() != 0 || r.Position() != 0 {
		t.Errorf("paused: skipped %v at %v", r.Skipped(), r.Position())
	}
	r.Resume()
	if err := c.WaitForDeadline(ctx, c.Now().Add(DefaultMaxWait)); err != nil {
		t.Fatal(err)
	}
	c.Advance(DefaultMaxWait)
	ev := <-done
	if want := time.Hour - DefaultMaxWait; ev.At != time.Hour || ev.Skipped != want {
		t.Errorf("event at %v skipped %v, want %v", ev.At, ev.Skipped, want)
	}
}
