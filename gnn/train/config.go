package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/internal/enum"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
)

// Config is one training run's settings.
type Config struct {
	Model       nn.Kind `json:"model"`
	Layers      int     `json:"layers"`
	Hidden      int     `json:"hidden"`
	Epochs      int     `json:"epochs"`
	LR          float64 `json:"lr"`
	WeightDecay float64 `json:"weight_decay"`
	Dropout     float64 `json:"dropout"`
	// Heads is GAT's number of attention heads in hidden layers (Hidden is
	// then the width of one head); AttnDropout its dropout on attention
	// coefficients.
	Heads       int     `json:"heads,omitempty"`
	AttnDropout float64 `json:"attn_dropout,omitempty"`
	// Activation between the layers of GCN, GraphSAGE and GAT: relu or
	// elu ("" is relu).
	Activation nn.Activation `json:"activation,omitempty"`
	// Alpha is APPNP's and GCNII's teleport (initial-residual) weight α,
	// Theta GCNII's λ in β_l = ln(λ/l + 1); 0 means the model's default
	// (0.1 and 0.5).
	Alpha float64 `json:"alpha,omitempty"`
	Theta float64 `json:"theta,omitempty"`
	// WDConv, when set, is the weight decay of the message-passing layers'
	// weights (GCNII's convolutions; every layer of GCN, GraphSAGE and
	// GAT), WeightDecay then applying to the dense ones (GCNII's input and
	// output linears, APPNP's MLP). Unset, WeightDecay applies to all.
	WDConv *float64 `json:"wd_conv,omitempty"`
	// WDOut, when set, is the weight decay of the output layer's weights
	// (the last GCN, GraphSAGE or GAT layer, APPNP's second linear,
	// GCNII's output linear), overriding the above; GNNAutoScale's Cora
	// settings, like Kipf & Welling's GCN, leave it undecayed (0).
	WDOut *float64 `json:"wd_out,omitempty"`
	// ClipNorm > 0 scales each step's gradients to a global L2 norm of at
	// most ClipNorm (GNNAutoScale's grad_norm; 0: no clipping).
	ClipNorm float64 `json:"clip_norm,omitempty"`
	// Patience stops training once this many epochs have passed since the
	// best epoch by Select (0: train every epoch).
	Patience int `json:"patience,omitempty"`
	// Select is the criterion that picks the reported epoch and that
	// Patience counts from: SelectValAcc (the highest validation accuracy,
	// the first on ties; "" means it) or SelectValLoss (the lowest
	// validation cross-entropy, as the GCNII paper and PyG's example do).
	Select Select `json:"select,omitempty"`
	// Sampler is SamplerFull (full-batch training on the whole graph),
	// SamplerNeighbor (mini-batches with per-layer fanouts) or SamplerGAS
	// (GNNAutoScale: mini-batches of whole graph parts with historical
	// embeddings of their 1-hop halo).
	Sampler   Sampler `json:"sampler"`
	Fanouts   []int   `json:"fanouts,omitempty"` // hop 1 first, -1 = all neighbors
	BatchSize int     `json:"batch_size,omitempty"`
	Seed      uint64  `json:"seed"`
	// Parts is the number of graph parts of GAS training (KWay partition).
	Parts int `json:"parts,omitempty"`
	// PartsPerBatch is the number of parts per GAS mini-batch.
	PartsPerBatch int `json:"parts_per_batch,omitempty"`
	// PartBalance is what GAS's parts balance: "nodes" (the default, as
	// METIS and GNNAutoScale do) or "edges" (each node weighs its degree
	// + 1, so parts hold similar edge volumes and a batch's halo, hence
	// its memory, varies less with the parts it draws).
	PartBalance PartBalance `json:"part_balance,omitempty"`
	Threads     int         `json:"threads"`
	// Features is "row" (scale each feature row to sum 1, as PyG's
	// NormalizeFeatures), "none", or "auto": row when every feature is
	// non-negative (bag-of-words data such as Cora), none otherwise.
	Features FeatureNorm `json:"features"`
	// EvalChunk bounds the destination nodes per block in layer-wise
	// inference; 0 (the default) sizes blocks automatically: each is the
	// largest whose predicted peak fits the memory budget, or a quarter of
	// the memory available without one.
	EvalChunk int `json:"eval_chunk"`
	// EvalEvery evaluates every this many epochs (and always at the last).
	EvalEvery int `json:"eval_every"`

	// SamplerWorkers > 0 moves sampling and feature gathering off the
	// training goroutine onto that many workers, which prepare batches
	// ahead of training; 0 is the baseline schedule (sample, gather, train,
	// strictly in turn on the training goroutine, like a PyG loader with
	// num_workers=0).
	SamplerWorkers int `json:"sampler_workers"`
	// Prefetch bounds the prepared batches waiting for the trainer (with
	// SamplerWorkers > 0; default 2 per worker).
	Prefetch int `json:"prefetch"`
	// OverlapEval evaluates a snapshot of epoch e's weights while epoch e+1
	// trains; the results are reported for epoch e.
	OverlapEval bool `json:"overlap_eval"`
	// Device is the compute device: "cpu" (the default), "cuda" or
	// "cuda:N" (GPU N; needs a binary built with the cuda tag).
	Device string `json:"device,omitempty"`
	// AsyncTransfer queues each batch's host-to-device feature copy on the
	// device's copy stream, ordered against compute by events, so that
	// batch i+1's copy overlaps batch i's compute; without it every copy
	// waits for the device. The CPU device, whose copies are memcpys,
	// ignores it.
	AsyncTransfer bool `json:"async_transfer,omitempty"`
	// Gemm picks the CUDA device's matrix product: "auto" (the default:
	// cuBLAS where it can be loaded, else the backend's own kernel),
	// "cublas" (required: opening the device fails without it) or "own".
	// run_start's host.gemm records the one used. The CPU device ignores it.
	Gemm device.Gemm `json:"gemm,omitempty"`

	// MemBudget caps the device's live bytes (0 = unlimited): an allocation
	// past it fails with a typed out-of-memory error. Specs may write it as
	// a number of bytes or a size string ("512MiB", "0.1G"). A model whose
	// parameters and Adam state alone exceed it (or, with no budget, the
	// memory the host has left) is refused before it is allocated.
	MemBudget memory.Size `json:"mem_budget,omitempty"`
	// OnOOM is what a training batch that runs out of memory does: OOMAbort
	// (the default, also ""; the run ends with status oom) or OOMSkip (the
	// batch is recorded as an oom event and training moves on).
	OnOOM OOMAction `json:"on_oom,omitempty"`
	// MemGuard keeps every training batch under MemBudget by predicting its
	// peak from its shape before running it: GuardResample draws it again,
	// GuardSplit splits its targets, GuardCut drops edges of its outermost
	// block by CutRule; "" turns the guard off.
	MemGuard GuardMode `json:"mem_guard,omitempty"`
	// CutRule orders the edges the guard and inference cutting drop:
	// random, degree-sum (default), degree-product or degree-cap.
	CutRule memory.Rule `json:"cut_rule,omitempty"`
	// EvalCut drops this fraction of every inference block's edges (by
	// CutRule), e.g. to measure what cutting costs in accuracy; inference
	// blocks are also cut, independently of it, when they would not fit
	// MemBudget.
	EvalCut float64 `json:"eval_cut,omitempty"`
	// CutMinKeep is the number of neighbors (self-loops aside) every
	// destination of an inference block keeps while the cut can take other
	// edges (see memory.Order.MinKeep); -1 protects none. 0 is automatic:
	// with EvalCut, the largest floor that leaves enough edges beyond it
	// to cut, so that the cut spreads over the longest rows; otherwise
	// half the mean degree, rounded up.
	CutMinKeep int `json:"cut_min_keep,omitempty"`
	// CutNorm is how GCN-normalized models (gcn, appnp, gcnii) weigh the
	// edges of cut inference blocks: CutNormRenorm (the default, ""),
	// CutNormScale or CutNormKeep. Mean aggregation (GraphSAGE) always
	// averages over the neighbors kept.
	CutNorm CutNorm `json:"cut_norm,omitempty"`

	// CacheBytes is the device feature cache's byte budget: a size
	// ("0.1G", "512MiB") or a share of the feature matrix ("20%"); "" or
	// "0" is no cache. The cache is allocated from the device's allocator
	// and counts against MemBudget. Mini-batch training only: neighbor
	// sampling, or GAS with the degree policy. Only training batches'
	// input gathers read it; evaluation gathers from host as before.
	CacheBytes string `json:"cache_bytes,omitempty"`
	// CachePolicy picks the rows the cache holds: "degree" (the default,
	// ""; the highest-degree rows) or "frequency" (the rows one
	// pre-sampling pass over an epoch's batches touched most).
	CachePolicy featcache.Policy `json:"cache_policy,omitempty"`
	// FeatureStore is where the feature matrix lives on a CUDA device:
	// "device" (all of it in GPU memory), "uva" (mapped pinned host
	// memory the GPU gathers from), "host" (gathered on the host, then
	// copied) or "" (chosen by the budget; run_start records the choice).
	// The CPU device has only host memory: device and uva need a CUDA
	// device.
	FeatureStore device.Place `json:"feature_store,omitempty"`
	// SamplerDevice is where neighbor sampling runs: "cpu" (the default,
	// "") or "cuda" (a kernel over the CSR kept in device memory, or in
	// mapped pinned host memory when it does not fit).
	SamplerDevice device.Kind `json:"sampler_device,omitempty"`
}

