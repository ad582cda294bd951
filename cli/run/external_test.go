//go:build unix

package run_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// script writes a shell script into dir and returns the command line
// that runs it.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name+".sh")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return "/bin/sh " + path
}

// journalLines is what a client writes: run_start and a span.
const journalLines = `printf '%s\n' "{\"t\":\"run_start\",\"v\":1,\"run\":\"$GNNSCOPE_RUN\",\"session\":\"$GNNSCOPE_SESSION\",\"variant\":\"$GNNSCOPE_RUN\",\"config\":{\"cmd\":[\"sh\"],\"external\":true,\"client\":\"test\"}}" >> "$GNNSCOPE_JOURNAL"
printf '%s\n' '{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":10,"dur":20}' >> "$GNNSCOPE_JOURNAL"
`

// readJournal returns a run's events, checking that the first is
// run_start.
func readJournal(t *testing.T, s *sessions.Session, run string) []profile.Event {
	t.Helper()
	evs, _, err := sessions.ReadJournal(s.JournalPath(run))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].T != profile.TypeRunStart {
		t.Fatalf("journal of %s: %+v", run, evs)
	}
	return evs
}

func TestExternalRunsEnd(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Join(dir, "work", "sub"), 0o755)
	os.Mkdir(out, 0o755)
	t.Setenv("PYTHONPATH", "/user/lib")
	t.Chdir(filepath.Join(dir, "work")) // cwd is relative to where run starts
	spec := filepath.Join(dir, "ext.toml")
	probe := script(t, dir, "probe", `pwd > `+out+`/pwd
printf '%s|%s|%s|%s|%s\n' "$FOO" "$PYTHONPATH" "$GNNSCOPE_AUTO" "$GNNSCOPE_RUN" "$GNNSCOPE_JOURNAL" > `+out+`/env
ls "${PYTHONPATH%%:*}" "${PYTHONPATH%%:*}/gnnscope" > `+out+`/client
`)
	os.WriteFile(spec, []byte(`
[variants.probe]
cmd = "`+probe+`"
env = { FOO = "bar baz" }
cwd = "sub"
auto = false
`), 0o644)
	ok := script(t, dir, "ok", journalLines+"echo to stdout\nexit 0\n")
	fail := script(t, dir, "fail", journalLines+"echo not the error\necho 'Traceback (most recent call last):' >&2\necho 'ValueError: bad lr' >&2\nexit 1\n")
	silent := script(t, dir, "silent", "exit 0\n")
	_, stderr, err := clitest.Run(t, "run", "--spec", spec, "--cmd", "ok="+ok, "--cmd", "fail="+fail, "--cmd", "silent="+silent,
		"--parallel", "--wait", "-q")
	if err == nil || !strings.Contains(err.Error(), "1 of 4 runs did not end ok") {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	states, err := runner.RunStates(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sessions.RunState{}
	for _, r := range states {
		got[r.Run] = r
	}
	if got["ok"].Status != profile.StatusOK || got["silent"].Status != profile.StatusOK || got["probe"].Status != profile.StatusOK {
		t.Errorf("states %+v", states)
	}
	// failed, with the stderr tail (not stdout) as error
	if f := got["fail"]; f.Status != profile.StatusFailed || f.Error != "Traceback (most recent call last):\nValueError: bad lr" {
		t.Errorf("fail: %+v", f)
	}
	// the command's run_start and spans are kept; run_end appended
	evs := readJournal(t, s, "ok")
	if len(evs) != 3 || evs[0].Config == nil || !strings.Contains(string(evs[0].Config), `"client":"test"`) ||
		evs[1].T != profile.TypeSpan || evs[2].T != profile.TypeRunEnd || evs[2].Status != profile.StatusOK {
		t.Errorf("ok journal %+v", evs)
	}
	// no journal written: the runner's run_start and run_end make it readable
	evs = readJournal(t, s, "silent")
	var cfg struct {
		Cmd      []string `json:"cmd"`
		External bool     `json:"external"`
	}
	if len(evs) != 2 || evs[0].Run != "silent" || evs[0].Variant != "silent" || evs[0].Session != s.ID() || evs[0].Wall == "" ||
		evs[0].Host == nil || json.Unmarshal(evs[0].Config, &cfg) != nil || !cfg.External || !slices.Equal(cfg.Cmd, []string{"/bin/sh", filepath.Join(dir, "silent.sh")}) ||
		evs[1].T != profile.TypeRunEnd || evs[1].Status != profile.StatusOK {
		t.Errorf("silent journal %+v", evs)
	}
	if b, _ := os.ReadFile(filepath.Join(s.RunsDir(), "ok.log")); !strings.Contains(string(b), "to stdout") {
		t.Errorf("ok.log: %s", b)
	}
	// env and cwd reach the command; the client is extracted and first on PYTHONPATH
	client := filepath.Join(s.Dir(), "pyclient")
	if b, _ := os.ReadFile(filepath.Join(out, "pwd")); strings.TrimSpace(string(b)) != filepath.Join(dir, "work", "sub") {
		t.Errorf("cwd %q", b)
	}
	want := "bar baz|" + client + ":/user/lib|0|probe|" + s.JournalPath("probe") + "\n"
	if b, _ := os.ReadFile(filepath.Join(out, "env")); string(b) != want {
		t.Errorf("env\n got %q\nwant %q", b, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "client")); !strings.Contains(string(b), "sitecustomize.py") || !strings.Contains(string(b), "__init__.py") {
		t.Errorf("client folder listing %q", b)
	}
	// session.json keeps the absolute folder
	_, resolved, err := runner.LoadSession(s)
	if err != nil || len(resolved) != 4 || resolved[0].External.Cwd != filepath.Join(dir, "work", "sub") || !resolved[0].External.NoAuto {
		t.Errorf("session variants %+v, %v", resolved, err)
	}
}

// waitFile waits until a command has written path and returns its
// content.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	clitest.WaitFor(t, path, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && len(b) > 0 && b[len(b)-1] == '\n'
	})
	return strings.TrimSpace(string(b))
}

