package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// TailOptions tune a Tailer.
type TailOptions struct {
	// Interval is how often Next polls the file. Default 100 ms.
	Interval time.Duration
	// Offset is the byte offset to start at; it must be the start of a
	// line (e.g. ReadStats.Bytes of an earlier read, or Offset of an
	// earlier Tailer). Default 0: the whole journal.
	Offset int64
	// Alive, if set, is asked when a poll finds nothing new; once it
	// returns false and a last poll finds nothing either, Next returns
	// ErrWriterGone instead of waiting forever for a crashed writer.
	Alive func() bool
}

// ErrWriterGone is returned by Tailer.Next when the journal has no run_end
// and its writer is gone (TailOptions.Alive returned false).
var ErrWriterGone = errors.New("journal writer is gone")

// ErrTruncated is returned when a tailed journal shrinks below what was
// already read: it was replaced, not appended to.
var ErrTruncated = errors.New("journal truncated")

// Tailer follows a journal that is being written. It returns complete lines
// only: a partial last line is kept until its newline arrives. It is not
// safe for concurrent use.
type Tailer struct {
	path   string
	opts   TailOptions
	f      *os.File
	offset int64  // file offset after the last complete line consumed
	pos    int64  // file offset after the last byte read
	buf    []byte // bytes read past offset: an incomplete line, at most MaxEventSize
	skip   bool   // the line at offset is longer than MaxEventSize: drop it up to its newline
	chunk  []byte
	stats  ReadStats
	err    error // a journal of a newer schema (SchemaError)
	ended  bool  // run_end returned
	eof    bool  // io.EOF reported
	seen   int64 // bytes searched for a newline, each once (linear work)
	max    int   // longest line decoded: MaxEventSize
}

// NewTailer returns a Tailer for the journal at path; the file need not
// exist yet.
func NewTailer(path string, opts TailOptions) *Tailer {
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	return &Tailer{path: path, opts: opts, offset: opts.Offset, pos: opts.Offset,
		stats: ReadStats{Bytes: opts.Offset}, max: MaxEventSize}
}

// Offset returns the byte offset just after the last complete line read.
func (t *Tailer) Offset() int64 { return t.offset }

// Stats returns what the tail has read so far (Torn: a partial line is
// pending).
func (t *Tailer) Stats() ReadStats {
	st := t.stats
	st.Torn = len(t.buf) > 0 || t.skip
	return st
}

// Ended reports whether the run_end event has been returned.
func (t *Tailer) Ended() bool { return t.ended }

// Poll reads whatever complete lines were appended since the last call and
// returns their events (nil if none). It does not block. Malformed lines are
// skipped and counted in Stats, and so are lines longer than MaxEventSize,
// which are never held whole (Stats' FirstError names the journal and the
// line's offset if it is the first line skipped). Its work is linear in
// the bytes appended: each byte is searched for a newline once. A
// run_start of a newer schema than this gnnscope reads stops the tail
// with a SchemaError.
func (t *Tailer) Poll() ([]profile.Event, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.f == nil {
		f, err := OpenRegular(t.path)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil // not created yet
			}
			return nil, fmt.Errorf("tail journal %s: %w", t.path, err)
		}
		t.f = f
	}
	fi, err := t.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tail journal %s: %w", t.path, err)
	}
	pos := t.pos
	if fi.Size() < pos {
		return nil, fmt.Errorf("tail journal %s: %w (size %d < offset %d)", t.path, ErrTruncated, fi.Size(), pos)
	}
	if fi.Size() == pos {
		return nil, nil
	}
	if t.chunk == nil {
		t.chunk = make([]byte, 64<<10)
	}
	var evs []profile.Event
	for pos < fi.Size() {
		n, err := t.f.ReadAt(t.chunk, pos)
		if n > 0 {
			evs = t.feed(t.chunk[:n], pos, evs)
			pos += int64(n)
			t.pos = pos
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return evs, fmt.Errorf("tail journal %s: %w", t.path, err)
		}
	}
	if t.err != nil {
		return nil, t.err
	}
	return evs, nil
}

