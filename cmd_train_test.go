package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// tinyBudget is above the parameters, gradients and Adam moments of a
// 16-wide GraphSAGE on synth-tiny (about 40 KiB) and far below any batch.
const tinyBudget = "200KiB"

// TestTrainOOMAbortJSON: a budget the model fits but no batch does ends
// `train --on-oom abort --json` with an error, and stdout says status oom.
func TestTrainOOMAbortJSON(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out, _, err := runCLI(t, "train", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "1",
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
	out, _, err = runCLI(t, "train", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "1",
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
	out, stderr, _ := runCLI(t, "run", "--spec", spec, "--wait", "--json", "-q")
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s\nstderr: %s", err, out, stderr)
	}
	if len(tab.Runs) != 1 || tab.Runs[0].Status != profile.StatusOOM {
		t.Fatalf("table %+v", tab)
	}
	s := onlySession(t, home)
	evs, _, err := sessions.ReadJournal(s.JournalPath("tight"))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.T != profile.TypeRunEnd || last.Status != profile.StatusOOM || !strings.Contains(last.Error, "out of memory") {
		t.Fatalf("last event %+v", last)
	}
	if n := eventTypes(t, s.JournalPath("tight"))[profile.TypeOOM]; n != 1 {
		t.Fatalf("%d oom events, want 1 (action abort)", n)
	}
}
