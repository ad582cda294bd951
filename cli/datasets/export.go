package datasets

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
	"github.com/gnnscope/gnnscope/gnn/train"
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
	norm := train.FeaturesRow // as train's FeaturesAuto resolves
	for _, v := range ds.X {
		if v < 0 {
			norm = train.FeaturesNone
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
		"feature_norm": {Shape: []int{}, Data: []string{string(norm)}},
	}
}

// ExportOptions are the inputs of `gnnscope datasets export`.
type ExportOptions struct {
	IO *iostreams.IOStreams

	Ref       string
	Output    string
	Force     bool
	Format    string
	Seed      uint64
	Split     string
	SplitSet  bool    // --split given on the command line
	SplitSeed *uint64 // nil: the split follows --seed
	Compress  bool
	NoCache   bool
	Quiet     bool
}

// NewCmdExport returns `gnnscope datasets export`. With runF, the command
// calls it with the parsed options instead of exporting.
func NewCmdExport(f *cmdutil.Factory, runF func(*ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{IO: f.IOStreams}
	var splitSeed uint64
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
		Args: cmdutil.ExactArgs(1, refArg),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			opts.SplitSet = cmd.Flags().Changed("split")
			if cmd.Flags().Changed("split-seed") {
				opts.SplitSeed = &splitSeed
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "output file (.npz; missing folders are created)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite the output file if it exists")
	fl.StringVar(&opts.Format, "format", "npz", "output format (npz)")
	fl.Uint64Var(&opts.Seed, "seed", 0, "the training seed whose split to write (as train --seed)")
	fl.StringVar(&opts.Split, "split", runner.DefaultSplit().Mode, "auto (the dataset's own split, else per-class), per-class, or frac (as train --split)")
	fl.Uint64Var(&splitSeed, "split-seed", 0, "seed of a drawn split (default: --seed)")
	fl.BoolVar(&opts.Compress, "compress", false, "deflate the arrays (smaller, slower to load)")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func exportRun(opts *ExportOptions) error {
	if opts.Format != "npz" {
		return fmt.Errorf("--format %q: only npz is supported", opts.Format)
	}
	if opts.Output == "" {
		return fmt.Errorf("give the output file with -o FILE.npz")
	}
	if !strings.HasSuffix(opts.Output, ".npz") {
		return fmt.Errorf("-o %s: the file name must end in .npz (numpy.load needs it)", opts.Output)
	}
	if err := cmdutil.CheckOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	exp := runner.NewExperiment(opts.Ref, "sage")
	exp.NoCache = opts.NoCache
	exp.Train.Seed = opts.Seed
	if opts.SplitSet {
		exp.Split.Mode = opts.Split
	}
	if opts.SplitSeed != nil {
		s := *opts.SplitSeed
		exp.Split.Seed = &s
	}
	if err := exp.Split.Validate(); err != nil {
		return err
	}
	prog := opts.IO.NewProgress(opts.Quiet)
	ds, split, err := runner.LoadData(exp, load.Options{Progress: prog.Stage, Warn: prog.Warn})
	prog.Done()
	if err != nil {
		return err
	}
	defer data.Release(ds)
	write := npz.Write
	if opts.Compress {
		write = npz.WriteCompressed
	}
	if err := write(opts.Output, exportArrays(ds, split)); err != nil {
		return fmt.Errorf("export %s: %w", opts.Output, err)
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "wrote %s: %s, %d nodes, %d edges, %d features, %d classes; split %d/%d/%d\n",
			opts.Output, ds.Name, ds.NumNodes(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses,
			len(split.Train), len(split.Valid), len(split.Test))
	}
	return nil
}
