package run_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
)

// ddpLauncher starts two ranks of the DDP loop named by its argument with
// the variables torchrun sets (Debian's torchrun 1.13 fails under Python
// 3.11, so the test does what it does): gloo on the CPU, over loopback.
const ddpLauncher = `import os, socket, subprocess, sys
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = str(s.getsockname()[1])
procs = []
for rank in range(2):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
               RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
    procs.append(subprocess.Popen([sys.executable, sys.argv[1]], env=env))
sys.exit(max(p.wait() for p in procs))
`

// A two-rank DDP job launched as one external run is one run of the
// session, its ranks merged with a lane per rank, its epoch time that of
// the slowest rank and its straggler ratio reported.
func TestExternalDDPEndToEnd(t *testing.T) {
	needTorchClient(t)
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	os.WriteFile(filepath.Join(dir, "launch.py"), []byte(ddpLauncher), 0o644)
	// An ordinary DDP loop that knows nothing of gnnscope (the client's
	// own DDP test runs it too).
	loop := filepath.Join(clitest.ModuleRoot(t), "clients", "python", "tests", "loops", "ddp.py")
	cmd := "ddp=" + systemPython + " " + filepath.Join(dir, "launch.py") + " " + loop
	_, stderr, err := clitest.Run(t, "run", "--cmd", cmd, "--wait", "-q")
	s := clitest.OnlySession(t, home)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "ddp.log"))
		t.Fatalf("%v\n%s\nlog:\n%s", err, stderr, log)
	}
	states, err := runner.RunStates(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].Run != "ddp" || states[0].Status != profile.StatusOK {
		t.Fatalf("runs %+v, want the one run ddp, ok", states)
	}
	evs, _, err := s.ReadRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]int{} // lane -> step spans
	for _, e := range evs {
		if e.T == profile.TypeSpan && e.Name == profile.StageStep {
			steps[e.Lane]++
		}
	}
	// 256 rows over 2 ranks in batches of 32: 4 steps per epoch and rank.
	want := map[string]int{"rank0/compute": 8, "rank1/compute": 8}
	if len(steps) != 2 || steps["rank0/compute"] != 8 || steps["rank1/compute"] != 8 {
		t.Errorf("step spans by lane %v, want %v", steps, want)
	}
	sum, err := s.SummarizeRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	ranks := make([]int, len(sum.Summary.Ranks))
	for i, r := range sum.Summary.Ranks {
		ranks[i] = r.Rank
	}
	if !slices.Equal(ranks, []int{0, 1}) || sum.Summary.Straggler < 1 {
		t.Errorf("ranks %v, straggler %v: want ranks 0 and 1 and a ratio of at least 1", ranks, sum.Summary.Straggler)
	}
	out, _, err := clitest.Run(t, "compare", "last", "--format", "md")
	if err != nil || !strings.Contains(strings.ToLower(out), "straggler") {
		t.Errorf("compare: %v\n%s", err, out)
	}
	trace := filepath.Join(dir, "trace.json")
	if _, _, err := clitest.Run(t, "export", "trace", "last", "-o", trace); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(trace)
	// Both ranks name their node (the client writes node and node_rank),
	// so the trace has one process for the node, a thread per rank lane.
	for _, name := range []string{"ddp node 0", `"rank0/`, `"rank1/`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("trace has no process or thread %q", name)
		}
	}
}
