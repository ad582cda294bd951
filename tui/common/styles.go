package common

import (
	"image/color"

	"charm.land/lipgloss/v2"

	"github.com/gnnscope/gnnscope/profile"
)

// Stages are the stage names as they appear in span events, in the order
// the legend lists them: profile's standard stages.
var Stages = profile.StageNames()

// Glyphs are the characters charts and tables draw with.
type Glyphs struct {
	Full     string // a filled cell
	Empty    string // an empty cell
	HLine    string // a horizontal rule
	VLine    string // a vertical rule
	Budget   string // the budget line on the memory chart
	OOM      string // an OOM mark
	Guard    string // a memory guard's action (the batch's predicted peak)
	Cursor   string // the selection marker in lists
	Braille  bool   // whether charts may use braille dots
	Spark    []string
	Ellipsis string
}

// Styles are every style the workbench renders with.
type Styles struct {
	App       lipgloss.Style
	Title     lipgloss.Style
	Header    lipgloss.Style
	Muted     lipgloss.Style
	Selected  lipgloss.Style
	Error     lipgloss.Style
	Warn      lipgloss.Style
	OK        lipgloss.Style
	Border    lipgloss.Style
	StatusBar lipgloss.Style
	HelpKey   lipgloss.Style
	HelpDesc  lipgloss.Style
	Budget    lipgloss.Style
	OOM       lipgloss.Style
	// Stage colors a span of each stage; StageGlyph is its character when
	// color is off (or always, in legend entries).
	Stage      map[string]lipgloss.Style
	StageGlyph map[string]string
	// Series colors the n-th line of a chart (runs, layers).
	Series []lipgloss.Style
	Glyphs Glyphs
	// Color reports whether colors are in use.
	Color bool
}

// StageStyle returns the style of a stage, falling back to Muted for an
// unknown one.
func (s *Styles) StageStyle(stage string) lipgloss.Style {
	if st, ok := s.Stage[stage]; ok {
		return st
	}
	return s.Muted
}

// Glyph returns the character a stage's span is drawn with.
func (s *Styles) Glyph(stage string) string {
	if g, ok := s.StageGlyph[stage]; ok {
		return g
	}
	return "?"
}

// SeriesStyle returns the style of the i-th series, cycling.
func (s *Styles) SeriesStyle(i int) lipgloss.Style {
	if len(s.Series) == 0 {
		return lipgloss.NewStyle()
	}
	return s.Series[i%len(s.Series)]
}

// NewStyles builds the styles for the options.
func NewStyles(opts Options) *Styles {
	s := &Styles{Color: !opts.NoColor}
	plain := lipgloss.NewStyle()
	fg := func(c string) lipgloss.Style {
		if opts.NoColor {
			return plain
		}
		return plain.Foreground(lipgloss.Color(c))
	}
	bg := func(c string) lipgloss.Style {
		if opts.NoColor {
			return plain
		}
		return plain.Background(lipgloss.Color(c))
	}
	_ = bg
	s.App = plain
	s.Title = fg("#7D56F4").Bold(true)
	s.Header = fg("#A0A0FF").Bold(true)
	s.Muted = fg("#808080")
	if opts.NoColor {
		s.Muted = plain.Faint(true)
	}
	s.Selected = plain.Reverse(true)
	s.Error = fg("#FF5F5F").Bold(true)
	s.Warn = fg("#FFAF00")
	s.OK = fg("#5FD75F")
	s.Border = fg("#5F5F87")
	s.StatusBar = fg("#D0D0D0")
	s.HelpKey = fg("#87AFFF").Bold(true)
	s.HelpDesc = s.Muted
	s.Budget = fg("#FF5F5F")
	s.OOM = fg("#FF0000").Bold(true)

	colors := map[string]string{
		profile.StageSample:      "#5FAFFF",
		profile.StageTransfer:    "#FFAF5F",
		profile.StageTrain:       "#5FD75F",
		profile.StageForward:     "#5FD75F",
		profile.StageBackward:    "#00AF87",
		profile.StageStep:        "#AFD700",
		profile.StageEval:        "#D75FD7",
		profile.StageHistoryPull: "#D7AF87",
		profile.StageHistoryPush: "#AF875F",
		profile.StageCache:       "#87D7D7",
		profile.StageGuard:       "#FF8787",
		profile.StageWait:        "#5F5F5F",
		profile.StageSetup:       "#808080",
	}
	s.Stage = make(map[string]lipgloss.Style, len(colors))
	for k, c := range colors {
		s.Stage[k] = fg(c)
	}
	s.StageGlyph = map[string]string{
		profile.StageSample: "s", profile.StageTransfer: "t", profile.StageTrain: "T",
		profile.StageForward: "f", profile.StageBackward: "b", profile.StageStep: "o",
		profile.StageEval: "e", profile.StageHistoryPull: "p", profile.StageHistoryPush: "u",
		profile.StageCache: "c", profile.StageGuard: "g", profile.StageWait: "w",
		profile.StageSetup: ".",
	}
	for _, c := range []string{"#5FAFFF", "#FFAF5F", "#5FD75F", "#D75FD7", "#FFD700", "#87D7D7"} {
		s.Series = append(s.Series, fg(c))
	}
	if opts.ASCII {
		s.Glyphs = Glyphs{Full: "#", Empty: " ", HLine: "-", VLine: "|", Budget: "=", OOM: "X", Guard: "g", Cursor: ">",
			Spark: []string{" ", ".", ":", "-", "=", "+", "*", "#"}, Ellipsis: "..."}
	} else {
		s.Glyphs = Glyphs{Full: "█", Empty: " ", HLine: "─", VLine: "│", Budget: "┄", OOM: "✖", Guard: "◇", Cursor: "▶", Braille: true,
			Spark: []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}, Ellipsis: "…"}
	}
	return s
}

// ColorOf is a helper for components that need a raw color (for example
// ntcharts line styles); it returns nil when color is off.
func (s *Styles) ColorOf(hex string) color.Color {
	if !s.Color {
		return nil
	}
	return lipgloss.Color(hex)
}
