package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
	"github.com/gnnscope/gnnscope/runner"
)

// exportArrays returns the arrays of an exported dataset: the graph as CSR
// (indptr int64, indices int32: symmetric, no self-loops), the features x
// (float32, N×F), the labels y (int64, -1 unknown), the split the training
// run uses (train_idx, valid_idx, test_idx, int64), num_classes, the name,
// and feature_norm: "row" when gnnscope's default feature mode (auto)
// scales each feature row to sum 1 (every feature non-negative), else
// "none", so that another trainer can prepare the same inputs.
func exportArrays(ds *data.Dataset, split *data.Split) map[string]*npz.Array {
	g := ds.Graph
	n := g.N
	y := make([]int64, n)
	for i, v := range ds.Y {
		y[i] = int64(v)
	}
	idx := func(s []int32) *npz.Array {
		v := make([]int64, len(s))
		for i, x := range s {
			v[i] = int64(x)
		}
		return &npz.Array{Shape: []int{len(v)}, Data: v}
	}
	norm := "row"
	for _, v := range ds.X {
		if v < 0 {
			norm = "none"
			break
		}
	}
	return map[string]*npz.Array{
		"indptr":       {Shape: []int{n + 1}, Data: g.Indptr},
		"indices":      {Shape: []int{len(g.Indices)}, Data: g.Indices},
		"x":            {Shape: []int{n, ds.NumFeatures}, Data: ds.X},
		"y":            {Shape: []int{n}, Data: y},
		"train_idx":    idx(split.Train),
		"valid_idx":    idx(split.Valid),
		"test_idx":     idx(split.Test),
		"num_classes":  {Shape: []int{}, Data: []int64{int64(ds.NumClasses)}},
		"name":         {Shape: []int{}, Data: []string{ds.Name}},
		"feature_norm": {Shape: []int{}, Data: []string{norm}},
	}
}

func newDatasetsExportCmd() *cobra.Command {
	var (
		out, format, splitMode string
		seed, splitSeed        uint64
		compress, noCache      bool
		quiet                  bool
	)
	cmd := &cobra.Command{
		Use:   "export REF -o FILE.npz",
		Short: "Write a dataset and the split training uses to a NumPy .npz file (for PyG and others)",
		Long: `Load a dataset as 'gnnscope train --data REF' does, make the split the run
would use (--seed and --split as train's), and write both to a NumPy .npz
archive that other trainers read with numpy.load:

  indptr, indices        the graph in CSR (int64 row pointers, int32 columns;
                         symmetric, no self-loops)
  x                      node features, float32, nodes × features
  y                      labels, int64 (-1 = unknown)
  train_idx, valid_idx,  the split, int64 node ids
  test_idx
  num_classes, name      scalars
  feature_norm           "row" when gnnscope's default feature mode scales
                         each feature row to sum 1, else "none"

scripts/pyg-compare.py trains PyG's GraphSAGE on such a file.`,
		Example: `  gnnscope datasets export synth-products -o products.npz
  gnnscope datasets export cora.npz --seed 3 -o cora-seed3.npz`,
		Args: datasetsArgs(1, "REF (a preset, .npz file, OGB or Planetoid folder, or .gsd file)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "npz" {
				return fmt.Errorf("--format %q: only npz is supported", format)
			}
			if out == "" {
				return fmt.Errorf("give the output file with -o FILE.npz")
			}
			if !strings.HasSuffix(out, ".npz") {
				return fmt.Errorf("-o %s: the file name must end in .npz (numpy.load needs it)", out)
			}
			fl := cmd.Flags()
			exp := runner.NewExperiment(args[0], "sage")
			exp.NoCache = noCache
			exp.Train.Seed = seed
			if fl.Changed("split") {
				exp.Split.Mode = splitMode
			}
			if fl.Changed("split-seed") {
				s := splitSeed
				exp.Split.Seed = &s
			}
			if err := exp.Split.Validate(); err != nil {
				return err
			}
			prog := newDatasetProgress(cmd.ErrOrStderr(), quiet)
			ds, split, err := runner.LoadData(exp, load.Options{Progress: prog.stage, Warn: prog.warn})
			prog.done()
			if err != nil {
				return err
			}
			defer data.Release(ds)
			write := npz.Write
			if compress {
				write = npz.WriteCompressed
			}
			if err := write(out, exportArrays(ds, split)); err != nil {
				return fmt.Errorf("export %s: %w", out, err)
			}
			if !quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s, %d nodes, %d edges, %d features, %d classes; split %d/%d/%d\n",
					out, ds.Name, ds.NumNodes(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses,
					len(split.Train), len(split.Valid), len(split.Test))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&out, "output", "o", "", "output file (.npz)")
	fl.StringVar(&format, "format", "npz", "output format (npz)")
	fl.Uint64Var(&seed, "seed", 0, "the training seed whose split to write (as train --seed)")
	fl.StringVar(&splitMode, "split", runner.DefaultSplit().Mode, "auto (the dataset's own split, else per-class), per-class, or frac (as train --split)")
	fl.Uint64Var(&splitSeed, "split-seed", 0, "seed of a drawn split (default: --seed)")
	fl.BoolVar(&compress, "compress", false, "deflate the arrays (smaller, slower to load)")
	fl.BoolVar(&noCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}
