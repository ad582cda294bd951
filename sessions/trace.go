package sessions

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
)

// TraceOptions tune BuildTrace.
type TraceOptions struct {
	// WallClock places every run at its wall-clock start (run_start's
	// wall) relative to the earliest run's, so runs launched one after
	// the other follow each other; by default every run starts at zero,
	// so they line up.
	WallClock bool
}

// TraceStats is what BuildTrace read.
type TraceStats struct {
	Runs      int      // runs in the trace (those with a journal)
	Spans     int      // spans in the trace
	Malformed int      // damaged journal lines skipped
	Missing   []string // runs left out for want of a journal, as SESSION/RUN
}

// ErrNoJournal is wrapped by BuildTrace's error when none of its runs has
// a journal.
var ErrNoJournal = errors.New("no run has a journal yet")

// BuildTrace reads the runs' journals into one Chrome trace (see
// profile.Trace), one process per run, in the order of refs; a
// distributed run is one process per rank, named "RUN rank R", its ranks
// placed by their wall-clock starts. Journals are read one event at a
// time, never held; damaged lines are skipped and counted. Runs without a
// journal are left out and listed in Missing; none at all is an error
// wrapping ErrNoJournal.
func BuildTrace(refs []RunRef, opts TraceOptions) (*profile.Trace, TraceStats, error) {
	var st TraceStats
	if len(refs) == 0 {
		return nil, st, errors.New("trace: no runs given")
	}
	tr := profile.NewTrace()
	var procs []traceProc
	for i, ref := range refs {
		ps, err := traceRun(tr, ref, i, &st)
		if err != nil {
			return nil, st, err
		}
		procs = append(procs, ps...)
	}
	if st.Runs == 0 {
		return nil, st, fmt.Errorf("%w: no journal for %s (not started yet?)", ErrNoJournal, listNames(st.Missing))
	}
	placeProcs(procs, opts.WallClock)
	return tr, st, nil
}

// traceProc is one process of a trace: a run, or one rank of one.
type traceProc struct {
	run  *profile.TraceRun
	ref  int       // index of its run in refs
	wall time.Time // its run_start's wall clock (zero if unknown)
}

// traceRun adds a run's processes (one, or one per rank) to tr; the
// ranks whose run_start names their node share one process per node
// (traceNodes).
func traceRun(tr *profile.Trace, ref RunRef, refIdx int, st *TraceStats) ([]traceProc, error) {
	js, err := ref.Session.RankJournals(ref.Run)
	if err != nil {
		return nil, fmt.Errorf("trace of run %s: %w", ref.Label(), err)
	}
	var nodes traceNodes
	if len(js) > 1 {
		starts, _ := ref.Session.RankStarts(ref.Run) // a rank it cannot read is a process of its own
		nodes = newTraceNodes(tr, ref, refIdx, starts)
	}
	var procs []traceProc
	for _, j := range js {
		f, err := OpenRegular(j.Path)
		if errors.Is(err, os.ErrNotExist) {
			if j.Rank == 0 {
				st.Missing = append(st.Missing, ref.Label())
				return nil, nil
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("trace of run %s: %w", ref.Label(), err)
		}
		p, part := nodes.part(j.Rank)
		if p == nil {
			name := ref.Run
			if len(js) > 1 {
				name = ref.Run + " rank " + strconv.Itoa(j.Rank)
			}
			p = &traceProc{run: tr.NewRun(name, "", ref.Session.ID()), ref: refIdx}
			procs = append(procs, *p)
		}
		err = traceJournal(f, p, part, j.Rank, st)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("trace of run %s: %s: %w", ref.Label(), j.Path, err)
		}
		if part == nil {
			procs[len(procs)-1].wall = p.wall
		}
	}
	st.Runs++
	return append(nodes.procs(), procs...), nil
}

// traceJournal adds one journal's events to its process: as the whole
// process, or (part not nil) as one rank's part of its node's.
func traceJournal(f *os.File, p *traceProc, part *rankPart, rank int, st *TraceStats) error {
	r := p.run
	before := r.Spans()
	var exposed analysis.ExposedBuilder
	if part != nil {
		r.Part("rank "+strconv.Itoa(rank)+" ", part.shift)
	}
	rs, err := ScanJournal(f, func(e *profile.Event) error {
		if e.T == profile.TypeRunStart && p.wall.IsZero() && part == nil {
			p.wall, _ = e.WallTime()
		}
		exposed.Add(e)
		if part != nil {
			part.rewrite(e)
		}
		r.Add(e)
		return nil
	})
	if err != nil {
		return err
	}
	st.Spans += r.Spans() - before
	lane, shift := ExposedLane, int64(0)
	if part != nil {
		lane, shift = profile.RankLane(rank, ExposedLane), part.shift
	}
	addExposed(r, &exposed, lane, shift)
	st.Malformed += rs.Malformed
	return nil
}

// placeProcs sets the processes' offsets from their wall-clock starts:
// relative to the earliest of all with wallClock, else to the earliest of
// their run's (so every run starts at zero and its ranks keep their
// places).
func placeProcs(procs []traceProc, wallClock bool) {
	first := map[int]time.Time{}
	for _, p := range procs {
		key := p.ref
		if wallClock {
			key = -1
		}
		if f, ok := first[key]; !p.wall.IsZero() && (!ok || p.wall.Before(f)) {
			first[key] = p.wall
		}
	}
	for _, p := range procs {
		key := p.ref
		if wallClock {
			key = -1
		}
		if !p.wall.IsZero() {
			p.run.Offset = p.wall.Sub(first[key]).Nanoseconds()
		}
	}
}

// listNames joins names with commas, the first three and a count when
// there are more than four.
func listNames(names []string) string {
	if len(names) > 4 {
		return fmt.Sprintf("%s, %s, %s and %d more", names[0], names[1], names[2], len(names)-3)
	}
	return strings.Join(names, ", ")
}

// ExposedLane is the trace's lane of the stage ledger: a span per
// stretch of wall time during which one stage was exposed (the trainer
// ran it or waited on it), named "exposed STAGE" (see analysis.Category).
const ExposedLane = "exposed"

// addExposed adds a journal's exposed intervals to its trace process on
// lane (ExposedLane, or a rank's RankLane of it), shift ns later. They
// are not counted among the trace's spans (TraceStats).
func addExposed(r *profile.TraceRun, b *analysis.ExposedBuilder, lane string, shift int64) {
	for _, iv := range b.Intervals() {
		r.Add(&profile.Event{T: profile.TypeSpan, Name: "exposed " + iv.Cat.String(), Lane: lane,
			Epoch: -1, Batch: -1, Start: iv.Start + shift, Dur: iv.End - iv.Start})
	}
}
