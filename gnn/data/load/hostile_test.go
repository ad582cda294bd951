package load

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/npz"
)

// hostileClasses rewrites the class count in the header of the .gsd file
// at path and fixes the header checksum, as a deliberate forgery would.
func hostileClasses(t *testing.T, path string, classes uint64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[48:], classes)
	binary.LittleEndian.PutUint32(b[252:], crc32.Checksum(b[:252], crc32.MakeTable(crc32.Castagnoli)))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenHostileClasses is failure F3 of the hostile-input probe: a
// single label of 2e9 made the class count 2e9 and killed datasets stats
// and train. Each form is refused with an error naming the file, and a
// forged entry in the cache folder is ignored and rebuilt.
func TestOpenHostileClasses(t *testing.T) {
	dir := t.TempDir()
	cacheDir := filepath.Join(dir, "cache")

	gsd := filepath.Join(dir, "forged.gsd")
	if err := data.Save(gsd, tinyDataset()); err != nil {
		t.Fatal(err)
	}
	hostileClasses(t, gsd, 2e9)
	if _, err := Open(gsd, Options{CacheDir: cacheDir}); err == nil || !strings.Contains(err.Error(), gsd) ||
		!strings.Contains(err.Error(), "2000000000 classes for 3 nodes") {
		t.Errorf(".gsd with 2e9 classes: %v", err)
	}

	npzPath := writeNPZ(t, dir)
	entry, err := CachePath(npzPath, Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(npzPath, Options{CacheDir: cacheDir}); err != nil {
		t.Fatal(err)
	}
	hostileClasses(t, entry, 2e9)
	r := &recorder{}
	d, err := Open(npzPath, r.opts(cacheDir))
	if err != nil || d.NumClasses != 2 {
		t.Fatalf("forged cache entry: %v", err)
	}
	if len(r.warns) != 1 || !strings.Contains(r.warns[0], entry) || !strings.Contains(r.warns[0], "2000000000 classes") {
		t.Errorf("forged cache entry: warnings %q, want one naming %s", r.warns, entry)
	}

	bad := filepath.Join(dir, "label.npz")
	err = npz.Write(bad, map[string]*npz.Array{
		"adj_indptr":  {Data: []int32{0, 1, 2, 3}},
		"adj_indices": {Data: []int32{1, 2, 0}},
		"adj_shape":   {Data: []int64{3, 3}},
		"attr_matrix": {Shape: []int{3, 2}, Data: []float32{1, 2, 3, 4, 5, 6}},
		"labels":      {Data: []int64{0, 2e9, 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(bad, Options{CacheDir: cacheDir}); err == nil || !strings.Contains(err.Error(), bad) ||
		!strings.Contains(err.Error(), "labels: label 2000000000 of node 1") {
		t.Errorf(".npz with a label of 2e9: %v", err)
	}

	root := writeOGB(t, filepath.Join(dir, "ogb"))
	labels := filepath.Join(root, "raw", "node-label.csv")
	os.Remove(labels + ".gz")
	if err := os.WriteFile(labels, []byte("0\n2000000000\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(root, Options{CacheDir: cacheDir}); err == nil || !strings.Contains(err.Error(), root) ||
		!strings.Contains(err.Error(), "raw/node-label.csv: line 2: label 2000000000") {
		t.Errorf("OGB with a label of 2e9: %v", err)
	}
}

// TestOpenMemLimit checks that Options.MemLimit reaches the .npz loader.
func TestOpenMemLimit(t *testing.T) {
	path := writeNPZ(t, t.TempDir())
	_, err := Open(path, Options{NoCache: true, MemLimit: 64})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "more than the memory limit (64 B)") {
		t.Errorf("64-byte limit: %v", err)
	}
	if _, err := Open(path, Options{NoCache: true, MemLimit: 1 << 20}); err != nil {
		t.Errorf("1 MiB limit: %v", err)
	}
}
