package summary

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Row is one run's figures as the table shows them.
type Row struct {
	Run       string
	Status    profile.Status
	Done      int     // epochs finished
	Total     int     // configured epochs (0: unknown)
	ETA       float64 // seconds of run time left (0: unknown or done)
	EpochS    float64 // mean epoch wall time
	Speedup   float64 // its variant's speedup over the baseline's (sessions.Speedups; 0: unknown, or the run stopped early)
	Straggler float64 // a distributed run's slowest rank over its median rank (0: one process)
	// SlowRank is the rank that was most often the slowest of a step
	// (analysis.RankSteps) and SlowShare the share of steps it was;
	// SlowShare 0: one process, or no step two ranks trained.
	SlowRank  int
	SlowShare float64
	TestAcc   float64 // NaN: unknown
	Overlap   float64
	Eff       float64
	DataWaitS float64
	SampleS   float64
	TransferS float64
	TrainS    float64
	EvalS     float64
	PeakBytes int64
	OOMs      int64 // oom events: allocations that failed
	Guards    int64 // guard events: batches the memory guard reshaped (not OOMs)
	// Partial marks the figures of a run that stopped early (failed,
	// aborted by an OOM, crashed, canceled: profile.Status.Stopped);
	// Skipped of Batches training batches were skipped by a run with
	// on_oom skip (sessions.SkipCounts; zeros when none was).
	Partial          bool
	Skipped, Batches int
}

// StatusText is the status as the table shows it, with the partial mark
// or the skipped batches (sessions.OutcomeText).
func (r *Row) StatusText() string {
	return sessions.OutcomeText(r.Status, r.Partial, r.Skipped, r.Batches)
}

// Figures computes the rows of runs; the baseline is the run named
// "baseline", else the first whose variant is "baseline", else the first
// run. Status names the run's state (see Status).
func Figures(runs []*runstate.Run, sums []profile.Summary, live bool) []Row {
	rows := make([]Row, len(runs))
	base := Baseline(runs)
	for i, r := range runs {
		s := &sums[i]
		row := Row{Run: r.Name, Status: Status(r, live), Total: r.Epochs, TestAcc: math.NaN(),
			EpochS: s.EpochStats.MeanS, Overlap: s.Overlap, Eff: s.Efficiency, DataWaitS: s.DataWaitS,
			SampleS: s.Stage(profile.StageSample), TransferS: s.Stage(profile.StageTransfer),
			TrainS: s.Stage(profile.StageTrain), EvalS: s.Stage(profile.StageEval),
			PeakBytes: s.PeakBytes, OOMs: s.Counts[profile.TypeOOM],
			Guards: s.Counts[profile.TypeGuard], Straggler: s.Straggler}
		row.SlowRank, row.SlowShare = slowestRank(r)
		row.Done = r.EpochsDone(s)
		if row.Total > 0 {
			row.Done = min(row.Done, row.Total)
		}
		row.ETA = eta(r, s, row.Done, row.Total)
		row.TestAcc = testAcc(r, s)
		row.Partial = r.Started && row.Status.Stopped()
		row.Skipped, row.Batches = sessions.SkipCounts(r.EndSummary)
		rows[i] = row
	}
	timing := make([]sessions.RunTiming, len(runs))
	for i, r := range runs {
		v := r.Variant
		if v == "" {
			v = r.Name
		}
		st := rows[i].Status
		if st == profile.StatusReplaying {
			st = profile.StatusRunning // a replay is timed as the run was
		}
		w := make([]float64, len(sums[i].Epochs))
		for j, ep := range sums[i].Epochs {
			w[j] = ep.WallS
		}
		timing[i] = sessions.RunTiming{Group: v, Repeat: sessions.RepeatNumber(r.Name, v), Status: st, Epochs: w}
	}
	for i, t := range sessions.Speedups(timing, base, false) {
		rows[i].Speedup = t.Speedup.Ratio
	}
	return rows
}

// Baseline returns the index of the baseline run (-1 without runs).
func Baseline(runs []*runstate.Run) int {
	for i, r := range runs {
		if r.Name == profile.VariantBaseline {
			return i
		}
	}
	for i, r := range runs {
		if r.Variant == profile.VariantBaseline {
			return i
		}
	}
	if len(runs) == 0 {
		return -1
	}
	return 0
}

