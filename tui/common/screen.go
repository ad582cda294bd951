package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Screen is one screen of the workbench. The root keeps a stack of them
// (the sessions list at the bottom, the screen on display at the top)
// and knows none of them by name: it draws the top one's View under a
// header naming its Title, lists its ShortHelp in the status bar, and
// hands it every key but ctrl+c, and q and ? unless it is Capturing.
// Each screen owns its keys, back (esc) included: it asks the root to
// return with Back.
type Screen interface {
	// Init starts what the screen shows (a first load, a tick).
	Init() tea.Cmd
	// Update handles a message and changes the screen in place. The top
	// screen gets the keys and the mouse (in its own coordinates); every
	// screen of the stack gets the other messages and acts on its own.
	Update(msg tea.Msg) tea.Cmd
	// View draws the screen in the area SetSize gave it.
	View() string
	// SetSize sets the area the screen draws in.
	SetSize(w, h int)
	// Capturing reports whether the screen takes every key (a text
	// field, a dialog, a confirmation), q and ? included.
	Capturing() bool
	// Title names the screen in the header.
	Title() string
	// ShortHelp lists the keys the status bar shows for the screen.
	ShortHelp() []key.Binding
	// Close releases what the screen holds (journal tails, replays) when
	// it leaves the stack.
	Close() error
}

// Focuser is a screen that wants to know when another screen covers it
// (Blur) and when it is on display again (Focus).
type Focuser interface {
	Focus() tea.Cmd
	Blur()
}

// Finisher is a screen that can be done with (a form whose experiment
// launched): the next screen the root opens replaces it instead of
// going over it.
type Finisher interface {
	Done() bool
}

// PushMsg asks the root to show Screen over the one on display; the root
// sizes it and runs its Init.
type PushMsg struct{ Screen Screen }

// Back is the command that asks the root to return to the previous
// screen (BackMsg).
func Back() tea.Msg { return BackMsg{} }
