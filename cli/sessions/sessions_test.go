//go:build unix

package sessions_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	clisessions "github.com/gnnscope/gnnscope/cli/sessions"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// TestSessionsAndReplayOfARealRun: a session made by `gnnscope run` on
// synth-tiny is listed, shown, replayed, exported and imported.
func TestSessionsAndReplayOfARealRun(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "2", "--threads", "1",
		"--variants", "baseline,optimized", "--wait", "-q"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	id := s.ID()

	// ls
	out, _, err := clitest.Run(t, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{id, " ok ", "baseline,optimized", "synth-tiny", "sage", "(single run) optimized", "SPEEDUP"} {
		if !strings.Contains(out, want) {
			t.Errorf("ls lacks %q:\n%s", want, out)
		}
	}
	out, _, err = clitest.Run(t, "sessions", "ls", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []clisessions.Entry
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	var raw []map[string]any // typed JSON: numbers are numbers
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"speedup", "baseline_epoch_s", "best_epoch_s", "baseline_test_acc"} {
		if _, ok := raw[0][k].(float64); !ok {
			t.Errorf("ls --json: %s = %#v, want a number", k, raw[0][k])
		}
	}
	for _, k := range []string{"speedup_lo", "speedup_hi"} { // single runs: no interval
		if v, ok := raw[0][k]; ok && v != nil {
			t.Errorf("ls --json: %s = %#v for single runs, want none", k, v)
		}
	}
	if r, ok := raw[0]["speedup_ratios"].([]any); !ok || len(r) != 1 {
		t.Errorf("ls --json: speedup_ratios = %#v", raw[0]["speedup_ratios"])
	} else if _, ok := r[0].(float64); !ok {
		t.Errorf("ls --json: ratio %#v", r[0])
	}
	e := list[0]
	if e.ID != id || e.Status != profile.StatusOK || e.Data != "synth-tiny" || e.Model != "sage" || e.Baseline != "baseline" ||
		e.Best != "optimized" || e.Speedup <= 0 || e.BaselineEpochS <= 0 || e.BestEpochS <= 0 || e.BaselineAcc == nil || len(e.Runs) != 2 {
		t.Errorf("ls entry %+v", e)
	}

	// show
	out, _, err = clitest.Run(t, "sessions", "show", "last")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"session   " + id, "data      synth-tiny", "optimized: ", "overlap_eval=true", "adjusted: sampler_workers ", "RUN", "SPEEDUP", "TEST ACC"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	out, _, err = clitest.Run(t, "sessions", "show", id[:12], "--json")
	if err != nil {
		t.Fatal(err)
	}
	var show clisessions.Show
	if err := json.Unmarshal([]byte(out), &show); err != nil || show.Session.ID != id || show.Status != "ok" ||
		len(show.Runs) != 2 || len(show.Comparison.Runs) != 2 || show.Imported != nil {
		t.Errorf("show --json: %v %+v", err, show)
	}

	// replay: every event of both journals, in time order
	total := 0
	for _, run := range []string{"baseline", "optimized"} {
		js, err := sessions.SummarizeJournal(s.JournalPath(run))
		if err != nil {
			t.Fatal(err)
		}
		total += js.Read.Events
	}
	out, stderr, err := clitest.Run(t, "replay", id, "--headless", "--speed", "max")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != total {
		t.Errorf("replay printed %d lines for %d events", len(lines), total)
	}
	last := -1.0
	for _, l := range lines {
		f := strings.Fields(l)
		sec, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "s"), 64)
		if err != nil || sec < last || (f[1] != "baseline" && f[1] != "optimized") {
			t.Fatalf("line %q after %g: %v", l, last, err)
		}
		last = sec
	}
	for _, want := range []string{"baseline   run_start", "span      train lane=compute epoch=1 batch=0", "metric    loss=", "optimized  run_end   status=ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(stderr, "interactive") || !strings.Contains(stderr, "replayed") {
		t.Errorf("replay notes: %s", stderr)
	}
	// one run, in (sped-up) real time, without --headless
	out, stderr, err = clitest.Run(t, "replay", id+"/optimized", "--speed", "x1000")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "not a terminal: printing events (as --headless)") ||
		strings.Contains(out, "baseline") || !strings.Contains(out, "optimized  run_end") {
		t.Errorf("replay of one run:\n%s\n%s", out, stderr)
	}
	out, _, err = clitest.Run(t, "replay", id, "--headless", "--speed", "max", "--json", "-q")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			At    int64         `json:"at_ns"`
			Run   string        `json:"run"`
			Event profile.Event `json:"event"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.Event.T == "" || v.Run == "" {
			t.Fatalf("json line %d %q: %v", i, l, err)
		}
	}

	// export, import into another store: same journals, same figures
	arc := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, stderr, err := clitest.Run(t, "sessions", "export", id, "-o", arc); err != nil || !strings.Contains(stderr, "exported session "+id) {
		t.Fatalf("export: %v %s", err, stderr)
	}
	other := t.TempDir()
	out, _, err = clitest.Run(t, "sessions", "import", "--store", other, arc)
	if err != nil || !strings.Contains(out, "imported session "+id) {
		t.Fatalf("import: %v %s", err, out)
	}
	for _, run := range []string{"baseline", "optimized"} {
		a, _ := os.ReadFile(s.JournalPath(run))
		b, err := os.ReadFile(filepath.Join(other, "sessions", id, "runs", run+".jsonl"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("journal of %s differs after import (%v)", run, err)
		}
	}
	out, _, err = clitest.Run(t, "sessions", "--store", other, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list2 []clisessions.Entry
	if err := json.Unmarshal([]byte(out), &list2); err != nil || len(list2) != 1 {
		t.Fatalf("ls of the other store: %v", err)
	}
	e2 := list2[0]
	if !e2.Imported || e2.Status != e.Status || e2.Speedup != e.Speedup || e2.BaselineEpochS != e.BaselineEpochS || *e2.BaselineAcc != *e.BaselineAcc {
		t.Errorf("imported entry %+v\noriginal %+v", e2, e)
	}
	// a second import is refused, --force replaces
	if _, _, err := clitest.Run(t, "sessions", "import", "--store", other, arc); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second import: %v", err)
	}
	if out, _, err := clitest.Run(t, "sessions", "import", "--store", other, "--force", arc); err != nil || !strings.Contains(out, "replaced") {
		t.Errorf("forced import: %v %s", err, out)
	}
}

// runningSession makes a session of the store at home whose run "live" is
// running (its pid file names this process) and whose run "next" is
// pending (launch.json names this process as the launcher).
func runningCLISession(t *testing.T, home string) *sessions.Session {
	t.Helper()
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenJournal("live")
	if err != nil {
		t.Fatal(err)
	}
	w.WriteEvents([]profile.Event{{T: profile.TypeRunStart, Run: "live", Wall: "2026-11-22T12:00:00Z"},
		{T: profile.TypeSpan, Name: "train", Lane: "compute", Epoch: 1, Dur: 1000}})
	w.Close()
	if err := s.WritePid("live", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	launch, _ := json.Marshal(map[string]any{"mode": "parallel", "runs": []string{"live", "next"},
		"launcher": map[string]any{"pid": os.Getpid(), "host": host}})
	os.WriteFile(filepath.Join(s.Dir(), "launch.json"), launch, 0o644)
	return s
}

func TestSessionsRefuseRunning(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := runningCLISession(t, home)
	out, _, err := clitest.Run(t, "sessions", "ls")
	if err != nil || !strings.Contains(out, "running") {
		t.Errorf("ls: %v\n%s", err, out)
	}
	out, _, err = clitest.Run(t, "sessions", "show", s.ID())
	if err != nil || !strings.Contains(out, "pending") || !strings.Contains(out, strconv.Itoa(os.Getpid())) {
		t.Errorf("show: %v\n%s", err, out)
	}
	_, _, err = clitest.Run(t, "sessions", "rm", s.ID(), "--yes")
	if err == nil || !strings.Contains(err.Error(), "gnnscope run --cancel "+s.ID()) || !strings.Contains(err.Error(), "live running") {
		t.Errorf("rm of a running session: %v", err)
	}
	if _, err := os.Stat(s.Dir()); err != nil {
		t.Fatal("rm deleted a running session")
	}
	arc := filepath.Join(t.TempDir(), "busy.tar.gz")
	if _, _, err := clitest.Run(t, "sessions", "export", s.ID(), "-o", arc); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("export of a running session: %v", err)
	}
	if _, err := os.Stat(arc); err == nil {
		t.Error("a refused export wrote the archive")
	}
	_, stderr, err := clitest.Run(t, "sessions", "export", s.ID(), "-o", arc, "--force")
	if err != nil || !strings.Contains(stderr, "live") {
		t.Fatalf("forced export: %v %s", err, stderr)
	}
	// in another store, the runs read as crashed: nothing runs them there
	other := t.TempDir()
	out, _, err = clitest.Run(t, "sessions", "import", "--store", other, arc)
	if err != nil || strings.Count(out, "crashed") != 2 {
		t.Errorf("import of a running session: %v\n%s", err, out)
	}
	out, _, _ = clitest.Run(t, "sessions", "show", "--store", other, "last")
	if !strings.Contains(out, "status    crashed") || !strings.Contains(out, "not started before the session was exported") {
		t.Errorf("show of the imported copy:\n%s", out)
	}
	// it can be deleted there, with confirmation
	if _, _, err := clitest.Run(t, "sessions", "rm", "--store", other, s.ID()); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("rm without a terminal: %v", err)
	}
	if _, stderr, err := clitest.RunWith(t, clitest.Streams{In: "n\n", StdinTTY: true}, "sessions", "rm", "--store", other, s.ID()); err == nil || !strings.Contains(stderr, "[y/N]") {
		t.Errorf("rm answered no: %v %s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(other, "sessions", s.ID())); err != nil {
		t.Fatal("rm deleted after no")
	}
	if out, _, err := clitest.RunWith(t, clitest.Streams{In: "y\n", StdinTTY: true}, "sessions", "rm", "--store", other, s.ID()); err != nil || !strings.Contains(out, "deleted") {
		t.Errorf("rm answered yes: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(other, "sessions", s.ID())); err == nil {
		t.Error("rm did not delete")
	}
}

func TestSessionsAndReplayBadInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	st, _ := sessions.Open(home)
	a, _ := st.Create(sessions.SessionMeta{ID: "20261122-120000-aaaa"})
	st.Create(sessions.SessionMeta{ID: "20261122-120000-aaab"})
	notArchive := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notArchive, []byte("not an archive"), 0o644)
	before, _ := os.ReadDir(filepath.Join(home, "sessions"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions", "show", "nope"}, `session "nope": no session has that id`},
		{[]string{"sessions", "show", "20261122-120000"}, "the prefix matches 2 sessions"},
		{[]string{"sessions", "show", "../x"}, `session "../x": no session has that id`},
		{[]string{"sessions", "rm", "nope", "--yes"}, `session "nope": no session has that id`},
		{[]string{"sessions", "export", "nope"}, `session "nope": no session has that id`},
		{[]string{"sessions", "import", notArchive}, "notes.txt"},
		{[]string{"sessions", "import", notArchive + ".none"}, "notes.txt.none"},
		{[]string{"sessions", "bogus"}, "unknown command"},
		{[]string{"replay", "nope", "--headless"}, `session "nope": no session has that id`},
		{[]string{"replay", a.ID() + "/nope", "--headless"}, `no journal for run "nope"`},
		{[]string{"replay", a.ID(), "--headless"}, "no run has a journal"},
		{[]string{"replay", a.ID(), "--speed", "0"}, "--speed"},
		{[]string{"replay", a.ID(), "--speed", "fast"}, "--speed"},
		{[]string{"replay", a.ID(), "--from", "-1s"}, "--from"},
		{[]string{"replay"}, "replay expects one SESSION[/RUN]"},
	} {
		_, _, err := clitest.Run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	after, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(after) != len(before) {
		t.Errorf("the store changed: %v -> %v", before, after)
	}
}