// Status is a run's state as the dashboard shows it: run_end's status;
// for a run without run_end that a replay has fully delivered, the
// status the session store gives it (crashed, as the session list says);
// "crashed" or "error" when its feed broke; "waiting" before run_start;
// then "running" (live) or "replaying".
func Status(r *runstate.Run, live bool) profile.Status {
	switch {
	case r.Ended:
		return r.Status
	case r.Drained && r.Stored != "":
		return r.Stored
	case r.Err != nil:
		if errors.Is(r.Err, sessions.ErrWriterGone) {
			return profile.StatusCrashed
		}
		return profile.StatusError
	case !r.Started:
		return profile.StatusWaiting
	case live:
		return profile.StatusRunning
	}
	return profile.StatusReplaying
}

// StatusText is Status with the partial mark of a run that stopped early
// or the batches a run skipped (sessions.OutcomeText), as the table's
// status column shows it.
func StatusText(r *runstate.Run, live bool) string {
	st := Status(r, live)
	skipped, total := sessions.SkipCounts(r.EndSummary)
	return sessions.OutcomeText(st, r.Started && st.Stopped(), skipped, total)
}

// Error returns what stopped a run, in full: run_end's error, else the
// session store's for a run whose status is the store's (see Status),
// else what broke its feed ("" for none).
func Error(r *runstate.Run) string {
	switch {
	case r.Ended:
		return r.Error
	case r.Drained && r.Stored != "":
		return r.StoredError
	case r.Err != nil:
		return r.Err.Error()
	}
	return ""
}

// eta estimates the run time left: the epochs left at the mean time of
// the finished ones, less what the current epoch has taken so far.
func eta(r *runstate.Run, s *profile.Summary, done, total int) float64 {
	if r.Ended || total <= 0 || done >= total {
		return 0
	}
	eps := s.Epochs
	partial := 0.0
	if len(eps) > done && len(eps) > 0 {
		partial = eps[len(eps)-1].WallS
		eps = eps[:len(eps)-1]
	}
	if len(eps) == 0 {
		return 0
	}
	sum := 0.0
	for _, e := range eps {
		sum += e.WallS
	}
	return max(float64(total-done)*sum/float64(len(eps))-partial, 0)
}

// testAcc is the run_end summary's test_acc (at the best validation
// epoch) when it has one, else the last test_acc metric, as `gnnscope
// compare` takes it; NaN when neither.
func testAcc(r *runstate.Run, s *profile.Summary) float64 {
	if len(r.EndSummary) > 0 && r.EndSummary[0] == '{' {
		var res struct {
			TestAcc   *float64 `json:"test_acc"`
			BestEpoch *int     `json:"best_epoch"`
		}
		if json.Unmarshal(r.EndSummary, &res) == nil && res.TestAcc != nil && finite(*res.TestAcc) &&
			(res.BestEpoch == nil || *res.BestEpoch > 0) {
			return *res.TestAcc
		}
	}
	if v, ok := s.Metrics["test_acc"]; ok && finite(v) {
		return v
	}
	return math.NaN()
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Model is the table, cached until a run or the size changes.
type Model struct {
	styles *common.Styles
	ascii  bool
	w, h   int
	live   bool

	sums  []profile.Summary // per run, at sumVer
	sumV  []uint64
	sumR  []*runstate.Run
	key   string // runs' versions, size and focus the cache shows
	out   string
	Rows  []Row // the rows last drawn
	muted draw.Pen
}

// New returns the table drawing with c's styles and options; live says
// whether runs are followed live (status "running") or replayed.
func New(c *common.Common, live bool) *Model {
	return &Model{styles: c.Styles, ascii: c.Opts.ASCII, live: live, muted: draw.PenOf(c.Styles.Muted)}
}

// SetSize sets the area: w columns by h lines (a header and a line per
// run).
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// View draws the table of runs, marking the focused one.
func (m *Model) View(runs []*runstate.Run, focus int) string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	var kb strings.Builder
	kb.WriteString(strconv.Itoa(m.w) + "x" + strconv.Itoa(m.h) + "/" + strconv.Itoa(focus))
	for _, r := range runs {
		kb.WriteString("/" + strconv.FormatUint(r.Version(), 10))
	}
	key := kb.String()
	if key == m.key && len(runs) == len(m.sumR) && m.out != "" {
		same := true
		for i, r := range runs {
			same = same && m.sumR[i] == r
		}
		if same {
			return m.out
		}
	}
	if len(m.sums) != len(runs) {
		m.sums = make([]profile.Summary, len(runs))
		m.sumV = make([]uint64, len(runs))
		m.sumR = make([]*runstate.Run, len(runs))
	}
	for i, r := range runs {
		if m.sumR[i] != r || m.sumV[i] != r.Version() || m.sums[i].Counts == nil {
			m.sums[i], m.sumV[i], m.sumR[i] = r.Summary(), r.Version(), r
		}
	}
	m.Rows = Figures(runs, m.sums, m.live)
	m.out = strings.Join(draw.Block(m.render(focus), m.w, m.h), "\n")
	m.key = key
	return m.out
}

