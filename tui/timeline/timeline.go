package timeline

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Windows are the window lengths ZoomIn and ZoomOut step through, up to
// 0, the whole run. A zoom steps from the length on display (the run's
// own when it is shorter than the window), so even a sub-second run
// zooms in at the first press.
var Windows = []time.Duration{
	time.Microsecond, 2 * time.Microsecond, 5 * time.Microsecond,
	10 * time.Microsecond, 20 * time.Microsecond, 50 * time.Microsecond,
	100 * time.Microsecond, 200 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 0,
}

// defaultWindow is the window a timeline opens with.
const defaultWindow = int64(10 * time.Second)

// maxStages bounds the stages told apart in a cell; later stage ids share
// the last slot.
const maxStages = 32

// Model is a run's timeline. It caches its drawing until the run, the
// size or the view (window, cursor, selection, mode) changes.
type Model struct {
	styles *common.Styles
	ascii  bool
	w, h   int

	view // window, cursor, selection: see nav.go

	pens map[string]draw.Pen

	cache runstate.ViewCache

	cov   []int64 // scratch: coverage per lane row, cell and stage slot
	ep    epochs  // per-epoch sums, kept up to date as spans come
	geo   geometry
	mixed map[[2]string]draw.Pen // pens of markers: a stage's on another's color

	linked linkCache // the selected span's links (select.go)

	// folds are the user's fold choices by rank or node key (groups.go):
	// true folded; focus the group whose row takes the cursor next
	folds map[string]bool
	focus string
	top   int // the first lane row on display
	// binned is how many spans a window holds before the drawing sums
	// the run's bins (binnedSpans)
	binned int
}

// New returns a timeline drawing with c's styles and options.
func New(c *common.Common) *Model {
	m := &Model{styles: c.Styles, ascii: c.Opts.ASCII, pens: map[string]draw.Pen{}, mixed: map[[2]string]draw.Pen{}}
	m.view = view{win: defaultWindow, follow: true, sel: -1, count: -1}
	m.binned = binnedSpans
	m.linked.sel = -1
	return m
}

// SetSize sets the area: w columns by h lines.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// Window returns the window length (0: the whole run).
func (m *Model) Window() time.Duration { return time.Duration(m.win) }

// WindowLabel names the window: "10s", or "all" when the whole run shows.
func (m *Model) WindowLabel() string {
	if w := m.win; w > 0 && (m.end <= m.first || w < m.end-m.first) {
		return spanLen(w, m.ascii)
	}
	return "all"
}

func (m *Model) pen(stage string) draw.Pen {
	p, ok := m.pens[stage]
	if !ok {
		p = draw.PenOf(m.styles.StageStyle(stage))
		m.pens[stage] = p
	}
	return p
}

// glyph is the character of a stage's cells.
func (m *Model) glyph(stage string) string {
	if m.styles.Color {
		return m.styles.Glyphs.Full
	}
	return m.styles.Glyph(stage)
}

// faint is the character of a cell a stage covered less than a tenth of.
func (m *Model) faint() string {
	if m.ascii {
		return ","
	}
	return "·"
}

// View draws the run's timeline, or its per-epoch bars (ToggleBars);
// cached while nothing changed.
func (m *Model) View(r *runstate.Run) string {
	return m.cache.View(r, m.w, m.h, m.gen, func() string {
		m.first, m.end = r.Spans.MinStart(), r.Spans.MaxEnd()
		if m.bars {
			return strings.Join(m.renderBars(r), "\n")
		}
		return strings.Join(m.render(r), "\n")
	})
}

// LaneOrder returns the lane ids of a run in display order: compute,
// copy, sampler/0, sampler/1, ..., eval, then the others by name; a
// distributed run's lanes (profile.RankLane) by rank, each rank's in
// that order: rank0/compute, rank0/sampler/0, ..., rank1/compute, ...
func LaneOrder(lanes *runstate.Names) []uint16 {
	ids := make([]uint16, lanes.Len())
	for i := range ids {
		ids[i] = uint16(i)
	}
	rank := func(name string) (int, int) {
		switch {
		case name == profile.LaneCompute:
			return 0, 0
		case name == profile.LaneCopy:
			return 1, 0
		case profile.IsSamplerLane(name):
			n, err := strconv.Atoi(name[len("sampler/"):])
			if err != nil {
				n = 1 << 30
			}
			return 2, n
		case name == profile.LaneEval:
			return 3, 0
		}
		return 4, 0
	}
	slices.SortFunc(ids, func(a, b uint16) int {
		na, nb := lanes.Name(a), lanes.Name(b)
		ka, la, oka := profile.SplitRankLane(na)
		kb, lb, okb := profile.SplitRankLane(nb)
		if !oka {
			ka = -1
		}
		if !okb {
			kb = -1
		}
		if c := cmp.Compare(ka, kb); c != 0 {
			return c
		}
		ra, ia := rank(la)
		rb, ib := rank(lb)
		if c := cmp.Compare(ra, rb); c != 0 {
			return c
		}
		if c := cmp.Compare(ia, ib); c != 0 {
			return c
		}
		return strings.Compare(na, nb)
	})
	return ids
}

