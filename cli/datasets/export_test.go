package datasets_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
	"github.com/gnnscope/gnnscope/runner"
)

// TestDatasetsExport writes synth-tiny and reads it back: the arrays are
// the dataset's and the split is the one `train --seed 2` uses.
func TestDatasetsExport(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	out := filepath.Join(t.TempDir(), "tiny.npz")
	if _, _, err := clitest.Run(t, "datasets", "export", "synth-tiny", "--seed", "2", "-o", out, "-q"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := clitest.Run(t, "datasets", "export", "synth-tiny", "-o", out, "-q"); err == nil || !strings.Contains(err.Error(), "exists: --force overwrites it") {
		t.Errorf("onto an existing file: %v", err)
	}
	arrs, err := npz.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	exp := runner.NewExperiment("synth-tiny", "sage")
	exp.Train.Seed = 2
	ds, split, err := runner.LoadData(exp, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := arrs["x"]; !slices.Equal(a.Shape, []int{ds.NumNodes(), ds.NumFeatures}) || !slices.Equal(a.Data.([]float32), ds.X) {
		t.Fatalf("x %v", a.Shape)
	}
	if !slices.Equal(arrs["indptr"].Data.([]int64), ds.Graph.Indptr) || !slices.Equal(arrs["indices"].Data.([]int32), ds.Graph.Indices) {
		t.Fatal("graph differs")
	}
	for name, want := range map[string][]int32{"train_idx": split.Train, "valid_idx": split.Valid, "test_idx": split.Test} {
		got := arrs[name].Data.([]int64)
		if len(got) != len(want) {
			t.Fatalf("%s: %d ids, want %d", name, len(got), len(want))
		}
		for i := range got {
			if got[i] != int64(want[i]) {
				t.Fatalf("%s differs at %d", name, i)
			}
		}
	}
	if arrs["num_classes"].Data.([]int64)[0] != int64(ds.NumClasses) || arrs["name"].Data.([]string)[0] != ds.Name {
		t.Fatal("scalars")
	}
	if _, _, err := clitest.Run(t, "datasets", "export", "synth-tiny", "-o", "x.txt"); err == nil {
		t.Fatal("a file not ending in .npz must be refused")
	}
}
