package summary

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// An external torchrun job of two ranks, as the Python client writes it:
// rank 1 starts 0.5 s late and takes 3 s over epoch 2, where rank 0 takes
// 2 s. Its config is a command, not the engine's.
const (
	extRank0 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00Z","rank":0,"world":2,"config":{"cmd":["torchrun","--nproc-per-node","2","train.py"],"external":true,"client":"python"}}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":2000000000}
{"t":"metric","name":"loss","epoch":1,"batch":-1,"value":1.5}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":2000000000,"dur":2000000000}
{"t":"metric","name":"loss","epoch":2,"batch":-1,"value":1.1}
{"t":"run_end","status":"ok"}
`
	extRank1 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00.5Z","rank":1,"world":2}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":2000000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":2000000000,"dur":3000000000}
`
)

func TestDistributedExternalRun(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(extRank0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(extRank1), 0o644); err != nil {
		t.Fatal(err)
	}
	ddp := runstate.NewRun("ddp")
	if _, err := s.ScanRun("ddp", func(e *profile.Event) error {
		ddp.Add(e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	base, _ := epochs("baseline", 4, 2, 0.8)
	end := profile.Event{T: profile.TypeRunEnd, Status: "ok"}
	base.Add(&end)
	runs := []*runstate.Run{base, ddp}
	rows := Figures(runs, []profile.Summary{base.Summary(), ddp.Summary()}, false)
	d := rows[1]
	// epochs of the slowest rank: 2 s and 3 s; ranks of 4 s and 5 s
	if d.Status != "ok" || d.Done != 2 || d.Total != 0 || math.Abs(d.EpochS-2.5) > 1e-9 {
		t.Errorf("ddp row %+v", d)
	}
	if math.Abs(d.Straggler-5/4.5) > 1e-9 || rows[0].Straggler != 0 {
		t.Errorf("straggler %g (want 5/4.5), baseline %g", d.Straggler, rows[0].Straggler)
	}
	m := New(common.New(nil, common.Options{NoColor: true, ASCII: true}), false)
	m.SetSize(120, 3)
	out := m.View(runs, 1)
	if !strings.Contains(out, "straggler") {
		t.Errorf("no straggler column:\n%s", out)
	}
	// rank 1 was the slowest of one of the two steps; the other was a tie
	if d.SlowRank != 1 || d.SlowShare != 0.5 || !strings.Contains(out, "r1 50%") {
		t.Errorf("slowest rank %d, share %g:\n%s", d.SlowRank, d.SlowShare, out)
	}
	golden.Check(t, "ranks_ascii", out)
	// without a distributed run, no straggler column
	m.SetSize(200, 2)
	if out := m.View(runs[:1], 0); strings.Contains(out, "straggler") {
		t.Errorf("a straggler column without a distributed run:\n%s", out)
	}
}
