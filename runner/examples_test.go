package runner

import (
	"path/filepath"
	"testing"
)

// TestExampleSpecs: every spec in examples/ loads and each of its variants
// gives a valid config (device names are checked, not opened).
func TestExampleSpecs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example specs: %v", err)
	}
	for _, f := range files {
		s, err := LoadSpec(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, v := range s.Variants {
			if v.External != nil {
				continue
			}
			if _, err := v.Apply(s.Experiment.Train); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
