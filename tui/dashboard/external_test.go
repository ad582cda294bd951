package dashboard

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
)

// An external torchrun job of two ranks, as the Python client writes it:
// spans, a loss and memory per batch on each rank.
const (
	extRank0 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00Z","rank":0,"world":2,"config":{"cmd":["python3","train.py"],"external":true,"client":"python"},"host":{"cores":4}}
{"t":"span","name":"sample","lane":"compute","epoch":1,"batch":0,"start":0,"dur":5000000}
{"t":"span","name":"forward","lane":"compute","epoch":1,"batch":0,"start":5000000,"dur":5000000}
{"t":"span","name":"backward","lane":"compute","epoch":1,"batch":0,"start":10000000,"dur":8000000}
{"t":"span","name":"step","lane":"compute","epoch":1,"batch":0,"start":18000000,"dur":2000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":5000000,"dur":15000000}
{"t":"metric","name":"loss","epoch":1,"batch":0,"value":2.5}
{"t":"mem","epoch":1,"batch":0,"phase":"train","peak":3145728,"live":1048576,"budget":8388608,"predicted":0}
{"t":"metric","name":"loss","epoch":1,"batch":-1,"value":2.5}
{"t":"run_end","status":"ok"}
`
	extRank1 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00.002Z","rank":1,"world":2}
{"t":"span","name":"sample","lane":"compute","epoch":1,"batch":0,"start":0,"dur":8000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":8000000,"dur":15000000}
{"t":"mem","epoch":1,"batch":0,"phase":"train","peak":4194304,"live":1048576,"budget":8388608,"predicted":0}
`
)

// TestExternalDistributedRun opens the workbench's dashboard on a session
// holding an external run of two ranks: it replays the merged run, with a
// lane per rank, its memory and its loss, on every tab.
func TestExternalDistributedRun(t *testing.T) {
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
	c := common.New(st, common.Options{NoColor: true, ASCII: true})
	c.SetSize(120, 40)
	m, err := New(c, s.ID(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	waitEvents(t, m, 13) // rank 1's run_start is not part of the run
	if len(m.names) != 1 || m.names[0] != "ddp" {
		t.Fatalf("runs %v", m.names)
	}
	deadline := time.Now().Add(5 * time.Second)
	var v string
	for {
		m.dirty = true
		v = ansi.Strip(m.View())
		if strings.Contains(v, "r1 comp") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, want := range []string{"r0 comp", "r1 comp", "ok"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in the dashboard:\n%s", want, v)
		}
	}
	for range 4 {
		m.Update(press("tab"))
		m.dirty = true
		if v := m.View(); strings.TrimSpace(ansi.Strip(v)) == "" {
			t.Errorf("an empty tab")
		}
	}
}
