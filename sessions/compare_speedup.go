package sessions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/stats"
)

// HostBusyLabel flags figures measured on a busy host.
const HostBusyLabel = "host busy: timing unreliable"

// busyWaitShare: a run whose threads waited runnable for a CPU longer than
// this share of the CPU time they got received clearly less CPU than it
// asked for.
const busyWaitShare = 1.0 / 3

// RepeatNumber returns K for a run named VARIANT.rK (a launch's repeat,
// K >= 1), else 0.
func RepeatNumber(run, variant string) int {
	rest, ok := strings.CutPrefix(run, variant+".r")
	if !ok || rest == "" || rest[0] == '0' {
		return 0
	}
	k, err := strconv.Atoi(rest)
	if err != nil || k < 1 {
		return 0
	}
	return k
}

// HostBusy returns why a run's timing is unreliable, "" when nothing says
// so: the load average at its start (start's host) or end (end's usage)
// above the host's CPUs, or its threads waiting runnable for a CPU more
// than a third of the CPU time they got.
func HostBusy(start *profile.Host, end *profile.Usage) string {
	var why []string
	cpus := 0
	if start != nil {
		cpus = start.CPUs
		if cpus > 0 && start.Load > float64(cpus) {
			why = append(why, fmt.Sprintf("load %.2f above %d CPUs at the start", start.Load, cpus))
		}
	}
	if end != nil {
		if cpus > 0 && end.Load > float64(cpus) {
			why = append(why, fmt.Sprintf("load %.2f above %d CPUs at the end", end.Load, cpus))
		}
		if end.CPUS > 0 && end.WaitS > busyWaitShare*end.CPUS {
			why = append(why, fmt.Sprintf("waited %.1f s for a CPU against %.1f s of CPU time", end.WaitS, end.CPUS))
		}
	}
	return strings.Join(why, "; ")
}

// RunTiming is what Speedups needs of a run.
type RunTiming struct {
	// Group is shared by the runs of one variant in one session (its
	// repeats).
	Group  string
	Repeat int // K of a repeat NAME.rK, 0 for a run that is not one
	Status profile.Status
	Epochs []float64 // epoch wall times in seconds
}

// Timing is a run's share of Speedups: its variant's median epoch time
// and speedup. Both are zero for a run that is not Timed or has no epoch.
type Timing struct {
	VariantMedianS float64
	Speedup        stats.Speedup // Ratio 0: none
}

// Speedups computes, for every timed run with epochs, its variant's
// median epoch time (stats.VariantMedian over the group's timed repeats)
// and the speedup of its variant over the variant of the run base
// (stats.Compare, or stats.Estimate without interval when interval is
// false; a run of base's group has speedup 1 by definition). base < 0,
// or a base group without a timed run, gives no speedups.
func Speedups(runs []RunTiming, base int, interval bool) []Timing {
	out := make([]Timing, len(runs))
	groups := map[string][]stats.Repeat{}
	for _, r := range runs {
		if r.Status.Timed() && len(r.Epochs) > 0 {
			groups[r.Group] = append(groups[r.Group], stats.Repeat{K: max(r.Repeat, 1), Epochs: r.Epochs})
		}
	}
	var baseReps []stats.Repeat
	if base >= 0 && base < len(runs) {
		baseReps = groups[runs[base].Group]
	}
	figures := map[string]Timing{}
	for i, r := range runs {
		reps := groups[r.Group]
		if !r.Status.Timed() || len(r.Epochs) == 0 || len(reps) == 0 {
			continue
		}
		t, ok := figures[r.Group]
		if !ok {
			t.VariantMedianS = stats.VariantMedian(reps)
			switch {
			case len(baseReps) == 0:
			case r.Group == runs[base].Group:
				t.Speedup = stats.Speedup{Ratio: 1, Repeats: len(reps)} // the reference
				for range reps {
					t.Speedup.Ratios = append(t.Speedup.Ratios, 1)
				}
			case interval:
				t.Speedup = stats.Compare(baseReps, reps)
			default:
				t.Speedup = stats.Estimate(baseReps, reps)
			}
			figures[r.Group] = t
		}
		out[i] = t
	}
	return out
}

