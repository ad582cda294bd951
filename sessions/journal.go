package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/gnnscope/gnnscope/profile"
)

// JournalWriter appends events to a journal file as JSON Lines through a
// buffer. It implements profile.Sink; it is safe for concurrent use.
type JournalWriter struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	w      *bufio.Writer
	closed bool
}

var _ profile.Sink = (*JournalWriter)(nil)

// journalBuffer is the size of a JournalWriter's buffer.
const journalBuffer = 64 << 10

// OpenJournal opens (O_APPEND|O_CREATE) the journal at path for writing,
// creating its folder if needed. If the file ends with an incomplete line
// (a writer died mid-line), a newline is written first so that line stays
// a single malformed line and the new events are intact. A new journal is
// private (mode 0600, folder 0700); a path that is not a regular file (a
// FIFO, say) is refused with ErrNotRegular.
func OpenJournal(path string) (*JournalWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	f, err := openRegular(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	j := &JournalWriter{path: path, f: f, w: bufio.NewWriterSize(f, journalBuffer)}
	torn, err := endsMidLine(path)
	if err == nil && torn {
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	return j, nil
}

// endsMidLine reports whether a non-empty file does not end with '\n'.
func endsMidLine(path string) (bool, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	var b [1]byte
	if _, err := f.ReadAt(b[:], fi.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// Path returns the journal's file name.
func (j *JournalWriter) Path() string { return j.path }

// ErrClosed is returned when writing to a closed journal.
var ErrClosed = errors.New("journal closed")

// WriteEvents appends events to the buffer (whole buffers reach the file as
// they fill). It does not allocate for lines that fit the buffer.
func (j *JournalWriter) WriteEvents(evs []profile.Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return fmt.Errorf("write journal %s: %w", j.path, ErrClosed)
	}
	for i := range evs {
		line := profile.AppendLine(j.w.AvailableBuffer(), &evs[i])
		if _, err := j.w.Write(line); err != nil {
			return fmt.Errorf("write journal %s: %w", j.path, err)
		}
	}
	return nil
}

// Flush writes buffered lines to the file, where other processes (a tail)
// see them and a crash of this process no longer loses them. It does not
// fsync; Close does.
func (j *JournalWriter) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("flush journal %s: %w", j.path, err)
	}
	return nil
}

// Close flushes, fsyncs and closes the file. Later calls do nothing.
func (j *JournalWriter) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	err := j.w.Flush()
	if serr := j.f.Sync(); err == nil {
		err = serr
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close journal %s: %w", j.path, err)
	}
	return nil
}

// ReadStats tells what reading a journal met.
type ReadStats struct {
	Lines     int `json:"lines"`     // complete non-blank lines
	Events    int `json:"events"`    // lines decoded into events
	Malformed int `json:"malformed"` // lines skipped because they did not decode
	// FirstMalformed is the 1-based line number of the first malformed
	// line (0 if none) and FirstError why it did not decode.
	FirstMalformed int    `json:"first_malformed,omitempty"`
	FirstError     string `json:"first_error,omitempty"`
	// Torn is set when the file ends with an incomplete line (a writer
	// stopped mid-line, or is still writing it); that line is ignored.
	Torn  bool  `json:"torn,omitempty"`
	Bytes int64 `json:"bytes"` // bytes consumed: up to the end of the last complete line
}

func (s *ReadStats) line(b []byte, e *profile.Event) bool {
	s.Lines++
	if err := profile.DecodeEvent(b, e); err != nil {
		s.Malformed++
		if s.FirstMalformed == 0 {
			s.FirstMalformed = s.Lines
			s.FirstError = err.Error()
		}
		return false
	}
	s.Events++
	return true
}

// MaxEventSize is the longest journal line, newline excluded, that readers
// decode: 16 MiB, far above any event a run writes. The tailer, the
// scanner, replay and the status scanner skip a longer line without
// holding it whole and count it as malformed (ErrEventTooLong), so a
// damaged or hostile journal costs memory bounded by this size.
const MaxEventSize = 16 << 20

