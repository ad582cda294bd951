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

// Timed reports whether a run of this status may carry a speedup and be
// ranked: it ended ok, or it still runs. A run that failed, was aborted by
// an OOM, crashed or was canceled may not (see PartialStatus).
func Timed(status string) bool { return status == profile.StatusOK || status == StatusRunning }

// PartialStatus reports whether status stops a run early (failed, oom,
// crashed, canceled): whatever figures it has are partial.
func PartialStatus(status string) bool {
	switch status {
	case profile.StatusFailed, profile.StatusOOM, profile.StatusCrashed, profile.StatusCanceled:
		return true
	}
	return false
}

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

// group is the runs of one variant in one session: its repeats.
type group struct {
	runs []int // indices into Comparison.Runs
}

// repeats returns the group's timed runs with epochs as stats repeats
// (a run that is not a repeat counts as repeat 1).
func (g group) repeats(runs []RunFigures) []stats.Repeat {
	var out []stats.Repeat
	for _, i := range g.runs {
		r := &runs[i]
		if !Timed(r.Status) || len(r.epochTimes) == 0 {
			continue
		}
		out = append(out, stats.Repeat{K: max(r.Repeat, 1), Epochs: r.epochTimes})
	}
	return out
}

// speedups sets every timed run's variant median and its variant's
// speedup over the baseline's variant (stats.Compare over the repeats of
// both in their sessions). Runs that are not timed get none and are
// marked partial when they have figures.
func (c *Comparison) speedups(base int) {
	groups := map[string]*group{}
	key := func(r *RunFigures) string { return r.Session + "\x00" + r.Variant }
	for i := range c.Runs {
		r := &c.Runs[i]
		r.Partial = PartialStatus(r.Status) && r.HasFigures()
		g := groups[key(r)]
		if g == nil {
			g = &group{}
			groups[key(r)] = g
		}
		g.runs = append(g.runs, i)
	}
	if base < 0 {
		return
	}
	baseReps := groups[key(&c.Runs[base])].repeats(c.Runs)
	done := map[*group]bool{}
	for i := range c.Runs {
		g := groups[key(&c.Runs[i])]
		if done[g] {
			continue
		}
		done[g] = true
		reps := g.repeats(c.Runs)
		if len(reps) == 0 {
			continue
		}
		median := stats.VariantMedian(reps)
		var sp stats.Speedup
		switch {
		case g == groups[key(&c.Runs[base])]:
			sp = stats.Speedup{Ratio: 1, Repeats: len(reps)} // the reference, by definition
			for range reps {
				sp.Ratios = append(sp.Ratios, 1)
			}
		case len(baseReps) > 0:
			sp = stats.Compare(baseReps, reps)
		}
		for _, j := range g.runs {
			r := &c.Runs[j]
			if !Timed(r.Status) || len(r.epochTimes) == 0 {
				continue
			}
			r.VariantMedianS = median
			if sp.Ratio > 0 {
				r.Speedup, r.SpeedupLo, r.SpeedupHi = sp.Ratio, sp.Lo, sp.Hi
				r.SpeedupMethod, r.SpeedupRepeats, r.SingleRun = sp.Method, sp.Repeats, sp.Single
				r.SpeedupRatios = sp.Ratios
			}
		}
	}
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

// SpeedupNote explains the speedups of a comparison with baseline label
// base.
func SpeedupNote(base string) string {
	return fmt.Sprintf("speedup: median epoch time of %s's variant over each run's variant; "+
		"95 %% interval by bootstrap over per-repeat ratios (%d+ paired repeats: their median) or else over epochs; "+
		"failed, OOM-aborted, crashed and canceled runs have none", base, stats.MinRepeats)
}
