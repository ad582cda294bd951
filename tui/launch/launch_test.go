package launch

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLastingExecutable(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "gnnscope")
	if got, err := LastingExecutable(plain, dir); err != nil || got != plain {
		t.Errorf("an installed binary: %q, %v", got, err)
	}
	// a binary of `go run`: copied once, by content
	tmp := filepath.Join(dir, "go-build123", "b001", "exe", "gnnscope")
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "home")
	got, err := LastingExecutable(tmp, root)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(got) != filepath.Join(root, "bin") {
		t.Errorf("copy at %s, want in %s", got, filepath.Join(root, "bin"))
	}
	b, err := os.ReadFile(got)
	if err != nil || !bytes.Equal(b, []byte("#!/bin/sh\necho hi\n")) {
		t.Errorf("copy holds %q, %v", b, err)
	}
	if fi, err := os.Stat(got); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("copy is not executable: %v %v", fi, err)
	}
	again, err := LastingExecutable(tmp, root)
	if err != nil || again != got {
		t.Errorf("second call: %q, %v; want the same copy %q", again, err, got)
	}
	// another build: another copy
	if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho other\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	other, err := LastingExecutable(tmp, root)
	if err != nil || other == got {
		t.Errorf("a changed binary: %q, %v", other, err)
	}
	if _, err := LastingExecutable(filepath.Join(dir, "go-build9", "missing"), root); err == nil {
		t.Error("a missing go-build binary: no error")
	}
}
