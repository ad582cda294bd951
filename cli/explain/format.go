package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile"
)

// Document is what explain writes: the report of a session's runs, and
// the sections other analyses add (see sections.go).
type Document struct {
	Session string           `json:"session"`
	Only    string           `json:"run,omitempty"` // the run asked for, if one
	Report  *analysis.Report `json:"report"`
	Skipped []string         `json:"skipped,omitempty"`
	// WhatIf and Waterfall are the what-if model's (sections.go);
	// Waterfall is null when one run is explained.
	WhatIf    *WhatIf           `json:"what_if"`
	Waterfall *WaterfallSection `json:"waterfall"`
	// Ranks are where each distributed run's ranks ran (ranks.go).
	Ranks []RunRanks `json:"rank_nodes,omitempty"`
}

// Write writes the document in format (text, md or json); epochs adds
// each run's ledger per epoch.
func (d *Document) Write(w io.Writer, format string, epochs bool) error {
	if format == FormatJSON {
		return iostreams.WriteJSON(w, d)
	}
	p := &printer{w: w, md: format == FormatMarkdown}
	if p.md {
		p.line("# Explain %s", d.Session)
	} else {
		p.line("session %s", d.Session)
	}
	for i := range d.Report.Runs {
		r := &d.Report.Runs[i]
		if d.Only != "" && r.Name != d.Only {
			continue // the baseline, read for the accuracy target
		}
		p.run(r, epochs, d.nodesOf(r.Name))
	}
	p.tta(&d.Report.TTA)
	p.sections(d)
	if len(d.Skipped) > 0 {
		p.heading("Not explained")
		for _, s := range d.Skipped {
			p.item(s)
		}
	}
	return p.err
}

// printer writes text or Markdown and keeps the first error.
type printer struct {
	w   io.Writer
	md  bool
	err error
}

func (p *printer) line(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", a...)
	}
}

func (p *printer) heading(s string) {
	if p.md {
		p.line("\n## %s\n", s)
	} else {
		p.line("\n%s", s)
	}
}

func (p *printer) sub(s string) {
	if p.md {
		p.line("\n### %s\n", s)
	} else {
		p.line("  %s", s)
	}
}

func (p *printer) item(s string) { p.itemAt(0, s) }

// itemAt writes an item nested level deep.
func (p *printer) itemAt(level int, s string) {
	if p.md { // a run's items are top-level under its headings
		p.line("%s- %s", strings.Repeat("  ", max(level-1, 0)), s)
	} else {
		p.line("%s%s", strings.Repeat("  ", level+1), s)
	}
}

func (p *printer) table(t *table, indent string) {
	if p.err == nil {
		p.err = t.write(p.w, p.md, indent)
	}
}

func (p *printer) run(r *analysis.RunReport, epochs bool, nodes []RankNode) {
	status := r.Status
	if status == "" {
		status = profile.StatusRunning
	}
	p.heading(fmt.Sprintf("run %s (variant %s, %s)", r.Name, cmdutil.Dash(r.Variant), status))
	if r.Error != "" {
		p.item("error: " + cmdutil.OneLine(r.Error))
	}
	p.item("verdict (setup left out): " + r.Verdict.Text)
	l := &r.Ledger
	p.sub(fmt.Sprintf("ledger: whole run, %s s wall", secs(l.Whole.WallS)))
	p.table(ledgerTable(&l.Whole, r.Config.External), "    ")
	p.extras(l)
	if epochs && len(l.Epochs) > 0 {
		p.sub("ledger per epoch (exposed seconds; validation accuracy and when it was known, from the first touch of data)")
		p.table(epochTable(l, r.Curve), "    ")
	}
	if len(l.Ranks) > 0 {
		p.sub("ranks")
		p.table(rankTable(l, r.RankSteps, nodes, r.Config.External), "    ")
		p.slowestItems(r.RankSteps)
	}
	p.advice(r)
}

// extras writes the trainer's and the device's idle shares and what was
// left out.
func (p *printer) extras(l *analysis.Ledger) {
	w := &l.Whole
	if w.WallS <= 0 {
		return
	}
	s := fmt.Sprintf("trainer idle (waiting or running nothing) %s s, %s of wall time", secs(w.TrainerIdleS), pct(w.TrainerIdleS/w.WallS))
	if w.Device {
		idle := max(w.WallS-w.DeviceBusyS, 0)
		s += fmt.Sprintf("; device idle %s s, %s", secs(idle), pct(idle/w.WallS))
	}
	p.item(s)
	if l.Setup.WallS > 0 {
		p.item(fmt.Sprintf("setup before the first touch of data %s s (in other), left out of the verdict and the advice", secs(l.Setup.WallS)))
	}
	if l.Straggler != nil {
		st := l.Straggler
		p.item(fmt.Sprintf("straggler: rank %d, train busy %s s against the median rank's %s s: %s of wall time",
			st.Rank, secs(st.TrainS), secs(st.MedianTrain), pct(st.Share)))
	}
	if l.LateS > 0 {
		p.item(fmt.Sprintf("left out: %s s of spans that arrived after their epoch was swept", secs(l.LateS)))
	}
}

