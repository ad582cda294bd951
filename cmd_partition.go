package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/partition"
)

// partitionReport is what `gnnscope partition --json` prints.
type partitionReport struct {
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

func newPartitionCmd() *cobra.Command {
	var (
		dataRef, cacheDir, outPath, metisPath, balance string
		parts                                          int
		seed, dataSeed                                 uint64
		imbalance                                      float64
		asJSON, noCache, quiet                         bool
	)
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Split a dataset's graph into k balanced parts with few cut edges (METIS-style, no METIS needed)",
		Long: `Partition a dataset's graph into --parts parts with a multilevel k-way
partitioner written in Go (heavy-edge coarsening, recursive bisection of the
coarsest graph, greedy boundary refinement on the way back up), as METIS
does, without needing METIS.

Prints the edge cut (undirected edges between parts, as METIS counts them),
the balance (largest part over the average part size) and the time taken.
-o writes the assignment, one part id per line in node order (the .part
format of gpmetis). --write-metis writes the graph in METIS .graph format so
that gpmetis can partition the very same graph (see scripts/bench-metis.sh).
Progress goes to stderr.`,
		Example: `  gnnscope partition --data synth-small --parts 64
  gnnscope partition --data ~/data/cora.npz --parts 40 --json -o cora.part.40
  gnnscope partition --data synth-small --parts 64 --write-metis small.graph`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataRef == "" {
				return fmt.Errorf("--data is required (a preset, .npz file, OGB or Planetoid folder, or .gsd file)")
			}
			if parts < 1 {
				return fmt.Errorf("--parts: %d; need at least 1", parts)
			}
			if balance != "nodes" && balance != "edges" {
				return fmt.Errorf("--balance: %q; want nodes or edges", balance)
			}
			if imbalance < 1 {
				return fmt.Errorf("--imbalance: %v; need a ratio >= 1 (1.03 allows parts 3%% above average)", imbalance)
			}
			prog := newProgress(cmd.ErrOrStderr(), quiet)
			d, err := load.Open(dataRef, load.Options{
				CacheDir: cacheDir, NoCache: noCache, Seed: dataSeed,
				Progress: prog.stage, Warn: func(msg string) { prog.printf("warning: %s\n", msg) },
			})
			prog.done()
			if err != nil {
				return err
			}
			defer data.Release(d)
			g := d.Graph
			if metisPath != "" {
				if err := writeFile(metisPath, func(f *os.File) error { return partition.WriteMETIS(f, g) }); err != nil {
					return err
				}
				prog.printf("wrote METIS graph %s\n", metisPath)
			}
			prog.printf("partition %s (%d nodes, %d stored edges) into %d parts\n", d.Name, g.N, g.NumEdges(), parts)
			start := time.Now()
			opt := partition.Options{Seed: seed, Imbalance: imbalance, Progress: prog.stage}
			if balance == "edges" {
				opt.VertexWeights = partition.DegreeWeights(g)
			}
			res, err := partition.KWay(g, parts, opt)
			secs := time.Since(start).Seconds()
			prog.done()
			if err != nil {
				return fmt.Errorf("%s: %w", d.Name, err)
			}
			if outPath != "" {
				if err := writeFile(outPath, func(f *os.File) error { return partition.WriteParts(f, res.Parts) }); err != nil {
					return err
				}
			}
			rep := partitionReport{
				Data: d.Name, Nodes: g.N, Edges: g.NumEdges(), Parts: parts, Seed: seed, Imbalance: imbalance,
				EdgeCut: res.EdgeCut, Balance: res.Balance, Levels: res.Levels, CoarsestNodes: res.CoarsestNodes,
				Balanced: balance, EdgeBalance: edgeBalance(g, res.Parts, parts),
				Seconds: secs, Output: outPath,
			}
			if g.NumEdges() > 0 {
				rep.CutFraction = float64(res.EdgeCut) / (float64(g.NumEdges()) / 2)
			}
			rep.MinPart, rep.MaxPart = g.N, 0
			for _, s := range res.Sizes {
				rep.MinPart, rep.MaxPart = min(rep.MinPart, s), max(rep.MaxPart, s)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			fmt.Fprintf(out, "edge cut   %d (%.2f%% of edges)\n", rep.EdgeCut, 100*rep.CutFraction)
			tol := func(b string) string {
				if b == balance {
					return fmt.Sprintf(", tolerance %.3f", imbalance)
				}
				return ""
			}
			fmt.Fprintf(out, "balance    %.3f (parts %d..%d nodes%s); edges %.3f (degree + 1 per node%s)\n",
				rep.Balance, rep.MinPart, rep.MaxPart, tol("nodes"), rep.EdgeBalance, tol("edges"))
			fmt.Fprintf(out, "time       %.3fs (%d levels, coarsest %d nodes)\n", secs, rep.Levels, rep.CoarsestNodes)
			if outPath != "" {
				fmt.Fprintf(out, "assignment %s\n", outPath)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dataRef, "data", "", "dataset: a preset, .npz file, OGB or Planetoid folder, or .gsd file")
	fl.IntVarP(&parts, "parts", "k", 0, "number of parts")
	fl.Uint64Var(&seed, "seed", 0, "partitioner seed (same seed, same partition)")
	fl.Uint64Var(&dataSeed, "data-seed", 0, "generator seed (presets only)")
	fl.Float64Var(&imbalance, "imbalance", partition.DefaultImbalance, "largest allowed part size (weight, with --balance edges) over the average")
	fl.StringVar(&balance, "balance", "nodes", "what parts balance: nodes, or edges (each node weighs its degree + 1; train's --part-balance)")
	fl.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	fl.StringVarP(&outPath, "output", "o", "", "write the assignment (one part id per line) to this file")
	fl.StringVar(&metisPath, "write-metis", "", "also write the graph in METIS .graph format to this file")
	fl.BoolVar(&noCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.StringVar(&cacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// writeFile creates path, lets fill write it and closes it, reporting
// errors with the path.
func writeFile(path string, fill func(*os.File) error) error {
	f, err := os.Create(path)
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
