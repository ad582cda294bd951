package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/cli/trainflags"
	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
)

// TrainOptions are the inputs of `gnnscope train`.
type TrainOptions struct {
	IO *iostreams.IOStreams

	// Train holds the experiment flags shared with `gnnscope run`.
	Train    trainflags.Flags
	JSON     bool
	History  bool
	Quiet    bool
	NoRecord bool
}

// NewCmdTrain returns `gnnscope train`. With runF, the command calls it
// with the parsed options instead of training.
func NewCmdTrain(f *cmdutil.Factory, runF func(*TrainOptions) error) *cobra.Command {
	opts := &TrainOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train one model in the foreground and report its accuracy and timings",
		Long: `Train one GNN on a dataset in the foreground with the built-in engine.

--data takes a synthetic preset (see 'gnnscope datasets'), optionally with
a feature width of its own (synth-medium:features=8), a gnn-benchmark
.npz file, an OGB raw dataset folder, a Planetoid folder (Cora/, CiteSeer/,
PubMed/ with their public split), or a .gsd cache file. Loaded and
generated datasets are cached, so the second run opens them at once.

Hyper-parameters default to the usual ones (Shchur et al.'s GNN benchmark):
2 layers of 64, lr 0.01, weight decay 5e-4, dropout 0.5. GCN trains
full-batch; GraphSAGE on neighbor-sampled mini-batches (fanouts 25,10, batch
512). Flags you set override them. A flag that only some runs use (--parts
for --sampler gas, --fanout for --sampler neighbor, --heads for --model gat,
...) is refused when set for a run that would ignore it.

Datasets without a split of their own get a random per-class split (20 per
class for training, 500 validation, 1000 test) drawn from --split-seed, which
defaults to --seed: each seed is one random split and one initialization.

Test accuracy is reported at the epoch of best validation accuracy, or of
lowest validation loss with --select val-loss. With
--json, progress goes to stderr and stdout receives one JSON object.

'gnnscope help flags' gives the experiment flags in detail.`,
		Example: `  gnnscope train --data synth-tiny
  gnnscope train --data cora.npz --model gcn --sampler full --epochs 200
  gnnscope train --data cora.npz --model sage --sampler neighbor --fanout 25,10 --batch-size 64 --epochs 50 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Train.Parsed(cmd.Flags())
			if runF != nil {
				return runF(opts)
			}
			return trainRun(opts)
		},
	}
	fl := cmd.Flags()
	opts.Train.Register(fl, "gcn")
	cfg := &opts.Train.Cfg
	fl.IntVar(&cfg.SamplerWorkers, "sampler-workers", 0, "sample and gather batches on N workers ahead of training (0 = on the training goroutine)")
	fl.IntVar(&cfg.Prefetch, "prefetch", 0, "with --sampler-workers: at most D prepared batches waiting (0 = 2 per worker)")
	fl.BoolVar(&cfg.OverlapEval, "overlap-eval", false, "evaluate epoch e's weights while epoch e+1 trains")
	fl.BoolVar(&opts.NoRecord, "no-record", false, "do not record stage spans (no stage figures; measures recording overhead)")
	fl.BoolVar(&opts.JSON, "json", false, "print one JSON object with the results on stdout")
	fl.BoolVar(&opts.History, "history", false, "with --json, include per-epoch statistics")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func trainRun(opts *TrainOptions) error {
	exp, err := experiment(opts)
	if err != nil {
		return err
	}
	cfg := exp.Train
	if cfg.Threads > 0 {
		runtime.GOMAXPROCS(cfg.Threads)
	}
	runner.TuneGC()
	prog := opts.IO.NewProgress(opts.Quiet)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	dev, host, closeDev, err := openDevice(cfg, prog)
	if err != nil {
		return err
	}
	defer closeDev()
	st := &runStart{cfg: cfg, host: host, prog: prog}
	if !opts.NoRecord {
		// Spans are aggregated in memory for the stage figures; `gnnscope
		// run` writes them to a journal instead.
		st.rec = profile.NewRecorder(nil, profile.RecorderOptions{})
	}
	rec, start := st.rec, st.start
	var dsName string
	var splitSizes [3]int
	res, err := runner.Execute(ctx, exp, cfg, runner.ExecOptions{
		Device:   dev,
		Recorder: rec,
		OnStart:  start,
		Load:     load.Options{Progress: prog.Stage},
		OnReady: func(ds *data.Dataset, split *data.Split) {
			prog.Done()
			dsName = ds.Name
			splitSizes = [3]int{len(split.Train), len(split.Valid), len(split.Test)}
			prog.Printf("train %s on %s (%d nodes, %d edges, %d features, %d classes; split %d/%d/%d)\n",
				cfg.Model, ds.Name, ds.NumNodes(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses,
				splitSizes[0], splitSizes[1], splitSizes[2])
		},
		OnEpoch: func(st train.EpochStat) { prog.Line(st.Epoch == cfg.Epochs, "%s", epochLine(st, cfg.Epochs)) },
	})
	start(nil)
	plan := st.plan
	status := runner.RunStatus(ctx, err)
	if rec != nil {
		rec.Close(status, err, nil)
	}
	if err != nil {
		if opts.JSON {
			// The run's end as an object too, so that scripts read why it
			// ended (status oom, failed or canceled) from stdout.
			if jerr := opts.IO.WriteJSON(struct {
				Dataset string         `json:"dataset,omitempty"`
				Config  train.Config   `json:"config"`
				Status  profile.Status `json:"status"`
				Error   string         `json:"error"`
			}{dsName, cfg, status, err.Error()}); jerr != nil {
				return errors.Join(err, jerr)
			}
		}
		return err
	}
	prog.Done()
	if !opts.History {
		res.History = nil
	}
	if opts.JSON {
		return opts.IO.WriteJSON(struct {
			Dataset string         `json:"dataset"`
			Config  train.Config   `json:"config"`
			Split   [3]int         `json:"split"`
			Status  profile.Status `json:"status"`
			Plan    []string       `json:"plan,omitempty"` // the engine's budget plan
			*train.Result
		}{dsName, cfg, splitSizes, status, plan, res})
	}
	printResult(opts.IO, cfg, res)
	return nil
}

