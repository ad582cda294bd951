package compare

import (
	"charm.land/lipgloss/v2"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
)

// statusStyle is the style of a run status.
func statusStyle(c *common.Common, status string) lipgloss.Style {
	st := c.Styles
	switch status {
	case profile.StatusOK:
		return st.OK
	case sessions.StatusRunning, runner.StatusPending:
		return st.Warn
	case profile.StatusCanceled, sessions.StatusUnknown, "not started":
		return st.Muted
	}
	return st.Error
}
