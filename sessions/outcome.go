package sessions

import (
	"encoding/json"
	"fmt"

	"github.com/gnnscope/gnnscope/profile"
)

// SkipCounts returns the training batches a run skipped (on_oom skip)
// and the batches it had in all (trained plus skipped), from its run_end
// summary's skipped_batches and batches (train.Result); zeros when the
// summary does not tell or nothing was skipped.
func SkipCounts(summary json.RawMessage) (skipped, total int) {
	if len(summary) == 0 || summary[0] != '{' {
		return 0, 0
	}
	var s struct {
		Batches int `json:"batches"`
		Skipped int `json:"skipped_batches"`
	}
	if json.Unmarshal(summary, &s) != nil || s.Skipped <= 0 || s.Batches < 0 {
		return 0, 0
	}
	return s.Skipped, s.Batches + s.Skipped
}

// SkipText says how many of a run's training batches were skipped:
// "skipped N of M batches (x %)", "" when none was.
func SkipText(skipped, total int) string {
	if skipped <= 0 || total <= 0 {
		return ""
	}
	return fmt.Sprintf("skipped %d of %d batches (%.1f %%)", skipped, total, 100*float64(skipped)/float64(total))
}

// OutcomeText is a run's status as views show it: the status, with
// ", partial" for a run that stopped early and has figures, or, for a
// run that skipped batches, ", skipped N of M batches (x %)" (SkipText).
func OutcomeText(status profile.Status, partial bool, skipped, total int) string {
	if partial {
		return string(status) + ", partial"
	}
	if s := SkipText(skipped, total); s != "" {
		return string(status) + ", " + s
	}
	return string(status)
}

// StatusText is the run's status as views show it (OutcomeText).
func (r *RunFigures) StatusText() string {
	return OutcomeText(r.Status, r.Partial, r.SkippedBatches, r.TotalBatches)
}

// OutcomeNotes are the lines that tables print below themselves about
// the run, named name: the batches it skipped, whose figures cover the
// trained ones only, and what the launcher adjusted in its config.
func (r *RunFigures) OutcomeNotes(name string) []string {
	var out []string
	if s := SkipText(r.SkippedBatches, r.TotalBatches); s != "" {
		out = append(out, fmt.Sprintf("%s: %s: its epoch times and accuracy cover the trained batches only", name, s))
	}
	for _, a := range r.Adjusted {
		out = append(out, fmt.Sprintf("%s: adjusted: %s", name, a))
	}
	return out
}
