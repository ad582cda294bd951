//go:build unix

package explain_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
)

// verdictOf launches one run with args (through the runner and its
// worker, as `gnnscope run` does), explains it and returns its verdict.
func verdictOf(t *testing.T, args ...string) (kind, first, text string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	args = append([]string{"run"}, append(args, "--wait", "-q")...)
	if _, stderr, err := clitest.Run(t, args...); err != nil {
		s := clitest.OnlySession(t, home)
		logs, _ := filepath.Glob(filepath.Join(s.RunsDir(), "*.log"))
		var log []byte
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			log = append(log, b...)
		}
		t.Fatalf("run: %v\n%s\nlog:\n%s", err, stderr, log)
	}
	s := clitest.OnlySession(t, home)
	out, stderr, err := clitest.Run(t, "explain", s.ID(), "--format", "json")
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, stderr)
	}
	var d struct {
		Report struct {
			Runs []struct {
				Verdict struct{ Kind, First, Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Report.Runs) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	v := d.Report.Runs[0].Verdict
	return v.Kind, v.First, v.Text
}

// wantBound checks that a run was bound by the planted stage.
func wantBound(t *testing.T, want string, args ...string) {
	t.Helper()
	kind, first, text := verdictOf(t, args...)
	if kind != "bound" || first != want {
		t.Errorf("verdict %s/%s (%s), want bound by %s", kind, first, text, want)
	}
}

// TestVerdictComputeBound plants deep compute: GCNII with 16 layers,
// full-batch, evaluated once.
func TestVerdictComputeBound(t *testing.T) {
	wantBound(t, "train", "--data", "synth-tiny", "--model", "gcnii", "--layers", "16", "--hidden", "16",
		"--epochs", "2", "--eval-every", "2", "--threads", "1", "--variants", "baseline")
}

// TestVerdictEvalBound plants evaluation: every epoch evaluates the whole
// graph layer by layer while training sees 1 % of its nodes. (A
// full-batch run trains forward and backward over the whole graph, so
// its evaluation, one forward pass, stays well below its training.)
func TestVerdictEvalBound(t *testing.T) {
	wantBound(t, "eval", "--data", "synth-tiny", "--model", "sage", "--hidden", "16", "--fanout", "5,5",
		"--batch-size", "128", "--split", "frac", "--train-frac", "0.01", "--epochs", "3", "--eval-every", "1",
		"--threads", "1", "--variants", "baseline")
}

// systemPython is Debian's interpreter, which has python3-torch.
const systemPython = "/usr/bin/python3"

// TestVerdictLoaderBound plants a slow loader in a plain PyTorch trainer
// (its collate sleeps 50 ms a batch) profiled through `run --cmd`.
func TestVerdictLoaderBound(t *testing.T) {
	if err := exec.Command(systemPython, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s cannot import torch (%v): install python3-torch", systemPython, err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "slow_collate.py"))
	if err != nil {
		t.Fatal(err)
	}
	wantBound(t, "sample", "--cmd", "slow="+systemPython+" "+script)
}

// TestVerdictSamplingBound plants serial sampling of large fanouts
// beside training on a GPU (the baseline samples on the training
// goroutine). It needs a binary built with the cuda tag and a GPU.
//
// No CPU configuration plants it: on the CPU backend the engine's
// training costs more than the sampling per sampled edge, because its
// first layer aggregates the input features (32 wide on synth-tiny, 64
// on synth-small; a preset's width cannot be set) over the same edges
// the sampler walked, forward and backward, whatever the hidden width.
// Serial baselines, --threads 2, --eval-every at the last epoch, stage
// busy seconds of `gnnscope train --json` (exposed = busy here):
//
//	synth-tiny  gcn  h4 25,25 b256: sample 0.10  train 0.30
//	synth-tiny  gcn  h4 50,50 b256: sample 0.27  train 0.56
//	synth-tiny  sage h4 25,25 b256: sample 0.04  train 0.11
//	synth-tiny  sage h8 50,50 b256: sample 0.10  train 0.24
//	synth-tiny  sage h4 10,10 b1024: sample 0.05 train 0.11
//	synth-small gcn  h4 15,15 b1024 (10 % train): sample 1.01  train 5.97
//	synth-small sage h4 15,15 b1024 (10 % train): sample 1.04  train 3.37
//
// Sampling never exceeds 45 % of sample + train, so every such run is
// compute-bound (or mixed), as its verdict says. (Fanouts above the
// presets' mean degree, 20, take whole neighborhoods and sample even
// less per edge.)
func TestVerdictSamplingBound(t *testing.T) {
	if !backend.CUDABuilt {
		t.Skip("needs the cuda build and a GPU: on the CPU the planted run is compute-bound")
	}
	if testing.Short() {
		t.Skip("generates synth-small")
	}
	_, closeDev, err := backend.Open("cuda", backend.Options{})
	if err != nil {
		t.Skipf("no GPU here: %v", err)
	}
	closeDev()
	wantBound(t, "sample", "--data", "synth-small", "--model", "sage", "--hidden", "64", "--fanout", "25,25",
		"--batch-size", "1024", "--split", "frac", "--train-frac", "0.1", "--epochs", "2", "--eval-every", "2",
		"--device", "cuda", "--variants", "baseline")
}
