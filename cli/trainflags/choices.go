package trainflags

import (
	"strings"

	"github.com/gnnscope/gnnscope/cli/cmdutil"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// The values the flags' help names, read from the engine's typed lists.
// A flag's help is one clause; what each value does is in 'gnnscope help
// flags' (topic.go).

func selectChoices() string { return cmdutil.Choices(train.Selects(), " or ", nil) }

func actChoices() string {
	return cmdutil.Choices(nn.Activations(), " or ", nil) + " (default " + string(nn.ActReLU) + ")"
}

func partBalanceChoices() string {
	return cmdutil.Choices(train.PartBalances(), " or ", map[train.PartBalance]string{
		train.PartBalanceNodes: "default",
	})
}

func cachePolicyChoices() string {
	return cmdutil.Choices(featcache.Policies(), " or ", map[featcache.Policy]string{
		featcache.PolicyDegree: "default",
	})
}

func cutRuleChoices() string { return cmdutil.Choices(memory.Rules(), " or ", nil) }

func cutNormChoices() string { return cmdutil.Choices(train.CutNorms(), " or ", nil) }

func deviceChoices() string {
	return cmdutil.Choices(device.Kinds(), ", ", nil) + " or " + string(device.KindCUDA) + ":N"
}

func samplerDeviceChoices() string {
	return cmdutil.Choices(device.Kinds(), " or ", map[device.Kind]string{
		device.KindCPU: "default",
	})
}

func gemmChoices() string { return cmdutil.Choices(device.Gemms(), " or ", nil) }

// featuresHelp is --features' help.
func featuresHelp() string {
	return "normalization " + strings.Join(strs(train.FeatureNorms()), "/") +
		" and GPU store " + strings.Join(strs(device.Places()), "/") + ", such as row,uva"
}

// strs is values as strings.
func strs[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
