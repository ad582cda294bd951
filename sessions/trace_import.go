package sessions

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/kineto"
)

// TraceRun is the run name ImportTraces gives a session made of traces.
const TraceRun = "trace"

// TraceImportOptions shape the import of torch.profiler traces.
type TraceImportOptions struct {
	// Zero is the wall-clock time of time 0 of traces whose times are not
	// wall-clock (the legacy profiler's start at 0). Without it, such a
	// trace starts at its file's modification time less its length in a
	// new session, and cannot join a run.
	Zero time.Time
	// Name is a new session's name.
	Name string
	// Held says the caller holds the run's journal lock itself (the
	// run's own supervisor): AttachTraces does not refuse a run that
	// reads as running.
	Held bool
	// Offset, when HasOffset, is the trace time in nanoseconds
	// (baseTimeNanoseconds included) that is the run's time 0, as the
	// client that wrote the trace measured it (its torch.profile span's
	// offset_ns); it wins over Zero and the trace's wall-clock times.
	Offset    int64
	HasOffset bool
}

// TraceFile is what one trace gave.
type TraceFile struct {
	Path    string `json:"path"`
	Rank    int    `json:"rank"`
	Events  int    `json:"events"`
	Spans   int    `json:"spans"`
	Mem     int    `json:"mem"`
	Samples int    `json:"samples"`
	Skipped int    `json:"skipped"`
	Kernels int    `json:"kernels"`
	Steps   int    `json:"steps"`
	// Dropped counts events left out of a full index table (see
	// kineto.MaxIndexed): their links or batches may be missing.
	Dropped int `json:"dropped,omitempty"`
}

// scanTrace makes the first pass over a trace.
func scanTrace(path string) (*kineto.Index, error) {
	r, err := kineto.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return kineto.Scan(r)
}

// convertTrace makes the second pass, emitting into w.
func convertTrace(path string, ix *kineto.Index, opts kineto.Options, w func(*profile.Event) error) (kineto.Stats, error) {
	r, err := kineto.Open(path)
	if err != nil {
		return kineto.Stats{}, err
	}
	defer r.Close()
	return kineto.Convert(r, ix, opts, w)
}

// ImportTraces makes a new session of one run, TraceRun, from traces of
// one training job, one per rank: rank R's events go to the run's rank R
// journal, each rank on its own trace's clock, placed by its wall-clock
// start. The stages are mapped (see kineto.Options.Stages). Ranks come
// from each trace's distributedInfo, else from the order of the files.
func (st *Store) ImportTraces(files []string, opts TraceImportOptions) (*Session, []TraceFile, error) {
	if len(files) == 0 {
		return nil, nil, errors.New("import traces: no trace given")
	}
	ixs := make([]*kineto.Index, len(files))
	ranks := map[int]string{}
	for i, f := range files {
		ix, err := scanTrace(f)
		if err != nil {
			return nil, nil, err
		}
		r := i
		if ix.Meta.HasRank && len(files) > 1 {
			r = ix.Meta.Rank
		}
		if prev, dup := ranks[r]; dup {
			return nil, nil, fmt.Errorf("import traces: %s and %s are both rank %d", prev, f, r)
		}
		ranks[r] = f
		ixs[i] = ix
	}
	// the host is the trace's (its first device), not the importing machine
	host := traceHost(ixs[0])
	if host == nil {
		host = &profile.Host{}
	}
	s, err := st.Create(SessionMeta{Name: opts.Name, Host: host})
	if err != nil {
		return nil, nil, err
	}
	out := make([]TraceFile, len(files))
	for i, f := range files {
		rank := 0
		for r, g := range ranks {
			if g == f {
				rank = r
			}
		}
		tf, err := s.writeTraceRank(f, ixs[i], rank, len(files), opts)
		if err != nil {
			return s, out, err
		}
		out[i] = tf
	}
	return s, out, nil
}