// Sampler names how training batches are drawn (Config.Sampler).
type Sampler string

// The samplers.
const (
	SamplerFull     Sampler = "full"     // one step per epoch on the whole graph
	SamplerNeighbor Sampler = "neighbor" // neighbor-sampled mini-batches
	SamplerGAS      Sampler = "gas"      // GNNAutoScale: graph parts with historical embeddings
)

// Samplers lists the samplers Config.Sampler accepts.
var Samplers = []Sampler{SamplerFull, SamplerNeighbor, SamplerGAS}

// cutRule returns the configured cut rule or the default.
func (c Config) cutRule() memory.Rule {
	if c.CutRule == "" {
		return memory.RuleDegreeSum
	}
	return c.CutRule
}

// Defaults returns the usual hyper-parameters for a model, those of Shchur et
// al.'s benchmark of GNNs on random per-class splits ("Pitfalls of GNN
// evaluation", the source of the gnn-benchmark .npz collection): 2 layers of
// 64, lr 0.01, weight decay 5e-4, dropout 0.5 (GCN also drops input
// features, as Kipf & Welling do). GCN trains full-batch; GraphSAGE on
// neighbor-sampled mini-batches with fanouts 25,10 and batches of 512.
func Defaults(model nn.Kind) Config {
	c := Config{
		Model: model, Layers: 2, Hidden: 64, Epochs: 200, LR: 0.01, WeightDecay: 5e-4, Dropout: 0.5,
		Sampler: SamplerFull, Fanouts: []int{25, 10}, BatchSize: 512, Features: FeaturesAuto, EvalChunk: 0, EvalEvery: 1,
	}
	switch model {
	case nn.KindSAGE:
		c.Sampler = SamplerNeighbor
	case nn.KindGAT:
		// PyG's GAT example on Cora: 8 heads of 8, dropout 0.6 on features
		// and attention, lr 0.005.
		c.Hidden, c.Heads, c.Dropout, c.AttnDropout, c.LR = 8, 8, 0.6, 0.6, 0.005
	case nn.KindAPPNP:
		// APPNP paper / PyG example: K = 10 propagation steps (Layers),
		// α = 0.1, an MLP of 64 hidden, dropout 0.5.
		c.Layers, c.Fanouts, c.Alpha = 10, []int{10}, 0.1
	case nn.KindGCNII:
		// The GCNII paper's Cora setting (Chen et al., 2020): 64 layers of
		// 64, α = 0.1, λ = 0.5, dropout 0.6, lr 0.01, weight decay 0.01 on
		// the convolutions and 5e-4 on the input and output linears, 1500
		// epochs with patience 100.
		wd := 0.01
		c.Layers, c.Dropout, c.Fanouts, c.Alpha, c.Theta, c.WDConv = 64, 0.6, []int{10}, 0.1, 0.5, &wd
		c.Epochs, c.Patience = 1500, 100
	}
	return c
}

