package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Selected returns the index of the selected span in the run's spans (-1:
// none).
func (m *Model) Selected() int { return m.sel }

// Unselect closes the selected span's details; it reports whether a span
// was selected.
func (m *Model) Unselect() bool {
	if m.sel < 0 {
		return false
	}
	m.sel = -1
	m.changed()
	return true
}

// SelectAtCursor selects the span under the cursor in the cursor's lane:
// the shortest covering the cursor's time, else the one covering most of
// the cursor's cell. Selecting the selected span again unselects it. It
// reports whether a span is selected.
func (m *Model) SelectAtCursor(r *runstate.Run) bool {
	g := m.geo
	if g.pw <= 0 || len(g.rows) == 0 {
		return false
	}
	m.showCursor(g.t0, g.t1)
	c, ok := m.cursorCell()
	if !ok {
		return false
	}
	c0 := g.t0 + int64(c)*(g.t1-g.t0)/int64(g.pw)
	c1 := g.t0 + int64(c+1)*(g.t1-g.t0)/int64(g.pw)
	w := &g.rows[min(max(m.lane-g.top, 0), len(g.rows)-1)]
	in := func(lane uint16) bool { return lane == w.lane }
	switch {
	case !w.cells():
		return false
	case w.kind != rowLane:
		in = func(lane uint16) bool { return slices.Contains(w.lanes, lane) }
	}
	i := spanAt(r, in, m.cur, c0, c1)
	if i >= 0 && i == m.sel {
		i = -1
	}
	m.sel = i
	m.changed()
	return i >= 0
}

// spanAt finds the span of the lanes in says are in at time t: the shortest covering t, else
// the one overlapping [c0, c1) the most; -1 if none.
func spanAt(r *runstate.Run, in func(lane uint16) bool, t, c0, c1 int64) int {
	sp := &r.Spans
	best, bestDur, bestOv := -1, int64(-1), int64(0)
	covering := false
	for i := sp.From(c0); i < sp.Len(); i++ {
		if !in(sp.Lane[i]) {
			continue
		}
		s, e := sp.Start[i], sp.Start[i]+sp.Dur[i]
		if e <= c0 || s >= c1 {
			continue
		}
		if s <= t && t < e {
			if !covering || sp.Dur[i] < bestDur {
				best, bestDur, covering = i, sp.Dur[i], true
			}
			continue
		}
		if ov := min(e, c1) - max(s, c0); !covering && ov > bestOv {
			best, bestOv = i, ov
		}
	}
	return best
}

// Details describes the selected span in lines of at most w columns:
// its name, lane, epoch and batch, start, duration and end, then its
// attributes; nil when none is selected or the bars show.
func (m *Model) Details(r *runstate.Run, w int) []string {
	sp := &r.Spans
	i := m.sel
	if i < 0 || i >= sp.Len() || w <= 0 || m.bars {
		return nil
	}
	st := m.styles
	name := r.Stages.Name(sp.Stage[i])
	head := st.Header.Render("Span ") + m.pen(name).Paint(m.glyph(name)) + " " + st.Title.Render(name) +
		"  lane " + r.Lanes.Name(sp.Lane[i]) + "  epoch " + strconv.Itoa(int(sp.Epoch[i])) +
		"  batch " + strconv.Itoa(int(sp.Batch[i]))
	times := "start " + stamp(sp.Start[i], 1) + "  duration " + spanLen(sp.Dur[i], m.ascii) + " (" +
		strconv.FormatInt(sp.Dur[i], 10) + " ns)  end " + stamp(sp.Start[i]+sp.Dur[i], 1)
	out := []string{draw.Cut(head, w, st.Glyphs.Ellipsis), draw.Cut(times, w, st.Glyphs.Ellipsis)}
	attrs := "attributes: " + formatAttrs(sp.Attrs(i))
	for _, l := range draw.Wrap(attrs, w) {
		out = append(out, st.Muted.Render(l))
	}
	for _, l := range m.links(r, i) {
		out = append(out, draw.Cut(l, w, st.Glyphs.Ellipsis))
	}
	hint := "enter or click again: close"
	return append(out, st.Muted.Render(draw.Cut(hint, w, st.Glyphs.Ellipsis)))
}

// formatAttrs writes a span's attributes as key=value pairs in key order
// ("none" without any; the raw text if it is not an object).
func formatAttrs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return string(raw)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for j, k := range keys {
		parts[j] = fmt.Sprintf("%s=%s", k, obj[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// maxLinks bounds the linked spans Details lists.
const maxLinks = 4

// linkCache keeps the linked spans of the selected span until the
// selection or the run's spans change.
type linkCache struct {
	sel, n int
	lines  []string
}

// links lists the spans that share span i's "link" attribute (a kernel
// and the runtime call that launched it, in an imported trace) or its
// "ext" (an operator and its runtime calls): lane, name, start and
// duration of each.
func (m *Model) links(r *runstate.Run, i int) []string {
	sp := &r.Spans
	if m.linked.sel == i && m.linked.n == sp.Len() {
		return m.linked.lines
	}
	m.linked = linkCache{sel: i, n: sp.Len()}
	var a struct {
		Link *int64 `json:"link"`
		Ext  *int64 `json:"ext"`
	}
	if json.Unmarshal(sp.Attrs(i), &a) != nil || (a.Link == nil && a.Ext == nil) {
		return nil
	}
	var keys [][]byte
	if a.Link != nil {
		keys = append(keys, []byte(`"link":`+strconv.FormatInt(*a.Link, 10)))
	}
	if a.Ext != nil {
		keys = append(keys, []byte(`"ext":`+strconv.FormatInt(*a.Ext, 10)))
	}
	found := 0
	for j := 0; j < sp.Len(); j++ {
		if j == i || !hasAny(sp.Attrs(j), keys) {
			continue
		}
		found++
		if found <= maxLinks {
			m.linked.lines = append(m.linked.lines, "linked: "+r.Lanes.Name(sp.Lane[j])+" "+r.Stages.Name(sp.Stage[j])+
				"  start "+stamp(sp.Start[j], 1)+"  duration "+spanLen(sp.Dur[j], m.ascii))
		}
	}
	if found > maxLinks {
		m.linked.lines = append(m.linked.lines, "linked: "+strconv.Itoa(found-maxLinks)+" more")
	}
	return m.linked.lines
}

// hasAny reports whether raw holds one of the keys as a whole value
// ("link":5 is not "link":51).
func hasAny(raw []byte, keys [][]byte) bool {
	for _, key := range keys {
		k := bytes.Index(raw, key)
		if k >= 0 && k+len(key) < len(raw) && (raw[k+len(key)] == ',' || raw[k+len(key)] == '}') {
			return true
		}
	}
	return false
}
