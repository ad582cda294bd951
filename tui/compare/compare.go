package compare

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/exporter"
	"github.com/gnnscope/gnnscope/tui/plot"
)

// RefreshInterval is how often the table is recomputed while a compared
// run is running.
const RefreshInterval = 2 * time.Second

var nextID atomic.Int64

// Messages of the screen's own commands; id tells this screen's from an
// earlier one's.
type (
	computedMsg struct {
		id  int64
		c   *sessions.Comparison
		err error
	}
	refreshMsg struct{ id int64 }
)

// Model is the comparison screen.
type Model struct {
	c      *common.Common
	id     int64
	refs   []sessions.RunRef
	args   []string
	cmp    *sessions.Comparison
	err    string
	busy   bool
	width  int
	height int
	row    int // first table row shown (below the header)
	col    int // first run column shown
	smooth int // the time-to-accuracy chart's smoothing: an index in plot.Smoothing
	chart  int // the chart shown under the table when they do not fit side by side
	// byEpoch draws time to accuracy over epochs instead of wall time
	byEpoch bool
	export  exporter.Slot
}

// New resolves the references ("SESSION", "SESSION/RUN", unique prefixes,
// "last") and returns the screen; Init computes the comparison.
func New(c *common.Common, refs []string) (*Model, error) {
	if len(refs) == 0 {
		return nil, errors.New("compare: no runs selected")
	}
	runs, err := c.Store.SelectRuns(refs)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	return &Model{c: c, id: nextID.Add(1), refs: runs, args: refs, busy: true}, nil
}

// Init computes the comparison.
func (m *Model) Init() tea.Cmd { return m.compute() }

func (m *Model) compute() tea.Cmd {
	refs, id := m.refs, m.id
	return func() tea.Msg {
		c, err := runner.CompareRuns(refs, sessions.CompareOptions{Waterfall: runner.WaterfallOptions()})
		if err != nil {
			err = fmt.Errorf("compare: %w", err)
		}
		return computedMsg{id, c, err}
	}
}

// Comparison returns the table shown (nil before the first computation).
func (m *Model) Comparison() *sessions.Comparison { return m.cmp }

// Title names the screen.
func (m *Model) Title() string {
	if len(m.refs) > 0 && m.oneSession() {
		return fmt.Sprintf("Compare %d runs of %s", len(m.refs), m.refs[0].Session.ID())
	}
	return fmt.Sprintf("Compare %d runs", len(m.refs))
}

func (m *Model) oneSession() bool {
	for _, r := range m.refs {
		if r.Session.ID() != m.refs[0].Session.ID() {
			return false
		}
	}
	return true
}

// Close releases nothing: the comparison holds no tail.
func (m *Model) Close() error { return nil }

// Capturing reports whether the export dialog is open (it takes every
// key).
func (m *Model) Capturing() bool { return m.export.IsOpen() }

// SetSize sets the area the screen draws in.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.export.SetWidth(w)
}

// live reports whether a compared run may still change.
func (m *Model) live() bool {
	if m.cmp == nil {
		return false
	}
	for _, r := range m.cmp.Runs {
		if r.Status == profile.StatusRunning || r.Status == profile.StatusPending {
			return true
		}
	}
	return false
}

// Update handles messages.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.export.Update(msg); ok {
		return cmd // the export dialog's
	}
	switch msg := msg.(type) {
	case computedMsg:
		if msg.id != m.id {
			return nil
		}
		m.busy = false
		if msg.err != nil {
			m.err = msg.err.Error()
			return nil
		}
		m.cmp, m.err = msg.c, ""
		if m.live() {
			id := m.id
			return m.c.Tick(RefreshInterval, func(time.Time) tea.Msg { return refreshMsg{id} })
		}
		return nil
	case refreshMsg:
		if msg.id != m.id || m.busy {
			return nil
		}
		m.busy = true
		return m.compute()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	rows, cols := m.tableSize()
	page := max(m.bodyRows()-1, 1)
	switch {
	case key.Matches(msg, k.Back):
		return common.Back
	case key.Matches(msg, k.Up):
		m.row--
	case key.Matches(msg, k.Down):
		m.row++
	case key.Matches(msg, k.PageUp):
		m.row -= page
	case key.Matches(msg, k.PageDown):
		m.row += page
	case key.Matches(msg, k.Top):
		m.row = 0
	case key.Matches(msg, k.Bottom):
		m.row = rows
	case key.Matches(msg, k.Left):
		m.col--
	case key.Matches(msg, k.Right):
		m.col++
	case key.Matches(msg, k.SmoothMore):
		m.smooth = min(m.smooth+1, len(plot.Smoothing)-1)
	case key.Matches(msg, k.SmoothLess):
		m.smooth = max(m.smooth-1, 0)
	case key.Matches(msg, k.NextChart):
		m.chart++
	case key.Matches(msg, k.TTAAxis):
		m.byEpoch = !m.byEpoch
	case key.Matches(msg, k.Refresh):
		if !m.busy {
			m.busy = true
			return m.compute()
		}
	case key.Matches(msg, k.Open):
		if len(m.refs) > 0 {
			ref := m.refs[min(max(m.col, 0), len(m.refs)-1)]
			return func() tea.Msg { return common.OpenDashboardMsg{Session: ref.Session.ID()} }
		}
	case key.Matches(msg, k.Export):
		if m.cmp == nil {
			return nil
		}
		t := exporter.Target{Title: m.Title(), Refs: m.refs, Comparison: m.cmp,
			Checked: []exporter.Kind{exporter.Markdown, exporter.CSV, exporter.LaTeX, exporter.Trace}}
		t.Title = strings.Replace(t.Title, "Compare", "comparison of", 1)
		if m.oneSession() {
			t.Session = m.refs[0].Session
		}
		m.export.Open(m.c, t, m.width)
	}
	m.row = min(max(m.row, 0), max(rows-m.bodyRows(), 0))
	m.col = min(max(m.col, 0), max(cols-1, 0))
	return nil
}