// ErrEventTooLong is the reason given for a line longer than MaxEventSize.
var ErrEventTooLong = errors.New("journal line longer than the maximum event size: skipped")

// long counts a line skipped for being longer than max bytes; where names
// it (the journal and the line's offset).
func (s *ReadStats) long(where string, max int) {
	s.Lines++
	s.Malformed++
	if s.FirstMalformed == 0 {
		s.FirstMalformed = s.Lines
		s.FirstError = fmt.Errorf("%s: %w (%d bytes)", where, ErrEventTooLong, max).Error()
	}
}

// blank reports whether a line holds only white space.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// ScanJournal reads a journal from r and calls fn with each event, in order
// (the event is reused between calls: copy it to keep it). Malformed lines
// are skipped and counted, never fatal. A last line without a newline is
// used if it decodes (the writer finished the object but not the newline)
// and otherwise marked Torn. An error from fn stops the scan and is
// returned.
func ScanJournal(r io.Reader, fn func(e *profile.Event) error) (ReadStats, error) {
	var e profile.Event
	return scanInto(r, &e, fn)
}

// scanInto is ScanJournal decoding every event into *e.
func scanInto(r io.Reader, e *profile.Event, fn func(e *profile.Event) error) (ReadStats, error) {
	jr := newJournalReader(r)
	for {
		ok, err := jr.next(e)
		if err != nil || !ok {
			return jr.st, err
		}
		if err := fn(e); err != nil {
			return jr.st, err
		}
	}
}

// journalReader reads a journal's events one at a time: the pull form of
// ScanJournal, with the same rules for malformed, blank and torn lines.
type journalReader struct {
	br      *bufio.Reader
	long    []byte // a line longer than the reader's buffer, up to max bytes
	longN   int    // bytes of that line read so far
	inLong  bool
	tooLong bool // the line is longer than max: long is not kept
	eof     bool
	st      ReadStats // what was read so far
	name    string    // the journal's file name, for messages ("" if unknown)
	max     int       // longest line decoded: MaxEventSize
}

// journalReadBuffer is the size of a journalReader's buffer.
const journalReadBuffer = 256 << 10

// newJournalReader returns a reader of r's journal. A reader that says
// how much it holds (Len, as bytes.Reader and strings.Reader do) gets a
// buffer no larger than that: a short journal in memory costs a few
// hundred bytes, not the full buffer.
func newJournalReader(r io.Reader) *journalReader {
	size := journalReadBuffer
	if l, ok := r.(interface{ Len() int }); ok {
		size = min(size, max(l.Len()+1, 16))
	}
	return &journalReader{br: bufio.NewReaderSize(r, size), max: MaxEventSize}
}

// reset makes jr read r from its start, keeping its buffer.
func (jr *journalReader) reset(r io.Reader) {
	jr.br.Reset(r)
	jr.long, jr.inLong, jr.eof, jr.st = jr.long[:0], false, false, ReadStats{}
	jr.longN, jr.tooLong = 0, false
}

// next decodes the next event into e; it returns false at the end of the
// input, and an error when reading fails or a run_start declares a newer
// schema than this gnnscope reads (SchemaError).
func (jr *journalReader) next(e *profile.Event) (bool, error) {
	st := &jr.st
	for !jr.eof {
		chunk, err := jr.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			jr.keep(chunk)
			jr.inLong = true
			continue
		}
		line := chunk
		if jr.inLong {
			jr.keep(chunk)
			line = jr.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("read journal: %w", err)
		}
		jr.eof = err != nil
		complete := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if n := len(chunk); jr.tooLong || (n > jr.max && (n-1 > jr.max || !complete)) {
			jr.skipLong(len(line), complete)
			continue
		}
		ok := false
		if len(line) > 0 && !blank(line) {
			switch {
			case complete:
				ok = st.line(line, e)
			case profile.DecodeEvent(line, e) == nil:
				st.Lines++
				st.Events++
				ok = true
			default:
				st.Torn = true
			}
		}
		if complete || (!st.Torn && len(line) > 0) {
			st.Bytes += int64(len(line))
		}
		jr.long, jr.longN, jr.inLong = jr.long[:0], 0, false
		if ok {
			if err := checkSchema(e, ""); err != nil {
				return false, err
			}
			return true, nil
		}
	}
	return false, nil
}