// column is one column of the table.
type column struct {
	title string
	width int
	prio  int // lower: dropped later
	right bool
	cell  func(r *Row) string
}

func secs(s float64) string { return draw.Secs(s) }

func (m *Model) columns() []column {
	nameW := 4
	for _, r := range m.Rows {
		nameW = max(nameW, len(r.Run))
	}
	nameW = min(nameW, 14) + 2
	statusW := 9
	for i := range m.Rows {
		statusW = max(statusW, min(draw.Width(m.Rows[i].StatusText()), 40))
	}
	cols := []column{
		{"run", nameW, 0, false, nil},
		{"status", statusW, 1, false, func(r *Row) string { return r.StatusText() }},
		{"progress", 0, 2, false, nil}, // width decided last
		{"epoch s", 8, 3, true, func(r *Row) string { return secs(r.EpochS) }},
		{"speedup", 8, 4, true, func(r *Row) string {
			if r.Speedup <= 0 {
				return "-"
			}
			return strconv.FormatFloat(r.Speedup, 'f', 2, 64) + "x"
		}},
		{"test acc", 8, 7, true, func(r *Row) string {
			if math.IsNaN(r.TestAcc) {
				return "-"
			}
			return strconv.FormatFloat(r.TestAcc, 'f', 4, 64)
		}},
		{"overlap", 8, 11, true, func(r *Row) string { return fixed(r.Overlap) }},
		{"effic.", 7, 12, true, func(r *Row) string { return fixed(r.Eff) }},
		{"wait s", 8, 13, true, func(r *Row) string { return secs(r.DataWaitS) }},
		{"peak mem", 11, 8, true, func(r *Row) string {
			if r.PeakBytes <= 0 {
				return "-"
			}
			s := units.BytesFine(r.PeakBytes)
			if r.OOMs > 0 {
				s = m.styles.Glyphs.OOM + " " + s
			}
			return s
		}},
		// failed allocations and the guard's actions, apart
		{"OOMs", 5, 9, true, func(r *Row) string { return count(r.OOMs) }},
		{"guard", 6, 10, true, func(r *Row) string { return count(r.Guards) }},
		{"sample s", 9, 14, true, func(r *Row) string { return secs(r.SampleS) }},
		{"transf. s", 10, 15, true, func(r *Row) string { return secs(r.TransferS) }},
		{"train s", 9, 5, true, func(r *Row) string { return secs(r.TrainS) }},
		{"eval s", 8, 6, true, func(r *Row) string { return secs(r.EvalS) }},
	}
	for _, r := range m.Rows {
		if r.Straggler > 0 {
			// a distributed run: its slowest rank over its median one
			straggler := column{"straggler", 9, 4, true, func(r *Row) string { return fixed(r.Straggler) }}
			slowest := column{"slowest", 8, 4, true, func(r *Row) string {
				if r.SlowShare <= 0 {
					return "-"
				}
				return "r" + strconv.Itoa(r.SlowRank) + " " + strconv.Itoa(int(math.Round(100*r.SlowShare))) + "%"
			}}
			return slices.Insert(cols, 5, straggler, slowest)
		}
	}
	return cols
}

