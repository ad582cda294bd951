package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
)

// CacheOptions are the inputs of `gnnscope bench cache`.
type CacheOptions struct {
	IO *iostreams.IOStreams

	Data     string
	CacheDir string
	Fanout   string
	Sizes    string
	Batch    int
	Workers  int
	Seed     uint64
	DataSeed uint64
	JSON     bool
	NoCache  bool
	Quiet    bool
}

// NewCmdCache returns `gnnscope bench cache`. With runF, the command calls
// it with the parsed options instead of measuring.
func NewCmdCache(f *cmdutil.Factory, runF func(*CacheOptions) error) *cobra.Command {
	def := train.Defaults(nn.KindSAGE)
	opts := &CacheOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "The feature cache's hit rate by size: degree, frequency and the oracle",
		Long: `Measure the device feature cache's hit rate on one epoch of GraphSAGE
neighbor sampling, for caches of --sizes percent of the feature matrix's
rows, under each ranking of the rows:

  degree     the highest-degree rows
  frequency  the rows a pre-sampling pass touched most: every training
             batch of epoch 0 is sampled and its input rows counted
  oracle     the best possible cache of that size: the rows the measured
             epoch itself touched most (its true access counts)

The measured epoch is epoch 1, the first that training samples (a draw of
its own, not the pre-sampling pass's), with the split, fanouts, batch size
and seed that ` + "`gnnscope run`" + ` and ` + "`gnnscope train`" + ` use by default. Every batch of
it is split into hits and misses by an actual cache of the rows on the CPU
device, one cache at a time. The host-to-device feature bytes of the epoch
are all its input rows × features × 4 without a cache and its misses ×
features × 4 with one; the command checks that their ratio is exactly
1 − the hit rate and fails otherwise. Progress goes to stderr.

With --json it prints one object:

  {"data": str, "nodes", "features", "train_nodes": int, "fanouts": [int],
   "batch_size": int, "seed": int, "workers": int,
   "batches", "accesses", "touched", "pre_accesses": int (epoch 1's batches,
   input rows and distinct nodes; epoch 0's input rows),
   "bytes_no_cache": int,
   "sizes": [{"percent": float, "rows", "bytes": int,
              "degree", "frequency", "oracle": {"hit_rate": float,
                "hits", "misses", "bytes_h2d": int, "exact": bool}}, ...],
   "seconds": {"load", "presample", "epoch", "split": float}}

scripts/cache-curve.sh builds the binary and prints the table for a dataset.`,
		Example: `  gnnscope bench cache
  gnnscope bench cache --data synth-medium --sizes 1,5,10,20,40 --json
  gnnscope bench cache --data synth-small --fanout 15,10,5 --batch-size 1024`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return cacheRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Data, "data", "synth-products", "dataset: a preset, .npz file, OGB or Planetoid folder, or .gsd file")
	fl.StringVar(&opts.Fanout, "fanout", cmdutil.JoinInts(def.Fanouts), "sampling fanouts, hop 1 first")
	fl.IntVar(&opts.Batch, "batch-size", def.BatchSize, "training batch size")
	fl.Uint64Var(&opts.Seed, "seed", def.Seed, "training seed: the batches' shuffle and sampling, and the split of a dataset without one")
	fl.Uint64Var(&opts.DataSeed, "data-seed", 0, "generator seed (presets only)")
	fl.StringVar(&opts.Sizes, "sizes", "5,10,20,40", "cache sizes in percent of the rows (comma-separated)")
	fl.IntVar(&opts.Workers, "workers", 0, "sampler and split goroutines (0: one per core)")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "dataset cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// cachePlan is what a `bench cache` run measures, from the options.
type cachePlan struct {
	fanouts  []int
	percents []float64 // ascending, distinct
	workers  int
}

// parse checks the options and returns the plan.
func (opts *CacheOptions) parse() (cachePlan, error) {
	var p cachePlan
	if opts.Data == "" {
		return p, fmt.Errorf("--data is required (a preset, .npz file, OGB or Planetoid folder, or .gsd file)")
	}
	var err error
	if p.fanouts, err = cmdutil.ParseInts(opts.Fanout); err != nil {
		return p, fmt.Errorf("--fanout: %w", err)
	}
	for _, f := range p.fanouts {
		if f < 1 {
			return p, fmt.Errorf("--fanout: %d is not a positive fanout", f)
		}
	}
	if opts.Batch < 1 {
		return p, fmt.Errorf("--batch-size: %d is not a positive batch size", opts.Batch)
	}
	if opts.Workers < 0 {
		return p, fmt.Errorf("--workers: %d; want 0 (one per core) or more", opts.Workers)
	}
	p.workers = opts.Workers
	if p.workers == 0 {
		p.workers = runtime.GOMAXPROCS(0)
	}
	for _, s := range strings.Split(opts.Sizes, ",") {
		s = strings.TrimSpace(s)
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
		if err != nil || !(v > 0 && v <= 100) {
			return p, fmt.Errorf("--sizes: %q is not a percentage in (0, 100]", s)
		}
		p.percents = append(p.percents, v)
	}
	slices.Sort(p.percents)
	p.percents = slices.Compact(p.percents)
	return p, nil
}

