package compare

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// The comparison of a session with a baseline and an optimized run draws
// its speedup waterfall under the table once the screen is tall enough:
// the parts the session did not run alone are predicted and say so.
func TestGoldenCompareWaterfall(t *testing.T) {
	st := fixture.Standard(t)
	for _, size := range []struct {
		name string
		w, h int
	}{{"compare_waterfall_80x24", 80, 24}, {"compare_waterfall_160x48", 160, 48}} {
		hs := newHarness(t, st, size.w, size.h, "20260102-030400-aaaa")
		if ws := hs.m.Comparison().Waterfalls; len(ws) != 1 || ws[0].Waterfall.Check() != nil {
			t.Fatalf("waterfalls %+v", ws)
		}
		v := hs.m.View()
		fixture.Golden(t, size.name, v)
		plain := ansi.Strip(v)
		for _, want := range []string{"waterfall: optimized over baseline", "interaction", "total", "predicted"} {
			if !strings.Contains(plain, want) {
				t.Errorf("%s: no %q in:\n%s", size.name, want, plain)
			}
		}
		for i, l := range strings.Split(plain, "\n") {
			if n := ansi.StringWidth(l); n > size.w {
				t.Errorf("%s: line %d is %d cells wide: %q", size.name, i, n, l)
			}
		}
	}
	// a short screen keeps its rows for the table
	hs := newHarness(t, st, 80, 18, "20260102-030400-aaaa")
	if strings.Contains(ansi.Strip(hs.m.View()), "waterfall:") {
		t.Error("the waterfall took the rows of an 18-line screen")
	}
}
