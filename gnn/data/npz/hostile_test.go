package npz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// sparseFeatureArrays returns a graph of n nodes without edges, one
// feature entry per node and an attr_shape that declares cols columns: a
// small file whose dense feature matrix is n × cols float32.
func sparseFeatureArrays(n int, cols int64) map[string]*Array {
	ptr := make([]int64, n+1)
	idx := make([]int32, n)
	val := make([]float32, n)
	for v := range n {
		ptr[v+1] = int64(v + 1)
		idx[v] = int32(v % 7)
		val[v] = 1
	}
	labels := make([]int8, n)
	for v := range labels {
		labels[v] = int8(v % 7)
	}
	return map[string]*Array{
		"adj_indptr":   {Data: make([]int64, n+1)},
		"adj_indices":  {Data: []int32{}},
		"adj_shape":    {Data: []int64{int64(n), int64(n)}},
		"attr_indptr":  {Data: ptr},
		"attr_indices": {Data: idx},
		"attr_data":    {Data: val},
		"attr_shape":   {Data: []int64{int64(n), cols}},
		"labels":       {Data: labels},
	}
}

// allocated returns the bytes that f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileDenseShape is failure F2 of the hostile-input probe: a small
// .npz whose attr_shape declares (2708, 6e6) asked for 65 GB and died with
// a fatal out-of-memory error; (2708, 1e6) really allocated 10.8 GB. Both
// are refused before allocating, with the estimate.
func TestHostileDenseShape(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cols  int64
		limit int64
		want  string
	}{
		{6e6, 1 << 30, "dense 2708×6000000 float32 feature matrix needs about 60.5 GiB, more than the memory limit (1.0 GiB)"},
		{1e6, 1 << 30, "dense 2708×1000000 float32 feature matrix needs about 10.1 GiB, more than the memory limit (1.0 GiB)"},
		{1e6, 8 << 30, "needs about 10.1 GiB, more than the memory limit (8.0 GiB)"},
		{1<<31 - 1, 0, "more than gnnscope handles"},
		{1e6, 0, "would take 10.1 GiB for 2708 stored values; sparse features are made dense only up to 4096 times"},
		{6e6, 0, "60.5 GiB"}, // the available memory or the ratio refuses it
	} {
		path := filepath.Join(dir, fmt.Sprintf("cols%d.npz", tc.cols))
		if err := WriteCompressed(path, sparseFeatureArrays(2708, tc.cols)); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() > 64<<10 {
			t.Fatalf("hostile file should be small: %v %v", fi.Size(), err)
		}
		var err error
		n := allocated(func() { _, err = LoadGNNBenchmarkWith(path, Options{MemLimit: tc.limit}) })
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "attr_shape") ||
			!strings.Contains(err.Error(), tc.want) {
			t.Errorf("attr_shape (2708, %d), limit %d: error %v, want the file, attr_shape and %q", tc.cols, tc.limit, err, tc.want)
		}
		if n > 16<<20 {
			t.Errorf("attr_shape (2708, %d): refusing it allocated %d bytes", tc.cols, n)
		}
	}
	// The same layout with a plausible width loads under the same limit.
	path := filepath.Join(dir, "ok.npz")
	if err := Write(path, sparseFeatureArrays(2708, 100)); err != nil {
		t.Fatal(err)
	}
	d, err := LoadGNNBenchmarkWith(path, Options{MemLimit: 1 << 30})
	if err != nil || d.NumFeatures != 100 || d.NumClasses != 7 {
		t.Fatalf("plausible file: %v", err)
	}
}

func TestCheckDensify(t *testing.T) {
	// Cora: 2708×1433 from 49216 stored values.
	if err := checkDensify(2708, 1433, 49216, 0); err != nil {
		t.Errorf("Cora: %v", err)
	}
	// 1 GiB is allowed however sparse the data.
	if err := checkDensify(1<<15, 1<<13, 0, 0); err != nil {
		t.Errorf("1 GiB: %v", err)
	}
	if err := checkDensify(1<<15, 1<<13+1, 0, 0); err == nil {
		t.Error("just over 1 GiB from no stored value was allowed")
	}
	// An explicit limit replaces the ratio.
	if err := checkDensify(2708, 200000, 2708, 4<<30); err != nil {
		t.Errorf("explicit limit: %v", err)
	}
}

