//go:build unix

package compare_test

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/dashboard"
)

// dashboardView opens the workbench's dashboard on a session and returns
// its text once it shows every one of want.
func dashboardView(t *testing.T, home, id string, w, h int, want ...string) string {
	t.Helper()
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	c := common.New(st, common.Options{NoColor: true, ASCII: true})
	c.SetSize(w, h)
	m, err := dashboard.New(c, id, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var v string
	ok := func() bool {
		m.SetSize(w, h-1)
		m.SetSize(w, h) // a new size: drawn at once
		v = ansi.Strip(m.View())
		for _, s := range want {
			if !strings.Contains(v, s) {
				return false
			}
		}
		return true
	}
	for range 1000 { // up to 20 s: a safety net, not a timing assertion
		if ok() {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the dashboard lacks one of %q:\n%s", want, v)
	return ""
}

// A guarded run (the memory guard splits the batches of synth-tiny under
// a 1 MiB budget) fails no allocation: its journal has guard events and no
// oom event, and compare (every format), the trace and the dashboard
// count guard actions apart from OOMs.
func TestGuardedRunIsNoOOM(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "2",
		"--threads", "1", "--mem-budget", "1MiB", "--mem-guard", "split", "--variants", "baseline", "--wait", "-q"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	id := s.ID()
	types := clitest.EventTypes(t, s.JournalPath("baseline"))
	n := types[profile.TypeGuard]
	if types[profile.TypeOOM] != 0 || n == 0 {
		t.Fatalf("%d oom events, %d guard events: want none and some", types[profile.TypeOOM], n)
	}
	ns := strconv.Itoa(n)

	md, _, err := clitest.Run(t, "compare", id)
	if err != nil || !strings.Contains(md, "| OOMs | 0 |") || !strings.Contains(md, "| guard actions | "+ns+" |") {
		t.Errorf("markdown %v:\n%s", err, md)
	}
	tex, _, err := clitest.Run(t, "compare", id, "--format", "latex")
	if err != nil || !strings.Contains(tex, `OOMs & 0 \\`) || !strings.Contains(tex, `guard actions & `+ns+` \\`) {
		t.Errorf("latex %v:\n%s", err, tex)
	}
	out, _, err := clitest.Run(t, "compare", id, "--format", "csv")
	recs, cerr := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || cerr != nil || len(recs) != 2 {
		t.Fatalf("csv %v %v:\n%s", err, cerr, out)
	}
	oi, gi := slices.Index(recs[0], "ooms"), slices.Index(recs[0], "guard_actions")
	if oi < 0 || gi < 0 || recs[1][oi] != "0" || recs[1][gi] != ns {
		t.Errorf("csv:\n%s", out)
	}
	out, _, err = clitest.Run(t, "compare", id, "--json")
	var c struct {
		Runs []struct {
			OOMs         *int64 `json:"ooms"`
			GuardActions *int64 `json:"guard_actions"`
		} `json:"runs"`
	}
	if err != nil || json.Unmarshal([]byte(out), &c) != nil || len(c.Runs) != 1 || c.Runs[0].OOMs == nil || *c.Runs[0].OOMs != 0 ||
		c.Runs[0].GuardActions == nil || *c.Runs[0].GuardActions != int64(n) {
		t.Errorf("json %v:\n%s", err, out)
	}

	path := filepath.Join(t.TempDir(), "trace.json")
	if _, _, err := clitest.Run(t, "export", "trace", id, "-o", path); err != nil {
		t.Fatal(err)
	}
	out, _, err = clitest.Run(t, "export", "trace", id, "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	guards := 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "i" && e.Name == "guard (split)" {
			guards++
		}
		if e.Ph == "i" && strings.HasPrefix(e.Name, "OOM") {
			t.Errorf("trace instant %q in a run that failed no allocation", e.Name)
		}
	}
	if guards != n {
		t.Errorf("%d guard instants in the trace, want %d", guards, n)
	}

	v := dashboardView(t, home, id, 160, 40, "OOMs  guard", "g "+ns+" guard")
	if strings.Contains(v, "OOM at") || strings.Contains(v, " OOM ") {
		t.Errorf("the dashboard shows OOMs:\n%s", v)
	}
}

// A run aborted by an OOM in its first batch (`run --mem-budget 3MiB`,
// the repro) shows its budget line and the X of its batch in the memory
// chart, and its error in full in the dashboard.
func TestOOMAbortedRunInDashboard(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "2", "--threads", "1", "--mem-budget", "3MiB", "--variants", "baseline", "--wait", "-q")
	s := clitest.OnlySession(t, home)
	rs, err := s.RunState("baseline")
	if err != nil || rs.Status != profile.StatusOOM || !strings.Contains(rs.Error, "budget 3145728") {
		t.Fatalf("run state %+v %v", rs, err)
	}
	v := dashboardView(t, home, s.ID(), 100, 40, "baseline  oom", "= budget 3.0 MiB", "X 1 OOM", "===")
	var text []string
	for _, l := range strings.Split(v, "\n") {
		text = append(text, strings.TrimSpace(l))
	}
	if !strings.Contains(strings.Join(text, " "), "error: "+rs.Error) {
		t.Errorf("the error %q is not in full:\n%s", rs.Error, v)
	}
}
