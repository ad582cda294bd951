package datasets

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/synth"
)

// PresetInfo is one row of `gnnscope datasets --json`.
type PresetInfo struct {
	Name        string `json:"name"`
	Nodes       int    `json:"nodes"`
	Edges       int64  `json:"edges"` // approximate stored (directed) entries
	Features    int    `json:"features"`
	Classes     int    `json:"classes"`
	Description string `json:"description"`
}

func presetInfos() []PresetInfo {
	var out []PresetInfo
	for _, p := range synth.Presets() {
		c := p.Config
		out = append(out, PresetInfo{
			Name: p.Name, Nodes: c.Nodes, Edges: int64(c.AvgDegree*float64(c.Nodes) + 0.5),
			Features: c.Features, Classes: c.Classes, Description: p.Description,
		})
	}
	return out
}

// ListOptions are the inputs of `gnnscope datasets`.
type ListOptions struct {
	IO   *iostreams.IOStreams
	JSON bool
}

// NewCmdDatasets returns `gnnscope datasets` and its subcommands; by itself
// it lists the presets. With runF, the command calls it with the parsed
// options instead of listing.
func NewCmdDatasets(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "datasets",
		Short: "List synthetic presets; show statistics of a dataset; generate a preset",
		Long: `List the synthetic dataset presets, and explain which datasets gnnscope reads.

Wherever a command takes a dataset (--data, or an argument here), it accepts:

  PRESET       a synthetic preset (listed by 'gnnscope datasets'), generated
               on first use, deterministically for a given --seed
  PRESET:features=N
               the preset with N features per node (1 to 65536) instead of
               its own width: the same graph, labels and split, cached apart
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
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the presets as JSON")
	cmd.AddCommand(NewCmdStats(f, nil), NewCmdGenerate(f, nil), NewCmdExport(f, nil))
	return cmd
}

func listRun(opts *ListOptions) error {
	out := opts.IO.Out
	infos := presetInfos()
	if opts.JSON {
		return opts.IO.WriteJSON(infos)
	}
	w := len("PRESET")
	for _, p := range infos {
		w = max(w, len(p.Name))
	}
	row := fmt.Sprintf("%%-%ds  %%10s  %%12s  %%8s  %%7s  %%s\n", w)
	fmt.Fprintf(out, row, "PRESET", "NODES", "EDGES", "FEATURES", "CLASSES", "DESCRIPTION")
	for _, p := range infos {
		fmt.Fprintf(out, row, p.Name, commas(int64(p.Nodes)), "~"+commas(p.Edges), fmt.Sprint(p.Features), fmt.Sprint(p.Classes), p.Description)
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
}

// refArg names the dataset argument in messages.
const refArg = "REF (a preset, .npz file, OGB or Planetoid folder, or .gsd file)"

// commas formats n with thousands separators.
func commas(n int64) string {
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
