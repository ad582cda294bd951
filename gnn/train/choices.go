package train

// The config's choices that this package owns, each a type with its
// values and their list (the flags, the spec checker, the workbench's
// form and the help read the lists). The others live with what they
// choose: nn.Activation, featcache.Policy, memory.Rule, device.Kind (the
// device and the sampler's device), device.Gemm and device.Place (the
// feature store); the sampler and the OOM and guard choices in config.go
// and policy.go.

// Select is the criterion that picks the reported epoch (Config.Select).
type Select string

// The epoch selection criteria.
const (
	SelectValAcc  Select = "val-acc"  // the highest validation accuracy, the first on ties
	SelectValLoss Select = "val-loss" // the lowest validation cross-entropy
)

// Selects lists the criteria, the default first.
func Selects() []Select { return []Select{SelectValAcc, SelectValLoss} }

// PartBalance is what GAS's parts balance (Config.PartBalance).
type PartBalance string

// What the parts balance.
const (
	PartBalanceNodes PartBalance = "nodes" // node counts, as METIS and GNNAutoScale do
	PartBalanceEdges PartBalance = "edges" // each node weighs its degree + 1
)

// PartBalances lists what parts may balance, the default first.
func PartBalances() []PartBalance { return []PartBalance{PartBalanceNodes, PartBalanceEdges} }

// FeatureNorm is the normalization of the feature matrix (Config.Features).
type FeatureNorm string

// The feature normalizations.
const (
	// FeaturesAuto is FeaturesRow when every feature is non-negative
	// (bag-of-words data such as Cora), FeaturesNone otherwise.
	FeaturesAuto FeatureNorm = "auto"
	// FeaturesRow scales each feature row to sum 1, as PyG's
	// NormalizeFeatures.
	FeaturesRow  FeatureNorm = "row"
	FeaturesNone FeatureNorm = "none"
)

// FeatureNorms lists the normalizations, the default first.
func FeatureNorms() []FeatureNorm { return []FeatureNorm{FeaturesAuto, FeaturesRow, FeaturesNone} }

// CutNorm is how GCN-normalized models weigh the edges of cut inference
// blocks (Config.CutNorm), with d the full graph's degrees and k those
// left after the cut (self-loops included). Mean aggregation (GraphSAGE)
// always averages over the neighbors kept.
type CutNorm string

// The weightings of cut blocks.
const (
	// CutNormRenorm normalizes the cut graph as a graph of its own:
	// 1/sqrt(k_i k_j). The default: on Cora it cost the least accuracy of
	// the three (see the README).
	CutNormRenorm CutNorm = "renorm"
	// CutNormScale weighs edge (i <- j) sqrt(d_i)/(k_i sqrt(d_j)): row i's
	// full-graph weights scaled by d_i/k_i, exactly as a neighbor-sampled
	// row is weighed in training, so that the row's sum estimates the full
	// row's from the neighbors kept.
	CutNormScale CutNorm = "scale"
	// CutNormKeep keeps every kept edge's full-graph weight
	// 1/sqrt(d_i d_j): a row sums only what is left of it.
	CutNormKeep CutNorm = "keep"
)

// CutNorms lists the weightings, the default first.
func CutNorms() []CutNorm { return []CutNorm{CutNormRenorm, CutNormScale, CutNormKeep} }
