package dashboard

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
	"github.com/gnnscope/gnnscope/tui/summary"
)

// oomError is the error of a run aborted by an OOM in its first batch,
// longer than any panel is wide.
const oomError = "batch 0: alloc 2708x1433: out of memory: requested 15522112 bytes with 1048576 live, over the memory budget 3145728 (3.0 MiB)"

// A guarded run (the memory guard split every 7th batch): its guard
// actions are counted apart, and no OOM is shown.
func TestGoldenGuarded(t *testing.T) {
	tracks := []sessions.Track{{Run: "guarded", Events: collect(synth.Options{Run: "guarded", Epochs: 2, Batches: 70,
		GuardEvery: 7, EvalChunks: 4, Budget: 64 << 20, Seed: 5})}}
	m, _ := replayModel(t, common.Options{NoColor: true, ASCII: true}, 130, 34, tracks, sessions.ReplayOptions{Paused: true})
	m.replay.Seek(m.replay.Duration())
	waitEvents(t, m, total(tracks))
	waitDrained(t, m)
	out := ansi.Strip(m.View())
	golden.Check(t, "guarded_ascii_130x34", out)
	if row := m.table.Rows[0]; row.OOMs != 0 || row.Guards != 20 {
		t.Errorf("table row: %d OOMs, %d guard actions; want 0 and 20", row.OOMs, row.Guards)
	}
	if !strings.Contains(out, "g 20 guard: predicted 80.0 MiB") || strings.Contains(out, "OOM at") || strings.Contains(out, "X ") {
		t.Errorf("memory chart:\n%s", out)
	}
	if !strings.Contains(out, "140 batches") || !strings.Contains(out, "8 eval chunks") {
		t.Errorf("training and evaluation not apart:\n%s", out)
	}
}

// oomAborted is `gnnscope run --mem-budget 3MiB`: the first batch asks
// for more than the budget and the run ends with status oom.
func oomAborted() []profile.Event {
	return []profile.Event{
		{T: profile.TypeRunStart, V: 1, Run: "baseline", Variant: "baseline", Config: []byte(`{"epochs":2,"mem_budget":3145728}`)},
		{T: profile.TypeSpan, Name: profile.StageSetup, Lane: profile.LaneCompute, Epoch: 0, Batch: -1, Start: 0, Dur: 2e6},
		{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.LaneCompute, Epoch: 1, Batch: 0, Start: 2e6, Dur: 1e6},
		{T: profile.TypeOOM, Epoch: 1, Batch: 0, Requested: 15522112, Live: 1 << 20, Budget: 3 << 20, Action: profile.ActionAbort},
		{T: profile.TypeRunEnd, Status: profile.StatusOOM, Error: oomError},
	}
}

// A run aborted by an OOM shows its status, the budget line and the X of
// its batch in the memory chart, and its error in full, wrapped.
func TestGoldenOOMAborted(t *testing.T) {
	tracks := []sessions.Track{{Run: "baseline", Events: oomAborted()}}
	m, _ := replayModel(t, common.Options{NoColor: true, ASCII: true}, 80, 24, tracks, sessions.ReplayOptions{Paused: true})
	m.replay.Seek(m.replay.Duration())
	waitEvents(t, m, total(tracks))
	waitDrained(t, m)
	out := ansi.Strip(m.View())
	golden.Check(t, "oom_abort_ascii_80x24", out)
	if !strings.Contains(out, "baseline  oom") || !strings.Contains(out, "budget 3.0 MiB") || !strings.Contains(out, "X 1 OOM") {
		t.Errorf("dashboard:\n%s", out)
	}
	var text []string
	for _, l := range strings.Split(out, "\n") {
		text = append(text, strings.TrimSpace(l))
	}
	if !strings.Contains(strings.Join(text, " "), "error: "+oomError) {
		t.Errorf("the error is not in full:\n%s", out)
	}
}

// A canceled and a failed run show that status, live and replayed, and
// the failed run's error.
func TestStoppedRunsStatus(t *testing.T) {
	for _, status := range []profile.Status{profile.StatusCanceled, profile.StatusFailed} {
		st := string(status)
		evs := collect(synth.Options{Run: st, Epochs: 1, Batches: 5, Status: status, Error: "stopped: " + st})
		for _, live := range []bool{true, false} {
			c := common.New(nil, common.Options{NoColor: true})
			c.SetSize(100, 30)
			m := newStatic(c, []string{st}, live)
			for i := range evs {
				m.set.Add(0, &evs[i])
			}
			out := ansi.Strip(m.View())
			if !strings.Contains(out, st+"  ") || !strings.Contains(out, "error: stopped: "+st) {
				t.Errorf("%s (live %v):\n%s", st, live, out)
			}
		}
	}
}

// A crashed run (its worker killed with SIGKILL: no run_end, its process
// gone) says crashed in the dashboard, as the session list does, never
// "replaying" forever; also in a replay from the start once the replay
// has reached its end.
func TestCrashedRunSaysCrashed(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Create(sessions.SessionMeta{Variants: []sessions.Variant{{Name: "optimized"}}})
	if err != nil {
		t.Fatal(err)
	}
	jw, err := sess.OpenJournal("optimized")
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(synth.Options{Run: "optimized", Epochs: 2, Batches: 50, Cut: 60, Seed: 3})
	if err := jw.WriteEvents(evs); err != nil {
		t.Fatal(err)
	}
	if err := jw.Flush(); err != nil {
		t.Fatal(err)
	}
	jw.Close()
	worker := exec.Command("sleep", "60")
	if err := worker.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	if err := sess.WritePid("optimized", worker.Process.Pid); err != nil {
		t.Fatal(err)
	}
	worker.Process.Signal(os.Kill)
	worker.Wait()
	rs, err := sess.RunState("optimized")
	if err != nil || rs.Status != profile.StatusCrashed {
		t.Fatalf("the list's status: %q %v", rs.Status, err)
	}
	c := common.New(st, common.Options{NoColor: true})
	c.SetSize(120, 30)
	for _, fromStart := range []bool{false, true} {
		m, err := New(c, sess.ID(), fromStart)
		if err != nil {
			t.Fatal(err)
		}
		if fromStart {
			m.replay.Seek(m.replay.Duration())
			m.set.Poke()
		}
		wait(t, "the crashed run's status", func() bool {
			m.set.Lock()
			defer m.set.Unlock()
			return summary.Status(m.set.Runs()[0], m.live) == profile.StatusCrashed
		})
		m.dirty = true
		out := ansi.Strip(m.View())
		if strings.Contains(out, "replaying") || !strings.Contains(out, "optimized crashed") || !strings.Contains(out, "optimized  crashed") {
			t.Errorf("replay from the start %v:\n%s", fromStart, out)
		}
		m.Close()
	}
}