// startLoop launches, as run "external" of a new session in a fresh
// store, a command that writes a journal line and loops until killed. It
// returns the session and the command's pid; the test's cleanup stops it.
func startLoop(t *testing.T) (*sessions.Session, int) {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	pidFile := filepath.Join(dir, "pid")
	loop := script(t, dir, "loop", journalLines+"echo $$ > "+pidFile+"\nwhile :; do sleep 0.1; done\n")
	if _, stderr, err := clitest.Run(t, "run", "--cmd", loop); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	t.Cleanup(func() { clitest.StopAll(t, home, s) })
	pid, err := strconv.Atoi(waitFile(t, pidFile))
	if err != nil {
		t.Fatal(err)
	}
	return s, pid
}

func TestExternalKilled(t *testing.T) {
	s, pid := startLoop(t)
	if st, _ := s.RunState("external"); st.Status != profile.StatusRunning || st.Pid == pid {
		t.Errorf("running: %+v (the pid file names the supervisor, not the command %d)", st, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	clitest.WaitFor(t, "run_end", func() bool {
		evs, _, err := sessions.ReadJournal(s.JournalPath("external"))
		return err == nil && len(evs) > 0 && evs[len(evs)-1].T == profile.TypeRunEnd
	})
	st, _ := s.RunState("external")
	if st.Status != profile.StatusCrashed || !strings.HasPrefix(st.Error, "killed by signal 9") {
		t.Errorf("killed run %+v", st)
	}
	if evs := readJournal(t, s, "external"); len(evs) != 3 || evs[1].T != profile.TypeSpan {
		t.Errorf("killed run's journal %+v", evs)
	}
}

func TestExternalCancel(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	plain := script(t, dir, "plain", journalLines+"echo up > "+dir+"/plain\nwhile :; do sleep 0.1; done\n")
	trapper := script(t, dir, "trapper", "trap 'echo got INT >&2; exit 0' INT\necho up > "+dir+"/trapper\nwhile :; do sleep 0.1; done\n")
	if _, stderr, err := clitest.Run(t, "run", "--cmd", "plain="+plain, "--cmd", "trapper="+trapper, "--parallel"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	t.Cleanup(func() { clitest.StopAll(t, home, s) })
	waitFile(t, filepath.Join(dir, "plain"))
	waitFile(t, filepath.Join(dir, "trapper"))
	out, stderr, err := clitest.Run(t, "run", "--cancel", "last")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(out, "session "+s.ID()+" canceled") {
		t.Errorf("cancel output %q", out)
	}
	for _, run := range []string{"plain", "trapper"} {
		st, err := s.RunState(run)
		if err != nil || st.Status != profile.StatusCanceled {
			t.Errorf("%s: %+v, %v", run, st, err)
		}
		evs := readJournal(t, s, run)
		if end := evs[len(evs)-1]; end.T != profile.TypeRunEnd || end.Status != profile.StatusCanceled {
			t.Errorf("%s journal %+v", run, evs)
		}
	}
	// SIGINT came first: the trap saw it
	if b, _ := os.ReadFile(filepath.Join(s.RunsDir(), "trapper.log")); !strings.Contains(string(b), "got INT") {
		t.Errorf("trapper.log: %s", b)
	}
}

func TestExternalRepeats(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	ok := script(t, dir, "ok", journalLines+"echo \"$GNNSCOPE_RUN $GNNSCOPE_VARIANT\" >> "+dir+"/runs\n")
	out, stderr, err := clitest.Run(t, "run", "--cmd", "mine="+ok, "--repeats", "2", "--wait", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(tab.Runs) != 2 || tab.Runs[0].Run != "mine.r1" || tab.Runs[1].Run != "mine.r2" ||
		tab.Runs[0].Status != profile.StatusOK || tab.Runs[1].Status != profile.StatusOK || tab.Runs[1].Spans != 1 {
		t.Errorf("table %+v", tab.Runs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs")); string(b) != "mine.r1 mine\nmine.r2 mine\n" {
		t.Errorf("runs seen by the command %q", b)
	}
}

// trainer is a plain PyTorch training loop that knows nothing of gnnscope:
// 3 epochs of 4 batches.
const trainer = `import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X, y = torch.randn(64, 8), torch.randint(0, 2, (64,))
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
dev = torch.device("cpu")
for epoch in range(3):
    model.train()
    for xb, yb in loader:
        xb, yb = xb.to(dev), yb.to(dev)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
    print("epoch", epoch, float(loss))
`

// systemPython is Debian's interpreter, which has python3-torch.
const systemPython = "/usr/bin/python3"

// needTorchClient skips unless systemPython imports torch (Debian's
// python3-torch, which .ci/run installs).
func needTorchClient(t *testing.T) {
	t.Helper()
	if err := exec.Command(systemPython, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s cannot import torch (%v): install python3-torch", systemPython, err)
	}
}

func TestExternalTorchEndToEnd(t *testing.T) {
	needTorchClient(t)
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	path := filepath.Join(dir, "train.py")
	os.WriteFile(path, []byte(trainer), 0o644)
	_, stderr, err := clitest.Run(t, "run", "--cmd", "plain="+systemPython+" "+path, "--wait", "-q")
	s := clitest.OnlySession(t, home)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "plain.log"))
		t.Fatalf("%v\n%s\nlog:\n%s", err, stderr, log)
	}
	evs := readJournal(t, s, "plain")
	type key struct{ epoch, batch int }
	spans := map[key][]string{}
	losses := map[key]bool{}
	epochs := map[int]bool{}
	for _, e := range evs {
		switch {
		case e.T == profile.TypeSpan && e.Batch >= 0:
			spans[key{e.Epoch, e.Batch}] = append(spans[key{e.Epoch, e.Batch}], e.Name)
			if e.Name == profile.StageStep {
				epochs[e.Epoch] = true // an epoch is one with training steps
			}
		case e.T == profile.TypeMetric && e.Name == "loss" && e.Batch >= 0:
			losses[key{e.Epoch, e.Batch}] = true
		}
	}
	if !slices.Equal(slices.Sorted(maps.Keys(epochs)), []int{1, 2, 3}) {
		t.Errorf("epochs %v, want 1, 2, 3", epochs)
	}
	for ep := 1; ep <= 3; ep++ {
		for b := range 4 {
			k := key{ep, b}
			for _, stage := range []string{"sample", "transfer", "forward", "backward", "step"} {
				if !slices.Contains(spans[k], stage) {
					t.Errorf("epoch %d batch %d: no %s span (spans %v)", ep, b, stage, spans[k])
				}
			}
			if !losses[k] {
				t.Errorf("epoch %d batch %d: no loss metric", ep, b)
			}
		}
	}
	if end := evs[len(evs)-1]; end.T != profile.TypeRunEnd || end.Status != profile.StatusOK {
		t.Errorf("last event %+v", end)
	}
	if log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "plain.log")); !strings.Contains(string(log), "epoch 2") {
		t.Errorf("the trainer's output is not in its log: %s", log)
	}
}

