package compare

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

// An external torchrun job of two ranks, as the Python client writes it.
const (
	extRank0 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00Z","rank":0,"world":2,"config":{"cmd":["python3","train.py","--epochs","2"],"external":true,"client":"python"}}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":20000000}
{"t":"mem","epoch":1,"batch":0,"phase":"train","peak":2097152,"live":0,"budget":8388608,"predicted":0}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":20000000,"dur":20000000}
{"t":"run_end","status":"ok"}
`
	extRank1 = `{"t":"run_start","v":1,"run":"ddp","variant":"ddp","wall":"2026-01-02T06:00:00.001Z","rank":1,"world":2}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":20000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":20000000,"dur":30000000}
`
)

// TestCompareExternalRun puts an external distributed run beside the
// fixture's built-in pair: the command is the only configuration row,
// and a straggler row appears.
func TestCompareExternalRun(t *testing.T) {
	st := fixture.Standard(t)
	s, err := st.Get("20260102-030400-aaaa")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.JournalPath("ddp"), []byte(extRank0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(extRank1), 0o644); err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, st, 100, 30, "20260102-030400-aaaa")
	c := hs.m.Comparison()
	if len(c.Runs) != 3 || c.Runs[2].Run != "ddp" || c.Runs[2].Ranks != 2 {
		t.Fatalf("runs %+v", c.Runs)
	}
	v := ansi.Strip(hs.m.View())
	for _, want := range []string{"cmd", "train.py --epochs 2", "straggler", "1.111"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in:\n%s", want, v)
		}
	}
	if strings.Contains(v, "rank1") {
		t.Errorf("a rank journal is listed as a run:\n%s", v)
	}
	fixture.Golden(t, "compare_external", hs.m.View())
	// without the distributed run, no straggler row
	plain := newHarness(t, st, 100, 30, "20260102-030400-aaaa/baseline", "20260102-030400-aaaa/optimized")
	if v := ansi.Strip(plain.m.View()); strings.Contains(v, "straggler") {
		t.Errorf("a straggler row without a distributed run:\n%s", v)
	}
}