func cacheRun(cmd *cobra.Command, opts *CacheOptions) error {
	p, err := opts.parse()
	if err != nil {
		return err
	}
	prog := opts.IO.NewProgress(opts.Quiet)
	start := time.Now()
	exp := runner.NewExperiment(opts.Data, string(nn.KindSAGE))
	exp.Train.Seed = opts.Seed
	ds, split, err := runner.LoadData(exp, load.Options{
		CacheDir: opts.CacheDir, NoCache: opts.NoCache, Seed: opts.DataSeed,
		Progress: prog.Stage, Warn: prog.Warn,
	})
	prog.Done()
	if err != nil {
		return err
	}
	defer data.Release(ds)
	rep := CacheReport{
		Data: ds.Name, Nodes: ds.NumNodes(), Features: ds.NumFeatures, TrainNodes: len(split.Train),
		Fanouts: p.fanouts, BatchSize: opts.Batch, Seed: opts.Seed, Workers: p.workers,
	}
	rep.Seconds.Load = time.Since(start).Seconds()
	prog.Printf("%s: %d nodes × %d features, %d training nodes; loaded in %.1fs\n",
		ds.Name, rep.Nodes, rep.Features, rep.TrainNodes, rep.Seconds.Load)
	in := curveInput{
		g: ds.Graph, x: ds.X, f: ds.NumFeatures, train: split.Train, fanouts: p.fanouts,
		batch: opts.Batch, seed: opts.Seed, workers: p.workers, percents: p.percents, line: prog.Line,
	}
	err = measureCurve(cmdutil.Context(cmd), in, &rep)
	prog.Done()
	if err != nil {
		return fmt.Errorf("%s: %w", ds.Name, err)
	}
	if opts.JSON {
		err = opts.IO.WriteJSON(rep)
	} else {
		err = writeCacheTable(opts.IO.Out, rep)
	}
	if err != nil {
		return err
	}
	return rep.check()
}

// check fails when a cache's bytes are not exactly its misses' share.
func (r CacheReport) check() error {
	for _, s := range r.Sizes {
		for i, h := range []CacheHit{s.Degree, s.Frequency, s.Oracle} {
			if !h.Exact {
				return fmt.Errorf("%g%% %s cache: %d hits and %d misses of %d accesses disagree with its hit rate %v",
					s.Percent, [3]string{"degree", "frequency", "oracle"}[i], h.Hits, h.Misses, r.Accesses, h.HitRate)
			}
		}
	}
	return nil
}

// writeCacheTable prints the report as text: a header and one row per
// size with the hit rates and the host-to-device bytes of each ranking.
func writeCacheTable(w io.Writer, r CacheReport) error {
	fmt.Fprintf(w, "%s: %d nodes × %d features, %d training nodes; fanouts %s, batches of %d, seed %d\n",
		r.Data, r.Nodes, r.Features, r.TrainNodes, cmdutil.JoinInts(r.Fanouts), r.BatchSize, r.Seed)
	fmt.Fprintf(w, "epoch 1: %d batches, %d input rows over %d distinct nodes (%.1f%% of the rows); epoch 0 (pre-sampling): %d input rows\n",
		r.Batches, r.Accesses, r.Touched, pct(float64(r.Touched), float64(r.Nodes)), r.PreAccesses)
	fmt.Fprintf(w, "host-to-device features per epoch without a cache: %s\n", units.Bytes(r.BytesNoCache))
	fmt.Fprintf(w, "hit rate and host-to-device feature bytes (H2D) of epoch 1 with a cache of each size and ranking:\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\trows\tcache\tdegree\tfrequency\toracle\tH2D degree\tH2D frequency\tH2D oracle\texact\t")
	for _, s := range r.Sizes {
		exact := "yes"
		if !s.Degree.Exact || !s.Frequency.Exact || !s.Oracle.Exact {
			exact = "NO"
		}
		fmt.Fprintf(tw, "%g%%\t%d\t%s\t%.2f%%\t%.2f%%\t%.2f%%\t%s\t%s\t%s\t%s\t\n", s.Percent, s.Rows, units.Bytes(s.Bytes),
			100*s.Degree.HitRate, 100*s.Frequency.HitRate, 100*s.Oracle.HitRate,
			units.Bytes(s.Degree.BytesH2D), units.Bytes(s.Frequency.BytesH2D), units.Bytes(s.Oracle.BytesH2D), exact)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nload %.1fs, pre-sampling %.1fs, epoch %.1fs, caches and splits %.1fs (%d workers)\n",
		r.Seconds.Load, r.Seconds.Presample, r.Seconds.Epoch, r.Seconds.Split, r.Workers)
	return err
}

// pct returns 100·a/b, or 0 when b is 0.
func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * a / b
}
