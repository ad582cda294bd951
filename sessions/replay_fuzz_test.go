package sessions

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// FuzzReplay feeds arbitrary journal bytes to a replay on a fake clock
// that jumps to each timer's deadline: it must never panic, deliver every
// event the scanner finds, in time order, and take bounded time whatever
// the events' dates: no wait is longer than DefaultMaxWait, so the clock
// moves at most that much per event.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"t":"run_start","v":1,"run":"a"}` + "\n" + `{"t":"span","start":1,"dur":2}` + "\n" + `{"t":"run_end","status":"ok"}` + "\n"))
	f.Add([]byte(`{"t":"span","start":31536000000000000,"dur":1}` + "\n" + `{"t":"gpu","ts":5}` + "\n"))
	f.Add([]byte(`{"t":"span","start":9223372036854775807,"dur":9223372036854775807}` + "\n" + `{"t":"span","start":-5,"dur":-9}` + "\n" + `{"t":"gpu","ts":-1}`))
	f.Add([]byte("garbage\n{\"t\":\"mem\"}\n\x00\x00\n{\"t\":\"span\",\"start\":1e30}\n{"))
	path := filepath.Join(f.TempDir(), "r.jsonl") // the inputs run one at a time in each process
	f.Fuzz(func(t *testing.T, data []byte) {
		data = data[:min(len(data), fuzzJournalMax)] // see FuzzScanJournal
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var want []profile.Event
		if _, err := ScanJournal(bytes.NewReader(data), func(e *profile.Event) error {
			want = append(want, *e)
			return nil
		}); errors.Is(err, ErrNewerSchema) {
			// a journal of a newer schema: the replay refuses it too
			if r, err := OpenReplay(path, ReplayOptions{}); !errors.Is(err, ErrNewerSchema) {
				if r != nil {
					r.Close()
				}
				t.Fatalf("the scanner refuses a newer schema, the replay: %v", err)
			}
			return
		} else if err != nil {
			t.Fatal(err)
		}
		c := NewFakeClock(t0)
		c.SetAutoAdvance(true)
		r, err := OpenReplay(path, ReplayOptions{Clock: c})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Len() != len(want) {
			t.Fatalf("replay of %d events, the scanner finds %d", r.Len(), len(want))
		}
		var last time.Duration
		n := 0
		for ; ; n++ {
			if n > len(want) {
				t.Fatalf("more than %d events", len(want))
			}
			ev, err := r.NextEvent(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.At < last || ev.Skipped < 0 || ev.At > r.Duration() {
				t.Fatalf("event %d at %v (skipped %v) after %v, duration %v", n, ev.At, ev.Skipped, last, r.Duration())
			}
			last = ev.At
			if elapsed := c.Now().Sub(t0); elapsed > time.Duration(n+1)*(DefaultMaxWait+time.Millisecond) {
				t.Fatalf("event %d after %v of waiting", n, elapsed)
			}
		}
		if n != len(want) || r.Position() != r.Duration() {
			t.Fatalf("%d of %d events, position %v of %v", n, len(want), r.Position(), r.Duration())
		}
	})
}
