package dashboard

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
)

// The two ranks of extRank0 and extRank1 on two machines: the dashboard
// reads the ranks' nodes from their journals and groups the timeline's
// lanes under them; f on a rank's lane folds the rank.
func TestGoldenNodeGroups(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	for rank, text := range []string{extRank0, extRank1} {
		node := []string{`"node":"gpu-a",`, `"node":"gpu-b","node_rank":1,`}[rank]
		text = strings.Replace(text, `"t":"run_start",`, `"t":"run_start",`+node, 1)
		if err := os.WriteFile(s.RankJournalPath("ddp", rank), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []struct {
		name string
		w, h int
	}{{"nodes_ascii_80x24", 80, 24}, {"nodes_ascii_160x48", 160, 48}} {
		c := common.New(st, common.Options{NoColor: true, ASCII: true})
		c.SetSize(size.w, size.h)
		m, err := New(c, s.ID(), false)
		if err != nil {
			t.Fatal(err)
		}
		waitEvents(t, m, 13)
		m.dirty = true
		v := ansi.Strip(m.View())
		for _, want := range []string{"- node 0  gpu-a  1 rank", "- node 1  gpu-b  1 rank", "r1 comp"} {
			if !strings.Contains(v, want) {
				t.Errorf("%s: no %q in:\n%s", size.name, want, v)
			}
		}
		golden.Check(t, size.name, m.View())
		m.Update(press("down")) // the cursor shows, a row down: on rank 0's lane
		m.Update(press("f"))
		m.dirty = true
		if v := ansi.Strip(m.View()); !strings.Contains(v, "+r0") || strings.Contains(v, "r0 comp") {
			t.Errorf("%s: f did not fold rank 0:\n%s", size.name, v)
		}
		m.Close()
	}
}
