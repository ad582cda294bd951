package ogb

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

// chunkSize is the amount of decompressed text handed to one parse job.
const chunkSize = 1 << 20

// MaxLineBytes is the longest line, without its newline, that the CSV
// readers accept: 4 MiB, room for a feature row of about half a million
// values. A longer line is an error naming the file and the line, found
// while holding at most about twice this much of it.
const MaxLineBytes = 4 << 20

// textFile is one (optionally gzipped) CSV file being read.
type textFile struct {
	name string // shown in errors, e.g. "raw/edge.csv.gz"
	path string
}

// lineError is a parse error at a line of a text file.
type lineError struct {
	line int64
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// countingReader counts the bytes read through it, for progress reports.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type job[T any] struct {
	buf       []byte // owned buffer, returned to the pool after parsing
	text      []byte // complete lines inside buf
	firstLine int64
	res       chan result[T]
}

type result[T any] struct {
	val T
	err error
}

// parseFile decompresses f (gzip when the name ends in .gz) and splits it
// into chunks of whole lines, which workers parse concurrently with parse;
// consume receives the results in file order. Line numbers start at 1.
// progress (may be nil) gets the fraction of the file read so far.
func parseFile[T any](f textFile, workers int, progress func(float64),
	parse func(text []byte, firstLine int64) (T, error), consume func(T) error) error {
	file, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer file.Close()
	var size int64
	if fi, err := file.Stat(); err == nil {
		size = fi.Size()
	}
	cr := &countingReader{r: file}
	var r io.Reader = cr
	if len(f.path) > 3 && f.path[len(f.path)-3:] == ".gz" {
		gz, err := gzip.NewReader(cr)
		if err != nil {
			return fmt.Errorf("not a valid gzip file: %w", err)
		}
		defer gz.Close()
		r = gz
	}
	report := func() {
		if progress != nil && size > 0 {
			progress(min(1, float64(cr.n.Load())/float64(size)))
		}
	}
	return parseStream(r, workers, report, parse, consume)
}

// parseStream cuts r into chunks of whole lines, parses them with parse on
// workers goroutines and hands the results to consume in order, calling
// report after each. It returns the first error of reading, parsing or
// consuming, and only once no goroutine it started touches r any more.
func parseStream[T any](r io.Reader, workers int, report func(),
	parse func(text []byte, firstLine int64) (T, error), consume func(T) error) error {
	workers = max(1, workers)
	s := newChunkStream[T](workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.work(parse)
		}()
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		s.read(r)
	}()
	err := s.collect(consume, report)
	wg.Wait()
	<-readerDone // the reader no longer touches r when parseStream returns
	return err
}

// chunkStream holds the channels that connect the reader, the parse workers
// and the consumer of parseStream.
type chunkStream[T any] struct {
	pool  chan []byte   // free chunk buffers
	jobs  chan *job[T]  // chunks waiting for a worker
	order chan *job[T]  // every chunk, in file order, for the consumer
	done  chan struct{} // closed when the consumer stops on an error
}

func newChunkStream[T any](workers int) *chunkStream[T] {
	s := &chunkStream[T]{
		pool:  make(chan []byte, 2*workers+2),
		jobs:  make(chan *job[T], workers),
		order: make(chan *job[T], 2*workers),
		done:  make(chan struct{}),
	}
	for range cap(s.pool) {
		s.pool <- make([]byte, chunkSize)
	}
	return s
}

// work parses the chunks from jobs until it is closed, returning each
// buffer to the pool once parsed.
func (s *chunkStream[T]) work(parse func(text []byte, firstLine int64) (T, error)) {
	for j := range s.jobs {
		v, err := parse(j.text, j.firstLine)
		j.res <- result[T]{v, err}
		s.pool <- j.buf[:cap(j.buf)]
	}
}

// read fills a buffer from r, cuts it after its last newline and carries
// the rest over to the next buffer; each chunk goes to order and to jobs. It
// closes both when r ends, on a read error (sent to order as a failed job)
// or when done is closed.
func (s *chunkStream[T]) read(r io.Reader) {
	defer close(s.order)
	defer close(s.jobs)
	line := int64(1)
	var carry []byte
	eof := false
	for !eof {
		if len(carry) > MaxLineBytes {
			s.fail(longLine(line))
			return
		}
		var buf []byte
		select {
		case buf = <-s.pool:
		case <-s.done:
			return
		}
		if len(carry) > len(buf)/2 {
			buf = make([]byte, 2*len(carry)+chunkSize) // a very long line
		}
		n, end, err := fill(r, buf, carry)
		if err != nil {
			s.fail(fmt.Errorf("read error after line %d: %w", line, err))
			return
		}
		eof = end
		text := buf[:n]
		carry = nil
		if !eof {
			cut := bytes.LastIndexByte(text, '\n')
			if cut < 0 { // no newline in a full buffer: grow it
				carry = append([]byte(nil), text...)
				s.pool <- buf
				continue
			}
			carry = append(carry[:0:0], text[cut+1:]...)
			text = text[:cut+1]
		}
		if len(text) > MaxLineBytes { // only a grown buffer can hold a long line
			if at := findLongLine(text); at >= 0 {
				s.fail(longLine(line + at))
				return
			}
		}
		j := &job[T]{buf: buf, text: text, firstLine: line, res: make(chan result[T], 1)}
		line += int64(bytes.Count(text, []byte{'\n'}))
		if !s.send(j) {
			return
		}
	}
}

