package newexp

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
)

// SetSize sets the area the form draws in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	for _, f := range m.fields {
		if isCommand(f) {
			f.input.SetWidth(cmdW(w))
		} else if f.kind == text {
			f.input.SetWidth(inputW(w))
		}
	}
	m.scroll()
}

// labelW is the width of the labels.
const labelW = 16

// inputW is the width of the inputs: a quarter of the width, 12 to 28.
func inputW(w int) int { return min(max(w/4, 12), 28) }

// lines renders every field; it returns the lines and the line of each
// field.
func (m *Model) lines() ([]string, []int) {
	st := m.c.Styles
	var out []string
	at := make([]int, len(m.fields))
	inW := inputW(m.width)
	sectionShown, cmdShown := false, false
	for i, f := range m.fields {
		if isCommand(f) && !cmdShown {
			cmdShown = true
			out = append(out, "", st.Header.Render("Commands")+st.Muted.Render("  (NAME=COMMAND, as run --cmd; clear one to drop it)"))
		}
		if f.kind == toggle && !sectionShown {
			sectionShown = true
			out = append(out, "", st.Header.Render("Variants")+st.Muted.Render("  (Repeats runs each; space toggles)"))
		}
		if f.kind == button {
			out = append(out, "")
		}
		at[i] = len(out)
		cur := "  "
		if i == m.focus {
			cur = st.Selected.Render(st.Glyphs.Cursor) + " "
		}
		var widget string
		switch f.kind {
		case text:
			w := inW
			if isCommand(f) {
				w = cmdW(m.width)
			}
			widget = "[" + draw.PadRight(f.input.View(), w) + "]"
		case choice:
			l, r := "‹", "›"
			if m.c.Opts.ASCII {
				l, r = "<", ">"
			}
			widget = draw.PadRight(l+" "+f.choices[f.choice]+" "+r, inW+2)
		case toggle:
			box := "[ ]"
			if f.on {
				box = "[x]"
			}
			widget = box + " " + draw.PadRight(f.label, inW-2)
		case button:
			widget = draw.PadRight(st.Title.Render("[ Launch ]"), inW+2)
			if m.busy {
				widget = draw.PadRight(st.Muted.Render("launching..."), inW+2)
			}
		}
		label := draw.PadRight(f.label, labelW)
		if f.kind == toggle || f.kind == button {
			label = strings.Repeat(" ", labelW)
		}
		note := st.Muted.Render(m.helpText(f))
		row := cur + label + widget
		if f.err != "" && f.kind != button {
			msg := errGlyph(m.c) + " " + f.err
			if draw.Width(row)+2+draw.Width(msg) > m.width {
				// too long beside the field: wrapped below it, never cut
				out = append(out, row)
				indent := strings.Repeat(" ", 2+labelW)
				wrapped := ansi.Wrap(msg, max(m.width-2-labelW, 10), " ")
				for _, l := range strings.Split(wrapped, "\n") {
					out = append(out, indent+st.Error.Render(l))
				}
				continue
			}
			note = st.Error.Render(msg)
		}
		if f.err == "" && f.help == "" { // a command's row: the section's head says what it takes
			out = append(out, row)
			continue
		}
		out = append(out, row+"  "+note)
		if f.err != "" && f.kind == button {
			// the experiment's or the launch's error, in full
			wrapped := ansi.Wrap(errGlyph(m.c)+" "+f.err, max(m.width-4, 10), " ")
			for _, l := range strings.Split(wrapped, "\n") {
				out = append(out, "  "+st.Error.Render(l))
			}
		}
	}
	return out, at
}

func (m *Model) helpText(f *field) string {
	if m.c.Opts.ASCII {
		return strings.NewReplacer("←", "left", "→", "right").Replace(f.help)
	}
	return f.help
}

func errGlyph(c *common.Common) string {
	if c.Opts.ASCII {
		return "!"
	}
	return "✗"
}

// scroll keeps the focused field visible.
func (m *Model) scroll() {
	if m.height <= 0 {
		return
	}
	lines, at := m.lines()
	h := max(m.height-1, 1)
	line := at[m.focus]
	last := len(lines) - 1 // the focused field's last line (its wrapped error)
	if m.focus+1 < len(at) {
		last = at[m.focus+1] - 1
	}
	if line < m.offset {
		m.offset = line
	}
	if last >= m.offset+h {
		m.offset = min(line, last-h+1)
	}
}

// View renders the form.
func (m *Model) View() string {
	st := m.c.Styles
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	lines, _ := m.lines()
	head := st.Title.Render("New experiment") + st.Muted.Render("  saved as a session, run in the background")
	h := max(m.height-1, 1)
	off := min(m.offset, max(len(lines)-h, 0))
	lines = lines[off:min(off+h, len(lines))]
	return draw.Fit(head+"\n"+strings.Join(lines, "\n"), m.width, m.height)
}
