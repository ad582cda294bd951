package trainflags

import (
	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// The values the flags' help names, read from the engine's typed lists;
// the notes say what each value does.

func selectChoices() string {
	return cmdutil.Choices(train.Selects(), " or ", map[train.Select]string{
		train.SelectValAcc:  "highest validation accuracy",
		train.SelectValLoss: "lowest validation cross-entropy, as the GCNII paper does",
	})
}

func actChoices() string {
	return cmdutil.Choices(nn.Activations(), " or ", nil) + " (default " + string(nn.ActReLU) + ")"
}

func partBalanceChoices() string {
	return cmdutil.Choices(train.PartBalances(), " or ", map[train.PartBalance]string{
		train.PartBalanceNodes: "the default, as METIS and GNNAutoScale",
		train.PartBalanceEdges: "each node weighs its degree + 1: even edge volumes, so batch memory varies less",
	})
}

func cachePolicyChoices() string {
	return cmdutil.Choices(featcache.Policies(), " or ", map[featcache.Policy]string{
		featcache.PolicyDegree:    "the highest-degree nodes; the default",
		featcache.PolicyFrequency: "those a pre-sampling pass over one epoch's batches touched most; --sampler neighbor",
	})
}

func cutRuleChoices() string {
	return cmdutil.Choices(memory.Rules(), ", ", map[memory.Rule]string{
		memory.RuleDegreeCap: "trim the longest neighbor lists first",
	})
}

func cutNormChoices() string {
	return cmdutil.Choices(train.CutNorms(), " or ", map[train.CutNorm]string{
		train.CutNormRenorm: "the cut graph's own degrees",
		train.CutNormScale:  "full-graph weights scaled by d/k, as a sampled row",
		train.CutNormKeep:   "full-graph weights",
	})
}

func deviceChoices() string {
	return cmdutil.Choices(device.Kinds(), ", ", nil) + " or " + string(device.KindCUDA) + ":N (GPU N; needs a binary built with -tags cuda)"
}

func samplerDeviceChoices() string {
	return cmdutil.Choices(device.Kinds(), ", or ", map[device.Kind]string{
		device.KindCPU:  "the default",
		device.KindCUDA: "a GPU kernel over the graph kept in GPU memory, or in mapped pinned host memory when it does not fit; needs --device cuda",
	})
}

func gemmChoices() string {
	return cmdutil.Choices(device.Gemms(), " or ", map[device.Gemm]string{
		device.GemmAuto:   "cuBLAS where found, else the own kernel",
		device.GemmCUBLAS: "required",
	})
}

// featuresHelp is --features' help.
func featuresHelp() string {
	return "feature normalization and/or, on a GPU, where the feature matrix lives, comma-separated (e.g. row,uva): " +
		"normalization " + cmdutil.Choices(train.FeatureNorms(), " or ", map[train.FeatureNorm]string{
		train.FeaturesAuto: "row if all non-negative; the default",
	}) + "; store " + cmdutil.Choices(device.Places(), " or ", map[device.Place]string{
		device.PlaceDevice: "all in GPU memory",
		device.PlaceUVA:    "mapped pinned host memory the GPU gathers from",
		device.PlaceHost:   "gathered on the host, then copied",
	}) + "; without a store, cuda chooses device when the matrix takes at most half the memory left beside the model, else uva (run_start records it)"
}
