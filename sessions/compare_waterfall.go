package sessions

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/profile"
)

// WaterfallOptions ask Compare for the speedup waterfall of every
// compared session that holds runs of the baseline and the optimized
// variant that ended ok (whatif.Session.Waterfall).
type WaterfallOptions struct {
	// Optimized names the variant whose speedup is split.
	Optimized string
	// Parts returns the optimizations of a session's optimized variant
	// in order, each with the config of the variant that applies it
	// alone (runner.WaterfallParts). Nil, or an error: the session's
	// other compared variants are the parts.
	Parts func(*Session) ([]whatif.PartConfig, error)
}

// SessionWaterfall is one session's speedup waterfall in a Comparison:
// parts measured where the compared runs hold them, else predicted from
// the baseline's runs; the interaction is the remainder in log-speedup.
type SessionWaterfall struct {
	Session   string `json:"session"`
	Baseline  string `json:"baseline"`
	Optimized string `json:"optimized"`
	PartsFrom string `json:"parts_from"`
	// HitRate is the cache hit rate a predicted cache part uses, and
	// HitRateFrom whether it was measured or assumed.
	HitRate     float64          `json:"hit_rate"`
	HitRateFrom string           `json:"hit_rate_from"`
	Waterfall   whatif.Waterfall `json:"waterfall"`
	Bars        []whatif.Bar     `json:"bars"`
}

// waterfalls computes the waterfall of each compared session that has
// one: a second pass over the journals of its baseline, optimized and
// part runs.
func (c *Comparison) waterfalls(refs []RunRef, opts *WaterfallOptions) {
	var order []*Session
	byID := map[string][]int{}
	for i, r := range refs {
		id := r.Session.ID()
		if _, ok := byID[id]; !ok {
			order = append(order, r.Session)
		}
		byID[id] = append(byID[id], i)
	}
	for _, s := range order {
		if w, ok := c.sessionWaterfall(s, refs, byID[s.ID()], opts); ok {
			c.Waterfalls = append(c.Waterfalls, w)
		}
	}
}

func (c *Comparison) sessionWaterfall(s *Session, refs []RunRef, idx []int, opts *WaterfallOptions) (SessionWaterfall, bool) {
	w := SessionWaterfall{Session: s.ID(), Baseline: profile.VariantBaseline, Optimized: opts.Optimized}
	var names []string
	for _, i := range idx {
		if v := c.Runs[i].Variant; !slices.Contains(names, v) {
			names = append(names, v)
		}
	}
	if !slices.Contains(names, w.Baseline) || !slices.Contains(names, w.Optimized) {
		return w, false
	}
	var parts []whatif.PartConfig
	var err error
	w.PartsFrom = "the optimizations of the optimized variant"
	if opts.Parts != nil {
		parts, err = opts.Parts(s)
	}
	explicit := opts.Parts != nil && err == nil
	ws := whatif.Session{}
	for _, i := range idx {
		f := &c.Runs[i]
		if f.Status != profile.StatusOK {
			continue
		}
		if v := f.Variant; v != w.Baseline && v != w.Optimized && explicit && !slices.ContainsFunc(parts, func(p whatif.PartConfig) bool { return p.Name == v }) {
			continue
		}
		b := whatif.NewBuilder()
		if _, err := s.ScanRun(refs[i].Run, func(e *profile.Event) error { b.Add(e); return nil }); err != nil {
			continue
		}
		t := b.Trace()
		t.Run, t.Variant = refs[i].Run, f.Variant
		t.Repeat = RepeatNumber(t.Run, t.Variant)
		ws.Add(t)
	}
	if !explicit {
		parts = ws.PartsOf(names, w.Baseline, w.Optimized)
		w.PartsFrom = "the other compared variants"
	}
	w.HitRate, w.HitRateFrom = whatif.AssumedHitRate, "assumed"
	if h, ok := ws.HitRate(w.Optimized); ok {
		w.HitRate, w.HitRateFrom = h, "measured"
	}
	wf, err := ws.Waterfall(w.Baseline, w.Optimized, parts, w.HitRate)
	if err != nil {
		return w, false
	}
	w.Waterfall, w.Bars = wf, wf.Bars()
	return w, true
}

