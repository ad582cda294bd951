package trainflags

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestConfigKeys: every training flag that is not about the data or the
// split names a train config key, and those that are name none.
func TestConfigKeys(t *testing.T) {
	var f Flags
	fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
	f.Register(fl, "gcn")
	notKeys := map[string]bool{"data": true, "no-cache": true, "split": true, "split-seed": true, "per-class": true,
		"num-valid": true, "num-test": true, "train-frac": true, "valid-frac": true}
	fl.VisitAll(func(flag *pflag.Flag) {
		if key := ConfigKey(flag.Name); (key == "") != notKeys[flag.Name] {
			t.Errorf("flag --%s: config key %q", flag.Name, key)
		}
	})
	for _, name := range []string{"json", "spec", "variants", "quiet"} {
		if k := ConfigKey(name); k != "" {
			t.Errorf("flag --%s maps to config key %q", name, k)
		}
	}
	if ConfigKey("fanout") != "fanouts" || ConfigKey("act") != "activation" {
		t.Error("renamed keys")
	}
}
