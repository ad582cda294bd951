package analysis

import (
	"math"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
)

// Ledger is the stage ledger of one run (see Category): the whole run,
// the setup before its first epoch, and each epoch's window, the time
// the epoch adds to the run (as profile.Summary's epoch times: from the
// end of the previous epoch to the end of its last train span on the
// trainer's lane and of its evaluations).
//
// A distributed run has one ledger per rank in Ranks; Whole, Setup and
// Epochs are then those of the slowest rank (the largest wall time),
// and Straggler says how far it is ahead of the others.
type Ledger struct {
	Whole  Window        `json:"whole"`
	Setup  Window        `json:"setup"`
	Epochs []EpochWindow `json:"epochs"`

	Ranks     []RankLedger `json:"ranks,omitempty"`
	Straggler *Straggler   `json:"straggler,omitempty"`

	// LateS is span time that arrived after its window had been swept
	// and was left out (0 for the engine's and the client's journals).
	LateS float64 `json:"late_s,omitempty"`
}

// Training returns the whole run without its setup: from the first touch
// of data (the first span that is not setup) to the end, the time the
// verdict and the advice judge.
func (l *Ledger) Training() Window {
	w := l.Whole
	w.sub(&l.Setup)
	return w
}

// EpochWindow is one epoch's window.
type EpochWindow struct {
	Epoch int `json:"epoch"`
	Window
}

// RankLedger is one rank's ledger in a distributed run.
type RankLedger struct {
	Rank   int           `json:"rank"`
	Whole  Window        `json:"whole"`
	Setup  Window        `json:"setup"`
	Epochs []EpochWindow `json:"epochs"`
}

// Straggler is the slowest rank of a distributed run against the
// others: its busy train time over the median rank's, and the excess as
// a share of the run's wall time (the time the other ranks wait for it
// where they synchronize).
type Straggler struct {
	Rank        int     `json:"rank"`
	TrainS      float64 `json:"train_s"`        // its busy train time
	MedianTrain float64 `json:"median_train_s"` // the median rank's
	Share       float64 `json:"share"`          // (TrainS − MedianTrain) / wall time
}

// LedgerBuilder builds a run's ledger from its events, fed one at a time
// in journal order. Spans on lanes named by profile.RankLane go to their
// rank's ledger; the trainer's lane is compute (rank R: rankR/compute).
// It is not safe for concurrent use.
type LedgerBuilder struct {
	tracks map[int]*track // by rank; 0 for a run without ranks
	ranked bool
	keep   int // spans a track keeps before it sweeps closed epochs
}

// keepSpans is how many spans a track keeps at least before it sweeps
// the epochs it may close: runs of small epochs (a few batches, sampler
// workers prefetching several epochs ahead) then close epochs far behind
// the trainer, so that no span arrives after its window was swept.
const keepSpans = 4096

// NewLedgerBuilder returns an empty builder.
func NewLedgerBuilder() *LedgerBuilder {
	return &LedgerBuilder{tracks: map[int]*track{}, keep: keepSpans}
}

// Add folds one event into the ledger; events other than spans are
// ignored.
func (b *LedgerBuilder) Add(e *profile.Event) {
	if e.T != profile.TypeSpan {
		return
	}
	rank, lane, ok := profile.SplitRankLane(e.Lane)
	if ok {
		b.ranked = true
	}
	t := b.tracks[rank]
	if t == nil {
		t = newTrack()
		t.keep = b.keep
		b.tracks[rank] = t
	}
	t.add(e, lane)
}