// feed takes the bytes read at file offset at: it decodes the lines they
// complete and keeps the start of the next one in t.buf, or drops it while
// it is longer than MaxEventSize.
func (t *Tailer) feed(b []byte, at int64, evs []profile.Event) []profile.Event {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.seen += int64(len(b))
		} else {
			t.seen += int64(i + 1)
		}
		switch {
		case t.skip && i < 0:
			return evs
		case i < 0 && len(t.buf)+len(b) > t.max:
			t.tooLong()
			return evs
		case i < 0:
			t.buf = appendLine(t.buf, b, t.max+1)
			return evs
		case t.skip:
		case len(t.buf)+i > t.max:
			t.tooLong()
		case len(t.buf) == 0:
			evs = t.decode(b[:i+1], evs)
		default:
			t.buf = appendLine(t.buf, b[:i+1], t.max+1)
			evs = t.decode(t.buf, evs)
		}
		at += int64(i + 1)
		b = b[i+1:]
		t.offset, t.stats.Bytes, t.skip = at, at, false
		t.buf = t.buf[:0]
		if cap(t.buf) > tailKeep {
			t.buf = nil // do not keep a long line's buffer
		}
	}
	return evs
}

// tailKeep is the largest line buffer a Tailer keeps between lines.
const tailKeep = 1 << 20

// tooLong counts the line at t.offset as skipped for its length and drops
// what was kept of it.
func (t *Tailer) tooLong() {
	t.stats.long(fmt.Sprintf("journal %s: line at offset %d", t.path, t.offset), t.max)
	t.skip, t.buf = true, nil
}

// decode decodes one complete line.
func (t *Tailer) decode(line []byte, evs []profile.Event) []profile.Event {
	if blank(line) {
		return evs
	}
	var e profile.Event
	if t.stats.line(line, &e) {
		if err := checkSchema(&e, t.path); err != nil && t.err == nil {
			t.err = err
		}
		if e.T == profile.TypeRunEnd {
			t.ended = true
		}
		evs = append(evs, e)
	}
	return evs
}

// Next waits until new events arrive and returns them. After the run_end
// event has been returned it returns io.EOF. It returns ctx's error when
// ctx is done, and ErrWriterGone when TailOptions.Alive says the writer is
// gone and nothing more arrived.
func (t *Tailer) Next(ctx context.Context) ([]profile.Event, error) {
	if t.ended {
		t.eof = true
		return nil, io.EOF
	}
	return waitPoll(ctx, t.opts, t.Poll)
}

// waitPoll calls poll until it returns events or an error, sleeping
// opts.Interval between empty polls. When opts.Alive says the writer is
// gone it polls once more (the writer may have flushed just before dying)
// and returns ErrWriterGone if that finds nothing; it returns ctx's error
// when ctx is done. Tailer and RunTailer wait through it.
func waitPoll(ctx context.Context, opts TailOptions, poll func() ([]profile.Event, error)) ([]profile.Event, error) {
	var timer *time.Timer
	for {
		evs, err := poll()
		if len(evs) > 0 || err != nil {
			return evs, err
		}
		if opts.Alive != nil && !opts.Alive() {
			if evs, err := poll(); len(evs) > 0 || err != nil {
				return evs, err
			}
			return nil, ErrWriterGone
		}
		if timer == nil {
			timer = time.NewTimer(opts.Interval)
			defer timer.Stop()
		} else {
			timer.Reset(opts.Interval)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// Close releases the file.
func (t *Tailer) Close() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}

// Tail follows the journal at path, calling fn with each batch of new
// events, until the run_end event has been delivered (returns nil), ctx is
// done (returns ctx's error), the writer is gone (ErrWriterGone, with
// TailOptions.Alive) or fn returns an error.
func Tail(ctx context.Context, path string, opts TailOptions, fn func([]profile.Event) error) error {
	t := NewTailer(path, opts)
	defer t.Close()
	for {
		evs, err := t.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if len(evs) > 0 {
			if ferr := fn(evs); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return err
		}
	}
}

// TailRun returns a Tailer on a run's journal whose Alive (unless set in
// opts) checks the journal's lock and the run's pid file, so Next stops
// with ErrWriterGone when the writer died without run_end.
func (s *Session) TailRun(run string, opts TailOptions) (*Tailer, error) {
	if err := ValidName(run); err != nil {
		return nil, fmt.Errorf("tail run: %w", err)
	}
	if opts.Alive == nil {
		pidPath, journal := s.PidPath(run), s.JournalPath(run)
		opts.Alive = func() bool {
			if locked, known := Locked(journal); known && locked {
				return true // its writer holds it, pid file or not
			}
			pf, err := ReadPidFile(pidPath)
			if err != nil {
				return true // no pid file (yet): cannot tell
			}
			alive, known := pf.Alive()
			return alive || !known
		}
	}
	return NewTailer(s.JournalPath(run), opts), nil
}