// ShortHelp lists the keys the status bar shows for this screen.
func (m *Model) ShortHelp() []key.Binding {
	if m.export.IsOpen() {
		return nil
	}
	k := m.c.Keys
	return []key.Binding{k.Up, k.Down, k.Left, k.Right, k.Export, k.Open, k.Refresh, k.SmoothMore, k.NextChart, k.TTAAxis, k.Back, k.Help, k.Quit}
}

// figure is one row of the table.
type figure struct {
	label string
	cell  func(r *sessions.RunFigures) string
}

func sec(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func opt(p *float64, digits int) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', digits, 64)
}

func ratio2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func bytesCell(p *int64) string {
	if p == nil {
		return "-"
	}
	return units.BytesFine(*p)
}

// figures are the table's rows after the configuration differences:
// the headline figures first, so they show without scrolling.
var figures = []figure{
	{"status", func(r *sessions.RunFigures) string { return r.StatusText() }},
	{"epochs", func(r *sessions.RunFigures) string {
		if r.Epochs == 0 {
			return "-"
		}
		return strconv.Itoa(r.Epochs)
	}},
	{"epoch mean s", func(r *sessions.RunFigures) string { return sec(r.EpochMeanS) }},
	{"speedup", func(r *sessions.RunFigures) string {
		if r.Speedup == 0 {
			return "-"
		}
		return strconv.FormatFloat(r.Speedup, 'f', 2, 64) + "x"
	}},
	{"95% interval", func(r *sessions.RunFigures) string {
		if r.Speedup == 0 || r.SpeedupMethod == "" {
			return "-"
		}
		return "[" + ratio2(r.SpeedupLo) + ", " + ratio2(r.SpeedupHi) + "]"
	}},
	{"per repeat", func(r *sessions.RunFigures) string {
		switch {
		case r.Speedup == 0:
			return "-"
		case r.SingleRun:
			return "single run"
		case r.SpeedupRepeats < 2:
			return "-"
		}
		return sessions.FormatRatios(r, 2, " ")
	}},
	{"host", func(r *sessions.RunFigures) string {
		if r.HostBusy != "" {
			return "busy"
		}
		return "-"
	}},
	{"bound by", func(r *sessions.RunFigures) string {
		if v := sessions.VerdictShort(r.Ledger); v != "" {
			return v
		}
		return "-"
	}},
	{"straggler", func(r *sessions.RunFigures) string {
		if r.Ranks < 2 {
			return "-"
		}
		return ratio(r.Straggler)
	}},
	{"test acc", func(r *sessions.RunFigures) string { return opt(r.TestAcc, 4) }},
	{"val acc", func(r *sessions.RunFigures) string { return opt(r.ValAcc, 4) }},
	{"cache hit rate", func(r *sessions.RunFigures) string { return opt(r.CacheHitRate, 3) }},
	{"cache H2D/epoch", func(r *sessions.RunFigures) string { return bytesCell(r.CacheH2DPerEpoch) }},
	{"epoch median s", func(r *sessions.RunFigures) string { return sec(r.EpochMedianS) }},
	{"epoch min s", func(r *sessions.RunFigures) string { return sec(r.EpochMinS) }},
	{"epoch max s", func(r *sessions.RunFigures) string { return sec(r.EpochMaxS) }},
	{"epoch sd s", func(r *sessions.RunFigures) string { return sec(r.EpochStdS) }},
	{"sample s", func(r *sessions.RunFigures) string { return sec(r.SampleS) }},
	{"transfer s", func(r *sessions.RunFigures) string { return sec(r.TransferS) }},
	{"train s", func(r *sessions.RunFigures) string { return sec(r.TrainS) }},
	{"eval s", func(r *sessions.RunFigures) string { return sec(r.EvalS) }},
	{"data wait s", func(r *sessions.RunFigures) string { return sec(r.DataWaitS) }},
	{"overlap", func(r *sessions.RunFigures) string { return ratio(r.Overlap) }},
	{"efficiency", func(r *sessions.RunFigures) string { return ratio(r.Efficiency) }},
	{"peak memory", func(r *sessions.RunFigures) string { return bytesCell(r.PeakBytes) }},
	{"p99 memory", func(r *sessions.RunFigures) string { return bytesCell(r.P99PeakBytes) }},
	{"OOMs", func(r *sessions.RunFigures) string { return strconv.FormatInt(r.OOMs, 10) }},
	{"guard actions", func(r *sessions.RunFigures) string { return strconv.FormatInt(r.GuardActions, 10) }},
	{"staleness mean", func(r *sessions.RunFigures) string { return opt(r.StaleMean, 2) }},
	{"staleness max", func(r *sessions.RunFigures) string { return opt(r.StaleMax, 2) }},
}

