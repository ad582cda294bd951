package sessionlist

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// An external torchrun job of two ranks, as the Python client writes it,
// beside a built-in baseline in a session of its own.
const (
	extRank0 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00Z","rank":0,"world":2,"config":{"cmd":["python3","/home/u/gnn/train.py","--epochs","2"],"external":true,"client":"python"}}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":20000000}
{"t":"metric","name":"loss","epoch":1,"batch":-1,"value":1.5}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":20000000,"dur":20000000}
{"t":"metric","name":"loss","epoch":2,"batch":-1,"value":1.2}
{"t":"metric","name":"test_acc","epoch":2,"batch":-1,"value":0.7}
{"t":"run_end","status":"ok"}
`
	extRank1 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00.001Z","rank":1,"world":2}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":20000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":20000000,"dur":30000000}
`
)

// externalStore is a store with one finished session of an external
// distributed run, made without an experiment of the engine.
func externalStore(t *testing.T) *sessions.Store {
	t.Helper()
	st := fixture.Store(t)
	s, err := st.Create(sessions.SessionMeta{ID: "20260102-060000-dddd", Name: "pytorch ddp",
		Created: time.Date(2026, 1, 2, 6, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(extRank0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(extRank1), 0o644); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestExternalSession(t *testing.T) {
	hs := newHarness(t, externalStore(t), 100, 8)
	es := hs.m.Entries()
	if len(es) != 1 {
		t.Fatalf("entries %+v", es)
	}
	e := es[0]
	if e.Data != "train.py --epochs 2" || e.Model != "ext" || e.Status != "ok" {
		t.Errorf("entry data %q model %q status %q", e.Data, e.Model, e.Status)
	}
	if len(e.Runs) != 1 || e.Runs[0].Name != "ddp" || math.Abs(e.Runs[0].EpochS-0.025) > 1e-9 {
		t.Errorf("runs %+v (want ddp alone, epochs of its slowest rank: 20 and 30 ms)", e.Runs)
	}
	fixture.Golden(t, "list_external", hs.m.View())
	hs.press("right")
	view := hs.m.View()
	if strings.Contains(view, "rank1") || !strings.Contains(view, "ddp") {
		t.Errorf("expanded session:\n%s", view)
	}
}

// A running distributed run's figures in the list come from all of its
// ranks, rank 1's journal included once it appears.
func TestPollerFollowsRanks(t *testing.T) {
	st := fixture.Store(t)
	s, err := st.Create(sessions.SessionMeta{ID: "20260102-070000-eeee", Name: "ddp live",
		Created: time.Date(2026, 1, 2, 7, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	lines0 := strings.SplitAfter(extRank0, "\n")
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(strings.Join(lines0[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePid("ddp", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	p := newPoller(st)
	defer p.close()
	e := p.refresh(glance(st, s.ID()))
	if e.Status != profile.StatusRunning || len(e.Runs) != 1 || math.Abs(e.Runs[0].EpochS-0.020) > 1e-9 {
		t.Fatalf("before rank 1: %+v", e)
	}
	// rank 1 appears: its slower epoch 2 counts once it has trained
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(extRank1), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.JournalPath("ddp"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Join(lines0[3:6], ""))
	f.Close()
	e = p.refresh(e)
	if len(e.Runs) != 1 || math.Abs(e.Runs[0].EpochS-0.025) > 1e-9 || e.Runs[0].Epoch != 2 {
		t.Errorf("with rank 1: %+v", e.Runs)
	}
}
