package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// RunState is what a reader can tell about a run.
type RunState struct {
	Run      string         `json:"run"`
	Status   profile.Status `json:"status"`          // see RunStatus
	Error    string         `json:"error,omitempty"` // run_end's error
	Pid      int            `json:"pid,omitempty"`
	Journal  string         `json:"journal"`
	Size     int64          `json:"size"`     // journal bytes (0 if none yet)
	Modified time.Time      `json:"modified"` // journal's last write
	// Dropped counts the events found after run_end (written by a process
	// the run left behind): ignored, they change nothing.
	Dropped int `json:"dropped,omitempty"`
}

// Finished reports whether the run has a run_end.
func (r RunState) Finished() bool {
	return r.Status != profile.StatusRunning && r.Status != profile.StatusCrashed && r.Status != profile.StatusUnknown
}

// RunStatus returns a run's status: run_end's status (ok, oom, failed,
// canceled) when the journal ends with one; otherwise "running" if a
// process holds the journal's lock (see LockFile) or the pid in
// runs/<run>.pid is alive, "crashed" if that process is gone, "unknown"
// if there is no pid file or it names a process on another host. A writer
// that could not end its journal (a full disk) but recorded its exit in
// the pid file (Session.RecordExit) is "partial", its error saying why
// and with what status the run itself ended. A pid file that holds no pid
// (empty or torn) leaves the run "unknown", or "crashed" when its journal
// exists and no process holds its lock. In a session imported from an
// archive (which has no pid files), a run without run_end is "crashed".
func RunStatus(s *Session, run string) (profile.Status, error) {
	st, err := s.RunState(run)
	return st.Status, err
}

// RunState returns the state of one run. It reads only the end of the
// journal. A run with neither journal nor pid file is an error wrapping
// os.ErrNotExist.
func (s *Session) RunState(run string) (RunState, error) {
	st := RunState{Run: run, Journal: s.JournalPath(run)}
	if err := ValidName(run); err != nil {
		return st, fmt.Errorf("run state: %w", err)
	}
	end, fi, err := lastEvent(st.Journal)
	hasJournal := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("run %s: %w", run, err)
	}
	if hasJournal {
		st.Size, st.Modified = fi.Size(), fi.ModTime()
	}
	pf, perr := ReadPidFile(s.PidPath(run))
	if perr == nil {
		st.Pid = pf.Pid
	}
	if end != nil && end.T == profile.TypeRunEnd {
		st.Status, st.Error = end.Status, end.Error
		if st.Status == "" {
			st.Status = profile.StatusOK
		}
		return st, nil
	}
	if locked, known := Locked(st.Journal); hasJournal && known && locked {
		st.Status = profile.StatusRunning // its writer holds the journal
		return st, nil
	}
	if end != nil { // events after a run_end are dropped, never a status
		if e, after, err := runEndBefore(st.Journal); err == nil && e != nil {
			st.Status, st.Error, st.Dropped = e.Status, e.Error, after
			if st.Status == "" {
				st.Status = profile.StatusOK
			}
			return st, nil
		}
	}
	switch {
	case perr == nil:
		alive, known := pf.Alive()
		switch {
		case alive:
			st.Status = profile.StatusRunning
		case pf.Exit != "":
			st.Status, st.Error = profile.StatusPartial, pf.exitText()
		case !known:
			st.Status = profile.StatusUnknown
		default:
			st.Status = profile.StatusCrashed
		}
	case errors.Is(perr, os.ErrNotExist):
		if !hasJournal {
			return st, fmt.Errorf("run %s of session %s: %w", run, s.Meta.ID, os.ErrNotExist)
		}
		st.Status = profile.StatusUnknown
		if s.imported() { // written on another machine: no run_end will come
			st.Status, st.Error = profile.StatusCrashed, "no run_end in the imported journal"
		}
	case unreadablePid(perr):
		// the pid file tells nothing: ask the journal's lock
		st.Status, st.Error = profile.StatusUnknown, fmt.Sprintf("%v; the process is unknown, check it", perr)
		if locked, known := Locked(st.Journal); hasJournal && known && !locked {
			st.Status, st.Error = profile.StatusCrashed, fmt.Sprintf("%v; no process holds the journal", perr)
		}
	default:
		return st, fmt.Errorf("run %s: %w", run, perr)
	}
	return st, nil
}

// unreadablePid reports whether a pid file's error says only that it
// tells no process (empty, torn, too large, not a regular file): the run's
// state is then read without it.
func unreadablePid(err error) bool {
	return errors.Is(err, ErrBadPidFile) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotRegular)
}

