package common

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/sessions"
)

// Options are the user's display choices, fixed for a program's lifetime.
type Options struct {
	// NoColor drops every foreground and background color (NO_COLOR or
	// --no-color); emphasis uses bold, reverse and distinct glyphs instead.
	NoColor bool
	// ASCII draws with 7-bit characters only: no braille, no block
	// elements, no box drawing.
	ASCII bool
	// MaxFPS bounds redraws per second (at most 10).
	MaxFPS int
}

// Common is the shared context handed to every screen and component. The
// root model owns it and updates Width and Height on resize; components read
// it and keep their own size for the area they are given.
type Common struct {
	Width, Height int
	Styles        *Styles
	Keys          KeyMap
	Opts          Options
	Store         *sessions.Store
	// Tick schedules a timer message (tea.Tick by default); tests that
	// drive models step by step replace it so no timer fires behind them.
	Tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
}

// New builds a context for a store and options.
func New(store *sessions.Store, opts Options) *Common {
	if opts.MaxFPS <= 0 || opts.MaxFPS > 10 {
		opts.MaxFPS = 10
	}
	return &Common{
		Styles: NewStyles(opts),
		Keys:   DefaultKeyMap(),
		Opts:   opts,
		Store:  store,
		Tick:   tea.Tick,
	}
}

// SetSize records the terminal size.
func (c *Common) SetSize(w, h int) { c.Width, c.Height = w, h }