// Best returns the index of the run with the highest speedup outside the
// group of run base, -1 when none has one.
func Best(runs []RunTiming, timings []Timing, base int) int {
	best := -1
	for i, t := range timings {
		if t.Speedup.Ratio <= 0 || (base >= 0 && runs[i].Group == runs[base].Group) {
			continue
		}
		if best < 0 || t.Speedup.Ratio > timings[best].Speedup.Ratio {
			best = i
		}
	}
	return best
}

// timing returns what Speedups needs of r.
func (r *RunFigures) timing() RunTiming {
	return RunTiming{Group: r.Session + "\x00" + r.Variant, Repeat: r.Repeat, Status: r.Status, Epochs: r.epochTimes}
}

// speedups sets every run's partial mark, and every timed run's variant
// median and speedup (Speedups).
func (c *Comparison) speedups(base int) {
	runs := make([]RunTiming, len(c.Runs))
	for i := range c.Runs {
		r := &c.Runs[i]
		r.Partial = r.Status.Stopped() && r.HasFigures()
		runs[i] = r.timing()
	}
	for i, t := range Speedups(runs, base, true) {
		r := &c.Runs[i]
		r.VariantMedianS = t.VariantMedianS
		if sp := t.Speedup; sp.Ratio > 0 {
			r.Speedup, r.SpeedupLo, r.SpeedupHi = sp.Ratio, sp.Lo, sp.Hi
			r.SpeedupMethod, r.SpeedupRepeats, r.SingleRun = sp.Method, sp.Repeats, sp.Single
			r.SpeedupRatios = sp.Ratios
		}
	}
}

// BestRun returns the index of the run with the highest speedup outside
// the baseline's variant (never a run that stopped early), -1 when none.
func (c *Comparison) BestRun() int {
	base := -1
	runs := make([]RunTiming, len(c.Runs))
	timings := make([]Timing, len(c.Runs))
	for i := range c.Runs {
		r := &c.Runs[i]
		runs[i] = r.timing()
		timings[i].Speedup.Ratio = r.Speedup
		if r.Label == c.Baseline {
			base = i
		}
	}
	return Best(runs, timings, base)
}

// FormatSpeedup writes a speedup with its interval, "1.31x [1.24, 1.38]",
// with digits decimals, and "(single run)" when either side is one run;
// "" when r has none.
func FormatSpeedup(r *RunFigures, digits int) string {
	if r.Speedup <= 0 {
		return ""
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
	s := f(r.Speedup) + "x"
	if r.SpeedupMethod != "" && r.SpeedupHi > 0 {
		s += " [" + f(r.SpeedupLo) + ", " + f(r.SpeedupHi) + "]"
	}
	if r.SingleRun {
		s += " (single run)"
	}
	return s
}

// FormatRatios writes the per-repeat ratios of a run's speedup, separated
// by sep, with digits decimals ("" without repeats).
func FormatRatios(r *RunFigures, digits int, sep string) string {
	if r.Speedup <= 0 || len(r.SpeedupRatios) == 0 {
		return ""
	}
	parts := make([]string, len(r.SpeedupRatios))
	for i, v := range r.SpeedupRatios {
		parts[i] = strconv.FormatFloat(v, 'f', digits, 64)
	}
	return strings.Join(parts, sep)
}

// SpeedupNote explains the speedups of a comparison whose baseline is
// the run labelled base among runs (its variant when it is a repeat).
func SpeedupNote(base string, runs []RunFigures) string {
	for _, r := range runs {
		if r.Label == base && r.Repeat > 0 {
			base = "variant " + r.Variant
		}
	}
	return fmt.Sprintf("speedup: median epoch time of %s over each run's variant; "+
		"95 %% interval by bootstrap over per-repeat ratios (%d+ paired repeats: their median), none with fewer (epochs of one run are not independent samples; --repeats 3 gives one); "+
		"failed, OOM-aborted, crashed and canceled runs have none", base, stats.MinRepeats)
}
