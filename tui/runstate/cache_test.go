package runstate

import (
	"strconv"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func TestViewCache(t *testing.T) {
	var c ViewCache
	draws := 0
	draw := func() string { draws++; return strconv.Itoa(draws) }
	r := NewRun("r")
	if got := c.View(nil, 10, 5, 0, draw); got != "" || draws != 0 {
		t.Errorf("nil run: %q after %d draws", got, draws)
	}
	if got := c.View(r, 0, 5, 0, draw); got != "" || draws != 0 {
		t.Errorf("no width: %q after %d draws", got, draws)
	}
	steps := []struct {
		what   string
		change func() (w, h, key int, run *Run)
		want   string
	}{
		{"first", func() (int, int, int, *Run) { return 10, 5, 0, r }, "1"},
		{"unchanged", func() (int, int, int, *Run) { return 10, 5, 0, r }, "1"},
		{"an event", func() (int, int, int, *Run) {
			r.Add(&profile.Event{T: profile.TypeMetric, Name: "loss", Value: 1})
			return 10, 5, 0, r
		}, "2"},
		{"wider", func() (int, int, int, *Run) { return 11, 5, 0, r }, "3"},
		{"taller", func() (int, int, int, *Run) { return 11, 6, 0, r }, "4"},
		{"another key", func() (int, int, int, *Run) { return 11, 6, 1, r }, "5"},
		{"another run", func() (int, int, int, *Run) { return 11, 6, 1, NewRun("s") }, "6"},
	}
	for _, s := range steps {
		w, h, key, run := s.change()
		if got := c.View(run, w, h, key, draw); got != s.want {
			t.Errorf("%s: %q, want %q", s.what, got, s.want)
		}
	}
}

// TestCache: a drawing is kept under its key only: the same key gives it
// back without drawing, another key draws again, and only the last
// drawing is kept (an empty one too).
func TestCache(t *testing.T) {
	var c Cache[[2]int]
	draws := 0
	draw := func() string { draws++; return strconv.Itoa(draws) }
	empty := func() string { draws++; return "" }
	for _, s := range []struct {
		key  [2]int
		draw func() string
		want string
		n    int
	}{
		{[2]int{1, 1}, draw, "1", 1},
		{[2]int{1, 1}, draw, "1", 1},
		{[2]int{1, 2}, draw, "2", 2},
		{[2]int{1, 1}, draw, "3", 3},
		{[2]int{0, 0}, empty, "", 4},
		{[2]int{0, 0}, draw, "", 4},
	} {
		if got := c.View(s.key, s.draw); got != s.want || draws != s.n {
			t.Errorf("key %v: %q after %d draws, want %q after %d", s.key, got, draws, s.want, s.n)
		}
	}
}
