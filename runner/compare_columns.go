package runner

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
)

// Column is one column of a run table: its title, its rank among the
// columns a narrow table keeps (lower: kept longer) and a cell per run.
type Column struct {
	Title string
	Rank  int
	Cells []string
}

// Columns returns the run table's columns in display order: VARIANT,
// STATUS, EPOCHS, the epoch times (EPOCH s, the mean, SD, MIN, MEDIAN,
// MAX; a distributed run's are its slowest rank's), STRAGGLER when a run is
// distributed (its slowest rank's training time over the median rank's),
// the stage times, SPEEDUP, SPEEDUP NOTE when a speedup needs one,
// TEST ACC, UNCUT ACC when a run cut its
// inference edges (the same weights on the whole graph), OOMS and GUARD
// when memory was short, the history figures of GAS runs, and HIT RATE
// and H2D/EPOCH when a run has cache events. A narrow
// table keeps the variant, status, speedup, median epoch, train time and
// test accuracy longest; sample and transfer, the spread and the history
// figures go first.
func (t Table) Columns() []Column {
	gas, uncut, ranks, mem, cache := false, false, false, false, false
	for _, r := range t.Runs {
		cache = cache || r.CacheHitRate != nil
		gas = gas || r.StaleMean != nil || r.HistoryRelErr != nil || r.HistoryBytes != nil
		uncut = uncut || r.TestAccUncut != nil
		ranks = ranks || r.Ranks > 1
		mem = mem || r.OOMs > 0 || r.GuardActions > 0
	}
	var cols []Column
	add := func(title string, rank int, cell func(r *sessions.RunFigures) string) {
		c := Column{Title: title, Rank: rank, Cells: make([]string, len(t.Runs))}
		for i := range t.Runs {
			c.Cells[i] = cell(&t.Runs[i])
		}
		cols = append(cols, c)
	}
	add("VARIANT", 0, func(r *sessions.RunFigures) string {
		if r.Repeat > 0 {
			return r.Run
		}
		return r.Variant
	})
	add("STATUS", 1, func(r *sessions.RunFigures) string { return r.StatusText() })
	epochs := func(f func(r *sessions.RunFigures) string) func(r *sessions.RunFigures) string {
		return func(r *sessions.RunFigures) string {
			if r.Epochs <= 0 {
				return "-"
			}
			return f(r)
		}
	}
	add("EPOCHS", 9, epochs(func(r *sessions.RunFigures) string { return fmt.Sprint(r.Epochs) }))
	add("EPOCH s", 12, epochs(func(r *sessions.RunFigures) string { return sec(r.EpochMeanS) }))
	add("SD", 18, epochs(func(r *sessions.RunFigures) string { return sec(r.EpochStdS) }))
	add("MIN", 19, epochs(func(r *sessions.RunFigures) string { return sec(r.EpochMinS) }))
	add("MEDIAN", 3, epochs(func(r *sessions.RunFigures) string { return sec(r.EpochMedianS) }))
	add("MAX", 20, epochs(func(r *sessions.RunFigures) string { return sec(r.EpochMaxS) }))
	if ranks {
		add("STRAGGLER", 10, func(r *sessions.RunFigures) string { return straggler(*r) })
	}
	stages(add)
	add("SPEEDUP", 2, func(r *sessions.RunFigures) string {
		if sp := sessions.FormatSpeedup(r, 2); sp != "" {
			return sp
		}
		return "-"
	})
	t.caveats(add)
	add("TEST ACC", 5, func(r *sessions.RunFigures) string { return optFloat("%.4f", r.TestAcc) })
	if uncut {
		add("UNCUT ACC", 11, func(r *sessions.RunFigures) string { return optFloat("%.4f", r.TestAccUncut) })
	}
	if mem { // failed allocations apart from the guard's reshaped batches
		add("OOMS", 7, func(r *sessions.RunFigures) string { return fmt.Sprint(r.OOMs) })
		add("GUARD", 8, func(r *sessions.RunFigures) string { return fmt.Sprint(r.GuardActions) })
	}
	if gas {
		history(add)
	}
	if cache {
		add("HIT RATE", 6, func(r *sessions.RunFigures) string { return optFloat("%.3f", r.CacheHitRate) })
		add("H2D/EPOCH", 13, func(r *sessions.RunFigures) string { return optBytes(r.CacheH2DPerEpoch) })
	}
	return cols
}

// noteTitle is the title of the column of speedup caveats.
const noteTitle = "SPEEDUP NOTE"

