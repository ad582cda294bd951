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
		Status profile.Status `json:"status"`
		Error  string         `json:"error"`
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

// TestTrainCacheJSON: --cache-bytes puts the cache in the plan, its
// outcome per epoch and in all in the JSON result (and per epoch in the
// history), and a line in the text output.
func TestTrainCacheJSON(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	args := []string{"train", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--epochs", "2",
		"--threads", "1", "--cache-bytes", "20%", "--cache-policy", "frequency", "-q"}
	out, _, err := clitest.Run(t, append(args, "--json", "--history")...)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Plan  []string `json:"plan"`
		Cache struct {
			Policy   string  `json:"policy"`
			Rows     int     `json:"rows"`
			Hits     int64   `json:"hits"`
			Misses   int64   `json:"misses"`
			BytesH2D int64   `json:"bytes_h2d"`
			HitRate  float64 `json:"hit_rate"`
			Epochs   []struct {
				Epoch    int   `json:"epoch"`
				BytesH2D int64 `json:"bytes_h2d"`
			} `json:"epochs"`
		} `json:"cache"`
		History []struct {
			Cache *struct {
				BytesH2D int64 `json:"bytes_h2d"`
			} `json:"cache"`
		} `json:"history"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c := res.Cache
	if len(res.Plan) == 0 || !strings.HasPrefix(res.Plan[0], "feature cache: frequency policy, 2000 rows") {
		t.Errorf("plan %q", res.Plan)
	}
	if c.Policy != "frequency" || c.Rows != 2000 || c.Hits == 0 || c.Misses == 0 || c.BytesH2D != 4*32*c.Misses ||
		c.HitRate != float64(c.Hits)/float64(c.Hits+c.Misses) || len(c.Epochs) != 2 || c.Epochs[1].Epoch != 2 {
		t.Errorf("cache %+v", c)
	}
	if len(res.History) != 2 || res.History[0].Cache == nil || res.History[0].Cache.BytesH2D != c.Epochs[0].BytesH2D {
		t.Errorf("history %+v", res.History)
	}
	text, _, err := clitest.Run(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "feature cache: frequency policy, 2000 rows (20.0%") {
		t.Errorf("text output without the cache line:\n%s", text)
	}
}
