package trainflags

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFeaturesFlag: --features takes a normalization, a feature store or
// both, in either order; the old values keep working; Config gets both.
func TestFeaturesFlag(t *testing.T) {
	for _, c := range []struct {
		args        []string
		norm, store string
		err         string
	}{
		{nil, "auto", "", ""},
		{[]string{"--features", "row"}, "row", "", ""},
		{[]string{"--features", "none"}, "none", "", ""},
		{[]string{"--features", "uva"}, "auto", "uva", ""},
		{[]string{"--features", "row,device"}, "row", "device", ""},
		{[]string{"--features", "host, none"}, "none", "host", ""},
		{[]string{"--features", "gpu"}, "", "", `"gpu" is neither a normalization (auto, row, none) nor a feature store (device, uva, host)`},
		{[]string{"--features", "row,none"}, "", "", "at most one normalization and one feature store"},
		{[]string{"--features", "uva,host"}, "", "", "at most one normalization and one feature store"},
	} {
		var f Flags
		fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
		f.Register(fl, "sage")
		err := fl.Parse(append(c.args, "--device", "cuda"))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		f.Parsed(fl)
		cfg, err := f.Config()
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if string(cfg.Features) != c.norm || string(cfg.FeatureStore) != c.store {
			t.Errorf("%v: features %q, store %q; want %q, %q", c.args, cfg.Features, cfg.FeatureStore, c.norm, c.store)
		}
	}
}

// TestSamplerDeviceFlag: --sampler-device reaches the config, and applies
// to neighbor sampling only.
func TestSamplerDeviceFlag(t *testing.T) {
	var f Flags
	fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
	f.Register(fl, "sage")
	if err := fl.Parse([]string{"--sampler-device", "cuda", "--device", "cuda"}); err != nil {
		t.Fatal(err)
	}
	f.Parsed(fl)
	if cfg, err := f.Config(); err != nil || cfg.SamplerDevice != "cuda" {
		t.Fatalf("sampler device %q, %v", cfg.SamplerDevice, err)
	}
	var g Flags
	fl = pflag.NewFlagSet("train", pflag.ContinueOnError)
	g.Register(fl, "gcn")
	if err := fl.Parse([]string{"--sampler-device", "cuda", "--device", "cuda"}); err != nil {
		t.Fatal(err)
	}
	g.Parsed(fl)
	if _, err := g.Config(); err == nil || !strings.Contains(err.Error(), "--sampler-device applies to --sampler neighbor only") {
		t.Fatalf("error %v", err)
	}
}