func ledgerTable(w *analysis.Window, external bool) *table {
	t := &table{header: []string{"stage", "busy s", "exposed s", "hidden s", "exposed"}, right: []bool{false, true, true, true, true}}
	for _, c := range analysis.Categories() {
		name := c.String()
		if c == analysis.Sample && external {
			name = "sample (loading)"
		}
		busy, hidden := secs(w.Busy[c]), secs(w.Hidden(c))
		if c == analysis.Idle {
			busy, hidden = "", ""
		}
		t.add(name, busy, secs(w.Exposed[c]), hidden, pct(w.Share(c)))
		if c == analysis.Transfer && w.CacheBusyS > 0 {
			t.add("  cache part", secs(w.CacheBusyS), secs(w.CacheExposedS), secs(max(w.CacheBusyS-w.CacheExposedS, 0)), pct(w.CacheExposedS/w.WallS))
		}
	}
	t.add("total", "", secs(w.ExposedSum()), "", pct(w.ExposedSum()/max(w.WallS, 1e-12)))
	return t
}

func epochTable(l *analysis.Ledger, curve []analysis.AccPoint) *table {
	t := &table{header: []string{"epoch", "wall s"}, right: []bool{true, true}}
	for _, c := range analysis.Categories() {
		t.header = append(t.header, c.String())
		t.right = append(t.right, true)
	}
	t.header = append(t.header, "val acc", "at s")
	t.right = append(t.right, true, true)
	acc := map[int]analysis.AccPoint{}
	for _, p := range curve {
		acc[p.Epoch] = p
	}
	row := func(name string, w *analysis.Window, epoch int) {
		cells := []string{name, secs(w.WallS)}
		for _, c := range analysis.Categories() {
			cells = append(cells, secs(w.Exposed[c]))
		}
		if p, ok := acc[epoch]; ok && name != "setup" {
			cells = append(cells, fmt.Sprintf("%.4f", p.ValAcc), secs(p.TimeS))
		} else {
			cells = append(cells, "", "")
		}
		t.add(cells...)
	}
	if l.Setup.WallS > 0 {
		row("setup", &l.Setup, 0)
	}
	for i := range l.Epochs {
		row(fmt.Sprint(l.Epochs[i].Epoch), &l.Epochs[i].Window, l.Epochs[i].Epoch)
	}
	return t
}

func (p *printer) advice(r *analysis.RunReport) {
	fired := analysis.Fired(r.Advice)
	p.sub("advice")
	if len(fired) == 0 {
		var figs []string
		for _, a := range r.Advice {
			figs = append(figs, a.Rule+": "+a.Figure)
		}
		p.itemAt(1, "no rule fired ("+strings.Join(figs, "; ")+")")
		return
	}
	for _, a := range fired {
		p.itemAt(1, fmt.Sprintf("%s: %s (rule: %s)", a.Rule, a.Figure, a.Threshold))
		p.itemAt(2, a.Text)
		for _, t := range a.Try {
			gain := "not estimated"
			if g := t.Gain; g != nil {
				gain = fmt.Sprintf("predicted: epoch %s s → %s s, %.2f× (%s)", secs(g.EpochS*g.Speedup), secs(g.EpochS), g.Speedup, g.Model)
			}
			p.itemAt(2, fmt.Sprintf("try %s: %s", t.Flag, gain))
		}
		if len(a.Already) > 0 {
			p.itemAt(2, "already: "+strings.Join(a.Already, ", "))
		}
		if len(a.Try) == 0 {
			p.itemAt(2, "nothing left to try from this rule")
		}
	}
}

func (p *printer) tta(t *analysis.TTA) {
	p.heading("time to accuracy")
	if t.Target <= 0 {
		p.item("no target: no baseline validation accuracy recorded (set one with --tta-target)")
		return
	}
	p.item(fmt.Sprintf("target validation accuracy %.4f (%s); clock from the first touch of data, evaluation included", t.Target, t.TargetFrom))
	p.item("speedup: to the target over wall time; over epochs: in epochs to the target; epoch time: per epoch (medians)")
	tb := &table{header: []string{"run", "status", "best", "reached", "time s", "speedup", "epoch", "over epochs", "epoch time", "rank"},
		right: []bool{false, false, true, false, true, true, true, true, true, true}}
	ratio := func(v float64) string {
		if v > 0 {
			return fmt.Sprintf("%.2fx", v)
		}
		return ""
	}
	for _, r := range t.Runs {
		reached, ts, ep, rank := "not reached", "", "", ""
		if r.Reached {
			reached, ts, ep, rank = "yes", secs(r.TimeS), fmt.Sprint(r.Epoch), fmt.Sprint(r.Rank)
		}
		best := "none"
		if r.Evaluated > 0 {
			best = fmt.Sprintf("%.4f", r.Best)
		}
		tb.add(r.Run, cmdutil.Dash(string(r.Status)), best, reached, ts, ratio(r.Speedup), ep, ratio(r.EpochsSpeedup), ratio(r.EpochSpeedup), rank)
	}
	p.table(tb, "    ")
}
