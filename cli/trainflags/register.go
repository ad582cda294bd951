package trainflags

import (
	"github.com/spf13/pflag"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/runner"
)

// Register adds the experiment flags to fl, with defaultModel's
// hyper-parameters as the defaults the help shows.
func (f *Flags) Register(fl *pflag.FlagSet, defaultModel string) {
	f.DefaultModel = defaultModel
	f.Cfg = train.Defaults(nn.Kind(defaultModel))
	sp := runner.DefaultSplit()
	f.Fanout = "25,10"
	fl.StringVar(&f.Data, "data", "synth-tiny", "dataset: preset name, .npz file, OGB or Planetoid folder, or .gsd cache file")
	fl.StringVar((*string)(&f.Cfg.Model), "model", defaultModel, "model: gcn, sage, gat, appnp or gcnii")
	fl.IntVar(&f.Cfg.Layers, "layers", f.Cfg.Layers, "number of message-passing layers (appnp: propagation steps)")
	fl.IntVar(&f.Cfg.Hidden, "hidden", f.Cfg.Hidden, "hidden width")
	fl.IntVar(&f.Cfg.Epochs, "epochs", f.Cfg.Epochs, "training epochs (gcnii: 1500 by default)")
	fl.IntVar(&f.Cfg.Patience, "patience", f.Cfg.Patience, "stop after N epochs without a better epoch by --select (0 = never)")
	fl.StringVar((*string)(&f.Cfg.Select), "select", string(f.Cfg.Select), "epoch whose test accuracy is reported: "+selectChoices())
	fl.Float64Var(&f.Cfg.LR, "lr", f.Cfg.LR, "Adam learning rate")
	fl.Float64Var(&f.Cfg.WeightDecay, "weight-decay", f.Cfg.WeightDecay, "L2 weight decay on weights, not biases")
	fl.Var(optFloatFlag{&f.Cfg.WDOut}, "wd-out", "L2 weight decay on the output layer's weights")
	fl.Float64Var(&f.Cfg.ClipNorm, "clip-norm", 0, "largest global L2 norm of each step's gradients (0 = no clipping)")
	fl.Var(optFloatFlag{&f.Cfg.WDConv}, "wd-conv", "L2 weight decay on the message-passing layers' weights")
	fl.Float64Var(&f.Cfg.Dropout, "dropout", f.Cfg.Dropout, "dropout probability")
	fl.IntVar(&f.Cfg.Heads, "heads", 8, "gat: attention heads in hidden layers (--hidden is then per head)")
	fl.Float64Var(&f.Cfg.AttnDropout, "attn-dropout", 0.6, "gat: dropout on attention coefficients")
	fl.StringVar((*string)(&f.Cfg.Activation), "act", string(f.Cfg.Activation), "activation between gcn, sage and gat layers: "+actChoices())
	fl.Float64Var(&f.Cfg.Alpha, "alpha", f.Cfg.Alpha, "appnp, gcnii: teleport (initial-residual) weight alpha (default 0.1)")
	fl.Float64Var(&f.Cfg.Theta, "theta", f.Cfg.Theta, "gcnii: lambda of the identity mapping (default 0.5)")
	fl.StringVar((*string)(&f.Cfg.Sampler), "sampler", string(f.Cfg.Sampler), "how batches are drawn: full, neighbor or gas")
	fl.IntVar(&f.Cfg.Parts, "parts", 0, "gas: number of graph parts (KWay partition)")
	fl.IntVar(&f.Cfg.PartsPerBatch, "parts-per-batch", 1, "gas: graph parts per mini-batch")
	fl.StringVar((*string)(&f.Cfg.PartBalance), "part-balance", "", "gas: what the parts balance: "+partBalanceChoices())
	fl.StringVar(&f.Fanout, "fanout", f.Fanout, "neighbors sampled per node for each hop, hop 1 first (-1 = all)")
	fl.IntVar(&f.Cfg.BatchSize, "batch-size", f.Cfg.BatchSize, "target nodes per mini-batch")
	fl.Uint64Var(&f.Cfg.Seed, "seed", 0, "seed for initialization, dropout and sampling")
	fl.IntVar(&f.Cfg.Threads, "threads", 0, "CPU threads (0 = all cores)")
	fl.Var(featuresFlag{&f.Cfg.Features, &f.Cfg.FeatureStore}, "features", featuresHelp())
	fl.IntVar(&f.Cfg.EvalEvery, "eval-every", f.Cfg.EvalEvery, "evaluate every N epochs (and at the last)")
	fl.IntVar(&f.Cfg.EvalChunk, "eval-chunk", f.Cfg.EvalChunk, "most destination nodes per block in layer-wise inference (0 = automatic)")
	fl.StringVar(&f.Split, "split", sp.Mode, "auto (the dataset's own split, else per-class), per-class, or frac")
	fl.Uint64Var(&f.SplitSeed, "split-seed", 0, "seed of the per-class or fractional split (default: --seed)")
	fl.IntVar(&f.PerClass, "per-class", sp.PerClass, "per-class split: training nodes per class")
	fl.IntVar(&f.NumValid, "num-valid", sp.NumValid, "per-class split: validation nodes")
	fl.IntVar(&f.NumTest, "num-test", sp.NumTest, "per-class split: test nodes")
	fl.Float64Var(&f.TrainFrac, "train-frac", sp.TrainFrac, "frac split: fraction of labeled nodes for training")
	fl.Float64Var(&f.ValidFrac, "valid-frac", sp.ValidFrac, "frac split: fraction for validation (the rest is test)")
	fl.BoolVar(&f.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.Var((*sizeFlag)(&f.Cfg.MemBudget), "mem-budget", "device memory budget such as 512MiB (0 = unlimited)")
	fl.StringVar((*string)(&f.Cfg.OnOOM), "on-oom", string(train.OOMAbort), "what a batch that runs out of memory does: abort or skip")
	fl.StringVar((*string)(&f.Cfg.MemGuard), "mem-guard", "", "keep batches under --mem-budget by predicting their peak: resample, split or cut")
	fl.StringVar(&f.Cfg.CacheBytes, "cache-bytes", "", "device feature cache size, such as 512MiB or 20% of the rows (0 = none)")
	fl.StringVar((*string)(&f.Cfg.CachePolicy), "cache-policy", "", "rows --cache-bytes keeps: "+cachePolicyChoices())
	fl.StringVar((*string)(&f.Cfg.CutRule), "cut-rule", string(memory.RuleDegreeSum), "edges cut first: "+cutRuleChoices())
	fl.Float64Var(&f.Cfg.EvalCut, "eval-cut", 0, "fraction of every inference block's edges to drop (0 = none)")
	fl.IntVar(&f.Cfg.CutMinKeep, "cut-min-keep", 0, "neighbors every node keeps from an inference cut (0 = automatic, -1 = none)")
	fl.StringVar((*string)(&f.Cfg.CutNorm), "cut-norm", string(train.CutNormRenorm), "edge weights of cut inference blocks: "+cutNormChoices())
	fl.StringVar(&f.Cfg.Device, "device", string(device.KindCPU), "compute device: "+deviceChoices())
	fl.BoolVar(&f.Cfg.AsyncTransfer, "async-transfer", false, "cuda: copy the next batch's features while this one computes")
	fl.StringVar((*string)(&f.Cfg.SamplerDevice), "sampler-device", "", "where neighbor sampling draws: "+samplerDeviceChoices())
	fl.StringVar((*string)(&f.Cfg.Gemm), "gemm", string(device.GemmAuto), "cuda: matrix product: "+gemmChoices())
}
