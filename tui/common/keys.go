package common

import (
	"strings"

	"charm.land/bubbles/v2/key"
)

// KeyMap is every key binding of the workbench; the help overlay lists them
// all from here.
type KeyMap struct {
	Quit, Help, Back              key.Binding
	Up, Down, Left, Right         key.Binding
	PageUp, PageDown, Top, Bottom key.Binding
	Open, NewExperiment, Launch   key.Binding
	Edit                          key.Binding
	Replay, Compare, Export       key.Binding
	Delete, Cancel, Confirm       key.Binding
	Select, Refresh, NextPane     key.Binding
	Pause, Faster, Slower         key.Binding
	SeekBack, SeekForward         key.Binding
	ZoomIn, ZoomOut               key.Binding
	// charts of the dashboard
	Overlay    key.Binding
	SmoothMore key.Binding
	SmoothLess key.Binding
	LogScale   key.Binding
	// the compare screen's charts
	NextChart key.Binding
	TTAAxis   key.Binding
	// the dashboard's timeline
	PanLeft, PanRight, LaneUp, LaneDown key.Binding
	CursorLeft, CursorRight             key.Binding
	EpochDigits, FirstEpoch, LastEpoch  key.Binding
	Details, Bars, Mouse                key.Binding
	Fold, FoldNode                      key.Binding
}

// DefaultKeyMap is the workbench's keymap.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Quit:          b("q", "quit (runs keep running)", "q", "ctrl+c"),
		Help:          b("?", "toggle help", "?"),
		Back:          b("esc", "back", "esc", "backspace"),
		Up:            b("↑/k", "up", "up", "k"),
		Down:          b("↓/j", "down", "down", "j"),
		Left:          b("←/h", "left / previous", "left", "h"),
		Right:         b("→/l", "right / next", "right", "l"),
		PageUp:        b("pgup", "page up", "pgup"),
		PageDown:      b("pgdn", "page down", "pgdown"),
		Top:           b("g", "top", "g", "home"),
		Bottom:        b("G", "bottom", "G", "end"),
		Open:          b("enter", "open", "enter"),
		NewExperiment: b("n", "new experiment", "n"),
		Edit:          b("e", "new experiment from it", "e"),
		Launch:        b("L", "launch the default experiment", "L"),
		Replay:        b("r", "replay", "r"),
		Compare:       b("c", "compare", "c"),
		Export:        b("x", "export", "x"),
		Delete:        b("D", "delete (asks first)", "D"),
		Cancel:        b("K", "cancel a running session", "K"),
		Confirm:       b("y", "confirm", "y"),
		Select:        b("space", "select / pause", "space"),
		Refresh:       b("R", "refresh", "R"),
		NextPane:      b("tab", "next pane / run", "tab"),
		Pause:         b("p", "pause / resume replay", "p", "space"),
		Faster:        b("+", "replay faster", "+", "="),
		Slower:        b("-", "replay slower", "-"),
		SeekBack:      b("[", "seek back 10%", "["),
		SeekForward:   b("]", "seek forward 10%", "]"),
		ZoomIn:        b("z", "zoom timeline in", "z"),
		ZoomOut:       b("Z", "zoom timeline out", "Z"),
		// charts of the dashboard
		Overlay:     b("o", "overlay the runs in one chart", "o"),
		SmoothMore:  b("s", "smooth curves more (EMA)", "s"),
		SmoothLess:  b("S", "smooth curves less", "S"),
		LogScale:    b("y", "log scale for the loss charts", "y"),
		NextChart:   b("w", "compare: the next chart, when they do not fit side by side", "w"),
		TTAAxis:     b("a", "compare: time to accuracy over wall time or over epochs", "a"),
		PanLeft:     b("←/h", "pan earlier", "left", "h"),
		PanRight:    b("→/l", "pan later", "right", "l"),
		LaneUp:      b("↑/k", "cursor a lane up", "up", "k"),
		LaneDown:    b("↓/j", "cursor a lane down", "down", "j"),
		CursorLeft:  b("<", "cursor a cell earlier", "<", ",", "shift+left"),
		CursorRight: b(">", "cursor a cell later", ">", ".", "shift+right"),
		EpochDigits: b("0-9", "epoch number for g", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
		FirstEpoch:  b("g", "first epoch (N g: epoch N)", "g", "home"),
		LastEpoch:   b("G", "last epoch", "G", "end"),
		Details:     b("enter", "details of the span at cursor", "enter"),
		Bars:        b("b", "per-epoch bars / timeline", "b"),
		Fold:        b("f", "fold / unfold the rank or node at the cursor", "f"),
		FoldNode:    b("F", "fold the node of the rank at the cursor", "F"),
		Mouse:       key.NewBinding(key.WithHelp("mouse", "wheel zoom, drag pan, click")),
	}
}

// All lists the bindings with a section name each, for the help overlay.
func (k KeyMap) All() []Section {
	return []Section{
		{"Everywhere", []key.Binding{k.Help, k.Quit, k.Back}},
		{"Lists", []key.Binding{k.Up, k.Down, k.Left, k.Right, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Select, k.Open, k.Refresh}},
		{"Sessions", []key.Binding{k.NewExperiment, k.Edit, k.Launch, k.Replay, k.Compare, k.Export, k.Delete, k.Cancel, k.Confirm}},
		{"Dashboard", []key.Binding{k.NextPane, k.Pause, k.Faster, k.Slower, k.SeekBack, k.SeekForward}},
		{"Timeline", []key.Binding{k.ZoomIn, k.ZoomOut, k.PanLeft, k.PanRight, k.CursorLeft, k.CursorRight, k.LaneUp, k.LaneDown,
			k.Details, k.EpochDigits, k.FirstEpoch, k.LastEpoch, k.Bars, k.Fold, k.FoldNode, k.Mouse}},
		{"Charts", []key.Binding{k.Overlay, k.SmoothMore, k.SmoothLess, k.LogScale, k.NextChart, k.TTAAxis}},
	}
}

// Section is a titled group of bindings.
type Section struct {
	Title    string
	Bindings []key.Binding
}

// asciiKeys replaces the arrow glyphs of key help with words.
var asciiKeys = strings.NewReplacer("↑", "up", "↓", "down", "←", "left", "→", "right")

// KeyName is the key column of a binding's help, in plain words when the
// context draws with ASCII only.
func (c *Common) KeyName(b key.Binding) string {
	k := b.Help().Key
	if c.Opts.ASCII {
		return asciiKeys.Replace(k)
	}
	return k
}
