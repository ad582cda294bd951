package dashboard

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/tui/cachechart"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/memchart"
	"github.com/gnnscope/gnnscope/tui/metricchart"
	"github.com/gnnscope/gnnscope/tui/overlay"
	"github.com/gnnscope/gnnscope/tui/runstate"
	"github.com/gnnscope/gnnscope/tui/stalechart"
	"github.com/gnnscope/gnnscope/tui/summary"
	"github.com/gnnscope/gnnscope/tui/timeline"
)

// panel holds the components drawing one run.
type panel struct {
	timeline *timeline.Model
	mem      *memchart.Model
	cache    *cachechart.Model
	loss     *metricchart.Model
	acc      *metricchart.Model
	stale    *stalechart.Model
	gpu      gpuLane

	// where the timeline was drawn in the last frame, for the mouse
	tlX, tlY, tlW, tlH int
}

// setup builds the table and one panel per run.
func (m *Model) setup() {
	// a tick comes every frame interval: a little less keeps every tick's
	// frame
	m.minGap = m.frameInterval() * 4 / 5
	m.table = summary.New(m.c, m.live)
	m.panels = make([]*panel, len(m.names))
	for i := range m.panels {
		m.panels[i] = &panel{
			timeline: timeline.New(m.c),
			mem:      memchart.New(m.c),
			cache:    cachechart.New(m.c),
			loss:     metricchart.New(m.c, "Loss", "loss").Fallback("batch_loss"),
			acc:      metricchart.New(m.c, "Accuracy", "train_acc", "val_acc", "test_acc").Unit(),
			stale:    stalechart.New(m.c),
		}
	}
	m.overlay = overlay.New(m.c)
	m.applyCharts()
}

// sideBySide is the width from which two runs are drawn next to each
// other.
const sideBySide = 160

// shown returns the runs whose panels are drawn: the focused one, and
// its neighbor when the width allows two.
func (m *Model) shown(n int) []int {
	if n == 0 {
		return nil
	}
	if n >= 2 && m.width >= sideBySide && !m.charts.overlay {
		start := min(m.focus, n-2)
		return []int{start, start + 1}
	}
	return []int{m.focus % n}
}

// render draws the whole frame; the set is locked.
func (m *Model) render() string {
	W, H := m.width, m.height
	if W <= 0 || H <= 0 {
		return ""
	}
	runs := m.set.Runs()
	// the root's header names the screen (Title); a replay adds a line
	// with its position and controls
	var lines []string
	if m.replay != nil || m.status != "" {
		lines = append(lines, m.replayBar(W))
	}
	// the table: a header and a line per run, at most a third of the
	// height once the screen is short
	th := min(1+len(runs), max(H/3, 2))
	if H >= 4 {
		m.table.SetSize(W, th)
		lines = append(lines, strings.Split(m.table.View(runs, m.focus), "\n")...)
	}
	footer := H >= 6
	ph := H - len(lines)
	if footer {
		ph--
	}
	if ph >= 3 {
		show := m.shown(len(runs))
		widths := make([]int, len(show))
		blocks := make([][]string, len(show))
		pw := W
		if len(show) == 2 {
			pw = (W - 1) / 2
		}
		for _, p := range m.panels {
			p.tlW = 0
		}
		for i, ri := range show {
			widths[i] = pw
			if i == len(show)-1 {
				widths[i] = W - (len(show)-1)*(pw+1)
			}
			blocks[i] = m.panelView(ri, runs[ri], widths[i], ph)
			p := m.panels[ri]
			p.tlX, p.tlY = i*(pw+1), p.tlY+len(lines)
		}
		sep := draw.PenOf(m.c.Styles.Border).Paint(m.c.Styles.Glyphs.VLine)
		lines = append(lines, draw.Columns(ph, sep, widths, blocks...)...)
	}
	if footer {
		ranked := len(runs) > 0 && runs[m.focus%len(runs)].World > 1
		lines = append(lines, m.footer(W, ranked))
	}
	return strings.Join(draw.Block(lines, W, H), "\n")
}

