package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/compare"
	"github.com/gnnscope/gnnscope/tui/dashboard"
	"github.com/gnnscope/gnnscope/tui/newexp"
)

// open builds and pushes the screen a navigation message asks for; ok
// reports whether msg was one. These are the screens that screens cannot
// build themselves (the dashboard and the comparison open each other; the
// form needs the root's launcher); a screen that can build another pushes
// it with common.PushMsg, and the root needs no change for it.
func (m *Model) open(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case common.OpenDashboardMsg:
		return m.openDashboard(msg.Session, msg.Replay), true
	case common.OpenCompareMsg:
		cm, err := compare.New(m.c, msg.Refs)
		return m.pushOrFail(cm, err), true
	case common.OpenNewMsg:
		form, err := newexp.Open(m.c, m.launch, msg.From)
		return m.pushOrFail(form, err), true
	}
	return nil, false
}

// openDashboard shows a session's dashboard.
func (m *Model) openDashboard(id string, replay bool) tea.Cmd {
	d, err := dashboard.New(m.c, id, replay)
	return m.pushOrFail(d, err)
}

// pushOrFail pushes s, or shows err in the status bar when it is set.
func (m *Model) pushOrFail(s common.Screen, err error) tea.Cmd {
	if err != nil {
		return m.setStatus(common.StatusMsg{Text: err.Error(), Err: true})
	}
	return m.push(s)
}
