package python

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestExtract(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pyclient")
	if err := Extract(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sitecustomize.py", "gnnscope/__init__.py"} {
		want, err := Files.ReadFile(name)
		if err != nil {
			t.Fatalf("%s is not embedded: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: extracted %q, %v", name, got, err)
		}
	}
	// idempotent: a second extraction leaves the files alone, and
	// restores one that was changed
	site := filepath.Join(dir, "sitecustomize.py")
	os.WriteFile(site, []byte("changed"), 0o644)
	if err := Extract(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(site); string(b) == "changed" {
		t.Error("a changed file was not restored")
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && (d.Name() == "__pycache__" || filepath.Ext(p) == ".pyc" || filepath.Base(p)[0] == '.') {
			t.Errorf("extracted %s", p)
		}
		return nil
	})
}
