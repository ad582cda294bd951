package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/load"
	"github.com/gnnscope/gnnscope/gnn/device/backend"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
)

// trainFlags holds the flags of `gnnscope train`.
type trainFlags struct {
	data                 string
	cfg                  train.Config
	fanout               string
	split                string
	splitSeed            uint64
	perClass             int
	numValid, numTest    int
	trainFrac, validFrac float64
	json, history, quiet bool
	noCache              bool
	noRecord             bool
}

// register adds the experiment flags shared by `train` and `run`, with
// defaultModel's hyper-parameters as defaults.
func (f *trainFlags) register(fl *pflag.FlagSet, defaultModel string) {
	f.cfg = train.Defaults(defaultModel)
	sp := runner.DefaultSplit()
	f.fanout = "25,10"
	fl.StringVar(&f.data, "data", "synth-tiny", "dataset: preset name, .npz file, OGB or Planetoid folder, or .gsd cache file")
	fl.StringVar(&f.cfg.Model, "model", defaultModel, "model: gcn, sage, gat, appnp or gcnii")
	fl.IntVar(&f.cfg.Layers, "layers", f.cfg.Layers, "number of message-passing layers (appnp: propagation steps K, default 10; gcnii: GCN2Conv layers, default 16)")
	fl.IntVar(&f.cfg.Hidden, "hidden", f.cfg.Hidden, "hidden width")
	fl.IntVar(&f.cfg.Epochs, "epochs", f.cfg.Epochs, "training epochs (gcnii: 1500 by default)")
	fl.IntVar(&f.cfg.Patience, "patience", f.cfg.Patience, "stop after N epochs without a better epoch by --select (0 = never; gcnii: 100 by default)")
	fl.StringVar(&f.cfg.Select, "select", f.cfg.Select, "epoch whose test accuracy is reported and that --patience counts from: val-acc (highest validation accuracy) or val-loss (lowest validation cross-entropy, as the GCNII paper does)")
	fl.Float64Var(&f.cfg.LR, "lr", f.cfg.LR, "Adam learning rate")
	fl.Float64Var(&f.cfg.WeightDecay, "weight-decay", f.cfg.WeightDecay, "L2 weight decay on weights (not biases); with --wd-conv, on the dense layers only")
	fl.Var(optFloatFlag{&f.cfg.WDOut}, "wd-out", "L2 weight decay on the output layer's weights, overriding --weight-decay and --wd-conv there (GNNAutoScale's Cora settings: 0)")
	fl.Float64Var(&f.cfg.ClipNorm, "clip-norm", 0, "scale each step's gradients to a global L2 norm of at most this (0 = no clipping; GNNAutoScale's grad_norm)")
	fl.Var(optFloatFlag{&f.cfg.WDConv}, "wd-conv", "L2 weight decay on the message-passing layers' weights, --weight-decay then covering the dense ones (gcnii: 0.01 on its convolutions, 5e-4 on its linears by default)")
	fl.Float64Var(&f.cfg.Dropout, "dropout", f.cfg.Dropout, "dropout probability")
	fl.IntVar(&f.cfg.Heads, "heads", 8, "gat: attention heads in hidden layers (--hidden is then per head)")
	fl.Float64Var(&f.cfg.AttnDropout, "attn-dropout", 0.6, "gat: dropout on attention coefficients")
	fl.StringVar(&f.cfg.Activation, "act", f.cfg.Activation, "activation between gcn, sage and gat layers: relu or elu (default relu)")
	fl.Float64Var(&f.cfg.Alpha, "alpha", f.cfg.Alpha, "appnp, gcnii: teleport (initial-residual) weight alpha (default 0.1)")
	fl.Float64Var(&f.cfg.Theta, "theta", f.cfg.Theta, "gcnii: lambda of the identity mapping, beta_l = ln(lambda/l + 1) (default 0.5)")
	fl.StringVar(&f.cfg.Sampler, "sampler", f.cfg.Sampler, "full (whole graph per step), neighbor (sampled mini-batches) or gas (GNNAutoScale: graph parts plus historical embeddings of their halo); default full for gcn, neighbor for sage")
	fl.IntVar(&f.cfg.Parts, "parts", 0, "gas: number of graph parts (KWay partition)")
	fl.IntVar(&f.cfg.PartsPerBatch, "parts-per-batch", 1, "gas: graph parts per mini-batch")
	fl.StringVar(&f.cfg.PartBalance, "part-balance", "", "gas: what the parts balance: nodes (the default, as METIS and GNNAutoScale) or edges (each node weighs its degree + 1: even edge volumes, so batch memory varies less)")
	fl.StringVar(&f.fanout, "fanout", f.fanout, "neighbors sampled per node for each hop, hop 1 first; -1 = all")
	fl.IntVar(&f.cfg.BatchSize, "batch-size", f.cfg.BatchSize, "target nodes per mini-batch")
	fl.Uint64Var(&f.cfg.Seed, "seed", 0, "seed for initialization, dropout and sampling")
	fl.IntVar(&f.cfg.Threads, "threads", 0, "CPU threads (0 = all cores)")
	fl.StringVar(&f.cfg.Features, "features", f.cfg.Features, "feature normalization: auto (row if all non-negative), row, none")
	fl.IntVar(&f.cfg.EvalEvery, "eval-every", f.cfg.EvalEvery, "evaluate every N epochs (and at the last)")
	fl.IntVar(&f.cfg.EvalChunk, "eval-chunk", f.cfg.EvalChunk, "destination nodes per block in layer-wise inference")
	fl.StringVar(&f.split, "split", sp.Mode, "auto (the dataset's own split, else per-class), per-class, or frac")
	fl.Uint64Var(&f.splitSeed, "split-seed", 0, "seed of the per-class or fractional split (default: --seed)")
	fl.IntVar(&f.perClass, "per-class", sp.PerClass, "per-class split: training nodes per class")
	fl.IntVar(&f.numValid, "num-valid", sp.NumValid, "per-class split: validation nodes")
	fl.IntVar(&f.numTest, "num-test", sp.NumTest, "per-class split: test nodes")
	fl.Float64Var(&f.trainFrac, "train-frac", sp.TrainFrac, "frac split: fraction of labeled nodes for training")
	fl.Float64Var(&f.validFrac, "valid-frac", sp.ValidFrac, "frac split: fraction for validation (the rest is test)")
	fl.BoolVar(&f.noCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.Var((*sizeFlag)(&f.cfg.MemBudget), "mem-budget", "device memory budget (bytes, or 512MiB, 2GiB, 0.1G; 0 = unlimited): allocations past it fail with an out-of-memory error")
	fl.StringVar(&f.cfg.OnOOM, "on-oom", train.OOMAbort, "what a batch that runs out of memory does: abort (the run ends with status oom) or skip (record it and go on)")
	fl.StringVar(&f.cfg.MemGuard, "mem-guard", "", "keep every batch under --mem-budget by predicting its peak: resample, split or cut (default off)")
	fl.StringVar(&f.cfg.CutRule, "cut-rule", memory.RuleDegreeSum, "edges dropped first by the guard's cut and inference cutting: random, degree-sum, degree-product, degree-cap (trim the longest neighbor lists first)")
	fl.Float64Var(&f.cfg.EvalCut, "eval-cut", 0, "drop this fraction of every inference block's edges by --cut-rule (0 = none); without --mem-budget the selected weights are also evaluated uncut after training (test_acc_uncut), so one run shows what the cut costs")
	fl.IntVar(&f.cfg.CutMinKeep, "cut-min-keep", 0, "neighbors every node keeps from an inference cut while other edges are left (0 = automatic: with --eval-cut the largest floor that leaves enough edges to cut, else half the mean degree; -1 = none)")
	fl.StringVar(&f.cfg.CutNorm, "cut-norm", train.CutNormRenorm, "edge weights of cut inference blocks for gcn, appnp and gcnii: renorm (the cut graph's own degrees), scale (full-graph weights scaled by d/k, as a sampled row) or keep (full-graph weights)")
	fl.StringVar(&f.cfg.Device, "device", "cpu", "compute device: cpu, cuda or cuda:N (GPU N; needs a binary built with -tags cuda)")
	fl.BoolVar(&f.cfg.AsyncTransfer, "async-transfer", false, "cuda: copy batch i+1's features on a copy stream while batch i computes (events order them); no effect on cpu")
}

// sizeFlag is a byte-count flag that accepts sizes such as 512MiB.
type sizeFlag memory.Size

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }

