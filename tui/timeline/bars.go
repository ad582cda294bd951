package timeline

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// epochStat is where one epoch's time went.
type epochStat struct {
	epoch      int32
	start, end int64   // its first span's start, its last span's end
	stage      []int64 // ns of its spans per stage id, summed over lanes
}

// epochs are a run's per-epoch sums, brought up to date with the spans
// added since the last call (a run that restarted is summed again).
type epochs struct {
	run     *runstate.Run
	scanned int
	index   map[int32]int
	list    []epochStat // in epoch order
}

func (e *epochs) update(r *runstate.Run) {
	sp := &r.Spans
	if r != e.run || sp.Len() < e.scanned {
		*e = epochs{run: r, index: map[int32]int{}}
	}
	unsorted := false
	setup, hasSetup := r.Stages.Lookup(profile.StageSetup)
	for i := e.scanned; i < sp.Len(); i++ {
		ep := sp.Epoch[i]
		if ep < 0 || (hasSetup && sp.Stage[i] == setup) {
			continue // setup, before the first epoch
		}
		k, ok := e.index[ep]
		if !ok {
			k = len(e.list)
			e.index[ep] = k
			e.list = append(e.list, epochStat{epoch: ep, start: sp.Start[i], end: sp.Start[i] + sp.Dur[i]})
			unsorted = unsorted || (k > 0 && e.list[k-1].epoch > ep)
		}
		st := &e.list[k]
		st.start, st.end = min(st.start, sp.Start[i]), max(st.end, sp.Start[i]+sp.Dur[i])
		id := int(sp.Stage[i])
		if id >= len(st.stage) {
			st.stage = append(st.stage, make([]int64, id+1-len(st.stage))...)
		}
		st.stage[id] += sp.Dur[i]
	}
	e.scanned = sp.Len()
	if unsorted {
		slices.SortFunc(e.list, func(a, b epochStat) int { return cmp.Compare(a.epoch, b.epoch) })
		for k, st := range e.list {
			e.index[st.epoch] = k
		}
	}
}

// inner reports whether a stage runs inside train (its time is train's
// too): left out of the bars, which add up the top-level stages.
func inner(stage string) bool {
	switch stage {
	case profile.StageForward, profile.StageBackward, profile.StageStep, profile.StageHistoryPull,
		profile.StageHistoryPush, profile.StageCache, profile.StageGuard:
		return true
	}
	return false
}

// ToggleBars shows the per-epoch bars in place of the timeline, or the
// timeline again.
func (m *Model) ToggleBars() {
	m.bars = !m.bars
	m.changed()
}

// Bars reports whether the per-epoch bars show.
func (m *Model) Bars() bool { return m.bars }

