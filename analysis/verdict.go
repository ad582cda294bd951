package analysis

import (
	"fmt"
	"slices"
)

// MixedPoints is how close (in points of the wall time) the two largest
// exposed shares must be for a run to be "mixed" rather than bound by the
// larger.
const MixedPoints = 10

// Verdict says what bound a run: the category with the largest exposed
// share, or "mixed" when the second is within MixedPoints of it, with the
// figures that decided it.
type Verdict struct {
	Kind   string   `json:"kind"` // "bound", "mixed" or "none" (no wall time)
	First  Category `json:"first"`
	Second Category `json:"second"`
	// FirstShare and SecondShare are the two largest exposed shares of
	// the wall time, 0..1.
	FirstShare  float64 `json:"first_share"`
	SecondShare float64 `json:"second_share"`
	Text        string  `json:"text"`
}

// Verdict kinds.
const (
	VerdictBound = "bound"
	VerdictMixed = "mixed"
	VerdictNone  = "none"
)

// Label returns how a verdict names a category; an external run's
// sampling is its data loading (the main process's wait for the next
// batch).
func Label(c Category, external bool) string {
	switch c {
	case Sample:
		if external {
			return "data loading"
		}
		return "sampling"
	case Transfer:
		return "transfer"
	case Train:
		return "training compute"
	case Eval:
		return "evaluation"
	case Other:
		return "other work"
	case Idle:
		return "idle time"
	}
	return c.String()
}

// VerdictOf returns the verdict of a window.
func VerdictOf(w *Window, external bool) Verdict {
	if w.WallS <= 0 {
		return Verdict{Kind: VerdictNone, Text: "no wall time recorded"}
	}
	cats := Categories()
	slices.SortStableFunc(cats, func(a, b Category) int {
		switch {
		case w.Exposed[a] > w.Exposed[b]:
			return -1
		case w.Exposed[a] < w.Exposed[b]:
			return 1
		}
		return 0
	})
	v := Verdict{First: cats[0], Second: cats[1], FirstShare: w.Share(cats[0]), SecondShare: w.Share(cats[1])}
	p1, p2 := 100*v.FirstShare, 100*v.SecondShare
	if p1-p2 < MixedPoints {
		v.Kind = VerdictMixed
		v.Text = fmt.Sprintf("mixed: %s %.0f %% and %s %.0f %% of wall time exposed (within %d points)",
			Label(v.First, external), p1, Label(v.Second, external), p2, MixedPoints)
		return v
	}
	v.Kind = VerdictBound
	v.Text = fmt.Sprintf("bound by %s (%.0f %% of wall time exposed; next: %s %.0f %%)",
		Label(v.First, external), p1, Label(v.Second, external), p2)
	return v
}
