package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// multiNode is the folder of the multi-node examples, from this package.
var multiNode = filepath.Join("..", "examples", "pytorch")

// TestMultiNodeExamples: the Slurm batch script and the two-node torchrun
// script parse (bash -n) and carry the lines a multi-node run needs: the
// collector's --listen, and the environment passed on to the other node.
func TestMultiNodeExamples(t *testing.T) {
	bash := needBash(t)
	for _, c := range []struct {
		file string
		want []string
	}{
		{"slurm_sage.sbatch", []string{"#SBATCH --nodes=2", "gnnscope run --listen ", "--wait", "srun --export=ALL torchrun", "examples/pytorch/sage_train.py"}},
		{"torchrun_two_nodes.sh", []string{"gnnscope run --listen ", "--wait", "GNNSCOPE_COLLECTOR=\"$GNNSCOPE_COLLECTOR\"",
			"GNNSCOPE_COLLECTOR_TOKEN=\"$GNNSCOPE_COLLECTOR_TOKEN\"", "PYTHONPATH=\"$PYTHONPATH\"", "examples/pytorch/sage_train.py"}},
	} {
		path := filepath.Join(multiNode, c.file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", c.file, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q", c.file, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(multiNode, "sage_train.py")); err != nil {
		t.Error(err)
	}
}

// TestTwoNodeTorchrunEnvironment runs the two-node torchrun script with
// ssh and torchrun standing in (ssh runs its command here in an empty
// environment, as a login on another machine would start, torchrun
// prints its arguments and the variables it got): node 1's torchrun gets
// the collector's variables as the script was given them, quoted
// through ssh's command line, and both nodes the same rendezvous.
func TestTwoNodeTorchrunEnvironment(t *testing.T) {
	bash := needBash(t)
	bin := t.TempDir()
	shims := map[string]string{
		"ssh":      "#!/bin/sh\nshift\nexec env -i PATH=\"$PATH\" " + bash + " -c \"$1\"\n",
		"torchrun": "#!/bin/sh\necho \"torchrun $*\"\nenv | grep -E '^(GNNSCOPE_|PYTHONPATH=)' | sort\n",
	}
	for name, body := range shims {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, filepath.Join(multiNode, "torchrun_two_nodes.sh"), "head", "other")
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GNNSCOPE_COLLECTOR=head:7000", "GNNSCOPE_COLLECTOR_TOKEN=0123abcd", "GNNSCOPE_SESSION=s 1",
		"GNNSCOPE_RUN=sage", "PYTHONPATH=/home/u/my gnnscope/pyclient"}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// node 0's torchrun inherits the variables; node 1's gets them on ssh's command line
	for _, node := range []string{"0", "1"} {
		if !strings.Contains(string(out), "--master_addr head --master_port 29500 --node_rank "+node+" ") {
			t.Errorf("no torchrun of node %s:\n%s", node, out)
		}
	}
	for _, kv := range env[1:] {
		if n := strings.Count(string(out), "\n"+kv+"\n"); n != 2 {
			t.Errorf("%s reached %d torchrun(s), want 2:\n%s", kv, n, out)
		}
	}
}

// TestSlurmScriptCommand runs the Slurm batch script with scontrol and
// gnnscope standing in (gnnscope prints its arguments, one a line): the
// run listens, waits, and its command starts torchrun on every node
// through srun --export=ALL, with the job's nodes and the first node as
// the rendezvous.
func TestSlurmScriptCommand(t *testing.T) {
	bash := needBash(t)
	bin := t.TempDir()
	shims := map[string]string{
		"scontrol": "#!/bin/sh\nprintf 'gpu7\\ngpu9\\n'\n",
		"gnnscope": "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n",
	}
	for name, body := range shims {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, filepath.Join(multiNode, "slurm_sage.sbatch"))
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"SLURM_JOB_NODELIST=gpu[7,9]", "SLURM_NNODES=2", "SLURM_JOB_ID=4711"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{"run", "--listen", "0.0.0.0:7000", "--wait", "--cmd",
		"sage=srun --export=ALL torchrun --nnodes 2 --nproc_per_node 2 --rdzv_backend c10d " +
			"--rdzv_endpoint gpu7:29500 --rdzv_id 4711 examples/pytorch/sage_train.py --epochs 3"}
	if len(args) == len(want) {
		args[len(args)-1] = strings.Join(strings.Fields(args[len(args)-1]), " ")
	}
	if strings.Join(args, "\n") != strings.Join(want, "\n") {
		t.Errorf("gnnscope got\n%q\nwant\n%q", args, want)
	}
}

// needBash returns bash's path, skipping the test without one.
func needBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	return bash
}
