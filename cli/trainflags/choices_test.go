package trainflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/featcache"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/train"
)

// TestChoiceFlags: the help of every flag that takes a config choice
// names each value of the choice's list, and each value parses into a
// config that a value outside the list does not.
func TestChoiceFlags(t *testing.T) {
	lists := map[string][]string{
		"select":         strs(train.Selects()),
		"act":            strs(nn.Activations()),
		"part-balance":   strs(train.PartBalances()),
		"cache-policy":   strs(featcache.Policies()),
		"cut-rule":       strs(memory.Rules()),
		"cut-norm":       strs(train.CutNorms()),
		"device":         strs(device.Kinds()),
		"sampler-device": strs(device.Kinds()),
		"gemm":           strs(device.Gemms()),
		"features":       append(strs(train.FeatureNorms()), strs(device.Places())...),
	}
	var f Flags
	fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
	f.Register(fl, "sage")
	for name, values := range lists {
		flag := fl.Lookup(name)
		if flag == nil {
			t.Fatalf("no flag --%s", name)
		}
		for _, v := range values {
			if !strings.Contains(flag.Usage, v) {
				t.Errorf("--%s: help does not name %q: %s", name, v, flag.Usage)
			}
		}
	}
	for name, values := range lists {
		for _, v := range append(values, "bogus") {
			var g Flags
			fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
			g.Register(fl, "sage")
			// the device a GPU choice needs; gas for a part balance
			args := []string{"--" + name, v, "--device", "cuda", "--sampler", "neighbor"}
			if name == "device" {
				args = args[:2]
			}
			if name == "part-balance" {
				args = append(args, "--sampler", "gas", "--parts", "4")
			}
			err := fl.Parse(args)
			if err == nil {
				g.Parsed(fl)
				_, err = g.Config()
			}
			if (err == nil) != (v != "bogus") {
				t.Errorf("--%s %s: error %v", name, v, err)
			}
		}
	}
}
