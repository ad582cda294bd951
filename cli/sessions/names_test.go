//go:build unix

package sessions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/sessions"
)

// escape is the run name of issue 18's hostile archive. With the store at
// T/store, runs/../../../../tmp/x is T/tmp/x, which the test watches.
const escape = "../../../../tmp/x"

// leaked lists what exists in T/tmp or in T beside the store and tmp.
func leaked(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{top, filepath.Join(top, "tmp")} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if dir != top || e.Name() != "store" && e.Name() != "tmp" {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

// TestHostileRunNames is issue 18's F1 through the commands: a session
// whose launch.json names the run ../../../../tmp/x is refused by
// `run --cancel` and `sessions show`, its archive by `sessions import`,
// and such names by `run --cmd` and `run --variants`; nothing is written
// outside the store.
func TestHostileRunNames(t *testing.T) {
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(top, "store")
	t.Setenv("GNNSCOPE_HOME", home)
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "hostile", Variants: []sessions.Variant{{Name: "baseline"}}})
	if err != nil {
		t.Fatal(err)
	}
	launch := `{"mode":"parallel","runs":["baseline","` + escape + `"]}`
	if err := os.WriteFile(filepath.Join(s.Dir(), "launch.json"), []byte(launch), 0o644); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(t.TempDir(), "hostile.tar.gz")
	if _, err := s.ExportFile(arc, sessions.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other")
	bad := `run name "` + escape + `"`
	for _, args := range [][]string{
		{"run", "--cancel", s.ID()},
		{"sessions", "show", s.ID()},
		{"sessions", "show", s.ID(), "--json"},
		{"sessions", "export", s.ID(), "-o", filepath.Join(t.TempDir(), "again.tar.gz")},
		{"sessions", "import", "--store", other, arc},
		{"run", "--cmd", escape + "=true"},
	} {
		_, _, err := clitest.Run(t, args...)
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v, want %q", strings.Join(args, " "), err, bad)
		}
	}
	if _, _, err := clitest.Run(t, "run", "--data", "synth-tiny", "--variants", "baseline,"+escape); err == nil || !strings.Contains(err.Error(), `variant name "`+escape+`"`) {
		t.Errorf("run --variants: %v", err)
	}
	if ents, err := os.ReadDir(filepath.Join(other, "sessions")); err == nil && len(ents) > 0 {
		t.Errorf("the refused import left %s in the store", ents[0].Name())
	}
	if got := leaked(t, top); len(got) > 0 {
		t.Errorf("written outside the store: %v", got)
	}
	if list, err := st.List(); err != nil || len(list) != 1 {
		t.Errorf("sessions: %d, %v; want the hostile one alone", len(list), err)
	}
	// it can be deleted
	if _, _, err := clitest.Run(t, "sessions", "rm", s.ID(), "--yes"); err != nil {
		t.Errorf("rm: %v", err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("the session is still there: %v", err)
	}
	if got := leaked(t, top); len(got) > 0 {
		t.Errorf("written outside the store: %v", got)
	}
}
