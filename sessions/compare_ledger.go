package sessions

import (
	"fmt"
	"math"
	"strconv"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
)

// RunLedger is a run's stage ledger and verdict in a comparison (see
// analysis.Ledger): the wall time the verdict judges (the run without its
// setup), and the share of it each category was exposed.
type RunLedger struct {
	WallS float64 `json:"wall_s"`
	// Exposed is each category's exposed share of WallS, 0..1, by
	// category name (sample, transfer, train, eval, other, idle); they
	// add up to 1.
	Exposed map[string]float64 `json:"exposed_share"`
	// Verdict is the verdict's text with the figures that decided it;
	// VerdictKind bound, mixed or none; Bound the category with the
	// largest exposed share (bound and mixed).
	Verdict     string  `json:"verdict"`
	VerdictKind string  `json:"verdict_kind"`
	Bound       string  `json:"bound,omitempty"`
	Second      string  `json:"second,omitempty"`
	BoundShare  float64 `json:"bound_share,omitempty"`
	SecondShare float64 `json:"second_share,omitempty"`
}

// ledgerOf returns the ledger figures of an analysed run (nil without
// wall time).
func ledgerOf(r *analysis.Run) *RunLedger {
	w := &r.Training
	if w.WallS <= 0 || !finite(w.WallS) {
		return nil
	}
	l := &RunLedger{WallS: w.WallS, Exposed: map[string]float64{}, Verdict: r.Verdict.Text, VerdictKind: r.Verdict.Kind}
	for _, c := range analysis.Categories() {
		l.Exposed[c.String()] = finiteOr0(w.Share(c))
	}
	if r.Verdict.Kind != analysis.VerdictNone {
		l.Bound, l.Second = r.Verdict.First.String(), r.Verdict.Second.String()
		l.BoundShare, l.SecondShare = finiteOr0(r.Verdict.FirstShare), finiteOr0(r.Verdict.SecondShare)
	}
	return l
}

func finiteOr0(v float64) float64 {
	if finite(v) {
		return v
	}
	return 0
}

// summarizeAnalysed reads a run's journal once (its ranks merged, as
// SummarizeRun does) into its summary and its analysis.
func (s *Session) summarizeAnalysed(run string) (JournalSummary, *analysis.Run, error) {
	acc := newJournalAcc()
	b := analysis.NewRunBuilder()
	st, err := s.ScanRun(run, func(e *profile.Event) error {
		b.Add(e)
		acc.one[0] = *e
		acc.add()
		return nil
	})
	return acc.result(st), b.Run(), err
}

// HasLedger reports whether any compared run has a stage ledger.
func (c *Comparison) HasLedger() bool {
	for i := range c.Runs {
		if c.Runs[i].Ledger != nil {
			return true
		}
	}
	return false
}

// timeToAccuracy sets each run's time to accuracy against the baseline
// (index base, -1: none) and target (0: 99 % of the baseline's best).
func (c *Comparison) timeToAccuracy(base int, target float64) {
	runs := make([]*analysis.Run, len(c.Runs))
	any := false
	for i := range c.Runs {
		r := c.Runs[i].analysed
		if r == nil {
			r = &analysis.Run{}
		}
		cp := *r
		cp.Name, cp.Variant, cp.Status = c.Runs[i].Label, c.Runs[i].Variant, c.Runs[i].Status
		runs[i] = &cp
		any = any || len(cp.Curve) > 0
	}
	if !any || base < 0 {
		return
	}
	t := analysis.TimeToAccuracy(runs, base, target)
	c.TTA = &t
	for i := range c.Runs {
		c.Runs[i].TTA = &t.Runs[i]
	}
}

// ledgerCell is an exposed share in percent (human) or as a fraction.
func ledgerCell(cat analysis.Category) func(*RunFigures, bool) string {
	return func(r *RunFigures, human bool) string {
		if r.Ledger == nil {
			return ""
		}
		v := r.Ledger.Exposed[cat.String()]
		if human {
			return strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
		}
		return fmtRatio(v)
	}
}

// VerdictShort is a verdict in a table cell: "sample 61 %", or
// "mixed train/eval 45/40 %".
func VerdictShort(l *RunLedger) string {
	if l == nil {
		return ""
	}
	p := func(v float64) string { return strconv.Itoa(int(math.Round(100*v))) + " %" }
	switch l.VerdictKind {
	case analysis.VerdictBound:
		return l.Bound + " " + p(l.BoundShare)
	case analysis.VerdictMixed:
		return fmt.Sprintf("mixed %s/%s %.0f/%.0f %%", l.Bound, l.Second, 100*l.BoundShare, 100*l.SecondShare)
	}
	return l.VerdictKind
}

// ledgerRows are the figures of the stage ledger and time to accuracy:
// the verdict, each category's exposed share of the wall time (setup
// left out) and the verdict's figures in CSV.
func ledgerRows() []figureRow {
	rows := []figureRow{
		{"bound by", "", func(r *RunFigures, _ bool) string { return VerdictShort(r.Ledger) }, onlyHuman},
		{"", "verdict", func(r *RunFigures, _ bool) string {
			if r.Ledger == nil {
				return ""
			}
			return r.Ledger.Verdict
		}, onlyCSV},
		{"", "verdict_kind", func(r *RunFigures, _ bool) string {
			if r.Ledger == nil {
				return ""
			}
			return r.Ledger.VerdictKind
		}, onlyCSV},
		{"", "bound", func(r *RunFigures, _ bool) string {
			if r.Ledger == nil {
				return ""
			}
			return r.Ledger.Bound
		}, onlyCSV},
		{"ledger wall (s)", "ledger_wall_s", func(r *RunFigures, _ bool) string {
			if r.Ledger == nil {
				return ""
			}
			return fmtSec(r.Ledger.WallS)
		}, 0},
	}
	for _, c := range analysis.Categories() {
		rows = append(rows, figureRow{"exposed " + c.String(), "exposed_" + c.String(), ledgerCell(c), 0})
	}
	return rows
}

// ttaRows are each run's time to accuracy and speedup to accuracy.
var ttaRows = []figureRow{
	{"time to accuracy (s)", "tta_s", func(r *RunFigures, human bool) string {
		switch {
		case r.TTA == nil:
			return ""
		case r.TTA.Reached:
			return fmtSec(r.TTA.TimeS)
		case human:
			return "not reached"
		}
		return ""
	}, 0},
	{"", "tta_reached", func(r *RunFigures, _ bool) string {
		return optCell(r.TTA != nil, strconv.FormatBool(r.TTA != nil && r.TTA.Reached))
	}, onlyCSV},
	{"speedup to accuracy", "tta_speedup", func(r *RunFigures, _ bool) string {
		return optCell(r.TTA != nil && r.TTA.Speedup > 0, fmtRatio(r.TTA.Speedup))
	}, 0},
}

// LedgerNote says what the ledger rows mean, for the notes under a table.
const LedgerNote = "exposed: share of the wall time (setup left out) during which the trainer ran or waited on each stage, from intervals; the shares add up to 100 %"

// TTANote says what time to accuracy measures, for the notes under a
// table.
func TTANote(t *analysis.TTA) string {
	return fmt.Sprintf("time to accuracy: until validation accuracy %s (%s), from the first touch of data, evaluation included", fmtAcc(t.Target), t.TargetFrom)
}