// traceWall returns where a trace's earliest event is on the wall clock
// and the trace time that becomes the run's 0.
func traceWall(path string, ix *kineto.Index, zero time.Time) (time.Time, int64) {
	origin := ix.Abs(ix.MinTs)
	if ix.WallClock() {
		return time.Unix(0, origin).UTC(), origin
	}
	if !zero.IsZero() {
		return zero.Add(time.Duration(origin)).UTC(), origin
	}
	w := time.Now()
	if fi, err := os.Stat(path); err == nil {
		w = fi.ModTime()
	}
	return w.Add(-time.Duration(ix.Abs(ix.MaxTs) - origin)).UTC(), origin
}

// writeTraceRank writes one rank's journal of a new trace session.
func (s *Session) writeTraceRank(path string, ix *kineto.Index, rank, world int, opts TraceImportOptions) (TraceFile, error) {
	wall, origin := traceWall(path, ix, opts.Zero)
	start := profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: TraceRun, Session: s.ID(),
		Variant: TraceRun, Wall: wall.Format(time.RFC3339Nano), Host: traceHost(ix)}
	if world > 1 {
		start.Rank, start.World = rank, world
	}
	jw, err := OpenJournal(s.RankJournalPath(TraceRun, rank))
	if err != nil {
		return TraceFile{}, err
	}
	w := newBatchWriter(jw)
	w.add(&start)
	kst, err := convertTrace(path, ix, kineto.Options{Origin: origin, Stages: true, Epoch: 1}, w.add)
	if err == nil {
		err = w.err
	}
	end := profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK}
	if err != nil {
		end.Status, end.Error = profile.StatusFailed, err.Error()
	}
	w.add(&end)
	if ferr := w.flush(); ferr != nil && err == nil {
		err = ferr
	}
	if cerr := jw.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return traceFile(path, rank, ix, kst), err
}

func traceFile(path string, rank int, ix *kineto.Index, kst kineto.Stats) TraceFile {
	return TraceFile{Path: path, Rank: rank, Events: ix.Events, Spans: kst.Spans, Mem: kst.Mem,
		Samples: kst.Samples, Skipped: kst.Skipped, Kernels: ix.Kernels, Steps: len(ix.Steps), Dropped: ix.Dropped}
}

// traceHost describes the trace's devices (nil without any).
func traceHost(ix *kineto.Index) *profile.Host {
	if len(ix.Meta.Devices) == 0 {
		return nil
	}
	d := ix.Meta.Devices[0]
	return &profile.Host{GPU: d.Name, GPUMem: d.Memory}
}

// batchWriter hands events to a journal in batches; the first error
// sticks.
type batchWriter struct {
	write func([]profile.Event) error
	buf   []profile.Event
	err   error
}

func newBatchWriter(jw *JournalWriter) *batchWriter {
	return &batchWriter{write: jw.WriteEvents, buf: make([]profile.Event, 0, 4096)}
}

func (w *batchWriter) add(e *profile.Event) error {
	if w.err != nil {
		return w.err
	}
	w.buf = append(w.buf, *e)
	if len(w.buf) == cap(w.buf) {
		return w.flush()
	}
	return nil
}