// table returns the header and the rows: the configuration keys that
// differ, then the figures. sep is the index of the first figure row.
func (m *Model) table() (header []string, rows [][]string, sep int) {
	c := m.cmp
	header = append(header, "")
	for _, r := range c.Runs {
		label := r.Label
		if label == c.Baseline {
			label += " (base)"
		}
		header = append(header, label)
	}
	for _, k := range c.ConfigKeys {
		row := []string{k}
		for _, r := range c.Runs {
			v, ok := r.Config[k]
			if !ok {
				v = "-"
			}
			row = append(row, v)
		}
		rows = append(rows, row)
	}
	sep = len(rows)
	distributed := slices.ContainsFunc(c.Runs, func(r sessions.RunFigures) bool { return r.Ranks > 1 })
	for _, f := range figures {
		if f.label == "straggler" && !distributed {
			continue // shown only beside a distributed run
		}
		if strings.HasPrefix(f.label, "cache ") && !c.HasCache() {
			continue // shown only when a run has a feature cache
		}
		row := []string{f.label}
		for i := range c.Runs {
			row = append(row, f.cell(&c.Runs[i]))
		}
		rows = append(rows, row)
	}
	return header, rows, sep
}

// tableSize returns the number of rows and run columns.
func (m *Model) tableSize() (int, int) {
	if m.cmp == nil {
		return 0, 0
	}
	_, rows, _ := m.table()
	return len(rows), len(m.cmp.Runs)
}

// notes are the lines below the table: the baseline and run errors,
// each wrapped to the width (never cut at the right edge).
func (m *Model) notes() []string {
	st := m.c.Styles
	var out []string
	add := func(style lipgloss.Style, text string) {
		for _, l := range draw.Wrap(text, max(m.width, 1)) {
			out = append(out, style.Render(l))
		}
	}
	if m.cmp.Baseline != "" {
		add(st.Muted, "speedup: median epoch time of "+m.cmp.Baseline+"'s variant over each run's; 95 % bootstrap interval over 3+ repeats, none from fewer")
	}
	for _, r := range m.cmp.Runs {
		if r.Error != "" {
			add(st.Error, r.Label+": "+string(r.Status)+": "+r.Error)
		}
		if r.Partial {
			add(st.Error, r.Label+": partial figures (the run stopped: "+string(r.Status)+"); no speedup")
		}
		for _, n := range r.OutcomeNotes(r.Label) {
			add(st.Muted, n)
		}
		if r.HostBusy != "" {
			add(st.Error, r.Label+": "+sessions.HostBusyLabel+" ("+r.HostBusy+")")
		}
	}
	// the notes take at most a third of the screen: the table's rows stay
	if limit := max(m.height/3, 2); len(out) > limit {
		more := len(out) - limit + 1
		out = append(out[:limit-1], st.Muted.Render(draw.Cut(fmt.Sprintf("… %d more lines of notes: gnnscope compare prints them all", more), max(m.width, 1), st.Glyphs.Ellipsis)))
	}
	return out
}

// bodyRows is the number of table rows that fit under the header.
func (m *Model) bodyRows() int {
	extra := 2 // table header, rule
	if m.cmp != nil && len(m.cmp.ConfigKeys) > 0 {
		extra++ // the rule under the configuration
	}
	extra += len(m.below())
	return max(m.height-extra, 1)
}

