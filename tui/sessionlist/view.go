package sessionlist

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/stats"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// footer is what goes below the list: the export dialog, a confirmation,
// or the details of the session under the cursor.
func (m *Model) footer() string {
	st := m.c.Styles
	switch {
	case m.export.IsOpen():
		return m.export.View()
	case m.confirm != nil:
		return st.Warn.Render(m.confirm.prompt)
	}
	e, r := m.current()
	if e == nil {
		return ""
	}
	var lines []string
	head := st.Header.Render(e.ID)
	if e.Name != "" {
		head += "  " + e.Name
	}
	if dir := m.c.Store.Root(); dir != "" {
		head += "  " + st.Muted.Render(sessionsDir(m.c.Store, e.ID))
	}
	lines = append(lines, head)
	var runs []string
	for _, run := range e.Runs {
		runs = append(runs, run.Name+" "+m.statusText(run.Status, &run))
	}
	if len(runs) > 0 {
		lines = append(lines, "runs: "+strings.Join(runs, "  "))
	}
	errText := e.Err
	if r.run >= 0 && e.Runs[r.run].Error != "" {
		errText = e.Runs[r.run].Name + ": " + e.Runs[r.run].Error
	} else if errText == "" {
		for _, run := range e.Runs {
			if run.Error != "" {
				errText = run.Name + ": " + run.Error
				break
			}
		}
	}
	if errText != "" {
		lines = append(lines, st.Error.Render(errText))
	}
	if n := len(m.Selected()); n > 0 {
		lines = append(lines, fmt.Sprintf("%d selected: c compares them, x exports them", n))
	}
	return strings.Join(lines, "\n")
}

func sessionsDir(store *sessions.Store, id string) string {
	return filepath.Join(store.Root(), "sessions", id)
}

// statusText is a run's status, with the epoch progress of a running run
// ("running 12/50").
func (m *Model) statusText(status profile.Status, r *Run) string {
	text := string(status)
	if status == profile.StatusRunning && r != nil && r.Epochs > 0 {
		text = fmt.Sprintf("running %d/%d", r.Epoch, r.Epochs)
	}
	return m.c.Styles.Status(status).Render(text)
}

// sessionStatusText is a session's status in the list's narrow column,
// followed by mark (an imported session's "*", ", skips"), or with the
// running run's progress in percent ("running 24%").
func (m *Model) sessionStatusText(status profile.Status, mark string, r *Run) string {
	text := string(status) + mark
	if status == profile.StatusRunning && mark == "" && r != nil && r.Epochs > 0 {
		text = fmt.Sprintf("running %d%%", min(100*r.Epoch/r.Epochs, 100))
	}
	return m.c.Styles.Status(status).Render(text)
}

// progress is the running run's progress of a session ("" if none).
func progress(e *Entry) *Run {
	for i := range e.Runs {
		if e.Runs[i].Status == profile.StatusRunning {
			return &e.Runs[i]
		}
	}
	return nil
}

// listHeight is the number of rows the list shows.
func (m *Model) listHeight() int {
	return max(m.height-1-common.Lines(m.footer())-1, 1)
}

// column is one column of the list.
type column struct {
	title string
	width int
	prio  int // lower stays longer as the terminal narrows
	right bool
	cell  func(e *Entry) string
}

