package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/gnnscope/gnnscope/sessions"
)

// Table is a comparison of a session's runs.
type Table struct {
	Session  string `json:"session"`
	Name     string `json:"name,omitempty"`
	Dir      string `json:"dir"`
	Baseline string `json:"baseline,omitempty"` // the run speedups are relative to
	// Runs are the runs' figures as sessions.Compare gives them (the same
	// fields as `gnnscope compare --format json`).
	Runs []sessions.RunFigures `json:"runs"`
	// Width is the text width Render fits its table and notes to (0: no
	// limit): columns are dropped least important first (see Columns).
	Width int `json:"-"`
}

// Compare puts a session's runs side by side, in launch order, through
// sessions.Compare (one streaming pass over each journal; see
// sessions.RunFigures for the figures). The baseline is the run of variant
// baseline, else the first run. Runs that have not started or whose
// journal cannot be read are listed with their status and no figures.
// For several sessions, configuration differences and the other output
// formats, use sessions.Compare directly.
func Compare(s *sessions.Session) (Table, error) {
	t := Table{Session: s.ID(), Name: s.Meta.Name, Dir: s.Dir(), Runs: []sessions.RunFigures{}}
	states, err := RunStates(s)
	if err != nil {
		return t, err
	}
	refs := make([]sessions.RunRef, len(states))
	for i := range states {
		refs[i] = sessions.RunRef{Session: s, Run: states[i].Run, State: &states[i]}
	}
	c, err := sessions.Compare(refs, sessions.CompareOptions{})
	if err != nil {
		return t, err
	}
	t.Baseline = c.Baseline
	t.Runs = c.Runs
	return t, nil
}

// Render writes the table as aligned plain-ASCII text: one line per run
// with the columns of Columns, as many as fit Width (0: all), then, with
// repeats, one line per variant, then notes and the errors of runs that
// did not end ok, wrapped to Width.
func (t Table) Render(w io.Writer) error {
	title := "session " + t.Session
	if t.Name != "" {
		title += "  " + t.Name
	}
	if _, err := fmt.Fprintf(w, "%s\n%s\n\n", title, t.Dir); err != nil {
		return err
	}
	cols, below := fitColumns(t.Columns(), t.Width), []string(nil)
	if j := slices.IndexFunc(cols, func(c Column) bool { return c.Title == noteTitle }); j >= 0 && t.Width > 0 && tableWidth(cols) > t.Width {
		below = cols[j].Cells // too wide for the row: under it, wrapped
		cols = fitColumns(slices.Delete(slices.Clone(cols), j, j+1), t.Width)
	}
	if err := writeRows(w, cols, below, t.Width); err != nil {
		return err
	}
	if err := t.renderVariants(w); err != nil {
		return err
	}
	notes := t.notes()
	if len(cols) < len(t.Columns()) {
		notes = append(notes, fmt.Sprintf("%d of %d columns shown to fit %d columns (--wide shows all)", len(cols), len(t.Columns()), t.Width))
	}
	if len(notes) > 0 {
		if t.Width > 0 {
			notes = wrapLines(notes, t.Width)
		}
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
		return err
	}
	return nil
}

// writeRows writes the header and a row per run, columns aligned two
// spaces apart; below[i], when not "-" or "", follows row i on lines of
// its own, indented and wrapped to width.
func writeRows(w io.Writer, cols []Column, below []string, width int) error {
	widths := make([]int, len(cols))
	for j, c := range cols {
		widths[j] = tableWidth([]Column{c})
	}
	line := func(cell func(c Column) string) string {
		var b strings.Builder
		for j, c := range cols {
			v := cell(c)
			b.WriteString(v)
			if j < len(cols)-1 {
				b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(v)+2))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	out := []string{line(func(c Column) string { return c.Title })}
	for i := range cols[0].Cells {
		out = append(out, line(func(c Column) string { return c.Cells[i] }))
		if i < len(below) && below[i] != "-" && below[i] != "" {
			for _, l := range wrapLines([]string{"note: " + below[i]}, max(width-4, 20)) {
				out = append(out, "    "+strings.TrimLeft(l, " "))
			}
		}
	}
	_, err := fmt.Fprintln(w, strings.Join(out, "\n"))
	return err
}

// notes are the lines below the table: what speedup means, and per run
// what went wrong or makes its timing unreliable.
func (t Table) notes() []string {
	var notes []string
	if t.Baseline != "" {
		notes = append(notes, sessions.SpeedupNote(t.Baseline, t.Runs))
		notes = append(notes, t.inconclusive()...)
	}
	for _, r := range t.Runs {
		name := r.Variant
		if r.Repeat > 0 {
			name = r.Run
		}
		if r.EpochSource == "summary" {
			notes = append(notes, fmt.Sprintf("%s: no spans in the journal; epoch and stage times from the run's own timing", name))
		}
		if r.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s: %s", name, r.Status, r.Error))
		}
		if r.Partial {
			notes = append(notes, fmt.Sprintf("%s: partial figures (the run stopped: %s); no speedup", name, r.Status))
		}
		notes = append(notes, r.OutcomeNotes(name)...)
		if r.HostBusy != "" {
			notes = append(notes, fmt.Sprintf("%s: %s (%s)", name, sessions.HostBusyLabel, r.HostBusy))
		}
	}
	return notes
}

