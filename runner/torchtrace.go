package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// profiledWindow is what a journal's torch.profile span says of the
// window the client captured with torch.profiler (--torch-profile): the
// trace file beside the journal and the trace time, in nanoseconds, that
// is the run's time 0.
type profiledWindow struct {
	Trace  string `json:"trace"`
	Offset *int64 `json:"offset_ns"`
}

// errWindowFound ends a journal scan at its torch.profile span.
var errWindowFound = errors.New("torch.profile found")

// findWindow returns the torch.profile span's window of the journal at
// path, or ok false when the journal has none.
func findWindow(path string) (w profiledWindow, ok bool, err error) {
	f, err := sessions.OpenRegular(path)
	if err != nil {
		return w, false, err
	}
	defer f.Close()
	_, err = sessions.ScanJournal(f, func(e *profile.Event) error {
		if e.T != profile.TypeSpan || e.Name != "torch.profile" {
			return nil
		}
		if jerr := json.Unmarshal(e.Attrs, &w); jerr != nil || w.Trace == "" || w.Offset == nil {
			return fmt.Errorf("torch.profile span: attrs %s: want trace and offset_ns", e.Attrs)
		}
		return errWindowFound
	})
	if errors.Is(err, errWindowFound) {
		return w, true, nil
	}
	return w, false, err
}

// attachTorchTraces adds to each journal of an external run (rank 0's and
// any rank's) the torch.profiler trace its client wrote beside it, on the
// run's clock by the offset the client measured, so that one session
// holds the run at batch level and its profiled window at operator and
// kernel level. The run's supervisor calls it once the command is gone,
// before it ends the journal. What cannot be attached is said on log and
// left in place: `gnnscope import trace --session S --run NAME` takes it.
func attachTorchTraces(s *sessions.Session, run string, log io.Writer) {
	for rank := 0; ; rank++ {
		path := s.RankJournalPath(run, rank)
		if _, err := os.Lstat(path); err != nil {
			return
		}
		w, ok, err := findWindow(path)
		if err != nil {
			fmt.Fprintf(log, "gnnscope: torch trace of rank %d not attached: %v\n", rank, err)
			continue
		}
		if !ok {
			continue
		}
		trace := filepath.Join(s.RunsDir(), filepath.Base(w.Trace))
		opts := sessions.TraceImportOptions{Held: true, Offset: *w.Offset, HasOffset: true}
		tf, err := s.AttachRankTrace(run, rank, trace, opts)
		if err != nil {
			fmt.Fprintf(log, "gnnscope: torch trace %s not attached: %v\n", trace, err)
			continue
		}
		fmt.Fprintf(log, "gnnscope: torch trace %s attached: %d events, %d spans\n", filepath.Base(trace), tf.Events, tf.Spans)
	}
}