func (s *sizeFlag) Set(v string) error {
	n, err := units.ParseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }

// optFloatFlag is a float flag that leaves its target nil until set.
type optFloatFlag struct{ p **float64 }

func (o optFloatFlag) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

func (o optFloatFlag) Set(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return err
	}
	*o.p = &x
	return nil
}

func (o optFloatFlag) Type() string { return "float" }

// experimentSplit applies the split flags set on the command line to s.
// An unset --split-seed leaves s.Seed as it is: the split then follows the
// training seed (see runner.Experiment.SplitSeed).
func (f *trainFlags) experimentSplit(fl *pflag.FlagSet, s runner.Split) runner.Split {
	if fl.Changed("split") {
		s.Mode = f.split
	}
	if fl.Changed("split-seed") {
		seed := f.splitSeed
		s.Seed = &seed
	}
	if fl.Changed("per-class") {
		s.PerClass = f.perClass
	}
	if fl.Changed("num-valid") {
		s.NumValid = f.numValid
	}
	if fl.Changed("num-test") {
		s.NumTest = f.numTest
	}
	if fl.Changed("train-frac") {
		s.TrainFrac = f.trainFrac
	}
	if fl.Changed("valid-frac") {
		s.ValidFrac = f.validFrac
	}
	return s
}

func newTrainCmd() *cobra.Command {
	f := &trainFlags{}
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train one model in the foreground and report its accuracy and timings",
		Long: `Train one GNN on a dataset in the foreground with the built-in engine.

--data takes a synthetic preset (see 'gnnscope datasets'), a gnn-benchmark
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
--json, progress goes to stderr and stdout receives one JSON object.`,
		Example: `  gnnscope train --data synth-tiny
  gnnscope train --data cora.npz --model gcn --sampler full --epochs 200
  gnnscope train --data cora.npz --model sage --sampler neighbor --fanout 25,10 --batch-size 64 --epochs 50 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTrain(cmd, f)
		},
	}
	fl := cmd.Flags()
	f.register(fl, "gcn")
	fl.IntVar(&f.cfg.SamplerWorkers, "sampler-workers", 0, "sample and gather batches on N workers ahead of training (0 = on the training goroutine)")
	fl.IntVar(&f.cfg.Prefetch, "prefetch", 0, "with --sampler-workers: at most D prepared batches waiting (0 = 2 per worker)")
	fl.BoolVar(&f.cfg.OverlapEval, "overlap-eval", false, "evaluate epoch e's weights while epoch e+1 trains")
	fl.BoolVar(&f.noRecord, "no-record", false, "do not record stage spans (no stage figures; measures recording overhead)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object with the results on stdout")
	fl.BoolVar(&f.history, "history", false, "with --json, include per-epoch statistics")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// applyModelDefaults fills the hyper-parameters the user did not set with
// the chosen model's defaults.
func applyModelDefaults(fl *pflag.FlagSet, cfg *train.Config, fanout *string) {
	d := train.Defaults(cfg.Model)
	if !fl.Changed("hidden") {
		cfg.Hidden = d.Hidden
	}
	if !fl.Changed("sampler") {
		cfg.Sampler = d.Sampler
	}
	if !fl.Changed("lr") {
		cfg.LR = d.LR
	}
	if !fl.Changed("weight-decay") {
		cfg.WeightDecay = d.WeightDecay
	}
	if !fl.Changed("dropout") {
		cfg.Dropout = d.Dropout
	}
	if !fl.Changed("heads") {
		cfg.Heads = d.Heads
	}
	if !fl.Changed("attn-dropout") {
		cfg.AttnDropout = d.AttnDropout
	}
	if !fl.Changed("act") {
		cfg.Activation = d.Activation
	}
	if !fl.Changed("alpha") {
		cfg.Alpha = d.Alpha
	}
	if !fl.Changed("theta") {
		cfg.Theta = d.Theta
	}
	if !fl.Changed("wd-conv") {
		cfg.WDConv = d.WDConv
	}
	if !fl.Changed("wd-out") {
		cfg.WDOut = d.WDOut
	}
	if !fl.Changed("clip-norm") {
		cfg.ClipNorm = d.ClipNorm
	}
	if !fl.Changed("epochs") {
		cfg.Epochs = d.Epochs
	}
	if !fl.Changed("patience") {
		cfg.Patience = d.Patience
	}
	if !fl.Changed("select") {
		cfg.Select = d.Select
	}
	if !fl.Changed("layers") && (cfg.Model == "appnp" || cfg.Model == "gcnii") {
		cfg.Layers = d.Layers
	}
	if !fl.Changed("batch-size") {
		cfg.BatchSize = d.BatchSize
	}
	if !fl.Changed("fanout") && len(d.Fanouts) != cfg.Layers {
		// One fanout per layer: repeat the last default.
		parts := make([]string, cfg.Layers)
		for i := range parts {
			parts[i] = strconv.Itoa(d.Fanouts[min(i, len(d.Fanouts)-1)])
		}
		*fanout = strings.Join(parts, ",")
	}
}

// flagScopes names the flags that apply only to some samplers or models:
// set on the command line for a run they do not apply to, they would be
// ignored without a word, so flagsApply refuses them.
var flagScopes = []struct {
	flags []string
	what  string                  // the runs they apply to, for the message
	apply func(train.Config) bool // whether they apply to a config
}{
	{[]string{"parts", "parts-per-batch", "part-balance"}, "--sampler gas",
		func(c train.Config) bool { return c.Sampler == "gas" }},
	{[]string{"fanout", "batch-size"}, "--sampler neighbor",
		func(c train.Config) bool { return c.Sampler == "neighbor" }},
	{[]string{"heads", "attn-dropout"}, "--model gat",
		func(c train.Config) bool { return c.Model == "gat" }},
	{[]string{"alpha"}, "--model appnp or gcnii",
		func(c train.Config) bool { return c.Model == "appnp" || c.Model == "gcnii" }},
	{[]string{"theta"}, "--model gcnii",
		func(c train.Config) bool { return c.Model == "gcnii" }},
	{[]string{"prefetch"}, "--sampler-workers N (N > 0)",
		func(c train.Config) bool { return c.SamplerWorkers > 0 }},
}

// flagsApply returns an error naming every flag set on the command line
// that the final config does not use (say --parts without --sampler gas).
func flagsApply(fl *pflag.FlagSet, cfg train.Config) error {
	var bad []string
	for _, sc := range flagScopes {
		if sc.apply(cfg) {
			continue
		}
		for _, name := range sc.flags {
			if fl.Lookup(name) != nil && fl.Changed(name) {
				bad = append(bad, fmt.Sprintf("--%s applies to %s only", name, sc.what))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s (this run: --model %s --sampler %s); leave the flag out or change the run",
		strings.Join(bad, "; "), cfg.Model, cfg.Sampler)
}

// parseInts parses "25,10" into []int.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", p)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}

func runTrain(cmd *cobra.Command, f *trainFlags) error {
	applyModelDefaults(cmd.Flags(), &f.cfg, &f.fanout)
	fan, err := parseInts(f.fanout)
	if err != nil {
		return fmt.Errorf("--fanout: %w", err)
	}
	f.cfg.Fanouts = fan
	if err := flagsApply(cmd.Flags(), f.cfg); err != nil {
		return err
	}
	exp := runner.Experiment{Data: f.data, NoCache: f.noCache, Train: f.cfg}
	exp.Split = f.experimentSplit(cmd.Flags(), runner.DefaultSplit())
	if err := exp.Validate(); err != nil {
		return err
	}
	if f.cfg.Threads > 0 {
		runtime.GOMAXPROCS(f.cfg.Threads)
	}
	prog := newProgress(cmd.ErrOrStderr(), f.quiet)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	dev, closeDev, err := runner.OpenDevice(f.cfg)
	if err != nil {
		return err
	}
	defer closeDev()
	host := profile.LocalHost()
	backend.Describe(dev, &host)
	if host.GPU != "" {
		prog.printf("device %s: %s, %s, driver %s\n", dev.Name(), host.GPU, units.Bytes(host.GPUMem), host.Driver)
	}
	var rec *profile.Recorder
	if !f.noRecord {
		// Spans are aggregated in memory for the stage figures; `gnnscope
		// run` writes them to a journal instead.
		rec = profile.NewRecorder(nil, profile.RecorderOptions{})
		cfgJSON, _ := json.Marshal(f.cfg)
		rec.RunStart("train", "", "", cfgJSON, &host)
	}
	var dsName string
	var splitSizes [3]int
	res, err := runner.Execute(ctx, exp, f.cfg, runner.ExecOptions{
		Device:   dev,
		Recorder: rec,
		Load:     load.Options{Progress: prog.stage},
		OnReady: func(ds *data.Dataset, split *data.Split) {
			prog.done()
			dsName = ds.Name
			splitSizes = [3]int{len(split.Train), len(split.Valid), len(split.Test)}
			prog.printf("train %s on %s (%d nodes, %d edges, %d features, %d classes; split %d/%d/%d)\n",
				f.cfg.Model, ds.Name, ds.NumNodes(), ds.Graph.NumEdges(), ds.NumFeatures, ds.NumClasses,
				splitSizes[0], splitSizes[1], splitSizes[2])
		},
		OnEpoch: func(st train.EpochStat) { prog.epoch(st, f.cfg.Epochs) },
	})
	status := runner.RunStatus(ctx, err)
	if rec != nil {
		rec.Close(status, err, nil)
	}
	if err != nil {
		if f.json {
			// The run's end as an object too, so that scripts read why it
			// ended (status oom, failed or canceled) from stdout.
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(struct {
				Dataset string       `json:"dataset,omitempty"`
				Config  train.Config `json:"config"`
				Status  string       `json:"status"`
				Error   string       `json:"error"`
			}{dsName, f.cfg, status, err.Error()}); jerr != nil {
				return errors.Join(err, jerr)
			}
		}
		return err
	}
	prog.done()
	if !f.history {
		res.History = nil
	}
	if f.json {
		out := struct {
			Dataset string       `json:"dataset"`
			Config  train.Config `json:"config"`
			Split   [3]int       `json:"split"`
			Status  string       `json:"status"`
			*train.Result
		}{dsName, f.cfg, splitSizes, status, res}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "test accuracy %.4f at epoch %d (validation accuracy %.4f, loss %.4f)\n", res.TestAcc, res.BestEpoch, res.ValAcc, res.ValLoss)
	fmt.Fprintf(w, "%d epochs in %.2fs (%.3fs per epoch, %.2fs evaluating; %.2fs setup before), peak device memory %s\n",
		res.Epochs, res.TrainS, res.EpochS, res.EvalS, res.SetupS, units.Bytes(res.PeakBytes))
	if f.cfg.MemBudget > 0 || res.OOMCount > 0 || res.GuardActions > 0 {
		fmt.Fprintf(w, "batch peaks: max %s, p99 %s; budget %s; %d OOMs, %d guard actions",
			units.Bytes(res.MaxBatchPeakBytes), units.Bytes(res.P99BatchPeakBytes), units.Bytes(int64(f.cfg.MemBudget)), res.OOMCount, res.GuardActions)
		if res.PredictorMAPE != nil {
			fmt.Fprintf(w, "; predictor MAPE %.2f%%", 100**res.PredictorMAPE)
		}
		fmt.Fprintln(w)
	}
	if res.TestAccUncut != nil {
		fmt.Fprintf(w, "inference cut: %d edges; the same weights without it: test accuracy %.4f (%+.2f points with the cut), validation %.4f\n",
			res.EvalCutEdges, *res.TestAccUncut, 100*(res.TestAcc-*res.TestAccUncut), *res.ValAccUncut)
	}
	if f.cfg.Sampler == "gas" {
		fmt.Fprintf(w, "histories %s", units.Bytes(res.HistoryBytes))
		if res.StalenessMean != nil {
			fmt.Fprintf(w, "; staleness mean %.2f max %d steps", *res.StalenessMean, *res.StalenessMax)
		}
		if res.HistoryRelErr != nil {
			fmt.Fprintf(w, "; relative error at the last refresh %.4f", *res.HistoryRelErr)
		}
		fmt.Fprintln(w)
	}
	if res.StageS != nil {
		fmt.Fprintf(w, "stages: sample %.2fs, transfer %.2fs, train %.2fs, eval %.2fs; data wait %.2fs; overlap %.2f; efficiency %.2f\n",
			res.StageS["sample"], res.StageS["transfer"], res.StageS["train"], res.StageS["eval"], res.DataWaitS, res.Overlap, res.Efficiency)
	}
	return nil
}

