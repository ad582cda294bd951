package datasets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/data/synth"
	"github.com/gnnscope/gnnscope/profile/units"
)

// GenerateOptions are the inputs of `gnnscope datasets generate`.
type GenerateOptions struct {
	IO *iostreams.IOStreams

	Preset   string
	Seed     uint64
	Output   string
	CacheDir string
	Force    bool
	Quiet    bool
}

// NewCmdGenerate returns `gnnscope datasets generate`. With runF, the
// command calls it with the parsed options instead of generating.
func NewCmdGenerate(f *cmdutil.Factory, runF func(*GenerateOptions) error) *cobra.Command {
	opts := &GenerateOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "generate PRESET[:features=N]",
		Short: "Generate a synthetic preset into the cache or a .gsd file",
		Long: `Generate a synthetic dataset ahead of time, so that training runs start at once.

Without -o the dataset goes to the cache folder, where every command that
names the preset (with the same --seed) finds it; if it is already there,
nothing is done unless --force is given. With -o it is written to that file
(a .gsd dataset cache file, usable anywhere a dataset is expected).

The same preset and seed always give the same dataset. PRESET:features=N
gives the preset with N features per node (1 to 65536) instead of its own
width: the same graph, labels and split, another feature matrix, cached
apart. Progress goes to stderr.`,
		Example: `  gnnscope datasets generate synth-products
  gnnscope datasets generate synth-small --seed 42
  gnnscope datasets generate synth-medium -o /scratch/medium.gsd
  gnnscope datasets generate synth-medium:features=8
  gnnscope train --data /scratch/medium.gsd`,
		Args: cmdutil.ExactArgs(1, "PRESET[:features=N] (see 'gnnscope datasets')"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Preset = args[0]
			if runF != nil {
				return runF(opts)
			}
			return generateRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&opts.Seed, "seed", 0, "generator seed")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to this .gsd file instead of the cache")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "cache folder (default $GNNSCOPE_HOME/cache, $XDG_CACHE_HOME/gnnscope or ~/.cache/gnnscope)")
	fl.BoolVar(&opts.Force, "force", false, "generate again, or overwrite the -o file")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func generateRun(opts *GenerateOptions) error {
	name := opts.Preset
	p, ok, err := synth.ParseRef(name)
	if err != nil {
		return err
	}
	if !ok {
		var names []string
		for _, q := range synth.Presets() {
			names = append(names, q.Name)
		}
		return fmt.Errorf("%q is not a preset (presets: %s); 'datasets generate' makes synthetic datasets only", name, strings.Join(names, ", "))
	}
	out := opts.IO.Out
	path := opts.Output
	if path == "" {
		var err error
		if path, err = load.CachePath(name, load.Options{CacheDir: opts.CacheDir, Seed: opts.Seed}); err != nil {
			return err
		}
		if !opts.Force {
			if _, err := os.Stat(path); err == nil {
				fmt.Fprintf(out, "%s (seed %d) is already cached: %s\n(use --force to generate it again)\n", name, opts.Seed, path)
				return nil
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("cache folder: %w", err)
		}
	} else if filepath.Ext(path) != data.CacheExt {
		return fmt.Errorf("-o %s: the output file must end in %s", path, data.CacheExt)
	} else if err := cmdutil.CheckOutput(path, opts.Force); err != nil {
		return err
	}
	prog := opts.IO.NewProgress(opts.Quiet)
	start := time.Now()
	d, err := synth.Generate(p.Config, opts.Seed, prog.Stage)
	if err != nil {
		prog.Done()
		return fmt.Errorf("generate %s: %w", p.Name, err)
	}
	prog.Stage("save", 0)
	err = data.Save(path, d)
	prog.Stage("save", 1)
	prog.Done()
	if err != nil {
		return err
	}
	size := int64(0)
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	fmt.Fprintf(out, "generated %s (seed %d): %s nodes, %s edges, %d features, %d classes in %.1fs\nwrote %s (%s)\n",
		name, opts.Seed, commas(int64(d.NumNodes())), commas(d.Graph.NumEdges()), d.NumFeatures, d.NumClasses,
		time.Since(start).Seconds(), path, units.Bytes(size))
	return nil
}
