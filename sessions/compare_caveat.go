package sessions

import (
	"fmt"
	"strings"
)

// SpeedupCaveat says, for the row of run r in a table whose speedups are
// relative to run base, what makes its speedup other than a like-for-like
// comparison of the same work ("" when nothing does): the reference
// skipped batches (it did less work, so it looks faster), r skipped
// batches, the two trained a different number of batches, or r's plan
// was changed to fit its constraints (PlanSummary).
func SpeedupCaveat(base, r *RunFigures) string {
	var parts []string
	skipShare := func(f *RunFigures) string {
		return fmt.Sprintf("%.1f %%", 100*float64(f.SkippedBatches)/float64(f.TotalBatches))
	}
	switch {
	case base == nil:
	case r.Label == base.Label || (r.Repeat > 0 && r.Variant == base.Variant && r.Session == base.Session):
		if base.SkippedBatches > 0 && base.TotalBatches > 0 {
			parts = append(parts, "reference skipped "+skipShare(base)+" of its batches")
		}
	default:
		if base.SkippedBatches > 0 && base.TotalBatches > 0 {
			parts = append(parts, "vs a reference that skipped "+skipShare(base))
		}
		if r.SkippedBatches > 0 && r.TotalBatches > 0 {
			parts = append(parts, "skipped "+skipShare(r))
		}
		if base.TotalBatches > 0 && r.TotalBatches > 0 && base.TotalBatches != r.TotalBatches {
			parts = append(parts, fmt.Sprintf("%d batches vs the reference's %d", r.TotalBatches, base.TotalBatches))
		}
	}
	if p := PlanSummary(r.Adjusted); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// PlanSummary condenses run_start's adjusted lines (what the launcher and
// the engine changed so that a variant's optimizations fit its
// constraints) to what was dropped and what was changed, with why:
// "dropped prefetch, overlapped eval; added mem guard split (memory
// budget)". "" when nothing was adjusted.
func PlanSummary(adjusted []string) string {
	var dropped, changed []string
	budget := false
	for _, a := range adjusted {
		key, rest, _ := strings.Cut(a, ":")
		if strings.Contains(rest, "no memory budget") {
			continue // a default without constraints, not a change of plan
		}
		budget = budget || strings.Contains(rest, "memory budget")
		from, to, toggled := strings.Cut(key, " off->")
		if !toggled {
			from, _, toggled = strings.Cut(key, " on->off")
			to = ""
		}
		switch {
		case key == "prefetch" && strings.Contains(rest, "wait sampled"):
			dropped = append(dropped, "prefetch")
		case key == "prefetch":
			n, _, _ := strings.Cut(strings.TrimSpace(rest), " batches")
			changed = append(changed, "prefetch "+n)
		case from == "overlap_eval" && to == "":
			dropped = append(dropped, "overlapped eval")
		case toggled && to == "":
			dropped = append(dropped, from)
		case toggled:
			changed = append(changed, strings.ReplaceAll(from, "_", " ")+" "+to)
		case key == "feature cache", key == "overlapped evaluation":
			// how the cache and the evaluation were sized: no change of plan
		default:
			changed = append(changed, key)
		}
	}
	var out []string
	if len(dropped) > 0 {
		out = append(out, "dropped "+strings.Join(dropped, ", "))
	}
	if len(changed) > 0 {
		out = append(out, "set "+strings.Join(changed, ", "))
	}
	if len(out) == 0 {
		return ""
	}
	s := strings.Join(out, "; ")
	if budget {
		s += " to fit the memory budget"
	}
	return s
}