// below is what goes under the table, one line each: the notes, the
// charts when they fit (panes: time to accuracy, and the waterfall beside
// it), then the export dialog when it is open. A pane added to the screen
// goes here; the table's rows give way to it (bodyRows).
func (m *Model) below() []string {
	var out, dialog []string
	if m.cmp != nil {
		out = append(out, m.notes()...)
	}
	if m.export.IsOpen() {
		dialog = append([]string{""}, strings.Split(m.export.View(), "\n")...)
	}
	head := 2 // the table's header and rule
	if m.cmp != nil && len(m.cmp.ConfigKeys) > 0 {
		head++
	}
	if h := m.panesHeight(head + len(out) + len(dialog)); h > 0 {
		out = append(out, m.panesView(m.width, h)...)
	}
	return append(out, dialog...)
}

// columnWidths returns the width of the labels and of each run's column
// (index 0 unused) for a table w columns wide.
func columnWidths(header []string, rows [][]string, w int) (labelW int, colW []int) {
	for _, r := range rows {
		labelW = max(labelW, len(r[0]))
	}
	labelW = min(labelW, max(w/3, 8))
	colW = make([]int, len(header))
	for j := 1; j < len(header); j++ {
		colW[j] = len([]rune(header[j]))
		for _, r := range rows {
			colW[j] = max(colW[j], len([]rune(r[j])))
		}
		colW[j] = min(colW[j], 28)
		for _, r := range rows {
			if r[0] == "status" { // whole: "ok, skipped N of M batches (x %)"
				colW[j] = max(colW[j], min(len([]rune(r[j])), 40))
			}
		}
	}
	return labelW, colW
}

// visibleColumns returns the run columns [first, last) that fit in w from
// the scrolled-to column on, and the width they take with the labels.
func (m *Model) visibleColumns(colW []int, labelW, w int) (first, last, used int) {
	first = min(max(m.col, 0), max(len(colW)-2, 0)) + 1
	last, used = first, labelW
	for j := first; j < len(colW); j++ {
		if used+2+colW[j] > w && j > first {
			break
		}
		used += 2 + colW[j]
		last = j + 1
	}
	return first, last, used
}

// View renders the table in its area.
func (m *Model) View() string {
	st := m.c.Styles
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if m.cmp == nil {
		switch {
		case m.err != "":
			return draw.Fit(st.Error.Render(m.err), w, h)
		default:
			return draw.Fit(st.Muted.Render(fmt.Sprintf("reading %d journals...", len(m.refs))), w, h)
		}
	}
	header, rows, sepRow := m.table()
	labelW, colW := columnWidths(header, rows, w)
	first, last, used := m.visibleColumns(colW, labelW, w)
	line := func(cells []string, style func(j int, s string) string) string {
		var b strings.Builder
		b.WriteString(draw.PadRight(draw.Cut(cells[0], labelW, st.Glyphs.Ellipsis), labelW))
		for j := first; j < last; j++ {
			b.WriteString("  ")
			cell := draw.PadLeft(draw.Cut(cells[j], colW[j], st.Glyphs.Ellipsis), colW[j])
			b.WriteString(style(j, cell))
		}
		return b.String()
	}
	plain := func(_ int, s string) string { return s }
	var out []string
	hdr := line(header, func(_ int, s string) string { return st.Header.Render(s) })
	more := ""
	if first > 1 {
		more += "◀"
	}
	if last < len(header) {
		more += "▶"
	}
	if m.c.Opts.ASCII {
		more = strings.NewReplacer("◀", "<", "▶", ">").Replace(more)
	}
	if more != "" {
		hdr += " " + st.Muted.Render(more)
	}
	out = append(out, hdr)
	out = append(out, st.Border.Render(strings.Repeat(st.Glyphs.HLine, min(used, w))))
	body := m.bodyRows()
	start := min(max(m.row, 0), max(len(rows)-body, 0))
	for i := start; i < len(rows) && i < start+body; i++ {
		r := rows[i]
		if i == sepRow && i > start {
			// configuration above, figures below
			out = append(out, st.Border.Render(strings.Repeat(st.Glyphs.HLine, min(used, w))))
		}
		switch {
		case i < sepRow:
			out = append(out, line(r, func(_ int, s string) string { return st.Warn.Render(s) }))
		case r[0] == "speedup":
			out = append(out, st.Title.Render(line(r, plain)))
		case r[0] == "status":
			out = append(out, line(r, func(_ int, s string) string { return m.c.Styles.Status(profile.Status(strings.TrimSpace(s))).Render(s) }))
		default:
			out = append(out, line(r, plain))
		}
	}
	out = append(out, m.below()...)
	return draw.Fit(strings.Join(out, "\n"), w, h)
}
