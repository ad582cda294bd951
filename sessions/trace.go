package sessions

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

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
// profile.Trace), one process per run, in the order of refs. Journals are
// read one event at a time, never held; damaged lines are skipped and
// counted. Runs without a journal are left out and listed in Missing;
// none at all is an error wrapping ErrNoJournal.
func BuildTrace(refs []RunRef, opts TraceOptions) (*profile.Trace, TraceStats, error) {
	var st TraceStats
	if len(refs) == 0 {
		return nil, st, errors.New("trace: no runs given")
	}
	tr := profile.NewTrace()
	runs := make([]*profile.TraceRun, 0, len(refs))
	walls := make([]time.Time, 0, len(refs))
	for _, ref := range refs {
		path := ref.Session.JournalPath(ref.Run)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			st.Missing = append(st.Missing, ref.Label())
			continue
		}
		if err != nil {
			return nil, st, fmt.Errorf("trace of run %s: %w", ref.Label(), err)
		}
		r := tr.NewRun(ref.Run, "", ref.Session.ID())
		var wall time.Time
		rs, err := ScanJournal(f, func(e *profile.Event) error {
			if e.T == profile.TypeRunStart && wall.IsZero() {
				wall, _ = e.WallTime()
			}
			r.Add(e)
			return nil
		})
		f.Close()
		if err != nil {
			return nil, st, fmt.Errorf("trace of run %s: %s: %w", ref.Label(), path, err)
		}
		st.Runs++
		st.Spans += r.Spans()
		st.Malformed += rs.Malformed
		runs = append(runs, r)
		walls = append(walls, wall)
	}
	if st.Runs == 0 {
		return nil, st, fmt.Errorf("%w: no journal for %s (not started yet?)", ErrNoJournal, listNames(st.Missing))
	}
	if opts.WallClock {
		var first time.Time
		for _, w := range walls {
			if !w.IsZero() && (first.IsZero() || w.Before(first)) {
				first = w
			}
		}
		for i, w := range walls {
			if !w.IsZero() {
				runs[i].Offset = w.Sub(first).Nanoseconds()
			}
		}
	}
	return tr, st, nil
}

// listNames joins names with commas, the first three and a count when
// there are more than four.
func listNames(names []string) string {
	if len(names) > 4 {
		return fmt.Sprintf("%s, %s, %s and %d more", names[0], names[1], names[2], len(names)-3)
	}
	return strings.Join(names, ", ")
}