func (w *batchWriter) flush() error {
	if w.err == nil && len(w.buf) > 0 {
		w.err = w.write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}

// AttachTraces adds torch.profiler traces to an existing run (an
// external run whose trainer wrote them), on the run's clock: a trace's
// wall-clock times (or opts.Zero) against the run's run_start wall time.
// The stages are not mapped (the run records its own); the trace's steps
// still give its events their batches. The trace of rank R (its
// distributedInfo, else its place among files) joins the run's rank R
// journal, which is rewritten with the trace's events before its
// run_end, so every reader sees them. A run that is running is refused
// unless opts.Held.
func (s *Session) AttachTraces(run string, files []string, opts TraceImportOptions) ([]TraceFile, error) {
	if err := ValidName(run); err != nil {
		return nil, fmt.Errorf("attach traces: %w", err)
	}
	out := make([]TraceFile, 0, len(files))
	for i, f := range files {
		ix, err := scanTrace(f)
		if err != nil {
			return out, err
		}
		rank := i
		if ix.Meta.HasRank {
			rank = ix.Meta.Rank
		}
		tf, err := s.attachTrace(run, f, ix, rank, opts)
		if err != nil {
			return out, err
		}
		out = append(out, tf)
	}
	return out, nil
}

// AttachRankTrace adds one torch.profiler trace to rank's journal of
// run, as AttachTraces does for a trace whose rank the caller knows.
func (s *Session) AttachRankTrace(run string, rank int, path string, opts TraceImportOptions) (TraceFile, error) {
	if err := ValidName(run); err != nil {
		return TraceFile{}, fmt.Errorf("attach trace: %w", err)
	}
	ix, err := scanTrace(path)
	if err != nil {
		return TraceFile{}, err
	}
	return s.attachTrace(run, path, ix, rank, opts)
}

func (s *Session) attachTrace(run, path string, ix *kineto.Index, rank int, opts TraceImportOptions) (TraceFile, error) {
	jpath := s.RankJournalPath(run, rank)
	if locked, known := Locked(jpath); locked && known && !opts.Held {
		return TraceFile{}, fmt.Errorf("attach trace %s: run %s is running; attach once it ends", path, run)
	}
	first, err := firstEvent(jpath)
	if err != nil {
		return TraceFile{}, fmt.Errorf("attach trace %s to run %s: %w", path, run, err)
	}
	wall, err := first.WallTime()
	if first.T != profile.TypeRunStart || err != nil {
		return TraceFile{}, fmt.Errorf("attach trace %s: run %s's journal has no run_start with a wall time", path, run)
	}
	var origin int64
	switch {
	case opts.HasOffset:
		origin = opts.Offset
	case ix.WallClock():
		origin = wall.UnixNano()
	case !opts.Zero.IsZero():
		origin = wall.Sub(opts.Zero).Nanoseconds()
	default:
		return TraceFile{}, fmt.Errorf("attach trace %s: its times are not wall-clock times; give the wall-clock time of its time 0", path)
	}
	var kst kineto.Stats
	err = rewriteBeforeEnd(jpath, func(w *batchWriter) error {
		var err error
		kst, err = convertTrace(path, ix, kineto.Options{Origin: origin, Epoch: 1, Phase: "trace"}, w.add)
		return err
	})
	if err != nil {
		return TraceFile{}, fmt.Errorf("attach trace %s to run %s: %w", path, run, err)
	}
	return traceFile(path, rank, ix, kst), nil
}

// errFirst stops a scan at its first event.
var errFirst = errors.New("first event")

// firstEvent returns a journal's first event.
func firstEvent(path string) (profile.Event, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return profile.Event{}, err
	}
	defer f.Close()
	var first profile.Event
	_, err = ScanJournal(f, func(e *profile.Event) error {
		first = *e
		return errFirst
	})
	if err != nil && !errors.Is(err, errFirst) {
		return first, err
	}
	return first, nil
}

// rewriteBeforeEnd rewrites a journal atomically: its lines, then what
// add writes, then its run_end lines (in their order), so that the
// run_end stays last. Memory stays bounded by a line (and the run_end
// lines, of which a journal has one or two).
func rewriteBeforeEnd(path string, add func(*batchWriter) error) error {
	src, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer src.Close()
	return WriteFileAtomic(path, 0o600, func(dst io.Writer) error {
		bw := bufio.NewWriterSize(dst, 1<<16)
		sc := bufio.NewScanner(src)
		sc.Buffer(make([]byte, 0, 1<<16), MaxEventSize+1)
		var ends [][]byte
		var e profile.Event
		for sc.Scan() {
			line := sc.Bytes()
			if profile.DecodeEvent(line, &e) == nil && e.T == profile.TypeRunEnd {
				ends = append(ends, slices.Clone(line))
				continue
			}
			bw.Write(line)
			bw.WriteByte('\n')
		}
		if err := sc.Err(); err != nil {
			return err
		}
		var line []byte
		w := &batchWriter{buf: make([]profile.Event, 0, 4096), write: func(evs []profile.Event) error {
			for i := range evs {
				line = profile.AppendLine(line[:0], &evs[i])
				if _, err := bw.Write(line); err != nil {
					return err
				}
			}
			return nil
		}}
		if err := add(w); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		for _, end := range ends {
			bw.Write(end)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}
