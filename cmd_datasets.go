package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/synth"
	"github.com/gnnscope/gnnscope/profile/units"
)

// presetInfo is one row of `gnnscope datasets --json`.
type presetInfo struct {
	Name        string `json:"name"`
	Nodes       int    `json:"nodes"`
	Edges       int64  `json:"edges"` // approximate stored (directed) entries
	Features    int    `json:"features"`
	Classes     int    `json:"classes"`
	Description string `json:"description"`
}

func presetInfos() []presetInfo {
	var out []presetInfo
	for _, p := range synth.Presets() {
		c := p.Config
		out = append(out, presetInfo{
			Name: p.Name, Nodes: c.Nodes, Edges: int64(c.AvgDegree*float64(c.Nodes) + 0.5),
			Features: c.Features, Classes: c.Classes, Description: p.Description,
		})
	}
	return out
}

func newDatasetsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "datasets",
		Short: "List synthetic presets; show statistics of a dataset; generate a preset",
		Long: `List the synthetic dataset presets, and explain which datasets gnnscope reads.

Wherever a command takes a dataset (--data, or an argument here), it accepts:

  PRESET       a synthetic preset (listed by 'gnnscope datasets'), generated
               on first use, deterministically for a given --seed
  FILE.npz     a gnn-benchmark .npz file: Cora, CiteSeer, PubMed,
               Amazon Computers/Photo, Coauthor CS/Physics
  FOLDER       an OGB node-property dataset folder holding raw/ and split/
               (ogbn-arxiv, ogbn-products, ...), or its raw/ folder
  FOLDER       a Planetoid folder (PyG's Cora/, CiteSeer/, PubMed/, or its
               raw/ with ind.cora.x, ...), with the public split
  FILE.gsd     a gnnscope dataset cache file

Loaded and generated datasets are saved to the cache folder
($GNNSCOPE_HOME/cache, else $XDG_CACHE_HOME/gnnscope, else ~/.cache/gnnscope)
and reopened from it next time, memory-mapped, in a fraction of a second.`,
		Example: `  gnnscope datasets
  gnnscope datasets stats synth-small
  gnnscope datasets stats data/cora.npz --json
  gnnscope datasets stats data/ogbn_arxiv
  gnnscope datasets generate synth-products --seed 7
  gnnscope datasets generate synth-medium -o medium.gsd`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			infos := presetInfos()
			if asJSON {
				return datasetsJSON(out, infos)
			}
			w := len("PRESET")
			for _, p := range infos {
				w = max(w, len(p.Name))
			}
			row := fmt.Sprintf("%%-%ds  %%10s  %%12s  %%8s  %%7s  %%s\n", w)
			fmt.Fprintf(out, row, "PRESET", "NODES", "EDGES", "FEATURES", "CLASSES", "DESCRIPTION")
			for _, p := range infos {
				fmt.Fprintf(out, row, p.Name, datasetsCommas(int64(p.Nodes)), "~"+datasetsCommas(p.Edges), fmt.Sprint(p.Features), fmt.Sprint(p.Classes), p.Description)
			}
			dir, err := load.DefaultCacheDir()
			if err != nil {
				dir = "(none: " + err.Error() + ")"
			}
			fmt.Fprintf(out, `
EDGES counts stored entries of the symmetric graph (each undirected edge twice).

Datasets are given as a preset name, a gnn-benchmark .npz file, an OGB or
Planetoid dataset folder, or a .gsd cache file. Cache folder: %s

  gnnscope datasets stats REF [--json]      statistics of any dataset
  gnnscope datasets generate PRESET [-o F]  generate a preset ahead of time
  gnnscope train --data REF                 train on it
`, dir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the presets as JSON")
	cmd.AddCommand(newDatasetsStatsCmd(), newDatasetsGenerateCmd(), newDatasetsExportCmd())
	return cmd
}

