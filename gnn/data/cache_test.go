package data

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// ringDataset returns a small valid dataset: a symmetric ring of n nodes.
func ringDataset(n, f, k int) *Dataset {
	src := make([]int32, 0, 2*n)
	dst := make([]int32, 0, 2*n)
	for v := 0; v < n; v++ {
		u := (v + 1) % n
		src = append(src, int32(v), int32(u))
		dst = append(dst, int32(u), int32(v))
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		panic(err)
	}
	r := rng.New(5)
	x := make([]float32, n*f)
	for i := range x {
		x[i] = r.Float32()
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i % k)
	}
	y[0] = -1
	return &Dataset{Name: "ring", Graph: g, X: x, NumFeatures: f, Y: y, NumClasses: k}
}

func sameDataset(t *testing.T, want, got *Dataset) {
	t.Helper()
	if got.Name != want.Name || got.NumFeatures != want.NumFeatures || got.NumClasses != want.NumClasses || got.Graph.N != want.Graph.N {
		t.Fatalf("scalars differ: got %q %d %d %d, want %q %d %d %d", got.Name, got.NumFeatures, got.NumClasses, got.Graph.N,
			want.Name, want.NumFeatures, want.NumClasses, want.Graph.N)
	}
	if !slices.Equal(got.Graph.Indptr, want.Graph.Indptr) || !slices.Equal(got.Graph.Indices, want.Graph.Indices) {
		t.Error("graph differs")
	}
	if !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) {
		t.Error("features or labels differ")
	}
	if (got.Split == nil) != (want.Split == nil) {
		t.Fatalf("split presence: got %v, want %v", got.Split != nil, want.Split != nil)
	}
	if want.Split != nil && (!slices.Equal(got.Split.Train, want.Split.Train) ||
		!slices.Equal(got.Split.Valid, want.Split.Valid) || !slices.Equal(got.Split.Test, want.Split.Test)) {
		t.Error("split differs")
	}
}

func TestCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, withSplit := range []bool{false, true} {
		d := ringDataset(50, 3, 4)
		if withSplit {
			s, err := PerClassSplit(d.Y, 4, 2, 5, 10, 1)
			if err != nil {
				t.Fatal(err)
			}
			s.Valid = nil // an empty part must survive too
			d.Split = s
		}
		path := filepath.Join(dir, fmt.Sprintf("ring-%v.gsd", withSplit))
		if err := Save(path, d); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		sameDataset(t, d, got)
		if err := Release(got); err != nil {
			t.Fatal(err)
		}
		if err := Release(got); err != nil { // second release is a no-op
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestCacheAlignment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.gsd")
	d := ringDataset(7, 3, 2)
	d.Name = "odd-length-name"
	if err := Save(path, d); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeCacheHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, off := range h.sectionOffs {
		if off%64 != 0 {
			t.Errorf("section %d at offset %d, not 64-byte aligned", i, off)
		}
	}
	if uint64(len(b)) != h.fileSize {
		t.Errorf("file is %d bytes, header says %d", len(b), h.fileSize)
	}
}

// TestCacheReplaceWhileMapped checks that saving over a file does not disturb
// a Dataset still mapped from the old one.
func TestCacheReplaceWhileMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.gsd")
	d1 := ringDataset(30, 2, 3)
	if err := Save(path, d1); err != nil {
		t.Fatal(err)
	}
	old, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(old)
	d2 := ringDataset(40, 5, 2)
	d2.Name = "bigger"
	if err := Save(path, d2); err != nil {
		t.Fatal(err)
	}
	sameDataset(t, d1, old)
	now, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(now)
	sameDataset(t, d2, now)
}

func TestCacheSaveErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Save(filepath.Join(dir, "missing", "x.gsd"), ringDataset(5, 1, 2)); err == nil {
		t.Error("save into a missing directory succeeded")
	}
	bad := ringDataset(5, 1, 2)
	bad.Y = bad.Y[:3]
	if err := Save(filepath.Join(dir, "bad.gsd"), bad); err == nil || !strings.Contains(err.Error(), "3 labels for 5 nodes") {
		t.Errorf("invalid dataset: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed saves left files: %v", entries)
	}
}

func TestCacheLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gsd")
	d := ringDataset(20, 2, 3)
	d.Split = &Split{Train: []int32{1, 2}, Valid: []int32{3}, Test: []int32{4, 5}}
	if err := Save(good, d); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeCacheHeader(orig)
	if err != nil {
		t.Fatal(err)
	}
	// rewrite returns a copy of the file with a header field changed and the
	// header checksum recomputed, so that the deeper checks are reached.
	rewrite := func(off int, v uint64) []byte {
		b := slices.Clone(orig)
		binary.LittleEndian.PutUint64(b[off:], v)
		binary.LittleEndian.PutUint32(b[cacheCRCOffset:], crc32c(b[:cacheCRCOffset]))
		return b
	}
	put32 := func(b []byte, off uint64, v int32) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b[off:], uint32(v))
		return b
	}
	putF32 := func(b []byte, off uint64, v float32) []byte {
		return put32(b, off, int32(math.Float32bits(v)))
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "too small"},
		{"short", orig[:100], "too small"},
		{"truncated", orig[:len(orig)-3], "truncated"},
		{"trailing", append(slices.Clone(orig), 0), "trailing bytes"},
		{"magic", append([]byte("NOTACACHE"), orig[9:]...), "bad magic"},
		{"checksum", put32(orig, 30, 99), "checksum mismatch"},
		{"version", func() []byte {
			b := slices.Clone(orig)
			binary.LittleEndian.PutUint32(b[8:], 7)
			return b
		}(), "version 7"},
		{"size field", rewrite(88, h.fileSize+64), "sizes add up to"},
		{"nodes", rewrite(24, 1<<40), "int32 index range"},
		{"flags", rewrite(16, 6), "unknown header flags"},
		{"classes 2e9", rewrite(48, 2e9), "2000000000 classes for 20 nodes"},
		{"classes 21", rewrite(48, 21), "21 classes for 20 nodes"},
		{"nan feature", putF32(orig, h.sectionOffs[3]+4*(2*7+1), float32(math.NaN())), "feature row 7, column 1 is NaN"},
		{"inf feature", putF32(orig, h.sectionOffs[3]+4*2*3, float32(math.Inf(-1))), "feature row 3, column 0 is -Inf"},
		{"edge index", put32(orig, h.sectionOffs[2]+8, 20), "out of range"},
		{"indptr", put32(orig, h.sectionOffs[1]+8*3, 1000), "indptr"},
		{"label", put32(orig, h.sectionOffs[4]+4*2, 9), "label 9 of node 2"},
		{"split", put32(orig, h.sectionOffs[7], -4), "test split node -4"},
	} {
		path := filepath.Join(dir, tc.name+".gsd")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err == nil {
			Release(got)
			t.Errorf("%s: loaded a damaged file", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q, want it to name the file and mention %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "nope.gsd")); err == nil || !strings.Contains(err.Error(), "nope.gsd") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(dir); err == nil {
		t.Error("loading a directory succeeded")
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// BenchmarkCacheLoad measures reopening a cached dataset. The large case has
// the size of ogbn-products (2.4M nodes, 60M stored edges, 100 features;
// about 1.2 GB on disk); it is built once per run, which takes a few seconds.
// Run with: go test -run x -bench CacheLoad -benchtime 10x ./gnn/data/
func BenchmarkCacheLoad(b *testing.B) {
	for _, size := range []struct {
		name          string
		nodes, deg, f int
	}{
		{"small", 10_000, 10, 16},
		{"products", 2_400_000, 25, 100},
	} {
		b.Run(size.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), size.name+".gsd")
			start := time.Now()
			if err := Save(path, randomDataset(size.nodes, size.deg, size.f)); err != nil {
				b.Fatal(err)
			}
			b.Logf("built and saved %s in %v", size.name, time.Since(start))
			b.ResetTimer()
			for b.Loop() {
				d, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := Release(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// randomDataset builds a dataset with n nodes and deg random neighbors per
// row quickly (no sorting or symmetrizing: the cache does not need either).
func randomDataset(n, deg, f int) *Dataset {
	indptr := make([]int64, n+1)
	for v := range n {
		indptr[v+1] = int64((v + 1) * deg)
	}
	indices := make([]int32, n*deg)
	x := make([]float32, n*f)
	y := make([]int32, n)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r := rng.New(1)
		for i := range indices {
			indices[i] = int32(r.Uint32n(uint32(n)))
		}
	}()
	go func() {
		defer wg.Done()
		r := rng.New(2)
		for i := range x {
			x[i] = r.Float32()
		}
	}()
	for i := range y {
		y[i] = int32(i % 47)
	}
	wg.Wait()
	return &Dataset{Name: "random", Graph: &graph.CSR{N: n, Indptr: indptr, Indices: indices}, X: x, NumFeatures: f, Y: y, NumClasses: 47}
}

// FuzzCacheHeader feeds arbitrary headers, with a valid checksum, to the
// header decoder: it may refuse them, but must not panic, and a header it
// accepts must describe a layout whose sections fit in its file size and
// whose class count is bounded by its node count. The seeds (run by go
// test) are the header of a valid file and variants of it. Run:
// go test -run x -fuzz FuzzCacheHeader -fuzztime 60s ./gnn/data/
func FuzzCacheHeader(f *testing.F) {
	d := ringDataset(20, 2, 3)
	d.Split = &Split{Train: []int32{1}, Valid: []int32{2}, Test: []int32{3}}
	path := filepath.Join(f.TempDir(), "seed.gsd")
	if err := Save(path, d); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	hdr := b[:cacheHeaderSize]
	f.Add(slices.Clone(hdr))
	for _, field := range []struct {
		off int
		v   uint64
	}{{24, 1 << 40}, {32, 1 << 41}, {40, 1 << 39}, {48, 2e9}, {56, 1 << 17}, {64, 5}, {88, 0}} {
		h := slices.Clone(hdr)
		binary.LittleEndian.PutUint64(h[field.off:], field.v)
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= cacheHeaderSize {
			b = slices.Clone(b[:cacheHeaderSize])
			copy(b, cacheMagic)
			binary.LittleEndian.PutUint32(b[8:], CacheVersion)
			binary.LittleEndian.PutUint32(b[cacheCRCOffset:], crc32c(b[:cacheCRCOffset]))
		}
		h, err := decodeCacheHeader(b)
		if err != nil {
			return
		}
		if h.classes > h.nodes {
			t.Fatalf("accepted %d classes for %d nodes", h.classes, h.nodes)
		}
		end := uint64(cacheHeaderSize)
		for i, off := range h.sectionOffs {
			if off < end || off%cacheAlign != 0 || off > h.fileSize {
				t.Fatalf("section %d at %d: previous ends at %d, file is %d bytes", i, off, end, h.fileSize)
			}
			end = off
		}
	})
}

// FuzzCacheFile feeds whole cache files, their header checksum fixed so
// that the sections are reached, to the loader, both read and mapped: it
// may refuse them, with an error naming the file, but must not crash, and
// a dataset it accepts is valid and saves and loads back the same. Run:
// go test -run x -fuzz FuzzCacheFile -fuzztime 60s ./gnn/data/
func FuzzCacheFile(f *testing.F) {
	dir := f.TempDir()
	d := ringDataset(12, 2, 3)
	d.Split = &Split{Train: []int32{1}, Valid: []int32{2}, Test: []int32{3}}
	seed := filepath.Join(dir, "seed.gsd")
	if err := Save(seed, d); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)-64])
	d.Split = nil
	if err := Save(seed, d); err != nil {
		f.Fatal(err)
	}
	if b, err = os.ReadFile(seed); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	path := filepath.Join(dir, "fuzz.gsd")
	again := filepath.Join(dir, "again.gsd")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		if len(b) >= cacheHeaderSize {
			b = slices.Clone(b)
			binary.LittleEndian.PutUint32(b[cacheCRCOffset:], crc32c(b[:cacheCRCOffset]))
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, readLimit := range []int64{0, readBelow} {
			got, err := load(path, readLimit)
			if err != nil {
				if !strings.Contains(err.Error(), path) {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("loaded an invalid dataset: %v", err)
			}
			if err := Save(again, got); err != nil {
				t.Fatalf("save what was loaded: %v", err)
			}
			back, err := Load(again)
			if err != nil {
				t.Fatalf("load what was saved: %v", err)
			}
			sameDataset(t, got, back)
			Release(back)
			Release(got)
		}
	})
}