// problems collects a config's problems, one message each.
type problems []string

func (p *problems) add(f string, a ...any) { *p = append(*p, fmt.Sprintf(f, a...)) }

// Validate reports impossible settings with a message naming the setting.
func (c Config) Validate() error {
	var p problems
	c.checkModel(&p)
	if c.Gemm != "" && !slices.Contains(device.Gemms(), c.Gemm) {
		p.add("gemm %q: want %s", c.Gemm, enum.Or(device.Gemms()))
	}
	if c.Threads < 0 {
		p.add("threads %d: want 0 (all cores) or a positive count", c.Threads)
	}
	c.checkSampler(&p)
	c.checkSchedule(&p)
	c.checkMemory(&p)
	c.checkGPUData(&p)
	if len(p) > 0 {
		return fmt.Errorf("invalid training config: %s", strings.Join(p, "; "))
	}
	return nil
}

// checkModel checks the model, the optimizer and the epoch selection.
func (c Config) checkModel(p *problems) {
	if !slices.Contains(nn.Kinds, c.Model) {
		p.add("model %q is not one of %s", c.Model, strings.Join(nn.KindNames(), ", "))
	}
	if c.Layers < 1 || c.Layers > MaxLayers {
		p.add("layers must be between 1 and %d, got %d", MaxLayers, c.Layers)
	}
	if c.Hidden < 1 {
		p.add("hidden must be at least 1, got %d", c.Hidden)
	}
	if c.Epochs < 1 {
		p.add("epochs must be at least 1, got %d", c.Epochs)
	}
	if c.LR <= 0 {
		p.add("lr must be positive, got %g", c.LR)
	}
	if c.WeightDecay < 0 {
		p.add("weight decay must be non-negative, got %g", c.WeightDecay)
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		p.add("dropout must be in [0, 1), got %g", c.Dropout)
	}
	if c.Model == nn.KindGAT {
		if c.Heads < 1 {
			p.add("gat needs at least 1 head, got %d", c.Heads)
		}
		if c.AttnDropout < 0 || c.AttnDropout >= 1 {
			p.add("attention dropout must be in [0, 1), got %g", c.AttnDropout)
		}
	}
	if c.Activation != "" && !slices.Contains(nn.Activations(), c.Activation) {
		p.add("activation %q is not one of %s", c.Activation, enum.Join(nn.Activations(), ", "))
	}
	if c.Activation != "" && c.Activation != nn.ActReLU && (c.Model == nn.KindAPPNP || c.Model == nn.KindGCNII) {
		p.add("%s applies its own ReLU: activation %q is for gcn, sage and gat", c.Model, c.Activation)
	}
	c.checkOptimizer(p)
}

