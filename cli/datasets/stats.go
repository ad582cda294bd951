package datasets

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
)

// StatsOptions are the inputs of `gnnscope datasets stats`.
type StatsOptions struct {
	IO *iostreams.IOStreams

	Ref      string
	JSON     bool
	NoCache  bool
	Seed     uint64
	Split    string
	CacheDir string
	Quiet    bool
}

// NewCmdStats returns `gnnscope datasets stats`. With runF, the command
// calls it with the parsed options instead of loading the dataset.
func NewCmdStats(f *cmdutil.Factory, runF func(*StatsOptions) error) *cobra.Command {
	opts := &StatsOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "stats REF",
		Short: "Print statistics of a preset, .npz file, OGB or Planetoid folder, or .gsd file",
		Long: `Load a dataset and print its statistics: nodes, stored edges, features,
classes, degree distribution (min, median, mean, max), isolated nodes, edge
homophily (the fraction of edges between two labeled nodes whose labels
agree), labeled nodes, class sizes and the sizes of its own split.

REF is a preset name, a gnn-benchmark .npz file, an OGB dataset folder (or its
raw/ folder), a Planetoid folder (PyG's Cora/ or its raw/, with ind.cora.x,
...) or a .gsd cache file. The dataset is cached like everywhere else,
so a later 'gnnscope train --data REF' opens it at once. Progress goes to
stderr.`,
		Example: `  gnnscope datasets stats synth-tiny
  gnnscope datasets stats synth-products --seed 3 --json
  gnnscope datasets stats ~/data/cora.npz
  gnnscope datasets stats ~/data/ogbn_products --split sales_ranking`,
		Args: cmdutil.ExactArgs(1, refArg),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(opts)
			}
			return statsRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "print the statistics as one JSON object")
	fl.Uint64Var(&opts.Seed, "seed", 0, "generator seed (presets only)")
	fl.StringVar(&opts.Split, "split", "", "OGB split folder to use when the dataset has several")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func statsRun(opts *StatsOptions) error {
	prog := opts.IO.NewProgress(opts.Quiet)
	d, err := load.Open(opts.Ref, load.Options{
		CacheDir: opts.CacheDir, NoCache: opts.NoCache, Seed: opts.Seed, Split: opts.Split,
		Progress: prog.Stage, Warn: prog.Warn,
	})
	prog.Done()
	if err != nil {
		return err
	}
	defer data.Release(d)
	s := load.Stats(d)
	if opts.JSON {
		return opts.IO.WriteJSON(s)
	}
	_, err = io.WriteString(opts.IO.Out, s.Text())
	return err
}
