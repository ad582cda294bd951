package run

import (
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/runner"
)

// TestSpecExampleParses: the spec topic's example is a spec run accepts.
func TestSpecExampleParses(t *testing.T) {
	var b strings.Builder
	for _, l := range strings.Split(specExample, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  ") + "\n")
	}
	spec, err := runner.ParseSpec("help spec", []byte(b.String()))
	if err != nil {
		t.Fatalf("the example of 'gnnscope help spec': %v", err)
	}
	var names []string
	for _, v := range spec.Variants {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, ","); got != "baseline,optimized,workers-only" {
		t.Errorf("variants %s", got)
	}
	if err := spec.Experiment.Validate(); err != nil {
		t.Errorf("experiment: %v", err)
	}
}

// TestHelpTopics: run's help names every topic, and the spec topic every
// built-in variant.
func TestHelpTopics(t *testing.T) {
	long := longHelp()
	for _, c := range NewHelpTopics() {
		if c.Runnable() || c.Long == "" || c.Short == "" {
			t.Errorf("topic %s: runnable %v, long %d bytes, short %q", c.Name(), c.Runnable(), len(c.Long), c.Short)
		}
		if !strings.Contains(long, "\n  "+c.Name()+" ") {
			t.Errorf("run --help does not name the topic %s", c.Name())
		}
	}
	spec := specHelp()
	for _, b := range runner.Builtins() {
		if !strings.Contains(spec, "  "+string(b.Name)+" ") || !strings.Contains(long, string(b.Name)) {
			t.Errorf("built-in variant %s missing from the help", b.Name)
		}
	}
}