// TestHostileDenseShapeDefaultLimit loads the 65 GB declaration of F2
// with no explicit limit, the ratio bound aside: the available memory
// refuses it.
func TestHostileDenseShapeDefaultLimit(t *testing.T) {
	avail := data.AvailableMemory()
	if avail == 0 || avail >= 60<<30 {
		t.Skipf("available memory %d unknown or above the 60.5 GiB the file declares", avail)
	}
	path := filepath.Join(t.TempDir(), "cora-6e6.npz")
	if err := WriteCompressed(path, sparseFeatureArrays(2708, 6e6)); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = LoadGNNBenchmark(path) })
	if err == nil || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), "attr_shape: the dense 2708×6000000 float32 feature matrix needs about 60.5 GiB, more than the available memory") {
		t.Errorf("error %v", err)
	}
	if n > 16<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
}

// TestHostileMemberSize checks the per-array bound: a deflated member of
// zeros is legitimate, but it is decompressed only when its declared size
// fits in the limit.
func TestHostileMemberSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zeros.npz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "attr_matrix.npy", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	const rows, cols = 2708, 6200 // 64 MiB of float32 zeros, written in chunks
	w.Write(rawNPY(1, fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols), nil))
	chunk := make([]byte, 4*cols)
	for range rows {
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	z, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	z.memLimit = 16 << 20
	var a *Array
	n := allocated(func() { a, err = z.Read("attr_matrix") })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `array "attr_matrix": its declared size`) ||
		!strings.Contains(err.Error(), "more than the memory limit (16.0 MiB)") {
		t.Errorf("64 MiB member under a 16 MiB limit: %v", err)
	}
	if n > 4<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
	z.memLimit = 128 << 20
	if a, err = z.Read("attr_matrix"); err != nil || len(a.Shape) != 2 || a.Len() != rows*cols {
		t.Errorf("64 MiB member under a 128 MiB limit: %v", err)
	}
}

// TestHostileDeclaredSizeLies checks that a deflated member is decompressed
// only up to its declared size, and that the declared size must be one the
// compressed bytes can hold: a directory entry that understates the data,
// or overstates it beyond what deflate can expand to, is an error without
// allocating the difference.
func TestHostileDeclaredSizeLies(t *testing.T) {
	member := func(shape int, data int) []byte {
		return rawNPY(1, fmt.Sprintf("{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }", shape), make([]byte, data))
	}
	setSize := func(b []byte, size uint32) []byte {
		cd := bytes.LastIndex(b, []byte("PK\x01\x02"))
		binary.LittleEndian.PutUint32(b[cd+24:], size)
		return b
	}
	small := len(member(16, 64))
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		// 64 MiB of zeros behind a header and a directory entry that say 64 bytes.
		{"understated", setSize(zipOf(t, zip.Deflate, map[string][]byte{"a": member(16, 64<<20)}), uint32(small)), "holds more data than its declared size"},
		// 64 bytes of data behind a header and an entry that say 256 MiB.
		{"overstated", setSize(zipOf(t, zip.Deflate, map[string][]byte{"a": member(64<<20, 64)}), uint32(small-64+256<<20)), "deflated member claims"},
	} {
		path := filepath.Join(t.TempDir(), tc.name+".npz")
		if err := os.WriteFile(path, tc.file, 0o600); err != nil {
			t.Fatal(err)
		}
		z, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := allocated(func() { _, err = z.Read("a") })
		z.Close()
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want the file and %q", tc.name, err, tc.want)
		}
		if n > 4<<20 {
			t.Errorf("%s: refusing it allocated %d bytes", tc.name, n)
		}
	}
}
