package partition

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/partition"
)

// Report is what `gnnscope partition --json` prints.
type Report struct {
	Data          string  `json:"data"`
	Nodes         int     `json:"nodes"`
	Edges         int64   `json:"edges"` // stored (directed) entries
	Parts         int     `json:"parts"`
	Seed          uint64  `json:"seed"`
	Imbalance     float64 `json:"imbalance"`
	EdgeCut       int64   `json:"edge_cut"`
	CutFraction   float64 `json:"cut_fraction"` // cut over undirected edges
	Balance       float64 `json:"balance"`
	Balanced      string  `json:"balanced"`     // what the parts balance: nodes or edges (--balance)
	EdgeBalance   float64 `json:"edge_balance"` // largest part's degree + 1 sum over the average
	MinPart       int     `json:"min_part"`
	MaxPart       int     `json:"max_part"`
	Levels        int     `json:"levels"`
	CoarsestNodes int     `json:"coarsest_nodes"`
	Seconds       float64 `json:"seconds"`
	Output        string  `json:"output,omitempty"`
}

// PartitionOptions are the inputs of `gnnscope partition`.
type PartitionOptions struct {
	IO *iostreams.IOStreams

	Data      string
	CacheDir  string
	Output    string
	Force     bool
	METIS     string
	Balance   string
	Parts     int
	Seed      uint64
	DataSeed  uint64
	Imbalance float64
	JSON      bool
	NoCache   bool
	Quiet     bool
}

// NewCmdPartition returns `gnnscope partition`. With runF, the command
// calls it with the parsed options instead of partitioning.
func NewCmdPartition(f *cmdutil.Factory, runF func(*PartitionOptions) error) *cobra.Command {
	opts := &PartitionOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Split a dataset's graph into k balanced parts with few cut edges (METIS-style, no METIS needed)",
		Long: `Partition a dataset's graph into --parts parts with a multilevel k-way
partitioner written in Go (heavy-edge coarsening, recursive bisection of the
coarsest graph, greedy boundary refinement on the way back up), as METIS
does, without needing METIS.

Prints the edge cut (undirected edges between parts, as METIS counts them),
the balance (largest part over the average part size) and the time taken.
--balance edges weighs each node by its degree + 1, as train's
--part-balance edges does, so parts hold even edge volumes.
-o writes the assignment, one part id per line in node order (the .part
format of gpmetis). --write-metis writes the graph in METIS .graph format so
that gpmetis can partition the very same graph (see scripts/bench-metis.sh).
Progress goes to stderr.`,
		Example: `  gnnscope partition --data synth-small --parts 64
  gnnscope partition --data ~/data/cora.npz --parts 40 --json -o cora.part.40
  gnnscope partition --data synth-small --parts 64 --write-metis small.graph`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return partitionRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Data, "data", "", "dataset: a preset, .npz file, OGB or Planetoid folder, or .gsd file")
	fl.IntVarP(&opts.Parts, "parts", "k", 0, "number of parts")
	fl.Uint64Var(&opts.Seed, "seed", 0, "partitioner seed (same seed, same partition)")
	fl.Uint64Var(&opts.DataSeed, "data-seed", 0, "generator seed (presets only)")
	fl.Float64Var(&opts.Imbalance, "imbalance", partition.DefaultImbalance, "largest allowed part size (weight, with --balance edges) over the average")
	fl.StringVar(&opts.Balance, "balance", "nodes", "what parts balance: nodes or edges")
	fl.BoolVar(&opts.JSON, "json", false, "print the result as one JSON object")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the assignment (one part id per line) to this file (missing folders are created)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite the output file if it exists")
	fl.StringVar(&opts.METIS, "write-metis", "", "also write the graph in METIS .graph format to this file")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// check refuses impossible options before anything is loaded.
func (opts *PartitionOptions) check() error {
	if opts.Data == "" {
		return fmt.Errorf("--data is required (a preset, .npz file, OGB or Planetoid folder, or .gsd file)")
	}
	if opts.Parts < 1 {
		return fmt.Errorf("--parts: %d; need at least 1", opts.Parts)
	}
	if opts.Balance != "nodes" && opts.Balance != "edges" {
		return fmt.Errorf("--balance: %q; want nodes or edges", opts.Balance)
	}
	if opts.Imbalance < 1 {
		return fmt.Errorf("--imbalance: %v; need a ratio >= 1 (1.03 allows parts 3%% above average)", opts.Imbalance)
	}
	return nil
}

