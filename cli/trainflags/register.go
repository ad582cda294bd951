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
	fl.IntVar(&f.Cfg.Layers, "layers", f.Cfg.Layers, "number of message-passing layers (appnp: propagation steps K, default 10; gcnii: GCN2Conv layers, default 64)")
	fl.IntVar(&f.Cfg.Hidden, "hidden", f.Cfg.Hidden, "hidden width")
	fl.IntVar(&f.Cfg.Epochs, "epochs", f.Cfg.Epochs, "training epochs (gcnii: 1500 by default)")
	fl.IntVar(&f.Cfg.Patience, "patience", f.Cfg.Patience, "stop after N epochs without a better epoch by --select (0 = never; gcnii: 100 by default)")
	fl.StringVar((*string)(&f.Cfg.Select), "select", string(f.Cfg.Select), "epoch whose test accuracy is reported and that --patience counts from: "+selectChoices())
	fl.Float64Var(&f.Cfg.LR, "lr", f.Cfg.LR, "Adam learning rate")
	fl.Float64Var(&f.Cfg.WeightDecay, "weight-decay", f.Cfg.WeightDecay, "L2 weight decay on weights (not biases); with --wd-conv, on the dense layers only")
	fl.Var(optFloatFlag{&f.Cfg.WDOut}, "wd-out", "L2 weight decay on the output layer's weights, overriding --weight-decay and --wd-conv there (GNNAutoScale's Cora settings: 0)")
	fl.Float64Var(&f.Cfg.ClipNorm, "clip-norm", 0, "scale each step's gradients to a global L2 norm of at most this (0 = no clipping; GNNAutoScale's grad_norm)")
	fl.Var(optFloatFlag{&f.Cfg.WDConv}, "wd-conv", "L2 weight decay on the message-passing layers' weights, --weight-decay then covering the dense ones (gcnii: 0.01 on its convolutions, 5e-4 on its linears by default)")
	fl.Float64Var(&f.Cfg.Dropout, "dropout", f.Cfg.Dropout, "dropout probability")
	fl.IntVar(&f.Cfg.Heads, "heads", 8, "gat: attention heads in hidden layers (--hidden is then per head)")
	fl.Float64Var(&f.Cfg.AttnDropout, "attn-dropout", 0.6, "gat: dropout on attention coefficients")
	fl.StringVar((*string)(&f.Cfg.Activation), "act", string(f.Cfg.Activation), "activation between gcn, sage and gat layers: "+actChoices())
	fl.Float64Var(&f.Cfg.Alpha, "alpha", f.Cfg.Alpha, "appnp, gcnii: teleport (initial-residual) weight alpha (default 0.1)")
	fl.Float64Var(&f.Cfg.Theta, "theta", f.Cfg.Theta, "gcnii: lambda of the identity mapping, beta_l = ln(lambda/l + 1) (default 0.5)")
	fl.StringVar((*string)(&f.Cfg.Sampler), "sampler", string(f.Cfg.Sampler), "full (whole graph per step), neighbor (sampled mini-batches) or gas (GNNAutoScale: graph parts plus historical embeddings of their halo); default full for gcn, neighbor for sage")
	fl.IntVar(&f.Cfg.Parts, "parts", 0, "gas: number of graph parts (KWay partition)")
	fl.IntVar(&f.Cfg.PartsPerBatch, "parts-per-batch", 1, "gas: graph parts per mini-batch")
	fl.StringVar((*string)(&f.Cfg.PartBalance), "part-balance", "", "gas: what the parts balance: "+partBalanceChoices())
	fl.StringVar(&f.Fanout, "fanout", f.Fanout, "neighbors sampled per node for each hop, hop 1 first; -1 = all")
	fl.IntVar(&f.Cfg.BatchSize, "batch-size", f.Cfg.BatchSize, "target nodes per mini-batch")
	fl.Uint64Var(&f.Cfg.Seed, "seed", 0, "seed for initialization, dropout and sampling")
	fl.IntVar(&f.Cfg.Threads, "threads", 0, "CPU threads (0 = all cores)")
	fl.Var(featuresFlag{&f.Cfg.Features, &f.Cfg.FeatureStore}, "features", featuresHelp())
	fl.IntVar(&f.Cfg.EvalEvery, "eval-every", f.Cfg.EvalEvery, "evaluate every N epochs (and at the last)")
	fl.IntVar(&f.Cfg.EvalChunk, "eval-chunk", f.Cfg.EvalChunk, "most destination nodes per block in layer-wise inference (0 = automatic: the largest block whose predicted peak fits --mem-budget, or a quarter of the memory available; on the CPU at most 131072 destinations)")
	fl.StringVar(&f.Split, "split", sp.Mode, "auto (the dataset's own split, else per-class), per-class, or frac")
	fl.Uint64Var(&f.SplitSeed, "split-seed", 0, "seed of the per-class or fractional split (default: --seed)")
	fl.IntVar(&f.PerClass, "per-class", sp.PerClass, "per-class split: training nodes per class")
	fl.IntVar(&f.NumValid, "num-valid", sp.NumValid, "per-class split: validation nodes")
	fl.IntVar(&f.NumTest, "num-test", sp.NumTest, "per-class split: test nodes")
	fl.Float64Var(&f.TrainFrac, "train-frac", sp.TrainFrac, "frac split: fraction of labeled nodes for training")
	fl.Float64Var(&f.ValidFrac, "valid-frac", sp.ValidFrac, "frac split: fraction for validation (the rest is test)")
	fl.BoolVar(&f.NoCache, "no-cache", false, "neither read nor write the dataset cache")
	fl.Var((*sizeFlag)(&f.Cfg.MemBudget), "mem-budget", "device memory budget (bytes, or 512MiB, 2GiB, 0.1G; 0 = unlimited): allocations past it fail with an out-of-memory error")
	fl.StringVar((*string)(&f.Cfg.OnOOM), "on-oom", string(train.OOMAbort), "what a batch that runs out of memory does: abort (the run ends with status oom) or skip (record it and go on)")
	fl.StringVar((*string)(&f.Cfg.MemGuard), "mem-guard", "", "keep every batch under --mem-budget by predicting its peak: resample, split or cut (default off)")
	fl.StringVar(&f.Cfg.CacheBytes, "cache-bytes", "", "device feature cache: keep this much of the feature matrix resident on the device (a size such as 0.1G or 512MiB, or a share of the rows such as 20%; 0 = none), so that a training batch moves only the rows it misses from host memory; counts against --mem-budget; --sampler neighbor or gas")
	fl.StringVar((*string)(&f.Cfg.CachePolicy), "cache-policy", "", "rows --cache-bytes keeps: "+cachePolicyChoices())
	fl.StringVar((*string)(&f.Cfg.CutRule), "cut-rule", string(memory.RuleDegreeSum), "edges dropped first by the guard's cut and inference cutting: "+cutRuleChoices())
	fl.Float64Var(&f.Cfg.EvalCut, "eval-cut", 0, "drop this fraction of every inference block's edges by --cut-rule (0 = none); without --mem-budget the selected weights are also evaluated uncut after training (test_acc_uncut), so one run shows what the cut costs")
	fl.IntVar(&f.Cfg.CutMinKeep, "cut-min-keep", 0, "neighbors every node keeps from an inference cut while other edges are left (0 = automatic: with --eval-cut the largest floor that leaves enough edges to cut, else half the mean degree; -1 = none)")
	fl.StringVar((*string)(&f.Cfg.CutNorm), "cut-norm", string(train.CutNormRenorm), "edge weights of cut inference blocks for gcn, appnp and gcnii: "+cutNormChoices())
	fl.StringVar(&f.Cfg.Device, "device", string(device.KindCPU), "compute device: "+deviceChoices())
	fl.BoolVar(&f.Cfg.AsyncTransfer, "async-transfer", false, "cuda: copy batch i+1's features on a copy stream while batch i computes (events order them); no effect on cpu")
	fl.StringVar((*string)(&f.Cfg.SamplerDevice), "sampler-device", "", "where neighbor sampling draws: "+samplerDeviceChoices())
	fl.StringVar((*string)(&f.Cfg.Gemm), "gemm", string(device.GemmAuto), "cuda: matrix product: "+gemmChoices()+"; no effect on cpu")
}
