package sessions

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReplaySkipsLongLine replays a journal with a line over
// MaxEventSize among its events: every event is delivered, and the open
// replay does not retain the long line.
func TestReplaySkipsLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	ev := sampleEvents()
	var b strings.Builder
	for i := range ev {
		b.WriteString(line(ev[i]))
		if i == 3 {
			b.WriteString(`{"t":"span","name":"` + strings.Repeat("x", MaxEventSize+10) + "\"}\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	before := heapInuse()
	r, err := OpenReplay(path, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := heapInuse(); after > before && after-before > MaxEventSize/4 {
		t.Errorf("an open replay retains %d bytes", after-before)
	}
	if r.Len() != len(ev) {
		t.Fatalf("replay of %d events, want %d", r.Len(), len(ev))
	}
	r.Seek(r.Duration())
	for {
		_, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if r.Delivered() != len(ev) {
		t.Errorf("delivered %d of %d", r.Delivered(), len(ev))
	}
	runtime.KeepAlive(r)
}