// LaneLabel returns the label of a lane in the timeline: its name, or for
// a distributed run's lane (profile.RankLane) "r<R> " and the rank's lane
// name shortened (comp, smp/<i>), so that ranks stay apart in a narrow
// label column: "r1 comp", "r1 smp/0", "r1 eval".
func LaneLabel(lane string) string {
	r, rest, ok := profile.SplitRankLane(lane)
	if !ok {
		return lane
	}
	switch {
	case rest == profile.LaneCompute:
		rest = "comp"
	case profile.IsSamplerLane(rest):
		rest = "smp/" + rest[len("sampler/"):]
	}
	return "r" + strconv.Itoa(r) + " " + rest
}

// StageOrder returns the stage ids of a run in legend order: the stages
// of common.Stages in that order, then the others by name.
func StageOrder(stages *runstate.Names) []uint16 {
	var out []uint16
	for _, name := range common.Stages {
		if id, ok := stages.Lookup(name); ok {
			out = append(out, id)
		}
	}
	var rest []uint16
	for i, name := range stages.All() {
		if !slices.Contains(common.Stages, name) {
			rest = append(rest, uint16(i))
		}
	}
	slices.SortFunc(rest, func(a, b uint16) int { return strings.Compare(stages.Name(a), stages.Name(b)) })
	return append(out, rest...)
}

// nested reports whether a stage usually runs inside another one on the
// same lane (children of train, history, cache and guard work): in a cell
// it wins over its parent when it covers as much.
func nested(stage string) bool {
	switch stage {
	case profile.StageSample, profile.StageTransfer, profile.StageTrain, profile.StageEval,
		profile.StageWait, profile.StageSetup:
		return false
	}
	return true
}

// Range returns the window [t0, t1) drawn for a run, in ns on its clock:
// the whole run (from its first span) when it is shorter than the window
// or the window is the whole run; else the window's length, ending at
// the run's latest span end while it follows the run, or where it was
// panned to (kept within the run).
func (m *Model) Range(r *runstate.Run) (t0, t1 int64) {
	return m.rangeOf(r.Spans.MinStart(), r.Spans.MaxEnd())
}

func (m *Model) render(r *runstate.Run) []string {
	rows := m.layoutRows(r, m.h-3)
	m.refocus(rows)
	nl := len(rows)
	// rows: header, lanes, axis, legend; drop header, legend, axis in
	// turn when space is short
	header, axis, legend := true, true, true
	if nl+3 > m.h {
		header = false
	}
	if nl+2 > m.h {
		legend = false
	}
	if nl+1 > m.h {
		axis = false
	}
	laneRows := m.h
	for _, b := range []bool{header, axis, legend} {
		if b {
			laneRows--
		}
	}
	laneRows = max(min(laneRows, nl), 0)
	// the rows on display: the cursor's in view
	m.lane = min(max(m.lane, 0), max(nl-1, 0))
	m.top = min(max(m.top, m.lane-laneRows+1, 0), m.lane, max(nl-laneRows, 0))
	shown := rows[m.top : m.top+laneRows]

	labelW := 4
	for i := range shown {
		if shown[i].cells() {
			labelW = max(labelW, draw.Width(m.label(r, &shown[i])))
		}
	}
	labelW = min(labelW, 10, max(m.w/4, 1))
	pw := m.w - labelW - 1
	t0, t1 := m.Range(r)
	muted := draw.PenOf(m.styles.Muted)

	var out []string
	m.geo = geometry{}
	if nl == 0 {
		return draw.Block([]string{m.styles.Header.Render("Timeline") + muted.Paint("  no spans yet")}, m.w, m.h)
	}
	if header {
		out = append(out, m.header(t0, t1, muted))
	}
	if laneRows > 0 && pw > 0 {
		// the OOMs in the window: a row of their own, or marks over the
		// first lane when there is no row to spare
		marks := m.oomMarks(r, pw, t0, t1)
		own := marks != nil && laneRows == nl && len(out)+laneRows+boolInt(axis)+boolInt(legend) < m.h
		over := marks
		if own {
			over = nil
		}
		m.geo = geometry{x0: labelW + 1, y0: len(out), pw: pw, rows: shown, all: rows, top: m.top, t0: t0, t1: t1}
		out = append(out, m.lanes(r, shown, labelW, pw, t0, t1, over)...)
		if own {
			out = append(out, m.oomRow(marks, labelW))
		}
	} else {
		for range laneRows {
			out = append(out, "")
		}
	}
	if axis {
		out = append(out, m.axis(labelW, pw, t0, t1, muted))
	}
	if legend {
		out = append(out, m.legend(r))
	}
	return draw.Block(out, m.w, m.h)
}