func (m *Model) columns() []column {
	sec := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		switch {
		case v >= 1000:
			return fmt.Sprintf("%.0f", v)
		case v >= 100:
			return fmt.Sprintf("%.1f", v)
		}
		return fmt.Sprintf("%.3f", v)
	}
	acc := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	// figures not read yet show as an ellipsis
	partial := func(f func(e *Entry) string) func(e *Entry) string {
		return func(e *Entry) string {
			if e.Partial {
				return m.c.Styles.Glyphs.Ellipsis
			}
			return f(e)
		}
	}
	return []column{
		{"ID", 20, 0, false, func(e *Entry) string { return e.ID }},
		{"CREATED", 11, 9, false, func(e *Entry) string {
			if e.Created.IsZero() {
				return "-"
			}
			return e.Created.Local().Format("01-02 15:04")
		}},
		{"STATUS", 13, 1, false, func(e *Entry) string {
			mark := ""
			if e.Imported {
				mark += "*"
			}
			if e.Skips && e.Status == profile.StatusOK {
				mark += ", skips" // the run lines say how many
			}
			return m.sessionStatusText(e.Status, mark, progress(e))
		}},
		{"DATA", 10, 3, false, func(e *Entry) string { return dash(e.Data) }},
		{"MODEL", 5, 4, false, func(e *Entry) string { return dash(e.Model) }},
		{"VARIANTS", 18, 8, false, func(e *Entry) string { return dash(strings.Join(e.Variants, ",")) }},
		{"BASE s", 6, 5, true, partial(func(e *Entry) string { return sec(e.BaseEpochS) })},
		{"BEST s", 6, 7, true, partial(func(e *Entry) string { return sec(e.BestEpochS) })},
		{"SPEEDUP", 17, 2, true, partial(func(e *Entry) string { return speedupCell(e.Speedup) })},
		{"TEST ACC", 8, 6, true, partial(func(e *Entry) string {
			if e.Best != "" {
				return acc(e.BestAcc)
			}
			return acc(e.BaseAcc)
		})},
	}
}

// fitColumns keeps the columns that fit in w cells, dropping the least
// important first, in display order.
func fitColumns(cols []column, w int) []column {
	order := slices.Clone(cols)
	slices.SortStableFunc(order, func(a, b column) int { return a.prio - b.prio })
	keep := map[string]bool{}
	used := 0
	for _, c := range order {
		need := c.width
		if used > 0 {
			need++
		}
		if used+need > w && used > 0 {
			continue
		}
		keep[c.title] = true
		used += need
	}
	var out []column
	for _, c := range cols {
		if keep[c.title] {
			out = append(out, c)
		}
	}
	return out
}

// widen gives the width left over in w cells to the columns whose
// cells are names (DATA, VARIANTS), each up to its longest cell, so a
// wide terminal shows them whole.
func (m *Model) widen(cols []column, w int) []column {
	used := len(cols) - 1
	for _, c := range cols {
		used += c.width
	}
	for i := range cols {
		c := &cols[i]
		if c.title != "DATA" && c.title != "VARIANTS" {
			continue
		}
		longest := 0
		for j := range m.entries {
			longest = max(longest, ansi.StringWidth(c.cell(&m.entries[j])))
		}
		if grow := min(longest-c.width, w-used); grow > 0 {
			c.width += grow
			used += grow
		}
	}
	return cols
}

// View renders the list in its area.
func (m *Model) View() string {
	st := m.c.Styles
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if !m.loaded {
		return draw.Fit(st.Muted.Render("reading sessions from "+m.c.Store.Root()+"..."), w, h)
	}
	if len(m.entries) == 0 {
		msg := []string{
			st.Title.Render("No sessions yet") + " in " + m.c.Store.Root(),
			"",
			"L  launch the default experiment: " + launch.DefaultModel + " on " + launch.DefaultData + ", baseline against optimized",
			"n  set up a new experiment",
			"",
			st.Muted.Render("Runs started here keep running when you quit; the list finds them again."),
		}
		if m.loadErr != "" {
			msg = append(msg, st.Error.Render(m.loadErr))
		}
		return draw.Fit(strings.Join(msg, "\n"), w, h)
	}
	const prefix = 3 // cursor, selection mark, space
	cols := m.widen(fitColumns(m.columns(), w-prefix), w-prefix)
	var b strings.Builder
	hdr := strings.Repeat(" ", prefix)
	for i, c := range cols {
		if i > 0 {
			hdr += " "
		}
		if c.right {
			hdr += draw.PadLeft(c.title, c.width)
		} else {
			hdr += draw.PadRight(c.title, c.width)
		}
	}
	b.WriteString(st.Header.Render(strings.TrimRight(hdr, " ")))
	lh := m.listHeight()
	for i := m.offset; i < len(m.rows) && i < m.offset+lh; i++ {
		b.WriteString("\n")
		b.WriteString(m.renderRow(i, cols, w))
	}
	foot := m.footer()
	if foot != "" {
		for i := len(m.rows) - m.offset; i < lh; i++ {
			b.WriteString("\n")
		}
		b.WriteString("\n\n")
		b.WriteString(draw.Fit(foot, w, max(h-2-lh, 0)))
	}
	return draw.Fit(b.String(), w, h)
}