// panelView draws one run in w×h: a title line, the timeline, the
// staleness chart when the run has histories, the answers (ledger bar,
// verdict, advice), memory (with the cache's hit rate when the run has a
// feature cache), and loss and accuracy.
func (m *Model) panelView(i int, r *runstate.Run, w, h int) []string {
	p := m.panels[i]
	st := m.c.Styles
	title := r.Name
	if r.Variant != "" && r.Variant != r.Name {
		title += " (" + r.Variant + ")"
	}
	info := "  " + summary.StatusText(r, m.live) + "  " + strconv.FormatInt(r.Events, 10) + " events"
	head := st.Title.Render(title) + st.Muted.Render(info)
	if i == m.focus && len(m.names) > 1 {
		head = st.Title.Render(st.Glyphs.Cursor+" ") + head
	}
	out := []string{draw.Cut(head, w, st.Glyphs.Ellipsis)}
	// what stopped the run, in full: wrapped, never cut
	if e := summary.Error(r); e != "" {
		for _, l := range draw.Wrap("error: "+e, w) {
			out = append(out, st.Error.Render(l))
		}
	}
	out = append(out, adjustedLines(r.Adjusted, w, h/4, st.Glyphs.Ellipsis, st.Muted.Render)...)
	rest := h - len(out)
	if rest <= 0 {
		return out
	}
	// the selected span's details, under the timeline
	det := p.timeline.Details(r, w)
	det = det[:min(len(det), max(rest-4, 0))]
	rest -= len(det)
	// timeline: its lanes, header, axis and legend; at most 40 %
	tl := min(p.timeline.Height(r), max(rest*2/5, 3))
	sh := 0
	if r.HasStale() {
		// wide, the plot over batches goes beside the table: a little more
		share := rest / 5
		if w >= stalechart.BesideWidth {
			share = rest / 4
		}
		sh = min(stalechart.Height(r, w), max(share, 2))
	}
	gh := p.gpu.height(r)
	// the answers: at most a fifth, at least 3 lines when they fit
	ans := answersView(m.c.Styles, r.Answers(), w, min(answersHeight, max(rest/5, 3)))
	charts := rest - tl - sh - gh - len(ans)
	if charts < 6 { // too short for memory and metrics: timeline and answers
		tl, sh, gh, charts = rest-len(ans), 0, 0, 0
		if tl < 3 {
			tl, ans = rest, nil
		}
	}
	p.timeline.SetSize(w, tl)
	p.tlY, p.tlW, p.tlH = len(out), w, tl
	out = append(out, strings.Split(p.timeline.View(r), "\n")...)
	out = append(out, det...)
	if gh > 0 {
		out = append(out, p.gpu.view(m, r, w)...)
	}
	if sh > 0 {
		p.stale.SetSize(w, sh)
		out = append(out, strings.Split(p.stale.View(r), "\n")...)
	}
	out = append(out, ans...)
	if charts == 0 {
		return out
	}
	if m.charts.overlay {
		return append(out, m.overlayView(m.set.Runs(), w, charts)...)
	}
	mh := charts / 2
	out = append(out, p.memRow(r, w, mh)...)
	kh := charts - mh
	if w >= 70 {
		lw := (w - 1) / 2
		p.loss.SetSize(lw, kh)
		p.acc.SetSize(w-lw-1, kh)
		out = append(out, draw.Columns(kh, " ", []int{lw, w - lw - 1},
			strings.Split(p.loss.View(r), "\n"), strings.Split(p.acc.View(r), "\n"))...)
	} else {
		lh := kh / 2
		p.loss.SetSize(w, lh)
		p.acc.SetSize(w, kh-lh)
		out = append(out, strings.Split(p.loss.View(r), "\n")...)
		out = append(out, strings.Split(p.acc.View(r), "\n")...)
	}
	return out
}

// cacheBeside is the width from which the cache's hit rate is drawn
// beside the memory chart rather than under it.
const cacheBeside = 70

// memRow draws the memory chart in w×h and, for a run with cache events,
// the hit-rate chart: beside it in a third of the width (at least 28
// columns) from cacheBeside columns on, else under it in half the height
// when each gets 3 lines.
func (p *panel) memRow(r *runstate.Run, w, h int) []string {
	if !r.HasCache() {
		p.mem.SetSize(w, h)
		return strings.Split(p.mem.View(r), "\n")
	}
	if w >= cacheBeside {
		cw := max(w/3, 28)
		mw := w - cw - 1
		p.mem.SetSize(mw, h)
		p.cache.SetSize(cw, h)
		return draw.Columns(h, " ", []int{mw, cw}, strings.Split(p.mem.View(r), "\n"), strings.Split(p.cache.View(r), "\n"))
	}
	ch := h / 2
	if ch < 3 {
		ch = 0
	}
	p.mem.SetSize(w, h-ch)
	out := strings.Split(p.mem.View(r), "\n")
	if ch > 0 {
		p.cache.SetSize(w, ch)
		out = append(out, strings.Split(p.cache.View(r), "\n")...)
	}
	return out
}