// TestExternalSupervisorKilled: the pid file names the supervising worker;
// killing it takes the command along (Linux), and the run reads crashed.
func TestExternalSupervisorKilled(t *testing.T) {
	s, pid := startLoop(t)
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	st, err := s.RunState("external")
	if err != nil || st.Pid <= 0 {
		t.Fatalf("%+v, %v", st, err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	clitest.WaitFor(t, "the run to read as crashed", func() bool {
		st, _ := s.RunState("external")
		return st.Status == profile.StatusCrashed
	})
	if _, err := os.Stat("/proc/self"); err == nil { // Linux: the parent-death signal
		clitest.WaitFor(t, "the command to die with its supervisor", func() bool {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			return err != nil || strings.Contains(string(b), ") Z ")
		})
	}
}

// TestExternalBesideEngine: a command and an engine variant share a
// session and its comparison.
func TestExternalBesideEngine(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	ok := script(t, dir, "ok", journalLines)
	out, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "1", "--threads", "1", "--variants", "baseline",
		"--cmd", "mine="+ok, "--wait", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(tab.Runs) != 2 || tab.Baseline != "baseline" || tab.Runs[0].Run != "baseline" || tab.Runs[0].Epochs != 1 ||
		tab.Runs[1].Run != "mine" || tab.Runs[1].Status != profile.StatusOK || tab.Runs[1].Spans != 1 {
		t.Errorf("table %+v", tab)
	}
	s := clitest.OnlySession(t, home)
	if _, err := os.Stat(filepath.Join(s.Dir(), "pyclient", "sitecustomize.py")); err != nil {
		t.Error(err)
	}
}

// TestExternalRefused: a command that cannot start is refused before a
// session exists.
func TestExternalRefused(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	badCwd := filepath.Join(dir, "cwd.toml")
	os.WriteFile(badCwd, []byte("[variants.a]\ncmd = \"true\"\ncwd = \"no-such-folder\"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cmd", "no-such-program-of-gnnscope --x"}, `variant "external": command: exec: "no-such-program-of-gnnscope"`},
		{[]string{"--cmd", "./missing.sh"}, "not an executable file"},
		{[]string{"--spec", badCwd}, `variant "a": cwd`},
		{[]string{"--cmd", "true", "--cmd", "true"}, `variant "external" is listed twice`},
		{[]string{"--cmd", "a=true", "--cmd", "a.r1=true", "--repeats", "2"}, "clashes"},
		{[]string{"--cmd", "x=true", "--variants", "baseline", "--data", "no-such-dataset"}, "no-such-dataset"},
	} {
		_, _, err := clitest.Run(t, append([]string{"run"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %v: error %v, want %q", tc.args, err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "sessions")); len(ents) != 0 {
		t.Errorf("a refused run created sessions: %v", ents)
	}
}

// TestSpecRepeats: a spec's repeats = 2 runs every variant twice; an
// explicit --repeats takes precedence over it.
func TestSpecRepeats(t *testing.T) {
	dir := t.TempDir()
	ok := script(t, dir, "ok", journalLines)
	spec := filepath.Join(dir, "r.toml")
	if err := os.WriteFile(spec, []byte("repeats = 2\n[variants.mine]\ncmd = \""+ok+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"mine.r1", "mine.r2"}},
		{[]string{"--repeats", "1"}, []string{"mine"}},
	} {
		t.Setenv("GNNSCOPE_HOME", t.TempDir())
		out, stderr, err := clitest.Run(t, append([]string{"run", "--spec", spec, "--wait", "--json"}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, stderr)
		}
		var tab runner.Table
		if err := json.Unmarshal([]byte(out), &tab); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var got []string
		for _, r := range tab.Runs {
			got = append(got, r.Run)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: runs %v, want %v", c.args, got, c.want)
		}
	}
}
