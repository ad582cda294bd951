package common

import (
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// NewInput returns a text input styled for the workbench: no prompt, a
// steady (non-blinking) cursor, so an idle form schedules no redraws, and
// no colors when color is off.
func (c *Common) NewInput(placeholder string) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.Placeholder = placeholder
	st := textinput.DefaultDarkStyles()
	plain := lipgloss.NewStyle()
	st.Focused.Text, st.Blurred.Text = plain, plain
	st.Focused.Prompt, st.Blurred.Prompt = plain, plain
	st.Focused.Placeholder, st.Blurred.Placeholder = c.Styles.Muted, c.Styles.Muted
	st.Focused.Suggestion, st.Blurred.Suggestion = c.Styles.Muted, c.Styles.Muted
	st.Cursor.Blink = false
	if !c.Styles.Color {
		st.Cursor.Color = nil
	}
	in.SetStyles(st)
	return in
}