// Ledger returns the ledger of the events added so far; the builder can
// go on taking events.
func (b *LedgerBuilder) Ledger() Ledger {
	var l Ledger
	if len(b.tracks) == 0 {
		return l
	}
	ranks := make([]int, 0, len(b.tracks))
	for r := range b.tracks {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	var per []RankLedger
	for _, r := range ranks {
		t := b.tracks[r]
		setup, epochs, whole := t.ledger()
		per = append(per, RankLedger{Rank: r, Whole: whole, Setup: setup, Epochs: epochs})
		l.LateS += seconds(t.late)
	}
	slow := 0
	for i := range per {
		if per[i].Whole.WallS > per[slow].Whole.WallS {
			slow = i
		}
	}
	l.Whole, l.Setup, l.Epochs = per[slow].Whole, per[slow].Setup, per[slow].Epochs
	if b.ranked && len(per) > 1 {
		l.Ranks = per
		l.Straggler = straggler(per)
	}
	return l
}

// straggler finds the rank with the most busy train time.
func straggler(per []RankLedger) *Straggler {
	train := make([]float64, len(per))
	slow := 0
	for i := range per {
		train[i] = per[i].Whole.Busy[Train]
		if train[i] > train[slow] {
			slow = i
		}
	}
	s := &Straggler{Rank: per[slow].Rank, TrainS: train[slow], MedianTrain: median(train)}
	if w := per[slow].Whole.WallS; w > 0 {
		s.Share = (s.TrainS - s.MedianTrain) / w
	}
	return s
}

// median returns the median of v (the mean of the two middle values for
// an even count); v is sorted in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// track is one rank's spans and closed windows.
type track struct {
	keep    int // see keepSpans
	pending []span
	epochs  map[int32]*epochMark

	hasSpan          bool
	minStart, maxEnd int64
	hasWork          bool
	firstWork        int64 // earliest start of a span other than setup

	trained   bool  // a train span on the trainer's lane was seen
	lastTrain int32 // the highest epoch of those

	closed     bool  // the setup and at least one epoch were swept
	lastClosed int32 // the label of the last epoch swept
	boundary   int64 // end of the last swept window
	setup      Window
	done       []EpochWindow
	late       int64 // ns of span time clipped as late
}

// epochMark is what is known of one epoch label.
type epochMark struct {
	end      int64 // latest end of its trainer-lane train spans and its evals
	hasTrain bool
	closed   bool
}

func newTrack() *track { return &track{epochs: map[int32]*epochMark{}} }

// add takes one span of the track; lane is the rank's own lane name.
func (t *track) add(e *profile.Event, lane string) {
	// Times beyond ±2^61 ns (73 years) are a hostile journal's: clamped,
	// so that no difference of two of them overflows.
	const limit = 1 << 61
	start := min(max(e.Start, -limit), limit)
	end := start + min(max(e.Dur, 0), limit)
	if t.closed && start < t.boundary { // late: its window was swept
		t.late += min(end, t.boundary) - start
		start = t.boundary
		if end <= start {
			return
		}
	}
	cls := laneClass(e.Name, lane)
	trainer := lane == profile.LaneCompute
	if !t.hasSpan {
		t.hasSpan, t.minStart, t.maxEnd = true, start, end
	}
	t.minStart, t.maxEnd = min(t.minStart, start), max(t.maxEnd, end)
	if e.Name != profile.StageSetup && (!t.hasWork || start < t.firstWork) {
		t.hasWork, t.firstWork = true, start
	}
	ep := int32(max(min(e.Epoch, math.MaxInt32), math.MinInt32))
	if t.closed && ep <= t.lastClosed {
		ep = t.lastClosed + 1 // a closed epoch's span: counted in the next window
	}
	if (e.Name == profile.StageTrain && trainer) || e.Name == profile.StageEval {
		m := t.epochs[ep]
		if m == nil {
			m = &epochMark{}
			t.epochs[ep] = m
		}
		m.end = max(m.end, end)
		m.hasTrain = m.hasTrain || e.Name == profile.StageTrain
	}
	if end > start {
		t.pending = append(t.pending, span{start: start, end: end, cls: cls, trainer: trainer, device: isDevice(e.Name)})
	}
	if e.Name == profile.StageTrain && trainer && (!t.trained || ep > t.lastTrain) {
		t.trained, t.lastTrain = true, ep
		if len(t.pending) >= t.keep {
			t.closeBefore(ep - 1)
		}
	}
}

// openEpochs returns the labels of the epochs with a train span that are
// not swept yet, in order.
func (t *track) openEpochs() []int32 {
	var out []int32
	for k, m := range t.epochs {
		if m.hasTrain && !m.closed {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// closeBefore sweeps the windows of the open epochs before label and
// drops the spans that end before the last of them: a span of those
// epochs arrives before the trainer trains the second epoch after them.
func (t *track) closeBefore(label int32) {
	open := t.openEpochs()
	if len(open) == 0 || open[0] >= label {
		return
	}
	if !t.closed {
		t.closed = true
		t.boundary = t.minStart
		t.setup = sweep(t.pending, t.minStart, t.workStart())
		t.boundary = t.workStart()
	}
	for _, k := range open {
		if k >= label {
			break
		}
		m := t.epochs[k]
		end := max(m.end, t.boundary)
		t.done = append(t.done, EpochWindow{Epoch: int(k), Window: sweep(t.pending, t.boundary, end)})
		t.boundary, t.lastClosed = end, k
		m.closed = true
	}
	keep := t.pending[:0]
	for _, s := range t.pending {
		if s.end > t.boundary {
			keep = append(keep, s)
		}
	}
	clear(t.pending[len(keep):])
	t.pending = keep
	for k, m := range t.epochs {
		if m.closed && m.end <= t.boundary {
			delete(t.epochs, k)
		}
	}
}

// workStart returns where the first epoch's window starts.
func (t *track) workStart() int64 {
	if t.hasWork {
		return max(t.firstWork, t.minStart)
	}
	return t.maxEnd
}

// ledger returns the setup, epoch and whole-run windows of the spans so
// far, without changing the track.
func (t *track) ledger() (setup Window, epochs []EpochWindow, whole Window) {
	if !t.hasSpan {
		return
	}
	boundary := t.boundary
	if t.closed {
		setup = t.setup
	} else {
		setup = sweep(t.pending, t.minStart, t.workStart())
		boundary = t.workStart()
	}
	epochs = slices.Clone(t.done)
	for _, k := range t.openEpochs() {
		end := max(t.epochs[k].end, boundary)
		epochs = append(epochs, EpochWindow{Epoch: int(k), Window: sweep(t.pending, boundary, end)})
		boundary = end
	}
	whole.add(&setup)
	for i := range epochs {
		whole.add(&epochs[i].Window)
	}
	tail := sweep(t.pending, boundary, t.maxEnd)
	whole.add(&tail)
	whole.StartS = seconds(t.minStart)
	return setup, epochs, whole
}
