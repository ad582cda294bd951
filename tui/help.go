package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/draw"
)

// helpView draws every binding of the keymap, section by section, in as
// many columns as the width allows; it scrolls when even that does not
// fit.
func (m *Model) helpView(w, h int) string {
	st := m.c.Styles
	keyW := 0
	for _, sec := range m.c.Keys.All() {
		for _, b := range sec.Bindings {
			keyW = max(keyW, ansi.StringWidth(m.c.KeyName(b)))
		}
	}
	// one block of lines per section
	var blocks [][]string
	colW := 0
	for _, sec := range m.c.Keys.All() {
		lines := []string{st.Header.Render(sec.Title)}
		for _, b := range sec.Bindings {
			l := "  " + st.HelpKey.Render(draw.PadRight(m.c.KeyName(b), keyW)) + "  " + st.HelpDesc.Render(b.Help().Desc)
			colW = max(colW, ansi.StringWidth(l))
			lines = append(lines, l)
		}
		blocks = append(blocks, lines)
	}
	const gap = 3
	ncols := max(min((w+gap)/(colW+gap), len(blocks)), 1)
	colW += gap
	// fill columns with whole sections, balancing their heights
	total := 0
	for _, b := range blocks {
		total += len(b) + 1
	}
	target := (total + ncols - 1) / ncols
	var cols [][]string
	var cur []string
	for _, b := range blocks {
		if len(cur) > 0 && len(cur)+len(b) > target && len(cols) < ncols-1 {
			cols = append(cols, cur)
			cur = nil
		}
		if len(cur) > 0 {
			cur = append(cur, "")
		}
		cur = append(cur, b...)
	}
	cols = append(cols, cur)
	rows := 0
	for _, c := range cols {
		rows = max(rows, len(c))
	}
	lines := []string{st.Title.Render("Keys") + st.Muted.Render("  (? or esc closes; runs keep running when you quit)"), ""}
	for r := range rows {
		var b strings.Builder
		for i, c := range cols {
			cell := ""
			if r < len(c) {
				cell = c[r]
			}
			if i < len(cols)-1 {
				cell = draw.PadRight(cell, colW)
			}
			b.WriteString(cell)
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	m.helpOffset = min(m.helpOffset, max(len(lines)-h, 0))
	lines = lines[m.helpOffset:]
	return draw.Fit(strings.Join(lines, "\n"), w, h)
}