// waterfallRows returns a waterfall's bars as table rows: step, speedup,
// interval, log, cumulative, source.
func waterfallRows(w *SessionWaterfall) [][]string {
	rows := make([][]string, 0, len(w.Bars))
	for _, b := range w.Bars {
		rows = append(rows, []string{b.Name, fmtRatio(b.Speedup) + "x", b.Interval(), strconv.FormatFloat(b.Log, 'f', 4, 64),
			fmtRatio(b.From) + " -> " + fmtRatio(b.To), b.Source()})
	}
	return rows
}

var waterfallHeader = []string{"step", "speedup", "interval", "log", "cumulative", "source"}

// waterfallTitle says what a waterfall splits and how to read it.
func waterfallTitle(w *SessionWaterfall) string {
	return fmt.Sprintf("Speedup waterfall, session %s: %s over %s, epoch %s s -> %s s (medians); parts: %s; predicted parts replayed from the baseline's runs (cache hit rate %.0f %%, %s); in log-speedup the parts and the interaction add up to the total",
		w.Session, w.Optimized, w.Baseline, fmtSec(w.Waterfall.BaselineS), fmtSec(w.Waterfall.OptimizedS), w.PartsFrom, 100*w.HitRate, w.HitRateFrom)
}

// waterfallMarkdown appends the waterfalls to a Markdown comparison.
func (c *Comparison) waterfallMarkdown(b *strings.Builder) {
	for i := range c.Waterfalls {
		w := &c.Waterfalls[i]
		b.WriteString("\n" + mdText(waterfallTitle(w)) + "\n\n| " + strings.Join(waterfallHeader, " | ") + " |\n|---|---:|---|---:|---|---|\n")
		for _, r := range waterfallRows(w) {
			for j := range r {
				r[j] = mdCell(r[j])
			}
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
	}
}

// waterfallColumns are the CSV columns of the waterfalls' bars, after
// the runs' columns (none without a waterfall).
func (c *Comparison) waterfallColumns() []string {
	if len(c.Waterfalls) == 0 {
		return nil
	}
	return []string{"waterfall_step", "waterfall_speedup", "waterfall_lo", "waterfall_hi", "waterfall_log", "waterfall_from", "waterfall_to", "waterfall_source"}
}

// waterfallCSV appends the waterfalls to a CSV comparison in the same
// table: one record per bar after the runs', its session in the first
// column, the runs' columns (width of them) empty, then the bar's.
func (c *Comparison) waterfallCSV(cw *csv.Writer, width int) error {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, w := range c.Waterfalls {
		for _, b := range w.Bars {
			rec := make([]string, width)
			rec[0] = w.Session
			rec = append(rec, b.Name, f(b.Speedup), f(b.Lo), f(b.Hi), f(b.Log), f(b.From), f(b.To), b.Source())
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// waterfallLaTeX appends the waterfalls to a LaTeX comparison, a tabular
// each.
func (c *Comparison) waterfallLaTeX(b *strings.Builder) {
	for i := range c.Waterfalls {
		w := &c.Waterfalls[i]
		b.WriteString("\n% " + strings.ReplaceAll(waterfallTitle(w), "\n", " ") + "\n\\begin{tabular}{lrlrll}\n\\hline\n")
		for j, r := range append([][]string{waterfallHeader}, waterfallRows(w)...) {
			for k := range r {
				r[k] = LaTeXEscape(r[k])
			}
			b.WriteString(strings.Join(r, " & ") + " \\\\\n")
			if j == 0 {
				b.WriteString("\\hline\n")
			}
		}
		b.WriteString("\\hline\n\\end{tabular}\n")
	}
}