// progress prints progress to a terminal in place, or as occasional lines
// to anything else.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	last  time.Time
	open  bool // a line is being rewritten in place
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) printf(format string, a ...any) {
	if p.quiet {
		return
	}
	p.done()
	fmt.Fprintf(p.w, format, a...)
}

// line shows an updating status line: rewritten in place on a terminal,
// otherwise printed at most every two seconds (and always when final).
func (p *progress) line(final bool, format string, a ...any) {
	if p.quiet {
		return
	}
	s := fmt.Sprintf(format, a...)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", s)
		p.open = true
		return
	}
	if final || time.Since(p.last) >= 2*time.Second {
		fmt.Fprintln(p.w, s)
		p.last = time.Now()
	}
}

func (p *progress) done() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func (p *progress) stage(stage string, frac float64) {
	p.line(frac >= 1, "%s %3.0f%%", stage, 100*frac)
}

func (p *progress) epoch(st train.EpochStat, total int) {
	s := fmt.Sprintf("epoch %d/%d  loss %.4f  train %.3f", st.Epoch, total, st.Loss, st.TrainAcc)
	if st.Evaluated {
		s += fmt.Sprintf("  val %.3f (loss %.4f)  test %.3f", st.ValAcc, st.ValLoss, st.TestAcc)
	}
	s += fmt.Sprintf("  %.2fs", st.TrainS+st.EvalS)
	p.line(st.Epoch == total, "%s", s)
}
