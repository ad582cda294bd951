package newexp

import (
	"strings"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// Open returns the form as a screen of the workbench, launching with l:
// the default experiment, or, when from is set, the experiment and
// variants of session from (an id, a unique prefix or "last") to edit as
// a new one. Init then says in the status bar whose copy it is and what
// the form could not hold.
func Open(c *common.Common, l launch.Launcher, from string) (*Model, error) {
	m := New(c, l)
	if from == "" {
		return m, nil
	}
	s, err := c.Store.MatchSession(from)
	if err != nil {
		return nil, err
	}
	exp, resolved, err := runner.LoadSession(s)
	if err != nil {
		return nil, err
	}
	variants := make([]runner.Variant, len(resolved))
	for i, r := range resolved {
		variants[i] = r.Variant
	}
	m.note = "a copy of " + s.ID() + "'s experiment"
	if notes := m.Prefill(exp, variants); len(notes) > 0 {
		m.note += "; " + strings.Join(notes, "; ")
	}
	return m, nil
}

// Title names the screen.
func (m *Model) Title() string { return "New experiment" }

// Capturing reports that the form takes every key: q and ? type into
// its fields.
func (m *Model) Capturing() bool { return true }

// Done reports whether the form's experiment launched: the dashboard that
// opens then replaces the form.
func (m *Model) Done() bool { return m.launched }

// Close releases nothing: the form holds no tail.
func (m *Model) Close() error { return nil }
