package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
	"github.com/gnnscope/gnnscope/tui/sessionlist"
)

// probe is a screen the root has never heard of: it records what the
// root hands it, goes back on esc, and captures every key while typing.
type probe struct {
	name    string
	typing  bool
	done    bool
	keys    []string
	other   []tea.Msg
	clicks  []tea.Mouse
	w, h    int
	inits   int
	closed  int
	focused int
	blurred int
}

type pingMsg struct{}

func (p *probe) Init() tea.Cmd { p.inits++; return nil }

func (p *probe) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		p.keys = append(p.keys, msg.String())
		if msg.String() == "esc" {
			return common.Back
		}
	case tea.MouseMsg:
		p.clicks = append(p.clicks, msg.Mouse())
	default:
		p.other = append(p.other, msg)
	}
	return nil
}

func (p *probe) View() string {
	return "probe " + p.name + " keys " + strings.Join(p.keys, ",")
}

func (p *probe) SetSize(w, h int) { p.w, p.h = w, h }
func (p *probe) Capturing() bool  { return p.typing }
func (p *probe) Title() string    { return "Probe " + p.name }
func (p *probe) Close() error     { p.closed++; return nil }
func (p *probe) Done() bool       { return p.done }
func (p *probe) Focus() tea.Cmd   { p.focused++; return nil }
func (p *probe) Blur()            { p.blurred++ }
func (p *probe) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithHelp("w", "wiggle"))}
}

// TestAddedScreen: a screen pushed through common.PushMsg is drawn under
// its title with its keys in the status bar, sized to the body, gets
// the keys (q and ? too while it captures), the mouse in its own
// coordinates and the broadcast messages, and leaves on its own back.
func TestAddedScreen(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	p := &probe{name: "one"}
	hs.send(common.PushMsg{Screen: p})
	if hs.m.Screen() != p || hs.m.Depth() != 2 || p.inits != 1 {
		t.Fatalf("push: depth %d, inits %d", hs.m.Depth(), p.inits)
	}
	if p.w != 80 || p.h != 22 {
		t.Errorf("size %dx%d, want the body's 80x22", p.w, p.h)
	}
	hs.press("a", "tab")
	lines := strings.Split(ansi.Strip(hs.view()), "\n")
	if !strings.Contains(lines[0], "gnnscope › Probe one") || !strings.HasPrefix(lines[1], "probe one keys a,tab") ||
		!strings.Contains(lines[len(lines)-1], "w wiggle") {
		t.Errorf("view:\n%s", strings.Join(lines, "\n"))
	}
	hs.send(tea.MouseClickMsg{X: 3, Y: 5, Button: tea.MouseLeft})
	if len(p.clicks) != 1 || p.clicks[0].X != 3 || p.clicks[0].Y != 4 {
		t.Errorf("clicks %+v, want one at 3,4 (under the header)", p.clicks)
	}
	hs.send(pingMsg{})
	if len(p.other) != 1 {
		t.Errorf("broadcast: %v", p.other)
	}
	// while it captures, q and ? are its own
	p.typing = true
	hs.press("q", "?")
	if hs.quit() || hs.m.HelpOpen() || strings.Join(p.keys, ",") != "a,tab,q,?" {
		t.Errorf("capturing: quit %v help %v keys %v", hs.quit(), hs.m.HelpOpen(), p.keys)
	}
	p.typing = false
	hs.press("?")
	if !hs.m.HelpOpen() || len(p.keys) != 4 {
		t.Errorf("not capturing: help %v keys %v", hs.m.HelpOpen(), p.keys)
	}
	hs.press("?")
	// a second screen over it, then back twice
	q := &probe{name: "two"}
	hs.send(common.PushMsg{Screen: q})
	if p.blurred != 1 || hs.m.Depth() != 3 {
		t.Errorf("covered: blurred %d, depth %d", p.blurred, hs.m.Depth())
	}
	hs.press("esc")
	if hs.m.Screen() != p || q.closed != 1 || p.focused != 1 {
		t.Errorf("back: on %q, closed %d, focused %d", hs.m.Screen().Title(), q.closed, p.focused)
	}
	hs.press("esc")
	if !on[*sessionlist.Model](hs.m) || p.closed != 1 || hs.m.Depth() != 1 {
		t.Errorf("back to the list: on %q, closed %d", hs.m.Screen().Title(), p.closed)
	}
}

// TestDoneScreenIsReplaced: a screen that is done with (a form that
// launched) is replaced by the next one, not covered; Close releases
// every screen once.
func TestDoneScreenIsReplaced(t *testing.T) {
	hs := newHarness(t, fixture.Standard(t), 80, 24, common.Options{})
	p, q := &probe{name: "one"}, &probe{name: "two"}
	hs.run(hs.m.Push(p))
	p.done = true
	hs.run(hs.m.Push(q))
	if hs.m.Depth() != 2 || hs.m.Screen() != q || p.closed != 1 {
		t.Errorf("depth %d, top %q, closed %d", hs.m.Depth(), hs.m.Screen().Title(), p.closed)
	}
	hs.m.Close()
	if q.closed != 1 || hs.m.Depth() != 1 {
		t.Errorf("Close: closed %d, depth %d", q.closed, hs.m.Depth())
	}
}