// slowestRank returns the rank that was most often a step's slowest in
// the run's answers, and the share of steps it was (0: none).
func slowestRank(r *runstate.Run) (int, float64) {
	a := r.Answers()
	if a == nil || a.Run.RankSteps == nil {
		return 0, 0
	}
	best := -1
	ranks := a.Run.RankSteps.Ranks
	for i := range ranks {
		if best < 0 || ranks[i].Slowest > ranks[best].Slowest {
			best = i
		}
	}
	if best < 0 {
		return 0, 0
	}
	return ranks[best].Rank, ranks[best].Share
}

// count shows a count, "-" for none.
func count(n int64) string {
	if n <= 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func fixed(f float64) string {
	if f == 0 || !finite(f) {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

// progressW is the width of the progress column: the bar and "10/10
// ETA 12m05s".
const (
	progressMin  = 7  // "10/10"
	progressText = 20 // "100/100 ETA 12m05.0s"
)

func (m *Model) render(focus int) []string {
	cols := m.columns()
	// keep columns by priority while they fit, none after the first that
	// does not (a narrow column must not take progress' room); progress
	// takes what is left
	keep := make([]bool, len(cols))
	used := 0
	full := false
	for p := 0; p < len(cols) && !full; p++ {
		for i, c := range cols {
			if c.prio != p {
				continue
			}
			w := c.width
			if c.title == "progress" {
				w = progressMin
			}
			if used+w+1 <= m.w || p == 0 {
				keep[i] = true
				used += w + 1
			} else {
				full = true
			}
		}
	}
	progW := 0
	for i, c := range cols {
		if c.title == "progress" && keep[i] {
			progW = progressMin + max(min(m.w-used, progressText+12-progressMin), 0)
			cols[i].width = progW
		}
	}
	var hb strings.Builder
	for i, c := range cols {
		if !keep[i] {
			continue
		}
		if c.right {
			hb.WriteString(draw.PadLeft(c.title, c.width) + " ")
		} else {
			hb.WriteString(draw.PadRight(c.title, c.width) + " ")
		}
	}
	out := []string{m.styles.Header.Render(draw.Cut(strings.TrimRight(hb.String(), " "), m.w, ""))}
	for ri := range m.Rows {
		r := &m.Rows[ri]
		var b strings.Builder
		for i, c := range cols {
			if !keep[i] {
				continue
			}
			switch c.title {
			case "run":
				mark := "  "
				if ri == focus && len(m.Rows) > 1 {
					mark = m.styles.Glyphs.Cursor + " "
				}
				name := draw.PadRight(mark+draw.Cut(r.Run, c.width-2, m.styles.Glyphs.Ellipsis), c.width)
				if ri == focus && len(m.Rows) > 1 {
					name = m.styles.Title.Render(name)
				}
				b.WriteString(name)
			case "status":
				text := draw.Cut(r.StatusText(), c.width, m.styles.Glyphs.Ellipsis)
				b.WriteString(m.styles.Status(r.Status).Render(draw.PadRight(text, c.width)))
			case "progress":
				b.WriteString(m.progress(r, c.width))
			default:
				v := c.cell(r)
				if c.right {
					b.WriteString(draw.PadLeft(v, c.width))
				} else {
					b.WriteString(draw.PadRight(v, c.width))
				}
			}
			b.WriteByte(' ')
		}
		out = append(out, draw.Cut(b.String(), m.w, ""))
	}
	return out
}

// progress draws "████──── 3/10 ETA 1m05s" in w cells.
func (m *Model) progress(r *Row, w int) string {
	text := strconv.Itoa(r.Done)
	if r.Total > 0 {
		text += "/" + strconv.Itoa(r.Total)
	} else {
		text = "ep " + text
	}
	if r.ETA > 0 && draw.Width(text)+12 <= w {
		text += " ETA " + units.Duration(time.Duration(r.ETA*float64(time.Second)))
	}
	barW := w - draw.Width(text) - 1
	if r.Total <= 0 || barW < 4 {
		return draw.PadRight(text, w)
	}
	barW = min(barW, 12)
	full := int(math.Round(float64(r.Done) / float64(r.Total) * float64(barW)))
	full = min(max(full, 0), barW)
	bar := m.styles.OK.Render(strings.Repeat(m.styles.Glyphs.Full, full)) +
		m.muted.Paint(strings.Repeat(m.styles.Glyphs.HLine, barW-full))
	return draw.PadRight(bar+" "+text, w)
}
