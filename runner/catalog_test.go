package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestModels(t *testing.T) {
	ms := Models()
	if !slices.Contains(ms, "sage") || !slices.Contains(ms, "gcn") {
		t.Fatalf("models %v", ms)
	}
	ms[0] = "changed"
	if Models()[0] == "changed" {
		t.Error("Models returns shared storage")
	}
	for _, m := range Models() {
		if _, err := ConfigFromKeys(nil, m); err != nil {
			t.Errorf("model %s: %v", m, err)
		}
	}
}

func TestCheckDataset(t *testing.T) {
	if err := CheckDataset("synth-tiny"); err != nil {
		t.Errorf("preset: %v", err)
	}
	txt := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(txt, []byte("not a dataset"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"", "no-such-preset", txt} {
		if err := CheckDataset(ref); err == nil {
			t.Errorf("%q accepted", ref)
		}
	}
}
