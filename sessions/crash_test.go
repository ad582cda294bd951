package sessions

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

const (
	childEnv     = "GNNSCOPE_SESSIONS_TEST_CHILD"
	childFlushed = 300
)

// childSpans is what the child records before its explicit Flush.
func childSpans() []profile.Event {
	evs := make([]profile.Event, childFlushed)
	for i := range evs {
		evs[i] = profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute,
			Epoch: i / 100, Batch: i % 100, Start: int64(i) * 1000, Dur: 900}
	}
	return evs
}

// TestHelperWriter is the child process of TestKilledWriter: it records
// through a journal, flushes, says so, then keeps recording until killed.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("child process of TestKilledWriter")
	}
	w, err := OpenJournal(path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	r := profile.NewRecorder(w, profile.RecorderOptions{FlushInterval: time.Hour, BufferEvents: 256})
	r.RunStart("victim", "s", "baseline", nil, nil)
	for _, e := range childSpans() {
		r.Span(e.Name, e.Lane, e.Epoch, e.Batch, e.Start, e.Dur)
	}
	if err := r.Flush(); err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("flushed")
	// unflushed work: full buffers reach the file in 64 KiB pieces, so the
	// kill may well leave a torn line
	// (bounded, in case the parent dies without killing it)
	parent, deadline := os.Getppid(), time.Now().Add(30*time.Second)
	for i := 0; ; i++ {
		r.Span(profile.StageSample, profile.SamplerLane(i%4), 9, i, int64(i), 1)
		if i%1000 == 0 {
			runtime.Gosched()
			if os.Getppid() != parent || time.Now().After(deadline) {
				os.Exit(3)
			}
		}
	}
}

// A writer killed with SIGKILL leaves every flushed event readable and its
// run reads as crashed.
func TestKilledWriter(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs kill(pid, 0)")
	}
	st := newStore(t)
	s, err := st.Create(SessionMeta{Name: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), childEnv+"="+s.JournalPath("victim"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	if err := s.WritePid("victim", cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(first) != "flushed" {
		t.Fatalf("child said %q, %v", first, err)
	}
	if got, err := RunStatus(s, "victim"); err != nil || got != profile.StatusRunning {
		t.Errorf("while alive: %q, %v", got, err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killed = true
	// not reaped yet (a zombie): already crashed where /proc tells
	if _, _, ok := procStat(cmd.Process.Pid); ok {
		deadline := time.Now().Add(5 * time.Second)
		for {
			if got, _ := RunStatus(s, "victim"); got == profile.StatusCrashed {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("zombie writer still reads as running after 5 s")
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	cmd.Wait()
	if got, err := RunStatus(s, "victim"); err != nil || got != profile.StatusCrashed {
		t.Errorf("after kill: %q, %v", got, err)
	}

	evs, stats, err := ReadJournal(s.JournalPath("victim"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < childFlushed+1 || evs[0].T != profile.TypeRunStart {
		t.Fatalf("%d events read back, want at least %d", len(evs), childFlushed+1)
	}
	if !reflect.DeepEqual(evs[1:childFlushed+1], childSpans()) {
		t.Error("flushed spans differ")
	}
	if stats.Malformed != 0 {
		t.Errorf("malformed lines: %+v", stats)
	}
	for _, e := range evs {
		if e.T == profile.TypeRunEnd {
			t.Error("run_end in a killed run's journal")
		}
	}
	t.Logf("read %d events after the kill (torn last line: %v)", len(evs), stats.Torn)

	// a tail on the crashed run stops with ErrWriterGone after the events
	tl, err := s.TailRun("victim", TailOptions{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	n := 0
	for {
		got, err := tl.Next(t.Context())
		n += len(got)
		if err != nil {
			if err != ErrWriterGone {
				t.Errorf("tail: %v", err)
			}
			break
		}
	}
	if n != len(evs) {
		t.Errorf("tail read %d events, ReadJournal %d", n, len(evs))
	}
}