func partitionRun(opts *PartitionOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	if err := cmdutil.CheckOutput(opts.Output, opts.Force); err != nil {
		return err
	}
	prog := opts.IO.NewProgress(opts.Quiet)
	d, err := load.Open(opts.Data, load.Options{
		CacheDir: opts.CacheDir, NoCache: opts.NoCache, Seed: opts.DataSeed,
		Progress: prog.Stage, Warn: prog.Warn,
	})
	prog.Done()
	if err != nil {
		return err
	}
	defer data.Release(d)
	g := d.Graph
	if opts.METIS != "" {
		if err := writeFile(opts.METIS, func(f *os.File) error { return partition.WriteMETIS(f, g) }); err != nil {
			return err
		}
		prog.Printf("wrote METIS graph %s\n", opts.METIS)
	}
	prog.Printf("partition %s (%d nodes, %d stored edges) into %d parts\n", d.Name, g.N, g.NumEdges(), opts.Parts)
	start := time.Now()
	popt := partition.Options{Seed: opts.Seed, Imbalance: opts.Imbalance, Progress: prog.Stage}
	if opts.Balance == "edges" {
		popt.VertexWeights = partition.DegreeWeights(g)
	}
	res, err := partition.KWay(g, opts.Parts, popt)
	secs := time.Since(start).Seconds()
	prog.Done()
	if err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	if opts.Output != "" {
		if err := writeFile(opts.Output, func(f *os.File) error { return partition.WriteParts(f, res.Parts) }); err != nil {
			return err
		}
	}
	rep := Report{
		Data: d.Name, Nodes: g.N, Edges: g.NumEdges(), Parts: opts.Parts, Seed: opts.Seed, Imbalance: opts.Imbalance,
		EdgeCut: res.EdgeCut, Balance: res.Balance, Levels: res.Levels, CoarsestNodes: res.CoarsestNodes,
		Balanced: opts.Balance, EdgeBalance: edgeBalance(g, res.Parts, opts.Parts),
		Seconds: secs, Output: opts.Output,
	}
	if g.NumEdges() > 0 {
		rep.CutFraction = float64(res.EdgeCut) / (float64(g.NumEdges()) / 2)
	}
	rep.MinPart, rep.MaxPart = g.N, 0
	for _, s := range res.Sizes {
		rep.MinPart, rep.MaxPart = min(rep.MinPart, s), max(rep.MaxPart, s)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(rep)
	}
	printReport(opts, rep)
	return nil
}

// printReport prints the result for people.
func printReport(opts *PartitionOptions, rep Report) {
	out := opts.IO.Out
	fmt.Fprintf(out, "edge cut   %d (%.2f%% of edges)\n", rep.EdgeCut, 100*rep.CutFraction)
	tol := func(b string) string {
		if b == opts.Balance {
			return fmt.Sprintf(", tolerance %.3f", opts.Imbalance)
		}
		return ""
	}
	fmt.Fprintf(out, "balance    %.3f (parts %d..%d nodes%s); edges %.3f (degree + 1 per node%s)\n",
		rep.Balance, rep.MinPart, rep.MaxPart, tol("nodes"), rep.EdgeBalance, tol("edges"))
	fmt.Fprintf(out, "time       %.3fs (%d levels, coarsest %d nodes)\n", rep.Seconds, rep.Levels, rep.CoarsestNodes)
	if opts.Output != "" {
		fmt.Fprintf(out, "assignment %s\n", opts.Output)
	}
}

// writeFile creates path, lets fill write it and closes it, reporting
// errors with the path.
func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// edgeBalance is the largest part's sum of degree + 1 over the average
// part's: how evenly the parts hold the graph's edges.
func edgeBalance(g *graph.CSR, parts []int32, k int) float64 {
	vol := make([]int64, k)
	var total int64
	for v, p := range parts {
		d := g.Indptr[v+1] - g.Indptr[v] + 1
		vol[p] += d
		total += d
	}
	if total == 0 {
		return 1
	}
	return float64(slices.Max(vol)) * float64(k) / float64(total)
}
