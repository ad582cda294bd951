//go:build unix

package run_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
)

// workersTrainer loads its batches with two DataLoader workers.
const workersTrainer = `import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X, y = torch.randn(96, 8), torch.randint(0, 2, (96,))
loader = DataLoader(TensorDataset(X, y), batch_size=8, num_workers=2, persistent_workers=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        opt.step()
    print("epoch", epoch)
`

// TestExternalTorchProfileAndLoaderLanes runs a trainer with DataLoader
// workers through run --cmd --torch-profile: the session's journal, read
// back, holds the workers' lanes and the profiled window, and the trace
// lies beside it.
func TestExternalTorchProfileAndLoaderLanes(t *testing.T) {
	needTorchClient(t)
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	path := filepath.Join(dir, "train.py")
	os.WriteFile(path, []byte(workersTrainer), 0o644)
	_, stderr, err := clitest.Run(t, "run", "--cmd", "w="+systemPython+" "+path, "--torch-profile", "4", "--wait", "-q")
	s := clitest.OnlySession(t, home)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.RunsDir(), "w.log"))
		t.Fatalf("%v\n%s\nlog:\n%s", err, stderr, log)
	}
	if st, err := os.Stat(filepath.Join(s.RunsDir(), "w.torch.json")); err != nil || st.Size() == 0 {
		t.Fatalf("trace: %v", err)
	}
	evs := readJournal(t, s, "w")
	lanes := map[string]int{}
	steps, windows := 0, 0
	for _, e := range evs {
		if e.T != profile.TypeSpan {
			continue
		}
		switch e.Name {
		case "fetch", "collate":
			lanes[e.Lane]++
		case "profiler.step":
			steps++
		case "torch.profile":
			windows++
			if !strings.Contains(string(e.Attrs), `"trace":"w.torch.json"`) || !strings.Contains(string(e.Attrs), `"offset_ns":`) {
				t.Errorf("window attrs %s", e.Attrs)
			}
		}
	}
	// 2 epochs of 12 batches, each fetched and collated by one worker
	if lanes["loader/0"]+lanes["loader/1"] != 2*2*12 || lanes["loader/0"] != lanes["loader/1"] {
		t.Errorf("loader spans by lane %v", lanes)
	}
	if steps != 4 || windows != 1 {
		t.Errorf("profiler steps %d, windows %d; want 4, 1", steps, windows)
	}
	checkAttachedTrace(t, evs)
	checkAttachedMemory(t, evs, filepath.Join(s.RunsDir(), "w.torch.json"))
}

// checkAttachedTrace: the run's supervisor attached the client's trace to
// the journal, before its run_end, on the run's clock: the trace's
// ProfilerStep ranges start where the client's profiler.step spans do,
// within a millisecond (the median over the steps: the trainer may be
// preempted between the profiler's mark and the client's).
func checkAttachedTrace(t *testing.T, evs []profile.Event) {
	t.Helper()
	var client, trace []int64
	ops, endAt := 0, -1
	for i, e := range evs {
		switch {
		case e.T == profile.TypeRunEnd:
			endAt = i
		case e.T != profile.TypeSpan:
		case e.Name == "profiler.step":
			client = append(client, e.Start)
		case e.Name == "ProfilerStep":
			trace = append(trace, e.Start)
		case strings.HasPrefix(e.Lane, "cpu/"):
			ops++
			if endAt >= 0 {
				t.Errorf("trace event %d after run_end", i)
			}
		}
	}
	if ops == 0 || len(trace) == 0 {
		t.Fatalf("no trace attached: %d operator spans, %d ProfilerStep ranges", ops, len(trace))
	}
	slices.Sort(trace)
	n := min(len(client), len(trace))
	diffs := make([]int64, 0, n)
	for i := range n {
		d := trace[len(trace)-n+i] - client[len(client)-n+i]
		diffs = append(diffs, max(d, -d))
	}
	slices.Sort(diffs)
	if med := diffs[len(diffs)/2]; med > 1e6 {
		t.Errorf("ProfilerStep starts against the client's steps: median |difference| %d ns, over 1 ms (%v)", med, diffs)
	}
}

// checkAttachedMemory: the trace's memory records (which the client adds
// to a trace torch wrote without Kineto) became the run's memory series,
// of phase trace: a mem event for every profiled step, and none but of
// those steps or of the window outside them (batch -1: memory recorded
// before the first step begins). On the run's clock the records lie in
// the profiled window, give or take the client's marks around the
// profiler's (see checkAttachedTrace).
func checkAttachedMemory(t *testing.T, evs []profile.Event, trace string) {
	t.Helper()
	steps := map[int]bool{}
	var win *profile.Event
	for i, e := range evs {
		switch {
		case e.T == profile.TypeSpan && e.Name == "ProfilerStep":
			steps[e.Batch] = true
		case e.T == profile.TypeSpan && e.Name == "torch.profile":
			win = &evs[i]
		}
	}
	mem := map[int]bool{}
	for _, e := range evs {
		if e.T != profile.TypeMem || e.Phase != "trace" {
			continue
		}
		if mem[e.Batch] || (!steps[e.Batch] && e.Batch != -1) {
			t.Errorf("mem of batch %d: a second one, or of no step (steps %v)", e.Batch, steps)
		}
		mem[e.Batch] = true
		if e.Peak <= 0 || e.Peak < e.Live || e.Live < 0 {
			t.Errorf("mem of step %d: peak %d, live %d", e.Batch, e.Peak, e.Live)
		}
	}
	for n := range steps {
		if !mem[n] {
			t.Errorf("no mem event of step %d (mem of %v)", n, mem)
		}
	}
	if win == nil {
		t.Fatal("no torch.profile span")
	}
	var w struct {
		Offset int64 `json:"offset_ns"`
	}
	if err := json.Unmarshal(win.Attrs, &w); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var doc []struct {
		Name string  `json:"name"`
		Ts   float64 `json:"ts"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", trace, err)
	}
	const slack = 50e6
	n := 0
	for _, e := range doc {
		if e.Name != "[memory]" {
			continue
		}
		n++
		if at := int64(math.Round(e.Ts*1000)) - w.Offset; at < win.Start-slack || at > win.Start+win.Dur+slack {
			t.Errorf("memory record at %d ns, outside the window %d + %d ns", at, win.Start, win.Dur)
		}
	}
	if n == 0 {
		t.Errorf("%s: no [memory] events", trace)
	}
}
