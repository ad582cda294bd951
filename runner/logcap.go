package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/sessions"
)

// DefaultLogMax is the size a run's log (runs/<run>.log: the worker's
// lines and an external trainer's output) is capped at when the
// experiment sets none (Experiment.LogMax, spec key log_max, --log-max).
const DefaultLogMax = 64 << 20

// logMarker starts the line that stands for the part of a capped log
// that was dropped; the number of bytes follows it.
const logMarker = "\n[gnnscope: "

// logCopyChunk is the piece in which CapLog moves the tail of a log.
const logCopyChunk = 1 << 20

// CapLog caps the log at path at max bytes: a log over max keeps its
// first max/2 bytes and its last max/4 or so (from a line start), and a
// marker line in between says how many bytes were dropped there, in all
// (the marker of an earlier cut is counted in). It returns the bytes it
// dropped now. Writers that append (O_APPEND, as the trainer's output
// and the worker's lines are) go on at the new end; a line written
// while the tail moves may be lost with the middle. max <= 0 caps
// nothing. The log is opened as every file of the store is written:
// never through a link.
func CapLog(path string, max int64) (int64, error) {
	if max <= 0 {
		return 0, nil
	}
	f, err := sessions.OpenRegularFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if size <= max {
		return 0, nil
	}
	head := max / 2
	before, oldMarker := droppedBefore(f, head)
	tailStart, err := lineStart(f, size-max/4, size)
	if err != nil {
		return 0, err
	}
	dropped := tailStart - head - oldMarker
	marker := fmt.Sprintf("%s%d bytes of this log dropped here: it is capped at %s (log_max, --log-max)]\n",
		logMarker, before+dropped, units.Bytes(max))
	if _, err := f.WriteAt([]byte(marker), head); err != nil {
		return 0, err
	}
	to := head + int64(len(marker))
	buf := make([]byte, min(logCopyChunk, size-tailStart))
	for from := tailStart; from < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-from)], from)
		if n > 0 {
			if _, werr := f.WriteAt(buf[:n], to); werr != nil {
				return 0, werr
			}
			from, to = from+int64(n), to+int64(n)
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	return dropped, f.Truncate(to)
}

// droppedBefore reads the marker of an earlier cut at offset head: the
// bytes it says were dropped and its length (0, 0 without one).
func droppedBefore(f *os.File, head int64) (before, length int64) {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, head)
	b := buf[:n]
	if !bytes.HasPrefix(b, []byte(logMarker)) {
		return 0, 0
	}
	end := bytes.IndexByte(b[1:], '\n')
	if end < 0 {
		return 0, 0
	}
	rest := b[len(logMarker):]
	digits := rest[:max(bytes.IndexByte(rest, ' '), 0)]
	v, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return 0, 0
	}
	return v, int64(end) + 2
}

// lineStart returns the offset just after the first '\n' at or after
// from (and before size), or from when there is none in the next 64 KiB.
func lineStart(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, min(64<<10, size-from))
	n, err := f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return 0, err
	}
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 && from+int64(i)+1 < size {
		return from + int64(i) + 1, nil
	}
	return from, nil
}

// WatchLog caps the log at path (CapLog) every interval until ctx ends
// or stop is called; errors (no log yet) are skipped.
func WatchLog(ctx context.Context, path string, max int64, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				CapLog(path, max)
				return
			case <-t.C:
				CapLog(path, max)
			}
		}
	}()
	return func() { cancel(); <-done }
}
