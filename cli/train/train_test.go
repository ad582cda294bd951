package train_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// tinyBudget is above the parameters, gradients and Adam moments of a
// 16-wide GraphSAGE on synth-tiny (about 40 KiB) and far below any batch.
const tinyBudget = "200KiB"

// TestTrainOOMAbortJSON: a budget the model fits but no batch does ends
// `train --on-oom abort --json` with an error, and stdout says status oom.
func TestTrainOOMAbortJSON(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out, _, err := clitest.Run(t, "train", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "1",
		"--threads", "1", "--mem-budget", tinyBudget, "--on-oom", "abort", "--json", "-q")
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("error %v, want an out-of-memory error", err)
	}
	var res struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Config struct {
			MemBudget int64 `json:"mem_budget"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Status != profile.StatusOOM || !strings.Contains(res.Error, "budget") || res.Config.MemBudget != 200<<10 {
		t.Fatalf("result %+v", res)
	}
	// Without a budget the same run is ok.
	out, _, err = clitest.Run(t, "train", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "1",
		"--threads", "1", "--json", "-q")
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Status != profile.StatusOK {
		t.Fatalf("unbudgeted run: %v, %+v", err, res)
	}
}

// TestRunSpecMemBudgetOOM: a spec's mem_budget reaches the worker, whose
// journal ends with run_end status oom.
func TestRunSpecMemBudgetOOM(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	spec := filepath.Join(t.TempDir(), "oom.toml")
	if err := os.WriteFile(spec, []byte(`
name = "oom"
data = "synth-tiny"
[train]
model = "sage"
hidden = 16
epochs = 1
threads = 1
mem_budget = "`+tinyBudget+`"
on_oom = "abort"
[variants.tight]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, _ := clitest.Run(t, "run", "--spec", spec, "--wait", "--json", "-q")
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s\nstderr: %s", err, out, stderr)
	}
	if len(tab.Runs) != 1 || tab.Runs[0].Status != profile.StatusOOM {
		t.Fatalf("table %+v", tab)
	}
	s := clitest.OnlySession(t, home)
	evs, _, err := sessions.ReadJournal(s.JournalPath("tight"))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.T != profile.TypeRunEnd || last.Status != profile.StatusOOM || !strings.Contains(last.Error, "out of memory") {
		t.Fatalf("last event %+v", last)
	}
	if n := clitest.EventTypes(t, s.JournalPath("tight"))[profile.TypeOOM]; n != 1 {
		t.Fatalf("%d oom events, want 1 (action abort)", n)
	}
}

// TestTrainRefusesInapplicableFlags: a flag set for a sampler or model the
// run does not use is an error naming it, before any data is read; the
// same flag where it applies is accepted.
func TestTrainRefusesInapplicableFlags(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--model", "gcn", "--parts", "8"}, []string{"--parts applies to --sampler gas only", "--sampler full"}},
		{[]string{"--model", "sage", "--sampler", "gas", "--parts", "8", "--fanout", "5,5"}, []string{"--fanout applies to --sampler neighbor only"}},
		{[]string{"--model", "gcn", "--heads", "2", "--theta", "0.5"}, []string{"--heads applies to --model gat only", "--theta applies to --model gcnii only"}},
		{[]string{"--model", "sage", "--prefetch", "2"}, []string{"--prefetch applies to --sampler-workers"}},
	} {
		args := append([]string{"train", "--data", "/nonexistent/data.npz", "-q"}, c.args...)
		_, _, err := clitest.Run(t, args...)
		if err == nil {
			t.Fatalf("%v: no error", c.args)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", c.args, err, w)
			}
		}
	}
	// Where they apply, the flags pass this check (and the run then fails
	// on the missing data, not on the flags).
	_, _, err := clitest.Run(t, "train", "--data", "/nonexistent/data.npz", "-q", "--model", "gcn", "--sampler", "gas", "--parts", "8", "--part-balance", "edges")
	if err == nil || strings.Contains(err.Error(), "applies to") {
		t.Fatalf("gas flags on a gas run: %v", err)
	}
	_, _, err = clitest.Run(t, "run", "--data", "synth-tiny", "--model", "gcn", "--fanout", "5,5", "-q")
	if err == nil || !strings.Contains(err.Error(), "--fanout applies to --sampler neighbor only") {
		t.Fatalf("run with --fanout on full-batch gcn: %v", err)
	}
}