// keep adds a piece of a line longer than the reader's buffer to jr.long
// while the line is at most jr.max bytes long (newline excluded), and
// drops it once it is longer.
func (jr *journalReader) keep(chunk []byte) {
	jr.longN += len(chunk)
	content := jr.longN
	if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
		content--
	}
	if content > jr.max {
		jr.tooLong, jr.long = true, nil
	}
	if !jr.tooLong {
		jr.long = appendLine(jr.long, chunk, jr.max+1)
	}
}

// appendLine appends b to a line buffer, doubling its capacity up to
// limit (the longest line kept, newline included), so a long line costs
// at most about twice its length in allocations.
func appendLine(buf, b []byte, limit int) []byte {
	need := len(buf) + len(b)
	if need > cap(buf) {
		c := max(min(2*cap(buf), limit), need)
		grown := make([]byte, len(buf), c)
		copy(grown, buf)
		buf = grown
	}
	return append(buf, b...)
}

// skipLong counts the line just read, longer than jr.max, as malformed
// (torn if incomplete); n is its length if it was read in one piece.
func (jr *journalReader) skipLong(n int, complete bool) {
	if jr.inLong {
		n = jr.longN
	}
	if complete {
		where := fmt.Sprintf("line at offset %d", jr.st.Bytes)
		if jr.name != "" {
			where = fmt.Sprintf("journal %s: %s", jr.name, where)
		}
		jr.st.long(where, jr.max)
		jr.st.Bytes += int64(n)
	} else {
		jr.st.Torn = true
	}
	jr.long, jr.longN, jr.inLong, jr.tooLong = nil, 0, false, false
}

// estimateEvents guesses how many events a journal of size bytes holds
// from the line density of its first 256 KiB, a little over, so the
// events slice is allocated once at about its final size (a profile.Event
// is over 400 bytes: growing the slice by copying would double the peak).
func estimateEvents(f *os.File, size int64) int {
	if size <= 0 {
		return 0
	}
	head := make([]byte, min(size, 256<<10))
	n, _ := f.ReadAt(head, 0)
	lines := int64(bytes.Count(head[:n], []byte{'\n'}))
	if lines == 0 || n == 0 {
		return int(min(size/100, 1<<16))
	}
	if int64(n) == size {
		return int(lines) + 1
	}
	est := size * lines / int64(n)
	return int(min(est+est/16+16, size/2+1))
}

// ReadJournal reads a whole journal file. It tolerates a torn last line (a
// crash mid-write) and skips malformed lines, counting both in the stats;
// only failing to read the file is an error. It holds every event (over
// 400 bytes each): to aggregate a journal use SummarizeJournal, to replay
// it OpenReplay, which do not.
func ReadJournal(path string) ([]profile.Event, ReadStats, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, ReadStats{}, fmt.Errorf("read journal %s: %w", path, err)
	}
	defer f.Close()
	var evs []profile.Event
	if fi, err := f.Stat(); err == nil {
		evs = make([]profile.Event, 0, estimateEvents(f, fi.Size()))
	}
	jr := newJournalReader(f)
	jr.name = path
	var e profile.Event
	for {
		ok, err := jr.next(&e)
		if err != nil {
			return evs, jr.st, fmt.Errorf("read journal %s: %w", path, err)
		}
		if !ok {
			return evs, jr.st, nil
		}
		evs = append(evs, e)
	}
}