// checkOptimizer checks the models' constants, the optimizer's settings
// and the epoch selection.
func (c Config) checkOptimizer(p *problems) {
	if c.Alpha < 0 || c.Alpha > 1 {
		p.add("alpha must be in [0, 1] (0 = the model's default), got %g", c.Alpha)
	}
	if c.Theta < 0 {
		p.add("theta must be non-negative (0 = the model's default), got %g", c.Theta)
	}
	if c.WDConv != nil && *c.WDConv < 0 {
		p.add("conv weight decay must be non-negative, got %g", *c.WDConv)
	}
	if c.WDOut != nil && *c.WDOut < 0 {
		p.add("output weight decay must be non-negative, got %g", *c.WDOut)
	}
	if c.ClipNorm < 0 {
		p.add("clip norm must be non-negative, got %g", c.ClipNorm)
	}
	if c.Patience < 0 {
		p.add("patience must be non-negative, got %d", c.Patience)
	}
	if c.Select != "" && !slices.Contains(Selects(), c.Select) {
		p.add("select %q is not one of %s", c.Select, enum.Join(Selects(), ", "))
	}
}

// checkSampler checks the sampler and the settings it needs.
func (c Config) checkSampler(p *problems) {
	switch c.Sampler {
	case SamplerFull:
	case SamplerNeighbor:
		if len(c.Fanouts) != c.Layers {
			p.add("neighbor sampling needs one fanout per layer: %d fanouts for %d layers", len(c.Fanouts), c.Layers)
		}
		for _, f := range c.Fanouts {
			if f == 0 || f < -1 {
				p.add("fanout %d is invalid (positive, or -1 for all neighbors)", f)
			}
		}
		if c.BatchSize < 1 {
			p.add("batch size must be at least 1, got %d", c.BatchSize)
		}
	case SamplerGAS:
		if c.Parts < 1 {
			p.add("gas needs at least 1 part (--parts), got %d", c.Parts)
		}
		if c.PartsPerBatch < 1 {
			p.add("gas needs at least 1 part per batch (--parts-per-batch), got %d", c.PartsPerBatch)
		}
		if c.PartBalance != "" && !slices.Contains(PartBalances(), c.PartBalance) {
			p.add("part balance %q is not one of %s", c.PartBalance, enum.Join(PartBalances(), ", "))
		}
		if c.OverlapEval {
			p.add("overlapped evaluation is not supported with --sampler gas (evaluation refreshes the histories)")
		}
	default:
		p.add("sampler %q is not one of full, neighbor, gas", c.Sampler)
	}
}

