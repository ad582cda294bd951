package train_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// hugeSAGE is what a 2-layer GraphSAGE of hidden 1e8 on synth-tiny (32
// features, 8 classes) needs for its parameters and Adam state:
// (2·32·1e8 + 1e8 + 2·1e8·8 + 8) values of 16 bytes.
const (
	hugeSAGEBytes = (2*32*100000000 + 100000000 + 2*100000000*8 + 8) * 16
	hugeSAGE      = "model: sage with hidden 100000000 needs about 120.7 GiB for its parameters and Adam state (2 layers, 32 inputs), more than the "
)

// TestTrainHugeHiddenFails: `train --hidden 100000000` without a budget
// fails fast with the estimate instead of dying out of memory.
func TestTrainHugeHiddenFails(t *testing.T) {
	if avail := data.AvailableMemory(); avail == 0 || avail >= hugeSAGEBytes {
		t.Skipf("the host's available memory (%d bytes) does not bound the model", avail)
	}
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out, _, err := clitest.Run(t, "train", "--data", "synth-tiny", "--model", "sage", "--hidden", "100000000", "--epochs", "1",
		"--threads", "1", "--json", "-q")
	if err == nil || !strings.Contains(err.Error(), hugeSAGE) || !strings.HasSuffix(err.Error(), " of memory available") {
		t.Fatalf("error %v, want the model's estimate", err)
	}
	var res struct {
		Status profile.Status `json:"status"`
		Error  string         `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Status != profile.StatusFailed || !strings.Contains(res.Error, hugeSAGE) {
		t.Fatalf("result %+v", res)
	}
}

// TestRunSpecHugeHiddenRefused: a spec whose model cannot fit the budget
// whatever the dataset is refused at launch, naming the spec and giving
// the estimate, before any session exists.
func TestRunSpecHugeHiddenRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	spec := writeHugeSpec(t, 100000000)
	_, _, err := clitest.Run(t, "run", "--spec", spec, "--wait", "--json", "-q")
	want := spec + `: variant "wide": model: sage with hidden 100000000 needs about`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "more than the memory budget of 1.0 GiB") {
		t.Fatalf("error %v, want %q", err, want)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "sessions")); len(entries) != 0 {
		t.Errorf("a session was made: %v", entries)
	}
}

// TestRunSpecHugeHiddenFails: a model that fits the budget for the least
// dataset but not for the real one passes the launch; through the worker,
// the run ends failed with the estimate in its journal's run_end, not
// crashed without a message.
func TestRunSpecHugeHiddenFails(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	spec := writeHugeSpec(t, 2000000)
	out, stderr, _ := clitest.Run(t, "run", "--spec", spec, "--wait", "--json", "-q")
	var tab runner.Table
	if err := json.Unmarshal([]byte(out), &tab); err != nil {
		t.Fatalf("%v: %s\nstderr: %s", err, out, stderr)
	}
	if len(tab.Runs) != 1 || tab.Runs[0].Status != profile.StatusFailed {
		t.Fatalf("table %+v", tab)
	}
	evs, _, err := sessions.ReadJournal(clitest.OnlySession(t, home).JournalPath("wide"))
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	want := "model: sage with hidden 2000000 needs about 2.4 GiB for its parameters and Adam state (2 layers, 32 inputs), more than the memory budget of 1.0 GiB"
	if last.T != profile.TypeRunEnd || last.Status != profile.StatusFailed || last.Error != want {
		t.Fatalf("last event %+v", last)
	}
}

// writeHugeSpec writes a spec of one variant, "wide": GraphSAGE of the
// given hidden width on synth-tiny under a budget of 1 GiB.
func writeHugeSpec(t *testing.T, hidden int) string {
	t.Helper()
	spec := filepath.Join(t.TempDir(), "huge.toml")
	text := fmt.Sprintf(`
name = "huge"
data = "synth-tiny"
[train]
model = "sage"
hidden = %d
epochs = 1
threads = 1
mem_budget = "1GiB"
[variants.wide]
`, hidden)
	if err := os.WriteFile(spec, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return spec
}
