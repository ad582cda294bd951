package overlay

import (
	"math"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/memchart"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// lossNames picks the loss every run draws: the epoch-level loss, or
// the per-batch loss while some run has fewer than two epoch values
// but batch values (so that the runs share one x axis).
func lossNames(runs []*runstate.Run) string {
	for _, r := range runs {
		if s := r.Metric("batch_loss"); s != nil && s.Len() > 0 {
			if l := r.Metric("loss"); l == nil || l.Len() < 2 {
				return "batch_loss"
			}
		}
	}
	return "loss"
}

// accNames picks the accuracy the runs draw: validation, else training,
// else test accuracy, the first any run has.
func accNames(runs []*runstate.Run) string {
	for _, n := range []string{"val_acc", "train_acc", "test_acc"} {
		for _, r := range runs {
			if r.Metric(n) != nil {
				return n
			}
		}
	}
	return "val_acc"
}

// titles qualify a chart's title with the metric drawn.
var titles = map[string]string{"batch_loss": " per batch", "val_acc": " val", "train_acc": " train", "test_acc": " test"}

// curve is one run's points as drawn.
type curve struct{ xs, ys []float64 }

// metricChart draws the metric pick chooses for every run in w×h.
func (m *Model) metricChart(runs []*runstate.Run, title string, pick func([]*runstate.Run) string, tr plot.Transform, w, h int) []string {
	name := pick(runs)
	byEpoch := name != "batch_loss"
	head := m.legend(title+titles[name], tr, runs, w, func(r *runstate.Run) string {
		if s := r.Metric(name); s != nil && s.Len() > 0 {
			return draw.Num(s.Last())
		}
		return "-"
	})
	curves := make([]curve, len(runs))
	xmax, lo, hi := 2.0, math.Inf(1), math.Inf(-1)
	for i, r := range runs {
		s := r.Metric(name)
		if byEpoch {
			xmax = max(xmax, float64(r.Epochs))
		}
		if s == nil {
			continue
		}
		vs := tr.Apply(s.Value)
		for j, v := range vs {
			x := float64(j + 1)
			if byEpoch {
				if s.Batch[j] >= 0 {
					continue
				}
				x = float64(s.Epoch[j])
			}
			curves[i].xs, curves[i].ys = append(curves[i].xs, x), append(curves[i].ys, v)
			xmax = max(xmax, x)
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return []string{head, m.pens[penMuted].Paint("no " + name + " yet")}
	}
	lo, hi = yRange(lo, hi, tr.Log, name != "batch_loss" && name != "loss")
	top, bottom := draw.Num(hi), draw.Num(lo)
	if tr.Log {
		top, bottom = draw.Num(math.Pow(10, hi)), draw.Num(math.Pow(10, lo))
	}
	lw := max(len(top), len(bottom))
	pw, ph := w-lw-1, h-2
	if pw < 2 || ph < 1 {
		return []string{head}
	}
	c := plot.New(plot.Area{W: pw, H: ph, X0: 1, X1: xmax, Y0: lo, Y1: hi, Cells: m.cells})
	for i, cv := range curves {
		c.Line(cv.xs, cv.ys, pen(i), markers[i%len(markers)])
	}
	first := "epoch 1"
	if !byEpoch {
		first = "batch 1"
	}
	return append([]string{head}, m.frame(c.Lines(m.pens), top, bottom, lw, first, itoa(int(xmax)), pw)...)
}

// yRange pads a chart's value range: from 0 for positive values on a
// linear scale ([0, 1] for fractions when unit), 5 % either side
// otherwise.
func yRange(lo, hi float64, log, unit bool) (float64, float64) {
	switch {
	case hi == lo:
		return lo - 0.5, hi + 0.5
	case !log && unit && lo >= 0 && hi <= 1:
		return 0, 1
	case !log && lo >= 0:
		return 0, hi * 1.05
	}
	pad := (hi - lo) * 0.05
	return lo - pad, hi + pad
}

// memChart draws every run's training peaks per batch in w×h, with the
// budgets as rules, the OOMs at what they asked for and the guard's
// actions at their predicted peaks.
func (m *Model) memChart(runs []*runstate.Run, w, h int) []string {
	g := m.styles.Glyphs
	head := m.legend("Memory peak", plot.Transform{}, runs, w, func(r *runstate.Run) string {
		if r.Mem.Len() == 0 {
			return "-"
		}
		return units.BytesFine(r.Mem.MaxPeak)
	})
	var top, budget int64
	ooms, guards := 0, 0
	for _, r := range runs {
		top, budget = max(top, memchart.Top(r)), max(budget, memchart.Budget(r))
		ooms, guards = ooms+len(r.OOMs), guards+len(r.Guards)
	}
	if budget > 0 {
		head += "  " + m.pens[penBudget].Paint(g.Budget) + " budget " + units.BytesFine(budget)
	}
	if ooms > 0 {
		head += "  " + m.pens[penOOM].Paint(g.OOM+" "+itoa(ooms)+" OOM")
	}
	if guards > 0 {
		head += "  " + m.pens[penGuard].Paint(g.Guard+" "+itoa(guards)+" guard")
	}
	head = draw.Cut(head, w, g.Ellipsis)
	topL, botL := units.BytesFine(top), units.BytesFine(0)
	lw := max(draw.Width(topL), draw.Width(botL))
	pw, ph := w-lw-1, h-2
	if pw < 2 || ph < 1 {
		return []string{head}
	}
	n := 2
	for _, r := range runs {
		n = max(n, trainPoints(r))
	}
	c := plot.New(plot.Area{W: pw, H: ph, X0: 1, X1: float64(n), Y0: 0, Y1: float64(top), Cells: m.cells})
	// x is the training batch's number, the same for every run
	xs := make([]float64, n)
	for j := range xs {
		xs[j] = float64(j + 1)
	}
	ys := make([]float64, 0, n)
	for i, r := range runs {
		ys = ys[:0]
		for j, eval := range r.Mem.Eval {
			if !eval {
				ys = append(ys, float64(r.Mem.Peak[j]))
			}
		}
		c.Line(xs[:len(ys)], ys, pen(i), markers[i%len(markers)])
	}
	for _, r := range runs {
		if b := memchart.Budget(r); b > 0 {
			c.Rule(float64(b), []rune(g.Budget)[0], penBudget)
		}
	}
	for _, r := range runs {
		m.marks(c, r)
	}
	return append([]string{head}, m.frame(c.Lines(m.pens), topL, botL, lw, "batch 1", itoa(n), pw)...)
}

// marks puts a run's OOMs and guard actions on the memory chart, at the
// training batch they followed.
func (m *Model) marks(c *plot.Canvas, r *runstate.Run) {
	if len(r.OOMs) == 0 && len(r.Guards) == 0 {
		return
	}
	before := make([]int, r.Mem.Len()+1) // training points among the first i
	for j := range r.Mem.Len() {
		before[j+1] = before[j]
		if !r.Mem.Eval[j] {
			before[j+1]++
		}
	}
	x := func(memIndex int) float64 { return float64(max(before[min(max(memIndex, 0), len(before)-1)], 1)) }
	g := m.styles.Glyphs
	for _, gd := range r.Guards {
		if gd.Predicted > 0 {
			c.Mark(x(gd.MemIndex), float64(gd.Predicted), []rune(g.Guard)[0], penGuard)
		}
	}
	for i := range r.OOMs {
		o := &r.OOMs[i]
		c.Mark(x(o.MemIndex), float64(memchart.Demand(o)), []rune(g.OOM)[0], penOOM)
	}
}

// trainPoints counts a run's training memory points.
func trainPoints(r *runstate.Run) int {
	n := 0
	for _, e := range r.Mem.Eval {
		if !e {
			n++
		}
	}
	return n
}
