package stalechart

import (
	"math"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/plot"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// markers tell the layers' mean lines apart without color (marker
// cells); maxMark marks the largest age.
var markers = []rune{'*', '+', 'o', 'x', '#', '@'}

const maxMark = '^'

// hasPoints reports whether a layer has stale events to plot.
func hasPoints(r *runstate.Run) bool {
	for i := range r.Layers {
		if len(r.Layers[i].Means) > 0 {
			return true
		}
	}
	return false
}

// Top returns the top of the plot's scale: the largest max age of any
// layer, rounded up to a whole step, at least 1. It only grows while a
// run goes on, so the scale stays put.
func Top(r *runstate.Run) float64 {
	top := 1.0
	for i := range r.Layers {
		if l := &r.Layers[i]; finite(l.Max) {
			top = max(top, math.Ceil(l.Max))
		}
	}
	return top
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// marker is layer n's legend mark.
func (m *Model) marker(n int) string {
	if m.cells {
		return string(markers[n%len(markers)])
	}
	return "●"
}

// series draws in w×h, over the stale events of each layer (one a batch),
// its mean age as a line in the layer's color and its largest age as '^'
// marks (the largest in each column), on a scale from 0 to Top.
func (m *Model) series(r *runstate.Run, w, h int) []string {
	muted := m.pens[len(m.pens)-1]
	var ls []int
	n := 0
	for _, i := range layers(r) {
		if k := len(r.Layers[i].Means); k > 0 {
			ls = append(ls, i)
			n = max(n, k)
		}
	}
	head := m.styles.Header.Render("Staleness over batches") + muted.Paint("  mean:")
	for j, i := range ls {
		head += " " + m.pens[1+j%8].Paint(m.marker(j)+" "+strconv.Itoa(i))
	}
	head += muted.Paint("  " + string(maxMark) + " max")
	out := []string{draw.Cut(head, w, m.styles.Glyphs.Ellipsis)}
	ph := h - 2
	top := Top(r)
	labels := [2]string{strconv.FormatFloat(top, 'f', 0, 64), "0"}
	lw := len(labels[0])
	pw := w - lw - 1
	if ph < 1 || pw < 2 || len(ls) == 0 {
		return out
	}
	cv := plot.New(plot.Area{W: pw, H: ph, X0: 0, X1: float64(max(n-1, 1)), Y0: 0, Y1: top, Cells: m.cells})
	for j, i := range ls {
		l := &r.Layers[i]
		xs := make([]float64, len(l.Means))
		for k := range xs {
			xs[k] = float64(k)
		}
		cv.Line(xs, l.Means, 1+j%8, markers[j%len(markers)])
	}
	for j, i := range ls {
		colMax := make([]float64, pw)
		for k := range colMax {
			colMax[k] = math.NaN()
		}
		for k, v := range r.Layers[i].Maxes {
			if c := cv.Col(float64(k)); finite(v) && !(v <= colMax[c]) {
				colMax[c] = v
			}
		}
		for c, v := range colMax {
			if !math.IsNaN(v) {
				cv.Set(c, cv.Row(v), maxMark, 1+j%8)
			}
		}
	}
	vline := m.styles.Glyphs.VLine
	for y, l := range cv.Lines(m.pens) {
		label := ""
		switch y {
		case 0:
			label = labels[0]
		case ph - 1:
			label = labels[1]
		}
		out = append(out, muted.Paint(draw.PadLeft(label, lw)+vline)+l)
	}
	return append(out, muted.Paint(strings.Repeat(" ", lw+1)+axis(&r.Layers[ls[0]], n, pw)))
}

// axis labels the x axis in w cells: the first and last epoch of a
// layer's stale events and how many batches the longest layer has.
func axis(l *runstate.Layer, n, w int) string {
	left, mid, right := "ep "+strconv.Itoa(int(l.Epochs[0])), strconv.Itoa(n)+" batches", ""
	if last := l.Epochs[len(l.Epochs)-1]; last != l.Epochs[0] {
		right = "ep " + strconv.Itoa(int(last))
	}
	return draw.AxisLabels(left, mid, right, w)
}