// lastEvent decodes the journal's last complete line that decodes (nil if
// none), reading only the end of the file (see lastDecoded).
func lastEvent(path string) (*profile.Event, os.FileInfo, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if err := firstSchema(f, fi.Size(), path); err != nil {
		return nil, fi, err
	}
	e, err := lastDecoded(f, fi.Size(), MaxEventSize)
	return e, fi, err
}

// firstSchema checks the schema version of the journal's first line (its
// run_start) when the line is complete within its first 64 KiB: the state
// of a journal of a newer schema is not read from its last event.
func firstSchema(r io.ReaderAt, size int64, path string) error {
	var line []byte
	for _, n := range []int64{4 << 10, 64 << 10} { // a run_start takes a few KiB
		buf := make([]byte, min(size, n))
		got, err := r.ReadAt(buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		var ok bool
		if line, _, ok = bytes.Cut(buf[:got], []byte{'\n'}); ok {
			break
		}
		if line = nil; int64(got) < n {
			break // the whole file, and no line end
		}
	}
	if line == nil {
		return nil
	}
	var e profile.Event
	if profile.DecodeEvent(line, &e) != nil {
		return nil
	}
	return checkSchema(&e, path)
}

// lastDecoded walks the complete lines of the first size bytes of r
// backwards and decodes the last one that decodes (nil if none). An
// incomplete last line is dropped: a torn run_end is no run_end. Lines
// longer than maxLine bytes are skipped, never held, so it holds at most
// maxLine bytes and a 64 KiB block, and reads each byte at most twice.
func lastDecoded(r io.ReaderAt, size int64, maxLine int) (*profile.Event, error) {
	if size <= 0 {
		return nil, nil
	}
	b := &backReader{r: r, block: make([]byte, min(size, 64<<10))}
	nl, err := b.lastNewline(size)
	if err != nil || nl < 0 {
		return nil, err
	}
	var buf []byte
	for end := nl + 1; end > 0; {
		prev, err := b.lastNewline(end - 1)
		if err != nil {
			return nil, err
		}
		start := prev + 1
		if n := end - start; n > 1 && n-1 <= int64(maxLine) {
			line, err := b.slice(start, end, &buf)
			if err != nil {
				return nil, err
			}
			var e profile.Event
			if !blank(line) && profile.DecodeEvent(line, &e) == nil {
				return &e, nil
			}
		}
		end = start
	}
	return nil, nil
}

// runEndBefore finds the journal's last run_end that has events after it,
// walking its lines backwards, and counts those events; nil when it has
// none. It reads the whole journal when there is none (a crashed run).
func runEndBefore(path string) (end *profile.Event, after int, err error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := &backReader{r: f, block: make([]byte, min(fi.Size(), 64<<10))}
	var buf []byte
	for end := fi.Size(); end > 0; {
		prev, err := b.lastNewline(end - 1)
		if err != nil {
			return nil, 0, err
		}
		start := prev + 1
		if n := end - start; n > 1 && n-1 <= MaxEventSize {
			line, err := b.slice(start, end, &buf)
			if err != nil {
				return nil, 0, err
			}
			var e profile.Event
			if !blank(line) && profile.DecodeEvent(line, &e) == nil {
				if e.T == profile.TypeRunEnd {
					return &e, after, nil
				}
				after++
			}
		}
		end = start
	}
	return nil, 0, nil
}

// backReader reads a file backwards a block at a time.
type backReader struct {
	r     io.ReaderAt
	block []byte // holds the file's bytes [off, off+n)
	off   int64
	n     int
}

// lastNewline returns the offset of the last '\n' before offset p, or -1.
func (b *backReader) lastNewline(p int64) (int64, error) {
	for p > 0 {
		if p <= b.off || p > b.off+int64(b.n) {
			from := max(p-int64(len(b.block)), 0)
			n, err := b.r.ReadAt(b.block[:p-from], from)
			if n < int(p-from) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF // the file shrank
				}
				return -1, err
			}
			b.off, b.n = from, n
		}
		if i := bytes.LastIndexByte(b.block[:p-b.off], '\n'); i >= 0 {
			return b.off + int64(i), nil
		}
		p = b.off
	}
	return -1, nil
}

// slice returns the file's bytes [start, end): from the block if it holds
// them, else read into *buf.
func (b *backReader) slice(start, end int64, buf *[]byte) ([]byte, error) {
	if start >= b.off && end <= b.off+int64(b.n) {
		return b.block[start-b.off : end-b.off], nil
	}
	n := int(end - start)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	if k, err := b.r.ReadAt((*buf)[:n], start); k < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the file shrank
		}
		return nil, err
	}
	return (*buf)[:n], nil
}
