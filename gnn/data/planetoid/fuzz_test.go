package planetoid

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzPickle: any bytes in a Planetoid file give a value or an error,
// never a panic (the seed corpus is the fixture's files and graphs whose
// nodes share one neighbour list, within and past the edge bound, and an
// array whose shape overflows).
func FuzzPickle(f *testing.F) {
	for _, name := range []string{"x", "ally", "graph"} {
		for _, proto := range []string{"proto2", "proto4"} {
			b, err := os.ReadFile(filepath.Join("testdata", proto, "ind.tiny."+name))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add(sharedListGraph(4, 10))
	f.Add(sharedListGraph(300, 300))
	wrap := &py2{}
	wrap.op(0x80, 2)
	wrap.array("f4", []int{1 << 33, 1 << 31}, nil) // 2^64 elements: wraps to 0
	wrap.op('.')
	f.Add(wrap.Bytes())
	maxDenseValues = 1 << 20 // a fuzzed shape may not allocate gigabytes
	dir := f.TempDir()
	path := filepath.Join(dir, "ind.fuzz.x")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		readDense(path)
		readLabels(path)
		readGraph(path)
	})
}
