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

// Inconclusive says why a variant's speedup does not show an effect, for
// a note beside it ("" when its interval excludes 1, or it has no
// speedup): reps are the runs of a variant other than the baseline's
// (the first with a speedup carries the variant's figures). The reasons
// are the ones the journals give: no interval (fewer than 3 repeats),
// a busy host, and sampler workers on a host of two CPUs or fewer, where
// they take the cores that training needs.
func Inconclusive(reps []*RunFigures) string {
	var r *RunFigures
	busy := 0
	for _, x := range reps {
		if r == nil && x.Speedup > 0 {
			r = x
		}
		if x.HostBusy != "" {
			busy++
		}
	}
	if r == nil {
		return ""
	}
	if r.SpeedupMethod != "" && r.SpeedupHi > 0 && (r.SpeedupLo > 1 || r.SpeedupHi < 1) {
		return ""
	}
	var why []string
	if r.SpeedupMethod == "" {
		why = append(why, fmt.Sprintf("no interval from %d run(s) a variant (--repeats 3 gives one)", max(r.SpeedupRepeats, 1)))
	} else {
		why = append(why, fmt.Sprintf("its 95 %% interval [%.2f, %.2f] holds 1.00", r.SpeedupLo, r.SpeedupHi))
	}
	if busy > 0 {
		why = append(why, fmt.Sprintf("host busy in %d of %d runs", busy, len(reps)))
	}
	if w := r.Config["sampler_workers"]; r.HostCPUs > 0 && r.HostCPUs <= 2 && w != "" && w != "0" {
		why = append(why, fmt.Sprintf("%d cores: sampler workers compete with training", r.HostCPUs))
	}
	return "no clear speedup here: " + strings.Join(why, "; ")
}