// caveats adds, after SPEEDUP, the column SPEEDUP NOTE when a run's
// speedup is not a like-for-like comparison (sessions.SpeedupCaveat: a
// reference that skipped batches, different work, a plan changed to fit
// the budget), so the row that shows the speedup says so. It ranks with
// the speedup: a narrow table keeps it.
func (t Table) caveats(add func(string, int, func(*sessions.RunFigures) string)) {
	var base *sessions.RunFigures
	for i := range t.Runs {
		if t.Runs[i].Label == t.Baseline {
			base = &t.Runs[i]
		}
	}
	need := false
	for i := range t.Runs {
		need = need || sessions.SpeedupCaveat(base, &t.Runs[i]) != ""
	}
	if !need {
		return
	}
	add(noteTitle, 2, func(r *sessions.RunFigures) string {
		if c := sessions.SpeedupCaveat(base, r); c != "" {
			return c
		}
		return "-"
	})
}

// stages adds the stage columns: seconds per stage, data wait, overlap
// and efficiency ("-" for a run without spans).
func stages(add func(string, int, func(*sessions.RunFigures) string)) {
	stage := func(f func(r *sessions.RunFigures) string) func(r *sessions.RunFigures) string {
		return func(r *sessions.RunFigures) string {
			if r.StageSource == "" {
				return "-"
			}
			return f(r)
		}
	}
	add("SAMPLE s", 16, stage(func(r *sessions.RunFigures) string { return sec(r.SampleS) }))
	add("TRANSFER s", 17, stage(func(r *sessions.RunFigures) string { return sec(r.TransferS) }))
	add("TRAIN s", 4, stage(func(r *sessions.RunFigures) string { return sec(r.TrainS) }))
	add("EVAL s", 6, stage(func(r *sessions.RunFigures) string { return sec(r.EvalS) }))
	add("DATA WAIT s", 13, stage(func(r *sessions.RunFigures) string { return sec(r.DataWaitS) }))
	add("OVERLAP", 14, stage(func(r *sessions.RunFigures) string { return fmt.Sprintf("%.2f", r.Overlap) }))
	add("EFFICIENCY", 15, stage(func(r *sessions.RunFigures) string { return fmt.Sprintf("%.2f", r.Efficiency) }))
}

// history adds the GAS history columns.
func history(add func(string, int, func(*sessions.RunFigures) string)) {
	add("STALE MEAN", 21, func(r *sessions.RunFigures) string { return optFloat("%.2f", r.StaleMean) })
	add("STALE MAX", 22, func(r *sessions.RunFigures) string { return optFloat("%.0f", r.StaleMax) })
	add("HIST ERR", 23, func(r *sessions.RunFigures) string { return optFloat("%.4f", r.HistoryRelErr) })
	add("HIST BYTES", 24, func(r *sessions.RunFigures) string { return optBytes(r.HistoryBytes) })
}

// fitColumns drops columns, highest rank first, until the table is at
// most width wide (two spaces between columns; 0: no limit), keeping at
// least the columns of rank 5 and below (variant, status, speedup,
// median epoch, train and test accuracy).
func fitColumns(cols []Column, width int) []Column {
	if width <= 0 {
		return cols
	}
	out := slices.Clone(cols)
	for tableWidth(out) > width {
		worst := -1
		for i, c := range out {
			if c.Rank > 5 && (worst < 0 || c.Rank > out[worst].Rank) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		out = slices.Delete(out, worst, worst+1)
	}
	return out
}

// tableWidth is the width tabwriter gives cols, two spaces apart.
func tableWidth(cols []Column) int {
	w := 0
	for i, c := range cols {
		cw := utf8.RuneCountInString(c.Title)
		for _, cell := range c.Cells {
			cw = max(cw, utf8.RuneCountInString(cell))
		}
		if i > 0 {
			w += 2
		}
		w += cw
	}
	return w
}

// wrapLines wraps each line to width at spaces, indenting continuation
// lines by two spaces; a word longer than width stays whole.
func wrapLines(lines []string, width int) []string {
	var out []string
	for _, l := range lines {
		cur := ""
		for _, word := range strings.Fields(l) {
			switch {
			case cur == "":
				cur = word
			case len(cur)+1+len(word) <= width:
				cur += " " + word
			default:
				out = append(out, cur)
				cur = "  " + word
			}
		}
		out = append(out, cur)
	}
	return out
}

// optBytes formats *v as units.BytesFine does, or "-" when v is nil.
func optBytes(v *int64) string {
	if v == nil {
		return "-"
	}
	return units.BytesFine(*v)
}