// replayBar shows a replay's state, speed and position, and the last
// control's note.
func (m *Model) replayBar(w int) string {
	st := m.c.Styles
	var b strings.Builder
	if m.replay != nil {
		pos, dur := m.replay.Position(), m.replay.Duration()
		state := "playing"
		switch {
		case m.replay.Paused():
			state = "paused"
		case pos >= dur:
			state = "end"
		}
		b.WriteString(state + "  " + strconv.FormatFloat(m.replay.Speed(), 'g', 4, 64) + "x  " +
			draw.Clock(pos) + " / " + draw.Clock(dur))
		if bw := min(20, w-draw.Width(b.String())-3); bw >= 4 && dur > 0 {
			full := int(float64(bw) * float64(pos) / float64(dur))
			b.WriteString("  " + st.OK.Render(strings.Repeat(st.Glyphs.Full, full)) +
				st.Muted.Render(strings.Repeat(st.Glyphs.HLine, bw-full)))
		}
		// waits are capped (sessions.DefaultMaxWait): say how much was skipped
		if sk := m.replay.Skipped(); sk > 0 {
			b.WriteString(st.Muted.Render("  gaps skipped " + units.Duration(sk)))
		}
	}
	if m.status != "" {
		if b.Len() > 0 {
			b.WriteString("  ")
		}
		b.WriteString(st.Error.Render(m.status))
	}
	return draw.Cut(b.String(), w, st.Glyphs.Ellipsis)
}

// footer lists the dashboard's keys; ranked adds the fold of a
// distributed run's ranks.
func (m *Model) footer(w int, ranked bool) string {
	k := m.c.Keys
	st := m.c.Styles
	var parts []string
	add := func(keys, desc string) {
		parts = append(parts, st.HelpKey.Render(keys)+" "+st.HelpDesc.Render(desc))
	}
	if m.replay != nil {
		add(k.Pause.Help().Key, "pause")
		add(k.Faster.Help().Key+"/"+k.Slower.Help().Key, "speed")
		add(k.SeekBack.Help().Key+" "+k.SeekForward.Help().Key, "seek")
	}
	if len(m.names) > 1 {
		add(k.NextPane.Help().Key, "next run")
	}
	add(k.ZoomIn.Help().Key+"/"+k.ZoomOut.Help().Key, "zoom "+m.zoomLabel())
	help := st.HelpKey.Render(k.Help.Help().Key) + " " + st.HelpDesc.Render("help")
	// the timeline's keys as far as they fit before help
	keys := [][2]string{
		{m.c.KeyName(k.PanLeft) + " " + m.c.KeyName(k.PanRight), "pan"},
		{k.Details.Help().Key, "span"},
		{k.Bars.Help().Key, "bars"},
		{k.Overlay.Help().Key, "overlay"},
	}
	if ranked {
		keys = slices.Insert(keys, 2, [2]string{k.Fold.Help().Key + "/" + k.FoldNode.Help().Key, "fold"})
	}
	for _, e := range keys {
		part := st.HelpKey.Render(e[0]) + " " + st.HelpDesc.Render(e[1])
		if draw.Width(strings.Join(append(parts, part, help), "  ")) > w {
			break
		}
		parts = append(parts, part)
	}
	parts = append(parts, help)
	return draw.Cut(strings.Join(parts, "  "), w, st.Glyphs.Ellipsis)
}

func (m *Model) zoomLabel() string {
	if m.focus < 0 || m.focus >= len(m.panels) {
		return ""
	}
	return m.panels[m.focus].timeline.WindowLabel()
}

// adjustedLines is what the launcher and the engine adjusted so that the
// run fits its constraints (run_start's adjusted), wrapped to w, in at
// most max(limit, 1) lines: a longer text ends in tail.
func adjustedLines(adjusted []string, w, limit int, tail string, paint func(...string) string) []string {
	var lines []string
	for _, a := range adjusted {
		lines = append(lines, draw.Wrap("adjusted: "+a, w)...)
	}
	if limit = max(limit, 1); len(lines) > limit {
		lines = lines[:limit]
		lines[limit-1] = draw.Cut(lines[limit-1]+" "+tail+tail, w, tail)
	}
	for i, l := range lines {
		lines[i] = paint(l)
	}
	return lines
}
