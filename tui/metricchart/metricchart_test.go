package metricchart

import (
	"math"

	"github.com/charmbracelet/x/ansi"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

func metric(name string, epoch, batch int, v float64) profile.Event {
	return profile.Event{T: profile.TypeMetric, Name: name, Epoch: epoch, Batch: batch, Value: v}
}

// handRun is 6 of 10 epochs of a run whose loss halves and whose
// accuracies climb.
func handRun() *runstate.Run {
	r := runstate.NewRun("baseline")
	start := profile.Event{T: profile.TypeRunStart, Config: []byte(`{"epochs":10}`)}
	r.Add(&start)
	loss := 2.0
	for ep := 1; ep <= 6; ep++ {
		for _, e := range []profile.Event{
			metric("batch_loss", ep, 0, loss*1.1), metric("batch_loss", ep, 1, loss*0.9),
			metric("loss", ep, -1, loss),
			metric("train_acc", ep, -1, 0.5+0.08*float64(ep)),
			metric("val_acc", ep, -1, 0.45+0.07*float64(ep)),
		} {
			r.Add(&e)
		}
		loss /= 1.5
	}
	return r
}

func accuracy(opts common.Options) *Model {
	return New(common.New(nil, opts), "Accuracy", "train_acc", "val_acc", "test_acc").Unit()
}

func TestGoldenLossBraille(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}), "Loss", "loss").Fallback("batch_loss")
	m.SetSize(44, 9)
	golden.Check(t, "loss_braille", m.View(handRun()))
}

func TestGoldenAccuracyNoColor(t *testing.T) {
	m := accuracy(common.Options{NoColor: true})
	m.SetSize(44, 9)
	out := m.View(handRun())
	if !strings.Contains(out, "* train 0.98") || !strings.Contains(out, "+ val 0.87") {
		t.Errorf("legend with markers and last values missing:\n%s", out)
	}
	golden.Check(t, "accuracy_nocolor", out)
}

func TestGoldenAccuracyASCII(t *testing.T) {
	m := accuracy(common.Options{NoColor: true, ASCII: true})
	m.SetSize(44, 9)
	out := m.View(handRun())
	golden.ASCII(t, out)
	golden.Check(t, "accuracy_ascii", out)
}

// TestFallback draws the per-batch loss until two epochs have a loss.
func TestFallback(t *testing.T) {
	r := runstate.NewRun("x")
	for b := range 500 {
		e := metric("batch_loss", 1, b, 1/float64(b+1))
		r.Add(&e)
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}), "Loss", "loss").Fallback("batch_loss")
	m.SetSize(40, 6)
	out := m.View(r)
	if !strings.Contains(out, "batch_loss") || !strings.Contains(out, "batch 1") || !strings.Contains(out, "500") {
		t.Errorf("fallback not drawn per batch:\n%s", out)
	}
	for _, e := range []profile.Event{metric("loss", 1, -1, 0.5), metric("loss", 2, -1, 0.4)} {
		r.Add(&e)
	}
	if out := m.View(r); !strings.Contains(out, "* loss 0.400") || !strings.Contains(out, "epoch 1") {
		t.Errorf("epoch-level loss not drawn once it has two points:\n%s", out)
	}
}

// TestRanges: accuracies keep [0, 1]; a NaN loss breaks the line
// without breaking the range.
func TestRanges(t *testing.T) {
	m := accuracy(common.Options{NoColor: true, ASCII: true})
	m.SetSize(40, 6)
	out := m.View(handRun())
	if !strings.Contains(out, "1.00|") || !strings.Contains(out, "0.00|") {
		t.Errorf("accuracy range is not [0, 1]:\n%s", out)
	}
	r := runstate.NewRun("nan")
	for ep, v := range []float64{1, math.NaN(), 0.5} {
		e := metric("loss", ep+1, -1, v)
		r.Add(&e)
	}
	l := New(common.New(nil, common.Options{NoColor: true, ASCII: true}), "Loss", "loss")
	l.SetSize(40, 6)
	if out := l.View(r); !strings.Contains(out, "1.05|") || !strings.Contains(out, "loss 0.500") {
		t.Errorf("NaN handling:\n%s", out)
	}
}

func TestTinySizes(t *testing.T) {
	r := handRun()
	for _, opts := range []common.Options{{}, {NoColor: true, ASCII: true}} {
		m := accuracy(opts)
		for w := 0; w < 30; w++ {
			for h := 0; h < 8; h++ {
				m.SetSize(w, h)
				if !golden.Fits(t, "accuracy chart", m.View(r), w, h) {
					t.FailNow()
				}
			}
		}
	}
}

func TestSmoothingAndLog(t *testing.T) {
	m := New(common.New(nil, common.Options{NoColor: true}), "Loss", "loss").Fallback("batch_loss")
	m.SetSize(44, 9)
	r := handRun()
	raw := m.View(r)
	m.SetTransform(plot.Transform{EMA: 0.9})
	smooth := ansi.Strip(m.View(r))
	if !strings.Contains(smooth, "Loss (EMA 0.9)") || smooth == raw {
		t.Errorf("smoothing not shown or not drawn:\n%s", smooth)
	}
	// the legend keeps the last raw value
	if !strings.Contains(smooth, "loss 0.263") {
		t.Errorf("legend:\n%s", smooth)
	}
	m.SetTransform(plot.Transform{Log: true})
	lg := ansi.Strip(m.View(r))
	lines := strings.Split(lg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	// log scale: the axis spans the values' decades, 2.0 down to 0.26,
	// not from 0
	if !strings.Contains(lines[0], "(log)") || strings.HasPrefix(lines[7], "0.00") {
		t.Errorf("log scale:\n%s", lg)
	}
	if !strings.HasPrefix(lines[1], "2.") || !strings.HasPrefix(lines[7], "0.2") {
		t.Errorf("log labels:\n%s", lg)
	}
}