// Jump shows an epoch from its first span's start to its last span's
// end, the cursor at its start (and the timeline, if the bars showed):
// the epoch typed before (Digit), else the first epoch, or the last with
// last. With no epoch typed, it reports the epoch shown, or false when the
// run has no epoch yet. An epoch number that does not exist goes to the
// nearest one.
func (m *Model) Jump(r *runstate.Run, last bool) (int, bool) {
	m.ep.update(r)
	want := m.count
	m.count = -1
	m.changed()
	list := m.ep.list
	if len(list) == 0 {
		return 0, false
	}
	k := 0
	switch {
	case want >= 0:
		for j, st := range list {
			if absDiff(int64(st.epoch), int64(want)) < absDiff(int64(list[k].epoch), int64(want)) {
				k = j
			}
		}
	case last:
		k = len(list) - 1
	}
	st := list[k]
	m.first, m.end = r.Spans.MinStart(), r.Spans.MaxEnd()
	m.bars = false
	m.hasCur, m.cur = true, st.start
	m.place(st.start, max(st.end-st.start, 1))
	return int(st.epoch), true
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// renderBars draws a stacked bar per epoch: the time of each top-level
// stage, summed over lanes, its length against the longest epoch's.
func (m *Model) renderBars(r *runstate.Run) []string {
	m.ep.update(r)
	m.geo = geometry{}
	muted := draw.PenOf(m.styles.Muted)
	list := m.ep.list
	head := m.styles.Header.Render("Epochs") + muted.Paint("  time per stage, summed over lanes  (b: timeline)")
	if len(list) == 0 {
		return draw.Block([]string{m.styles.Header.Render("Epochs") + muted.Paint("  no epoch yet")}, m.w, m.h)
	}
	var stages []uint16
	for _, id := range StageOrder(&r.Stages) {
		if name := r.Stages.Name(id); !inner(name) && name != profile.StageSetup {
			stages = append(stages, id)
		}
	}
	totals := make([]int64, len(list))
	var most int64
	for k, st := range list {
		for _, id := range stages {
			if int(id) < len(st.stage) {
				totals[k] += st.stage[id]
			}
		}
		most = max(most, totals[k])
	}
	header, legend := m.h >= 2, m.h >= 3
	rows := m.h - boolInt(header) - boolInt(legend)
	top := max(len(list)-rows-m.barOff, 0)
	m.barOff = max(len(list)-rows-top, 0)
	labelW := len("ep ") + len(strconv.Itoa(int(list[len(list)-1].epoch)))
	bw := m.w - labelW - 1 - 9
	var out []string
	if header {
		out = append(out, draw.Cut(head, m.w, ""))
	}
	for k := top; k < min(top+rows, len(list)); k++ {
		st := &list[k]
		line := draw.PadRight("ep "+strconv.Itoa(int(st.epoch)), labelW) + m.styles.Glyphs.VLine
		if bw > 0 {
			line += m.bar(r, st, stages, totals[k], most, bw)
		}
		out = append(out, line+draw.PadLeft(units.Duration(time.Duration(totals[k])), 9))
	}
	if legend {
		out = draw.Block(out, m.w, m.h-1)
		out = append(out, m.legendOf(r, stages))
	}
	return draw.Block(out, m.w, m.h)
}

// bar draws one epoch's stacked bar in bw cells: total against most; every
// stage with time gets a cell at least, the rest shared by largest
// remainders.
func (m *Model) bar(r *runstate.Run, st *epochStat, stages []uint16, total, most int64, bw int) string {
	var ids []uint16
	var ns []int64
	for _, id := range stages {
		if int(id) < len(st.stage) && st.stage[id] > 0 {
			ids, ns = append(ids, id), append(ns, st.stage[id])
		}
	}
	if total <= 0 || len(ids) == 0 {
		return strings.Repeat(" ", bw)
	}
	n := int((float64(total)/float64(most))*float64(bw) + 0.5)
	n = min(max(n, len(ids)), bw)
	cells := make([]int, len(ids))
	rest := n - len(ids)
	rem := make([]float64, len(ids))
	used := 0
	for j, v := range ns {
		f := float64(v) / float64(total) * float64(rest)
		cells[j] = 1 + int(f)
		rem[j] = f - float64(int(f))
		used += cells[j]
	}
	for ; used < n; used++ {
		j := 0
		for i := range rem {
			if rem[i] > rem[j] {
				j = i
			}
		}
		cells[j]++
		rem[j] = -1
	}
	var b strings.Builder
	for j, id := range ids {
		name := r.Stages.Name(id)
		m.pen(name).Write(&b, strings.Repeat(m.glyph(name), cells[j]))
	}
	return b.String() + strings.Repeat(" ", bw-n)
}

// Height is how many lines the run's drawing wants: its lanes, header,
// axis and legend, or with the bars, a line per epoch, header and legend.
func (m *Model) Height(r *runstate.Run) int {
	if m.bars {
		m.ep.update(r)
		return max(len(m.ep.list), 1) + 2
	}
	return len(m.layoutRows(r, math.MaxInt32)) + 3 // the rows as folded by the user alone
}