// inconclusive returns a note for each variant but the baseline's whose
// speedup shows no effect, saying why (sessions.Inconclusive).
func (t Table) inconclusive() []string {
	baseVariant := ""
	for _, r := range t.Runs {
		if r.Label == t.Baseline {
			baseVariant = r.Variant
		}
	}
	var order []string
	groups := map[string][]*sessions.RunFigures{}
	for i := range t.Runs {
		r := &t.Runs[i]
		if r.Variant == baseVariant {
			continue
		}
		if _, ok := groups[r.Variant]; !ok {
			order = append(order, r.Variant)
		}
		groups[r.Variant] = append(groups[r.Variant], r)
	}
	var out []string
	for _, v := range order {
		if why := sessions.Inconclusive(groups[v]); why != "" {
			out = append(out, v+": "+why)
		}
	}
	return out
}

// renderVariants writes, when the session has repeats, one line per
// variant: its runs, median epoch time, speedup with interval and the
// per-repeat ratios.
func (t Table) renderVariants(w io.Writer) error {
	if !slices.ContainsFunc(t.Runs, func(r sessions.RunFigures) bool { return r.Repeat > 0 }) {
		return nil
	}
	type variant struct {
		name       string
		runs, busy int
		first      *sessions.RunFigures
	}
	var vs []*variant
	for i := range t.Runs {
		r := &t.Runs[i]
		j := slices.IndexFunc(vs, func(v *variant) bool { return v.name == r.Variant })
		if j < 0 {
			vs = append(vs, &variant{name: r.Variant})
			j = len(vs) - 1
		}
		v := vs[j]
		v.runs++
		if r.HostBusy != "" {
			v.busy++
		}
		if v.first == nil && r.VariantMedianS > 0 {
			v.first = r
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT	RUNS	MEDIAN EPOCH s	SPEEDUP [95 % interval]	PER REPEAT	HOST")
	for _, v := range vs {
		cells := []string{v.name, fmt.Sprint(v.runs), "-", "-", "-", "-"}
		if r := v.first; r != nil {
			cells[2] = sec(r.VariantMedianS)
			if sp := sessions.FormatSpeedup(r, 2); sp != "" {
				cells[3] = sp
			}
			if ratios := sessions.FormatRatios(r, 2, " "); ratios != "" {
				cells[4] = ratios
			}
		}
		if v.busy > 0 {
			cells[5] = fmt.Sprintf("busy in %d of %d runs", v.busy, v.runs)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// straggler formats a distributed run's straggler ratio, "-" for a run of
// one process.
func straggler(r sessions.RunFigures) string {
	if r.Ranks < 2 || r.Straggler <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r.Straggler)
}

// optFloat formats *v, or "-" when v is nil.
func optFloat(format string, v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// sec formats seconds with three decimals (fewer for long times).
func sec(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// CompareRuns puts runs of one or several sessions side by side with
// sessions.Compare, each run in the state RunStates gives it (so runs a
// launch has not started yet read as pending, canceled or not started,
// not as missing). refs is not modified. A session whose states cannot be
// read falls back to what sessions tells of its runs.
func CompareRuns(refs []sessions.RunRef, opts sessions.CompareOptions) (*sessions.Comparison, error) {
	refs = slices.Clone(refs)
	states := map[string][]sessions.RunState{}
	for i := range refs {
		s := refs[i].Session
		if _, ok := states[s.ID()]; !ok {
			st, err := RunStates(s)
			if err != nil {
				st = nil // fall back to what sessions tells
			}
			states[s.ID()] = st
		}
		for j := range states[s.ID()] {
			if st := &states[s.ID()][j]; st.Run == refs[i].Run {
				refs[i].State = st
			}
		}
	}
	return sessions.Compare(refs, opts)
}