// checkSchedule checks the features, evaluation, workers and device.
func (c Config) checkSchedule(p *problems) {
	if !slices.Contains(FeatureNorms(), c.Features) {
		p.add("features %q is not one of %s", c.Features, enum.Join(FeatureNorms(), ", "))
	}
	if c.EvalChunk < 0 {
		p.add("eval chunk must be non-negative (0 = automatic), got %d", c.EvalChunk)
	}
	if c.SamplerWorkers < 0 {
		p.add("sampler workers must be non-negative, got %d", c.SamplerWorkers)
	}
	if c.Prefetch < 0 {
		p.add("prefetch must be non-negative, got %d", c.Prefetch)
	}
	if c.SamplerWorkers > 0 && c.Sampler != SamplerNeighbor {
		p.add("sampler workers prepare sampled mini-batches: they need --sampler neighbor")
	}
	if _, _, err := device.ParseName(c.Device); err != nil {
		p.add("%v", err)
	}
	if c.EvalEvery < 1 {
		p.add("eval every must be at least 1, got %d", c.EvalEvery)
	}
}

// checkMemory checks the budget, the OOM policy, the guard and cutting.
func (c Config) checkMemory(p *problems) {
	if c.MemBudget < 0 {
		p.add("memory budget must be non-negative, got %d", c.MemBudget)
	}
	switch c.OnOOM {
	case "", OOMAbort, OOMSkip:
	default:
		p.add("on-oom %q is not one of abort, skip", c.OnOOM)
	}
	switch c.MemGuard {
	case "":
	case GuardResample, GuardSplit, GuardCut:
		if c.MemBudget == 0 {
			p.add("the memory guard needs a memory budget")
		}
		if c.Sampler != SamplerNeighbor {
			p.add("the memory guard shapes sampled mini-batches: it needs --sampler neighbor")
		}
	default:
		p.add("memory guard %q is not one of resample, split, cut", c.MemGuard)
	}
	if c.CutRule != "" {
		if err := memory.CheckRule(c.CutRule); err != nil {
			p.add("%v", err)
		}
	}
	if c.EvalCut < 0 || c.EvalCut >= 1 {
		p.add("eval cut must be a fraction in [0, 1), got %g", c.EvalCut)
	}
	if c.CutMinKeep < -1 {
		p.add("cut min keep must be -1 (none), 0 (half the mean degree) or positive, got %d", c.CutMinKeep)
	}
	if c.CutNorm != "" && !slices.Contains(CutNorms(), c.CutNorm) {
		p.add("cut norm %q is not one of %s", c.CutNorm, enum.Join(CutNorms(), ", "))
	}
	c.checkCache(p)
}

// checkCache checks the feature cache's size and policy.
func (c Config) checkCache(p *problems) {
	b, err := featcache.ParseBudget(c.CacheBytes)
	if err != nil {
		p.add("%v", err)
	}
	if err := featcache.CheckPolicy(c.CachePolicy); err != nil {
		p.add("%v", err)
	}
	switch {
	case err != nil:
	case b.IsZero():
		// a policy alone is kept for the variants that add a size
	case c.Sampler == SamplerFull:
		p.add("the feature cache serves mini-batches' input gathers: it needs --sampler neighbor or gas (full-batch training moves the whole feature matrix to the device once)")
	case c.Sampler == SamplerGAS && c.CachePolicy == featcache.PolicyFrequency:
		p.add("cache policy frequency counts a pre-sampling pass of the neighbor sampler: it needs --sampler neighbor (gas: use --cache-policy degree)")
	}
}
