package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/sessions"
)

// TestCUDAWithoutTag checks that a run on a GPU in a binary built without
// the cuda tag is refused with the build instructions: by Execute, and by
// Launch before any process starts.
func TestCUDAWithoutTag(t *testing.T) {
	if backend.CUDABuilt {
		t.Skip("built with the cuda tag")
	}
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs = 1
	exp.Train.Device = "cuda:0"
	if _, err := Execute(context.Background(), exp, exp.Train, ExecOptions{}); !errors.Is(err, backend.ErrNoCUDA) {
		t.Fatalf("Execute on cuda: %v", err)
	}
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exp.Train.Device = ""
	_, err = Launch(store, exp, []Variant{{Name: "cpu"}, {Name: "gpu", Overrides: map[string]any{"device": "cuda", "async_transfer": true}}}, LaunchOptions{})
	if !errors.Is(err, backend.ErrNoCUDA) || !strings.Contains(err.Error(), `variant "gpu"`) {
		t.Fatalf("Launch with a cuda variant: %v", err)
	}
	ids, err := store.List()
	if err == nil && len(ids) != 0 {
		t.Fatalf("a session was created: %v", ids)
	}
	// A bad device name is a config error.
	exp.Train.Device = "tpu"
	if err := exp.Validate(); err == nil || !strings.Contains(err.Error(), `device "tpu"`) {
		t.Fatalf("validate device tpu: %v", err)
	}
}
