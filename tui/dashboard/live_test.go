package dashboard

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
)

// store makes a session whose baseline is finished and whose optimized
// run has written its first 300 batches; running marks optimized as
// running (a pid file naming this process).
func store(t *testing.T, running bool) (*common.Common, *sessions.Session, *sessions.JournalWriter, []profile.Event) {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Create(sessions.SessionMeta{Variants: []sessions.Variant{{Name: "baseline"}, {Name: "optimized"}}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(jw *sessions.JournalWriter, evs []profile.Event) {
		if err := jw.WriteEvents(evs); err != nil {
			t.Fatal(err)
		}
		if err := jw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	jw, err := sess.OpenJournal("baseline")
	if err != nil {
		t.Fatal(err)
	}
	write(jw, collect(synth.Options{Run: "baseline", Epochs: 2, Batches: 100, Seed: 1}))
	jw.Close()
	opt := collect(synth.Options{Run: "optimized", Epochs: 2, Batches: 200, Samplers: 2, Seed: 2})
	jw, err = sess.OpenJournal("optimized")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jw.Close() })
	cut := 1500
	if !running {
		cut = len(opt)
	}
	write(jw, opt[:cut])
	if running {
		if err := sess.WritePid("optimized", os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	c := common.New(st, common.Options{NoColor: true})
	c.SetSize(200, 50)
	return c, sess, jw, opt[cut:]
}

func runEvents(m *Model, i int) int64 {
	m.set.Lock()
	defer m.set.Unlock()
	return m.set.Runs()[i].Events
}

func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestLive follows a running run: events appended to its journal reach
// the dashboard, and run_end ends the feed.
func TestLive(t *testing.T) {
	c, sess, jw, rest := store(t, true)
	m, err := New(c, sess.ID()[:8], false) // an id prefix
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.minGap = 0
	if !m.live || !strings.Contains(m.Title(), "(live)") || !strings.Contains(m.Title(), sess.ID()) {
		t.Fatalf("not live: %q", m.Title())
	}
	if len(m.names) != 2 || m.names[0] != "baseline" {
		t.Fatalf("runs %v", m.names)
	}
	wait(t, "the journals", func() bool {
		m.set.Lock()
		defer m.set.Unlock()
		return m.set.Runs()[1].Events == 1500 && m.set.Runs()[0].Ended
	})
	v := m.View()
	if !strings.Contains(v, "running") || !strings.Contains(v, "1500 events") {
		t.Errorf("live frame:\n%s", v)
	}
	// the answers of both runs, the running one's from what it wrote so far
	if n := strings.Count(ansi.Strip(v), "Answers exposed"); n != 2 || !strings.Contains(ansi.Strip(v), "bound by") && !strings.Contains(ansi.Strip(v), "mixed") {
		t.Errorf("live frame with %d answers panes:\n%s", n, v)
	}
	if cmd := m.Init(); cmd == nil {
		t.Fatal("no tick")
	}
	if cmd := m.Update(tickMsg{id: m.id}); cmd == nil {
		t.Error("the tick stopped while a run is live")
	}
	// the focus follows the run in progress (optimized), not the finished
	// baseline, until the user picks a run
	if m.focus != 1 {
		t.Errorf("live focus on run %d, want the running optimized (1)", m.focus)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	m.Update(tickMsg{id: m.id})
	if m.focus != 0 {
		t.Errorf("after tab: focus %d, want the picked baseline (0)", m.focus)
	}
	if err := jw.WriteEvents(rest); err != nil {
		t.Fatal(err)
	}
	if err := jw.Flush(); err != nil {
		t.Fatal(err)
	}
	n := int64(1500 + len(rest))
	wait(t, "the rest of the journal", func() bool { return runEvents(m, 1) == n })
	wait(t, "the feeds to end", func() bool { return !m.set.Active() })
	v = m.View()
	if strings.Contains(v, "running") || !strings.Contains(v, "2/2") {
		t.Errorf("finished frame:\n%s", v)
	}
	m.set.Lock()
	if a := m.set.Runs()[1].Answers(); a == nil || a.Events != n || a.Run.Status == "" {
		t.Errorf("answers of the ended run: %+v", a)
	}
	m.set.Unlock()
	if cmd := m.Update(tickMsg{id: m.id}); cmd != nil {
		t.Error("the tick goes on after every run ended and was drawn")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFinishedOpensAtTheEnd: a finished session opens as a replay at its
// end; forcing a replay starts it at 0.
func TestFinishedOpensAtTheEnd(t *testing.T) {
	c, sess, _, _ := store(t, false)
	m, err := New(c, "last", false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.live || m.replay == nil || m.replay.Position() != m.replay.Duration() {
		t.Fatalf("live %v, replay at %v of %v", m.live, m.replay.Position(), m.replay.Duration())
	}
	wait(t, "the whole replay", func() bool { return m.replay.Delivered() == m.replay.Len() && runEvents(m, 1) > 0 })
	r, err := New(c, sess.ID(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !strings.Contains(r.Title(), "(replay)") || r.replay.Position() > time.Second {
		t.Errorf("forced replay: %q at %v", r.Title(), r.replay.Position())
	}
}

func TestNewErrors(t *testing.T) {
	c, _, _, _ := store(t, false)
	if _, err := New(c, "nosuchsession", false); !errors.Is(err, sessions.ErrNoMatch) {
		t.Errorf("unknown session: %v", err)
	}
	empty, err := c.Store.Create(sessions.SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(c, empty.ID(), false); err == nil || !strings.Contains(err.Error(), "no runs") {
		t.Errorf("session without runs: %v", err)
	}
	if _, err := New(common.New(nil, common.Options{}), "x", false); err == nil {
		t.Error("no store: no error")
	}
}
