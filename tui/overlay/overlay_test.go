package overlay

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

func runs(opts ...synth.Options) []*runstate.Run {
	var out []*runstate.Run
	for _, o := range opts {
		r := runstate.NewRun(o.Run)
		synth.Generate(o, func(e *profile.Event) { r.Add(e) })
		out = append(out, r)
	}
	return out
}

func TestLegendAndMarks(t *testing.T) {
	rs := runs(synth.Options{Run: "base", Epochs: 3, Batches: 100, Seed: 1, GuardEvery: 50},
		synth.Options{Run: "opt", Epochs: 3, Batches: 100, Seed: 2, OOMEvery: 70})
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(100, 30)
	v := ansi.Strip(m.View(rs))
	for _, want := range []string{"Loss  * base", "+ opt", "Accuracy val  * base", "Memory peak  * base", "✖ 4 OOM", "◇ 6 guard", "┄"} {
		if !strings.Contains(v, want) {
			t.Errorf("lacks %q:\n%s", want, v)
		}
	}
	// no color: markers tell the runs apart, no braille
	if strings.ContainsAny(v, "⠁⠂⠄⡀⢀⣀") {
		t.Errorf("braille without color:\n%s", v)
	}
	// with color, braille curves
	c := New(common.New(nil, common.Options{}))
	c.SetSize(100, 30)
	if cv := ansi.Strip(c.View(rs)); !strings.Contains(cv, "● base") || strings.Count(cv, "*") > 2 {
		t.Errorf("color overlay:\n%s", cv)
	}
}

func TestASCII(t *testing.T) {
	rs := runs(synth.Options{Run: "base", Epochs: 2, Batches: 50, Seed: 1, OOMEvery: 30},
		synth.Options{Run: "opt", Epochs: 2, Batches: 50, Seed: 2})
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}))
	m.SetSize(60, 20)
	v := m.View(rs)
	for _, r := range v {
		if r > 127 {
			t.Fatalf("non-ASCII %q:\n%s", r, v)
		}
	}
	if !strings.Contains(v, "X") || !strings.Contains(v, "=") {
		t.Errorf("OOM or budget missing:\n%s", v)
	}
}

func TestCacheAndTransform(t *testing.T) {
	rs := runs(synth.Options{Run: "base", Epochs: 4, Batches: 20, Seed: 1})
	m := New(common.New(nil, common.Options{NoColor: true}))
	m.SetSize(80, 24)
	a := m.View(rs)
	// a span changes no chart: the drawing is kept
	rs[0].Add(&profile.Event{T: profile.TypeSpan, Name: "train", Lane: "compute", Start: 1, Dur: 1})
	if m.View(rs) != a {
		t.Error("a span redrew the overlay")
	}
	m.SetTransform(plot.Transform{EMA: 0.9, Log: true})
	b := ansi.Strip(m.View(rs))
	if !strings.Contains(b, "Loss (EMA 0.9, log)") || !strings.Contains(b, "Accuracy val (EMA 0.9)") {
		t.Errorf("titles:\n%s", b)
	}
	rs[0].Add(&profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: 5, Batch: -1, Value: 0.125})
	if c := ansi.Strip(m.View(rs)); c == b || !strings.Contains(c, "* base 0.125") {
		t.Errorf("a new loss value was not drawn:\n%s", c)
	}
}
