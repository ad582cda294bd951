package sessions

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func line(e profile.Event) string { return string(profile.AppendLine(nil, &e)) }

func TestTailerPartialLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	tl := NewTailer(path, TailOptions{})
	defer tl.Close()
	if evs, err := tl.Poll(); err != nil || evs != nil {
		t.Fatalf("before the file exists: %v %v", evs, err)
	}
	ev := sampleEvents()
	appendRaw(t, path, line(ev[0]))
	evs, err := tl.Poll()
	if err != nil || len(evs) != 1 || evs[0].T != profile.TypeRunStart {
		t.Fatalf("first poll: %+v %v", evs, err)
	}
	// half a line: nothing yet
	full := line(ev[2])
	appendRaw(t, path, full[:20])
	if evs, _ := tl.Poll(); len(evs) != 0 || !tl.Stats().Torn {
		t.Fatalf("partial line returned: %+v", evs)
	}
	off := tl.Offset()
	appendRaw(t, path, full[20:len(full)-1])
	if evs, _ := tl.Poll(); len(evs) != 0 {
		t.Fatalf("line without newline returned: %+v", evs)
	}
	appendRaw(t, path, "\n"+"garbage\n"+line(ev[3]))
	evs, err = tl.Poll()
	if err != nil || len(evs) != 2 || evs[0].Name != profile.StageTrain || evs[1].T != profile.TypeMem {
		t.Fatalf("completed line: %+v %v", evs, err)
	}
	if st := tl.Stats(); st.Malformed != 1 || st.Events != 3 || st.Torn || tl.Offset() <= off {
		t.Errorf("stats %+v offset %d", st, tl.Offset())
	}
	// a second tailer can resume at the offset
	t2 := NewTailer(path, TailOptions{Offset: tl.Offset()})
	defer t2.Close()
	appendRaw(t, path, line(ev[4]))
	a, _ := tl.Poll()
	b, _ := t2.Poll()
	if len(a) != 1 || len(b) != 1 || a[0].T != profile.TypeGPU || b[0].T != profile.TypeGPU {
		t.Errorf("resume: %+v %+v", a, b)
	}
}

func TestTailFollowsWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	w, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan []profile.Event, 100)
	done := make(chan error, 1)
	go func() {
		done <- Tail(ctx, path, TailOptions{Interval: 5 * time.Millisecond}, func(evs []profile.Event) error {
			got <- evs
			return nil
		})
	}()
	ev := sampleEvents()
	// events written after the tail started reach it, batch by batch
	for i, e := range ev[:len(ev)-1] {
		w.WriteEvents([]profile.Event{e})
		w.Flush()
		var batch []profile.Event
		select {
		case batch = <-got:
		case <-ctx.Done():
			t.Fatalf("event %d not tailed", i)
		}
		if len(batch) != 1 || batch[0].T != e.T {
			t.Fatalf("event %d: got %+v", i, batch)
		}
	}
	w.WriteEvents(ev[len(ev)-1:])
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("Tail after run_end: %v", err)
	}
	if last := <-got; last[0].T != profile.TypeRunEnd {
		t.Errorf("last batch %+v", last)
	}
}

func TestTailerNextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	ev := sampleEvents()
	appendRaw(t, path, line(ev[0])+line(ev[len(ev)-1]))
	tl := NewTailer(path, TailOptions{Interval: time.Millisecond})
	defer tl.Close()
	ctx := context.Background()
	evs, err := tl.Next(ctx)
	if err != nil || len(evs) != 2 || !tl.Ended() {
		t.Fatalf("%+v %v", evs, err)
	}
	if _, err := tl.Next(ctx); !errors.Is(err, io.EOF) {
		t.Errorf("after run_end: %v", err)
	}

	// cancellation
	path2 := filepath.Join(t.TempDir(), "k.jsonl")
	t2 := NewTailer(path2, TailOptions{Interval: time.Millisecond})
	defer t2.Close()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := t2.Next(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}

	// writer gone: the data it flushed is returned first, then ErrWriterGone
	appendRaw(t, path2, line(ev[1]))
	t3 := NewTailer(path2, TailOptions{Interval: time.Millisecond, Alive: func() bool { return false }})
	defer t3.Close()
	if evs, err := t3.Next(ctx); err != nil || len(evs) != 1 {
		t.Errorf("before gone: %+v %v", evs, err)
	}
	if _, err := t3.Next(ctx); !errors.Is(err, ErrWriterGone) {
		t.Errorf("gone: %v", err)
	}

	// truncation
	os.WriteFile(path2, nil, 0o644)
	if _, err := t2.Poll(); err != nil {
		t.Errorf("t2 had read nothing: %v", err)
	}
	t4 := NewTailer(path, TailOptions{})
	defer t4.Close()
	t4.Poll()
	os.WriteFile(path, []byte("\n"), 0o644)
	if _, err := t4.Poll(); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
}