// runStart starts the run once: it prints the engine's budget plan and
// records run_start with it.
type runStart struct {
	cfg     train.Config
	host    profile.Host
	prog    *iostreams.Progress
	rec     *profile.Recorder // nil: nothing recorded
	started bool
	plan    []string
}

// start is runner.ExecOptions.OnStart; a second call does nothing.
func (st *runStart) start(plan []string) {
	if st.started {
		return
	}
	st.started, st.plan = true, plan
	for _, p := range plan {
		st.prog.Printf("plan: %s\n", p)
	}
	if st.rec != nil {
		cfgJSON, _ := json.Marshal(st.cfg)
		st.rec.RunStart("train", "", "", cfgJSON, &st.host, plan...)
	}
}

// openDevice opens the run's device and describes this host with it
// (the GPU, its memory and driver, printed as progress where there is one).
func openDevice(cfg train.Config, prog *iostreams.Progress) (device.Device, profile.Host, func() error, error) {
	dev, closeDev, err := runner.OpenDevice(cfg)
	if err != nil {
		return nil, profile.Host{}, nil, err
	}
	host := profile.LocalHost()
	backend.Describe(dev, &host)
	if host.GPU != "" {
		prog.Printf("device %s: %s, %s, driver %s\n", dev.Name(), host.GPU, units.Bytes(host.GPUMem), host.Driver)
	}
	return dev, host, closeDev, nil
}

// epochLine is the progress line of an epoch.
func epochLine(st train.EpochStat, total int) string {
	s := fmt.Sprintf("epoch %d/%d  loss %.4f  train %.3f", st.Epoch, total, st.Loss, st.TrainAcc)
	if st.Evaluated {
		s += fmt.Sprintf("  val %.3f (loss %.4f)  test %.3f", st.ValAcc, st.ValLoss, st.TestAcc)
	}
	if c := st.Cache; c != nil {
		s += fmt.Sprintf("  cache hits %.1f%% (%s moved)", 100*c.HitRate, units.Bytes(c.BytesH2D))
	}
	return s + fmt.Sprintf("  %.2fs", st.TrainS+st.EvalS)
}