// axis labels the window's start, length and end under the cells; the
// cursor, when it shows, is marked in place of the length.
func (m *Model) axis(labelW, pw int, t0, t1 int64, muted draw.Pen) string {
	if pw <= 0 {
		return ""
	}
	res := (t1 - t0) / int64(pw)
	left, right := stamp(t0, res), stamp(t1, res)
	mid := "← " + spanLen(t1-t0, m.ascii) + " →"
	if m.ascii {
		mid = "<- " + spanLen(t1-t0, m.ascii) + " ->"
	}
	cur, hasCur := m.cursorCell()
	var s string
	switch {
	case !hasCur && len(left)+len(right)+len(mid)+4 <= pw:
		gap := pw - len(left) - len(right)
		ml := draw.Width(mid)
		l := len(left) + (gap-ml)/2
		s = left + strings.Repeat(" ", l-len(left)) + mid + strings.Repeat(" ", pw-l-ml-len(right)) + right
	case len(left)+len(right)+1 <= pw:
		s = left + strings.Repeat(" ", pw-len(left)-len(right)) + right
	default:
		s = draw.PadLeft(right, pw)
	}
	pad := strings.Repeat(" ", labelW+1)
	if !hasCur {
		return pad + muted.Paint(s)
	}
	mark := "▲"
	if m.ascii {
		mark = "^"
	}
	return pad + muted.Paint(s[:cur]) + draw.PenOf(m.styles.Title).Paint(mark) + muted.Paint(s[cur+1:])
}

// legend names the run's stages with their cell characters.
func (m *Model) legend(r *runstate.Run) string { return m.legendOf(r, StageOrder(&r.Stages)) }

// legendOf names the stages ids with their cell characters.
func (m *Model) legendOf(r *runstate.Run, ids []uint16) string {
	var b strings.Builder
	w := 0
	for _, id := range ids {
		name := r.Stages.Name(id)
		entry := m.glyph(name) + " " + name
		ew := draw.Width(entry) + 2
		if w+ew > m.w {
			break
		}
		if w > 0 {
			b.WriteString("  ")
		}
		b.WriteString(m.pen(name).Paint(m.glyph(name)))
		b.WriteString(" " + name)
		w += ew
	}
	return b.String()
}

// oomMarks returns the cells of the window [t0, t1] that hold a failed
// allocation (an oom event, not a guard action), each at the time of the
// event before it; nil when none does.
func (m *Model) oomMarks(r *runstate.Run, pw int, t0, t1 int64) []bool {
	var marks []bool
	var g grid
	for _, o := range r.OOMs {
		if o.T < t0 || o.T > t1 {
			continue
		}
		if marks == nil {
			marks, g = make([]bool, pw), newGrid(t0, t1, pw)
		}
		marks[g.cell(min(o.T, t1-1))] = true
	}
	return marks
}

// oomRow draws OOM marks on a row labelled OOM.
func (m *Model) oomRow(marks []bool, labelW int) string {
	pen := draw.PenOf(m.styles.OOM)
	var b strings.Builder
	b.WriteString(draw.PadRight("OOM", labelW))
	b.WriteString(m.styles.Glyphs.VLine)
	for _, on := range marks {
		if on {
			b.WriteString(pen.Paint(m.styles.Glyphs.OOM))
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
