package timeline

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// Two ranks of an external torchrun job as the Python client writes them:
// rank 1 starts 10 ms after rank 0 and samples on a worker lane.
const (
	ddpRank0 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00Z","rank":0,"world":2,"config":{"cmd":["python3","train.py"],"external":true,"client":"python"}}
{"t":"span","name":"sample","lane":"compute","epoch":1,"batch":0,"start":0,"dur":20000000}
{"t":"span","name":"forward","lane":"compute","epoch":1,"batch":0,"start":20000000,"dur":20000000}
{"t":"span","name":"backward","lane":"compute","epoch":1,"batch":0,"start":40000000,"dur":30000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":20000000,"dur":50000000}
{"t":"run_end","status":"ok"}
`
	ddpRank1 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-11-25T10:00:00.010Z","rank":1,"world":2}
{"t":"span","name":"sample","lane":"sampler/0","epoch":1,"batch":0,"start":0,"dur":30000000}
{"t":"span","name":"forward","lane":"compute","epoch":1,"batch":0,"start":30000000,"dur":20000000}
{"t":"span","name":"backward","lane":"compute","epoch":1,"batch":0,"start":50000000,"dur":40000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":30000000,"dur":60000000}
{"t":"span","name":"eval","lane":"eval","epoch":1,"batch":-1,"start":80000000,"dur":10000000}
`
)

// ddpRun reads the two rank journals through a session, as the workbench
// does, into a run.
func ddpRun(t *testing.T) *runstate.Run {
	t.Helper()
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(ddpRank0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(ddpRank1), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runstate.NewRun("ddp")
	if _, err := s.ScanRun("ddp", func(e *profile.Event) error {
		r.Add(e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGoldenRankLanes(t *testing.T) {
	r := ddpRun(t)
	got := make([]string, 0, r.Lanes.Len())
	for _, id := range LaneOrder(&r.Lanes) {
		got = append(got, r.Lanes.Name(id))
	}
	want := "rank0/compute rank1/compute rank1/sampler/0 rank1/eval"
	if strings.Join(got, " ") != want {
		t.Errorf("lane order %v, want %s", got, want)
	}
	m := newModel(common.Options{NoColor: true, ASCII: true})
	m.SetSize(72, 8)
	for m.Window() != 100*time.Millisecond {
		m.ZoomIn()
	}
	golden.Check(t, "ranks_ascii", m.View(r))
}

func TestLaneLabel(t *testing.T) {
	for lane, want := range map[string]string{
		"compute":           "compute",
		"sampler/3":         "sampler/3",
		"rank0/compute":     "r0 comp",
		"rank12/sampler/10": "r12 smp/10",
		"rank1/eval":        "r1 eval",
		"rank1/copy":        "r1 copy",
	} {
		if got := LaneLabel(lane); got != want {
			t.Errorf("LaneLabel(%q) = %q, want %q", lane, got, want)
		}
	}
}