// longLine is the error for a line over MaxLineBytes.
func longLine(line int64) error {
	return &lineError{line, fmt.Sprintf("longer than %d bytes (the limit for one line)", MaxLineBytes)}
}

// findLongLine returns the index (from 0) of the first line of text longer
// than MaxLineBytes, or -1.
func findLongLine(text []byte) int64 {
	for i := int64(0); len(text) > 0; i++ {
		line, rest := nextLine(text)
		if len(line) > MaxLineBytes {
			return i
		}
		text = rest
	}
	return -1
}

// fill copies carry to the start of buf, then reads r into the rest of buf
// until it is full or r ends. It returns the bytes in buf and whether r
// ended.
func fill(r io.Reader, buf, carry []byte) (n int, eof bool, err error) {
	n = copy(buf, carry)
	for n < len(buf) && !eof {
		m, rerr := r.Read(buf[n:])
		n += m
		if rerr == io.EOF {
			eof = true
		} else if rerr != nil {
			return n, false, rerr
		}
	}
	return n, eof, nil
}

// send queues j for the consumer, then for a worker; it reports false if
// done was closed first.
func (s *chunkStream[T]) send(j *job[T]) bool {
	select {
	case s.order <- j:
	case <-s.done:
		return false
	}
	select {
	case s.jobs <- j:
	case <-s.done:
		return false
	}
	return true
}

// fail hands err to the consumer as the result of a chunk that no worker
// parses.
func (s *chunkStream[T]) fail(err error) {
	j := &job[T]{res: make(chan result[T], 1)}
	j.res <- result[T]{err: err}
	select {
	case s.order <- j:
	case <-s.done:
	}
}

// collect hands the parsed chunks to consume in file order until order is
// closed. On the first error it closes done and skips the remaining chunks,
// which may never reach a worker.
func (s *chunkStream[T]) collect(consume func(T) error, report func()) error {
	var firstErr error
	for j := range s.order {
		if firstErr != nil {
			continue // j may never reach a worker; do not wait for it
		}
		res := <-j.res
		if res.err == nil {
			res.err = consume(res.val)
		}
		if res.err != nil {
			firstErr = res.err
			close(s.done)
		}
		report()
	}
	return firstErr
}

// maxQuoted is the most bytes of a line that an error message quotes.
const maxQuoted = 60

// quote quotes b for an error message, cut after maxQuoted bytes so that
// a long bad line does not make a long error.
func quote(b []byte) string {
	if len(b) <= maxQuoted {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%q... (%d bytes)", b[:maxQuoted], len(b))
}

// nextLine splits off the first line of text (without its "\n" or "\r\n").
func nextLine(text []byte) (line, rest []byte) {
	i := bytes.IndexByte(text, '\n')
	if i < 0 {
		line, rest = text, nil
	} else {
		line, rest = text[:i], text[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// blank reports whether a line holds only spaces or tabs.
func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

var errBadNumber = errors.New("bad number")

// parseInt parses a decimal integer (optional sign, surrounding spaces).
func parseInt(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		if len(b) > 18 {
			if v, err := strconv.ParseInt(string(b), 10, 64); err == nil { // rare: very long
				if neg {
					v = -v
				}
				return v, nil
			}
		}
		return 0, errBadNumber
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errBadNumber
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

var pow10f32 = [...]float32{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// parseFloat32 parses a decimal float. Plain numbers with at most 7
// significant digits (the usual content of OGB feature files) take an exact
// fast path: mantissa and power of ten are both exact float32 values, so one
// division rounds correctly. Anything else goes through strconv.
func parseFloat32(b []byte) (float32, error) {
	b = bytes.TrimSpace(b)
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var mant uint32
	digits, frac := 0, 0
	seenDot, ok := false, len(s) > 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			if mant == 0 && c == '0' && !seenDot {
				continue // leading zeros
			}
			if mant == 0 && c == '0' {
				frac++
				continue
			}
			digits++
			mant = mant*10 + uint32(c-'0')
			if seenDot {
				frac++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			ok = false
		}
		if !ok || digits > 7 {
			ok = false
			break
		}
	}
	if ok && frac < len(pow10f32) && (len(s) > 1 || s[0] != '.') {
		v := float32(mant) / pow10f32[frac]
		if neg {
			v = -v
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(string(b), 32)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return float32(v), nil // ±Inf or 0 like NumPy
		}
		return 0, errBadNumber
	}
	return float32(v), nil
}

// checkID converts a parsed node id, checking it against n nodes (n < 0:
// unknown yet, only the int32 range is checked).
func checkID(v int64, n int) (int32, bool) {
	if v < 0 || v > math.MaxInt32-1 || (n >= 0 && v >= int64(n)) {
		return 0, false
	}
	return int32(v), true
}