func (m *Model) renderRow(i int, cols []column, w int) string {
	st := m.c.Styles
	r := m.rows[i]
	e := &m.entries[r.entry]
	cur, mark := " ", " "
	if i == m.cursor {
		cur = st.Glyphs.Cursor
	}
	if m.selected[m.ref(r)] {
		mark = "*"
	}
	line := cur + mark + " "
	if r.run < 0 {
		for j, c := range cols {
			if j > 0 {
				line += " "
			}
			cell := draw.Cut(c.cell(e), c.width, st.Glyphs.Ellipsis)
			if c.right {
				cell = draw.PadLeft(cell, c.width)
			} else {
				cell = draw.PadRight(cell, c.width)
			}
			line += cell
		}
	} else {
		run := &e.Runs[r.run]
		branch := "├ "
		if st.Glyphs.Cursor == ">" {
			branch = "|-"
		}
		if r.run == len(e.Runs)-1 {
			branch = "└ "
			if st.Glyphs.Cursor == ">" {
				branch = "`-"
			}
		}
		status := draw.PadRight(m.statusText(run.Status, run), 18)
		if skip := sessions.SkipText(run.Skipped, run.Batches); skip != "" {
			status = m.c.Styles.Status(run.Status).Render(string(run.Status) + ", " + skip) // longer: not cut
		}
		parts := []string{"  " + branch + draw.PadRight(run.Name, 16), status}
		if run.EpochS > 0 {
			parts = append(parts, fmt.Sprintf("epoch %.3f s", run.EpochS))
		}
		if run.Status.Stopped() && len(run.EpochList) > 0 {
			parts = append(parts, "partial figures, no speedup")
		}
		if run.Speedup.Ratio > 0 {
			parts = append(parts, speedup(run.Speedup))
			if run.Speedup.Repeats > 1 {
				parts = append(parts, "per repeat "+ratios(run.Speedup.Ratios))
			}
		}
		if run.TestAcc != nil {
			parts = append(parts, fmt.Sprintf("test acc %.4f", *run.TestAcc))
		}
		line += strings.Join(parts, " ")
	}
	line = strings.TrimRight(line, " ")
	if i == m.cursor {
		line = st.Selected.Render(draw.PadRight(ansi.Strip(line), w))
	}
	return draw.Cut(line, w, "")
}

// speedup formats a speedup with its 95 % interval, "1.31x [1.24,1.38]",
// and "1 run" when a side is a single run; "-" for none.
func speedup(s stats.Speedup) string {
	if s.Ratio <= 0 {
		return "-"
	}
	out := fmt.Sprintf("%.2fx", s.Ratio)
	if s.HasInterval() {
		out += fmt.Sprintf(" [%.2f,%.2f]", s.Lo, s.Hi)
	}
	if s.Single {
		out += " 1 run"
	}
	return out
}

// speedupCell is speedup for the list's column: a single run's speedup
// as "2.00x (1 run)", without its interval over epochs.
func speedupCell(s stats.Speedup) string {
	if s.Ratio > 0 && s.Single {
		return fmt.Sprintf("%.2fx (1 run)", s.Ratio)
	}
	return speedup(s)
}

// ratios formats per-repeat speedups, "1.29 1.33 1.31".
func ratios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.2f", r)
	}
	return strings.Join(parts, " ")
}