func newDatasetsStatsCmd() *cobra.Command {
	var (
		asJSON, noCache bool
		seed            uint64
		split, cacheDir string
		quiet           bool
	)
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
		Args: datasetsArgs(1, "REF (a preset, .npz file, OGB or Planetoid folder, or .gsd file)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			prog := newDatasetProgress(cmd.ErrOrStderr(), quiet)
			d, err := load.Open(args[0], load.Options{
				CacheDir: cacheDir, NoCache: noCache, Seed: seed, Split: split,
				Progress: prog.stage, Warn: prog.warn,
			})
			prog.done()
			if err != nil {
				return err
			}
			defer data.Release(d)
			s := load.Stats(d)
			if asJSON {
				return datasetsJSON(cmd.OutOrStdout(), s)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), s.Text())
			return err
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the statistics as one JSON object")
	fl.Uint64Var(&seed, "seed", 0, "generator seed (presets only)")
	fl.StringVar(&split, "split", "", "OGB split folder to use when the dataset has several")
	fl.BoolVar(&noCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.StringVar(&cacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func newDatasetsGenerateCmd() *cobra.Command {
	var (
		seed         uint64
		output       string
		cacheDir     string
		force, quiet bool
	)
	cmd := &cobra.Command{
		Use:   "generate PRESET",
		Short: "Generate a synthetic preset into the cache or a .gsd file",
		Long: `Generate a synthetic dataset ahead of time, so that training runs start at once.

Without -o the dataset goes to the cache folder, where every command that
names the preset (with the same --seed) finds it; if it is already there,
nothing is done unless --force is given. With -o it is written to that file
(a .gsd dataset cache file, usable anywhere a dataset is expected).

The same preset and seed always give the same dataset. Progress goes to
stderr.`,
		Example: `  gnnscope datasets generate synth-products
  gnnscope datasets generate synth-small --seed 42
  gnnscope datasets generate synth-medium -o /scratch/medium.gsd
  gnnscope train --data /scratch/medium.gsd`,
		Args: datasetsArgs(1, "PRESET (see 'gnnscope datasets')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			p, ok := synth.Lookup(name)
			if !ok {
				var names []string
				for _, q := range synth.Presets() {
					names = append(names, q.Name)
				}
				return fmt.Errorf("%q is not a preset (presets: %s); 'datasets generate' makes synthetic datasets only", name, strings.Join(names, ", "))
			}
			out := cmd.OutOrStdout()
			path := output
			if path == "" {
				var err error
				if path, err = load.CachePath(name, load.Options{CacheDir: cacheDir, Seed: seed}); err != nil {
					return err
				}
				if !force {
					if _, err := os.Stat(path); err == nil {
						fmt.Fprintf(out, "%s (seed %d) is already cached: %s\n(use --force to generate it again)\n", name, seed, path)
						return nil
					}
				}
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return fmt.Errorf("cache folder: %w", err)
				}
			} else if filepath.Ext(path) != data.CacheExt {
				return fmt.Errorf("-o %s: the output file must end in %s", path, data.CacheExt)
			}
			prog := newDatasetProgress(cmd.ErrOrStderr(), quiet)
			start := time.Now()
			d, err := synth.Generate(p.Config, seed, prog.stage)
			if err != nil {
				prog.done()
				return fmt.Errorf("generate %s: %w", name, err)
			}
			prog.stage("save", 0)
			err = data.Save(path, d)
			prog.stage("save", 1)
			prog.done()
			if err != nil {
				return err
			}
			size := int64(0)
			if fi, err := os.Stat(path); err == nil {
				size = fi.Size()
			}
			fmt.Fprintf(out, "generated %s (seed %d): %s nodes, %s edges, %d features, %d classes in %.1fs\nwrote %s (%s)\n",
				name, seed, datasetsCommas(int64(d.NumNodes())), datasetsCommas(d.Graph.NumEdges()), d.NumFeatures, d.NumClasses,
				time.Since(start).Seconds(), path, units.Bytes(size))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&seed, "seed", 0, "generator seed")
	fl.StringVarP(&output, "output", "o", "", "write to this .gsd file instead of the cache")
	fl.StringVar(&cacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVar(&force, "force", false, "generate again even if the cache already holds the dataset")
	fl.BoolVarP(&quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// datasetsArgs is cobra.ExactArgs with a message that names the argument.
func datasetsArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s expects %s (see --help)", cmd.CommandPath(), what)
		}
		return nil
	}
}

func datasetsJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// datasetsCommas formats n with thousands separators.
func datasetsCommas(n int64) string {
	s := fmt.Sprint(n)
	start := 0
	if n < 0 {
		start = 1
	}
	var b strings.Builder
	b.WriteString(s[:start])
	digits := s[start:]
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// datasetProgress shows loading progress on stderr: one line rewritten in
// place on a terminal, otherwise a line when each stage completes.
type datasetProgress struct {
	w       io.Writer
	quiet   bool
	tty     bool
	open    bool
	current string
	shown   int // last percentage shown
}

func newDatasetProgress(w io.Writer, quiet bool) *datasetProgress {
	p := &datasetProgress{w: w, quiet: quiet, shown: -1}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *datasetProgress) stage(stage string, frac float64) {
	if p.quiet {
		return
	}
	pct := int(100*frac + 0.5)
	if stage == p.current && pct == p.shown {
		return
	}
	if stage != p.current {
		p.done()
		p.current, p.shown = stage, -1
	}
	p.shown = pct
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%-16s %3d%%", stage, pct)
		p.open = true
	} else if frac >= 1 {
		fmt.Fprintf(p.w, "%-16s done\n", stage)
	}
}

func (p *datasetProgress) warn(msg string) {
	p.done()
	fmt.Fprintln(p.w, "warning:", msg)
}

func (p *datasetProgress) done() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}
