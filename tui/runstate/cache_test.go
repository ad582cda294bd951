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
