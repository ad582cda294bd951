package trainflags

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHelpTopicFlags: the flags topic names only flags that exist, and
// every flag's own help is one clause: no sentence, no semicolon.
func TestHelpTopicFlags(t *testing.T) {
	var f Flags
	fl := pflag.NewFlagSet("train", pflag.ContinueOnError)
	f.Register(fl, "gcn")
	named := regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(flagsHelp, -1)
	if len(named) < 20 {
		t.Fatalf("the flags topic names %d flags", len(named))
	}
	for _, m := range named {
		if fl.Lookup(m[1]) == nil {
			t.Errorf("the flags topic names --%s, which train does not have", m[1])
		}
	}
	fl.VisitAll(func(flag *pflag.Flag) {
		if strings.Contains(flag.Usage, "; ") || strings.Contains(flag.Usage, ". ") || len(flag.Usage) > 90 {
			t.Errorf("--%s's help is more than one clause: %q", flag.Name, flag.Usage)
		}
	})
}
