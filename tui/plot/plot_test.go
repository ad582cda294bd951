package plot

import (
	"math"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/tui/draw"
)

func TestBrailleDiagonal(t *testing.T) {
	c := New(Area{W: 4, H: 2, X0: 0, X1: 1, Y0: 0, Y1: 1})
	c.Line([]float64{0, 1}, []float64{0, 1}, 1, '*')
	got := c.Lines(nil)
	if len(got) != 2 {
		t.Fatalf("%d lines", len(got))
	}
	// the line rises from the bottom left to the top right
	if got[1][0] == ' ' || strings.TrimRight(got[0], " ") == "" || !strings.HasPrefix(got[0], " ") {
		t.Errorf("diagonal drawn as %q", got)
	}
	for _, l := range got {
		for _, r := range l {
			if r != ' ' && (r < 0x2800 || r > 0x28FF) {
				t.Errorf("non-braille %q in %q", r, l)
			}
		}
	}
}

func TestCellsAreASCII(t *testing.T) {
	c := New(Area{W: 10, H: 4, X0: 1, X1: 10, Y0: 0, Y1: 3, Cells: true})
	c.Rule(2, '=', 2)
	c.Line([]float64{1, 4, 10}, []float64{0, 3, math.NaN()}, 1, '+')
	c.Mark(10, 0, 'X', 3)
	got := strings.Join(c.Lines([]draw.Pen{{}, {Open: "<", Close: ">"}, {}, {}}), "\n")
	if !strings.Contains(got, "=") || !strings.Contains(got, "X") || !strings.Contains(got, "<+") {
		t.Errorf("plot:\n%s", got)
	}
	for _, r := range got {
		if r > 127 {
			t.Fatalf("non-ASCII %q in\n%s", r, got)
		}
	}
	// the rule leaves the curve's cells alone: row of y=2 holds a '+'
	if row := c.Row(2); c.Empty(c.Col(3), row) {
		t.Errorf("row %d empty at x=3", row)
	}
}

func TestFold(t *testing.T) {
	n := 1000
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range n {
		xs[i], ys[i] = float64(i), float64(i%2) // mean 0.5 per column
	}
	fx, fy := fold(xs, ys, 0, float64(n-1), 10)
	if len(fx) != 10 {
		t.Fatalf("folded to %d points", len(fx))
	}
	for i, y := range fy {
		if math.Abs(y-0.5) > 0.01 || (i > 0 && fx[i] <= fx[i-1]) {
			t.Errorf("column %d: x %v y %v", i, fx[i], y)
		}
	}
	// a gap without points breaks the line
	_, gy := fold([]float64{0, 1, 2, 9, 10, 11, 12, 13, 14, 15, 16, 17}, make([]float64, 12), 0, 17, 8)
	if !math.IsNaN(gy[1]) && !math.IsNaN(gy[2]) {
		t.Errorf("no break in %v", gy)
	}
}

// TestRangesKeepPeaks: a one-column spike of a folded series reaches
// the top row.
func TestRangesKeepPeaks(t *testing.T) {
	c := New(Area{W: 3, H: 2, X0: 0, X1: 5, Y0: 0, Y1: 1})
	lo := []float64{0, 0, 0, 0, 0, math.NaN()}
	hi := []float64{0, 0, 1, 0, 0, 0}
	c.Ranges(lo, hi, lo, 1)
	got := c.Lines(nil)
	if strings.TrimSpace(got[0]) == "" || got[0][0] != ' ' {
		t.Errorf("spike lost or misplaced: %q", got)
	}
	// cell 2 holds dot columns 4 (a value) and 5 (NaN): its left dot only
	if r := []rune(got[1])[2]; r != '⡀' {
		t.Errorf("the NaN column drew: %q", got)
	}
}
