package newexp

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// TestOpen: the form opens blank, or as a copy of a session's
// experiment that its Init names in the status bar; a session that is
// not there is an error naming it.
func TestOpen(t *testing.T) {
	st := fixture.Standard(t)
	fixture.Add(t, st, fixture.Session{ID: "20260104-010101-eeee", Name: "mine", Model: "gcn", Variants: []string{"baseline", "mem-guard"}})
	c := fixture.Common(st, 100, 30)
	var launched []runner.Experiment
	l := fixture.Launcher(&launched)
	blank, err := Open(c, l, "")
	if err != nil || blank.note != "" {
		t.Fatalf("blank: %v, note %q", err, blank.note)
	}
	if _, err := Open(c, l, "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("a missing session: %v", err)
	}
	m, err := Open(c, l, "20260104-010101-eeee")
	if err != nil {
		t.Fatal(err)
	}
	if exp, _, _ := m.Experiment(); exp.Name != "mine" || exp.Train.Model != "gcn" {
		t.Errorf("copy: %+v", exp)
	}
	var msgs []tea.Msg
	fixture.Drive(&m, &msgs, fixture.Step[*Model], m.Init())
	var status []string
	for _, msg := range msgs {
		if s, ok := msg.(common.StatusMsg); ok {
			status = append(status, s.Text)
		}
	}
	if len(status) != 1 || !strings.HasPrefix(status[0], "a copy of 20260104-010101-eeee's experiment") {
		t.Errorf("status at Init: %q", status)
	}
	if m.Done() || !m.Capturing() || m.Title() != "New experiment" {
		t.Errorf("done %v, capturing %v, title %q", m.Done(), m.Capturing(), m.Title())
	}
}