// printResult prints the result of a run for people.
func printResult(io *iostreams.IOStreams, cfg train.Config, res *train.Result) {
	w := io.Out
	fmt.Fprintf(w, "test accuracy %.4f at epoch %d (validation accuracy %.4f, loss %.4f)\n", res.TestAcc, res.BestEpoch, res.ValAcc, res.ValLoss)
	fmt.Fprintf(w, "%d epochs in %.2fs (%.3fs per epoch, %.2fs evaluating; %.2fs setup before), peak device memory %s\n",
		res.Epochs, res.TrainS, res.EpochS, res.EvalS, res.SetupS, units.Bytes(res.PeakBytes))
	if cfg.MemBudget > 0 || res.OOMCount > 0 || res.GuardActions > 0 {
		fmt.Fprintf(w, "batch peaks: max %s, p99 %s; budget %s; %d OOMs, %d guard actions",
			units.Bytes(res.MaxBatchPeakBytes), units.Bytes(res.P99BatchPeakBytes), units.Bytes(int64(cfg.MemBudget)), res.OOMCount, res.GuardActions)
		if res.PredictorMAPE != nil {
			fmt.Fprintf(w, "; predictor MAPE %.2f%%", 100**res.PredictorMAPE)
		}
		fmt.Fprintln(w)
	}
	if res.TestAccUncut != nil {
		fmt.Fprintf(w, "inference cut: %d edges; the same weights without it: test accuracy %.4f (%+.2f points with the cut), validation %.4f\n",
			res.EvalCutEdges, *res.TestAccUncut, 100*(res.TestAcc-*res.TestAccUncut), *res.ValAccUncut)
	}
	if cfg.Sampler == "gas" {
		fmt.Fprintf(w, "histories %s", units.Bytes(res.HistoryBytes))
		if res.StalenessMean != nil {
			fmt.Fprintf(w, "; staleness mean %.2f max %d steps", *res.StalenessMean, *res.StalenessMax)
		}
		if res.HistoryRelErr != nil {
			fmt.Fprintf(w, "; relative error at the last refresh %.4f", *res.HistoryRelErr)
		}
		fmt.Fprintln(w)
	}
	if c := res.Cache; c != nil {
		printCache(w, c)
	}
	if res.StageS != nil {
		fmt.Fprintf(w, "stages: sample %.2fs, transfer %.2fs, train %.2fs, eval %.2fs; data wait %.2fs; overlap %.2f; efficiency %.2f\n",
			res.StageS["sample"], res.StageS["transfer"], res.StageS["train"], res.StageS["eval"], res.DataWaitS, res.Overlap, res.Efficiency)
	}
}

// printCache prints the feature cache's line: what it held, its hit rate
// and the bytes moved host-to-device, over the run and per epoch.
func printCache(w io.Writer, c *featcache.Report) {
	fmt.Fprintf(w, "feature cache: %s policy, %d rows (%.1f%%, %s); training input rows hit %.2f%%, %s moved host-to-device",
		c.Policy, c.Rows, 100*c.Share, units.Bytes(c.Bytes), 100*c.HitRate, units.Bytes(c.BytesH2D))
	if n := len(c.Epochs); n > 0 {
		lo, hi := c.Epochs[0].HitRate, c.Epochs[0].HitRate
		for _, e := range c.Epochs {
			lo, hi = min(lo, e.HitRate), max(hi, e.HitRate)
		}
		fmt.Fprintf(w, " (per epoch: hits %.2f-%.2f%%, %s moved)", 100*lo, 100*hi, units.Bytes(c.BytesH2D/int64(n)))
	}
	fmt.Fprintln(w)
}

// experiment is the flags' experiment, refusing a cache policy without a
// cache size: one run has no variant that could add the size (run keeps
// the policy for the cache and optimized variants).
func experiment(opts *TrainOptions) (runner.Experiment, error) {
	exp, err := opts.Train.Experiment()
	if err == nil && exp.Train.CachePolicy != "" && (exp.Train.CacheBytes == "" || exp.Train.CacheBytes == "0") {
		err = fmt.Errorf("--cache-policy %s without a feature cache: set a cache size with --cache-bytes", exp.Train.CachePolicy)
	}
	return exp, err
}
