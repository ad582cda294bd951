//go:build unix

package ui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/launch"
)

// TestWorkbenchEndToEnd builds the real binary, opens the workbench in a
// tmux pane of 120x40 with an empty store, launches the default
// experiment with L, waits for the dashboard's timeline and memory chart,
// opens the comparison with c, quits with q, and checks that the
// workbench exits with status 0 and leaves the finished session behind.
func TestWorkbenchEndToEnd(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: this test drives the workbench in a tmux pane (apt-get install tmux; .ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end test of the workbench (it builds the binary and trains two small runs)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gnnscope")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = clitest.ModuleRoot(t) // the gnnscope binary is the module's main package
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := filepath.Join(dir, "home")
	sock := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-u", "-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The pane runs the workbench, then prints its exit status and waits,
	// so the status can be read from the screen.
	shell := "env GNNSCOPE_HOME=" + shellQuote(home) + " TERM=xterm-256color " + shellQuote(bin) +
		"; echo gnnscope-exit=$?; sleep 600"
	tm("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", shell)
	t.Cleanup(func() { exec.Command(tmux, "-u", "-S", sock, "kill-server").Run() })
	t.Cleanup(func() { stopSessions(t, home) })

	screen := func() string { return tm("capture-pane", "-p", "-t", "e2e") }
	waitScreen := func(what string, timeout time.Duration, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			s := screen()
			if cond(s) {
				return s
			}
			if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
				t.Fatalf("the workbench crashed:\n%s", s)
			}
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s; the screen shows:\n%s", what, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	has := func(parts ...string) func(string) bool {
		return func(s string) bool {
			for _, p := range parts {
				if !strings.Contains(s, p) {
					return false
				}
			}
			return true
		}
	}

	waitScreen("the empty sessions list", 30*time.Second, has("gnnscope", "No sessions yet"))
	tm("send-keys", "-t", "e2e", "L")
	// the dashboard of the new session: the stage timeline (its title and
	// legend) and the memory chart
	waitScreen("the dashboard's timeline and memory chart", 90*time.Second,
		has("gnnscope", "Run ", "Timeline", "sample", "train", "Memory", "peak"))

	// the timeline: zoom in, pan with the arrows (the cursor shows), and
	// open the details of a span under the cursor with enter, moving the
	// cursor a cell at a time until it is on one
	// (the first spans may still be on their way: pan until the cursor
	// shows)
	tm("send-keys", "-t", "e2e", "z")
	panned := false
	for try := 0; try < 20 && !panned; try++ {
		tm("send-keys", "-t", "e2e", "Left", "Left", "Right")
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) && !panned {
			panned = has("Timeline", "cursor ")(screen())
			time.Sleep(100 * time.Millisecond)
		}
	}
	if !panned {
		t.Fatalf("no cursor after panning the timeline; the screen shows:\n%s", screen())
	}
	details := has("Span ", "lane ", "epoch ", "batch ", "start ", "duration ", "attributes: ")
	opened := false
	for try := 0; try < 40 && !opened; try++ {
		tm("send-keys", "-t", "e2e", "Enter")
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) && !opened {
			opened = details(screen())
			time.Sleep(100 * time.Millisecond)
		}
		if !opened {
			tm("send-keys", "-t", "e2e", ">")
		}
	}
	if !opened {
		t.Fatalf("enter did not open a span's details; the screen shows:\n%s", screen())
	}
	tm("send-keys", "-t", "e2e", "Enter") // enter again closes them
	waitScreen("the span's details closed", 30*time.Second, func(sc string) bool { return !details(sc) })

	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions after L: %d, %v", len(list), err)
	}
	s, err := st.Get(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// the default experiment (baseline and optimized, DefaultRepeats
	// times each) ends in well under a minute; wait for every run
	runs := 2 * launch.DefaultRepeats
	deadline := time.Now().Add(3 * time.Minute)
	var states []sessions.RunState
	for {
		states, err = runner.RunStates(s)
		if err == nil && len(states) == runs && !runner.Active(states) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runs did not end: %+v, %v\n%s", states, err, screen())
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, r := range states {
		if r.Status != "ok" {
			log, _ := os.ReadFile(filepath.Join(s.RunsDir(), r.Run+".log"))
			t.Errorf("run %s ended %s: %s\n%s", r.Run, r.Status, r.Error, log)
		}
	}
	waitScreen("every run ended on the dashboard", 30*time.Second, func(sc string) bool {
		return strings.Count(sc, " ok ") >= runs && !strings.Contains(sc, "running")
	})

	tm("send-keys", "-t", "e2e", "c")
	cmp := waitScreen("the comparison", 30*time.Second,
		has(fmt.Sprintf("Compare %d runs of %s", runs, s.ID()), "(base)", "optimized", "epoch mean s", "speedup"))
	// (the rows below speedup scroll into view: on a busy host the notes
	// and the time-to-accuracy chart take the rest of the screen)
	if strings.Contains(cmp, "sampler_workers") == false {
		t.Errorf("the comparison does not show the configuration differences:\n%s", cmp)
	}

	tm("send-keys", "-t", "e2e", "q")
	end := waitScreen("the workbench to exit", 30*time.Second, has("gnnscope-exit="))
	if !strings.Contains(end, "gnnscope-exit=0") {
		t.Fatalf("the workbench did not exit cleanly:\n%s", end)
	}
	if list, _ := st.List(); len(list) != 1 {
		t.Errorf("%d sessions after quitting, want the one launched", len(list))
	}

	// a session launched from another shell shows in the open list within
	// seconds, without a key
	tm("new-session", "-d", "-s", "watch", "-x", "120", "-y", "40", "env GNNSCOPE_HOME="+shellQuote(home)+
		" TERM=xterm-256color "+shellQuote(bin)+"; echo gnnscope-exit=$?; sleep 600")
	screen = func() string { return tm("capture-pane", "-p", "-t", "watch") }
	waitScreen("the sessions list", 30*time.Second, has(s.ID()))
	launch := exec.Command(bin, "run", "--data", "synth-tiny", "--epochs", "1", "--variants", "baseline", "-q")
	launch.Env = append(os.Environ(), "GNNSCOPE_HOME="+home)
	if out, err := launch.CombinedOutput(); err != nil {
		t.Fatalf("gnnscope run from another shell: %v\n%s", err, out)
	}
	list, err = st.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions after the second launch: %d, %v", len(list), err)
	}
	other := list[0].ID
	if other == s.ID() {
		other = list[1].ID
	}
	waitScreen("the session launched elsewhere in the list", 10*time.Second, has(other))
	tm("send-keys", "-t", "watch", "q")
	waitScreen("the workbench to exit", 30*time.Second, has("gnnscope-exit="))

	// gnnscope ui SESSION and gnnscope replay SESSION (on a terminal) open
	// on the session's replay dashboard.
	for i, args := range []string{"ui " + s.ID()[:15], "replay " + s.ID()} {
		name := fmt.Sprintf("e2e%d", i)
		tm("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "env GNNSCOPE_HOME="+shellQuote(home)+
			" TERM=xterm-256color "+shellQuote(bin)+" "+args+"; echo gnnscope-exit=$?; sleep 600")
		screen = func() string { return tm("capture-pane", "-p", "-t", name) }
		waitScreen("the dashboard of gnnscope "+args, 30*time.Second, has("Run "+s.ID(), "Timeline"))
		tm("send-keys", "-t", name, "q")
		if end := waitScreen("gnnscope "+args+" to exit", 30*time.Second, has("gnnscope-exit=")); !strings.Contains(end, "gnnscope-exit=0") {
			t.Fatalf("gnnscope %s did not exit cleanly:\n%s", args, end)
		}
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopSessions cancels whatever still runs in the store (a failed test
// must not leave workers behind) and waits for the runs to end.
func stopSessions(t *testing.T, home string) {
	st, err := sessions.Open(home)
	if err != nil {
		return
	}
	list, _ := st.List()
	for _, info := range list {
		s, err := st.Get(info.ID)
		if err != nil {
			continue
		}
		if states, err := runner.RunStates(s); err != nil || !runner.Active(states) {
			continue
		}
		runner.Cancel(st, info.ID)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if states, err := runner.RunStates(s); err != nil || !runner.Active(states) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
