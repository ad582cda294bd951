package npz

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// benchArrays returns a small gnn-benchmark dataset: 5 nodes, directed edges
// 0->1, 1->0 (a pair), 1->2, 2->2 (self-loop), 3->4, 3->4 (duplicate), and an
// explicit zero entry 4->0 that is not an edge. Node 2 has no label.
func benchArrays() map[string]*Array {
	return map[string]*Array{
		// rows: 0:[1] 1:[0,2] 2:[2] 3:[4,4] 4:[0 (zero)]
		"adj_indptr":  {Data: []int32{0, 1, 3, 4, 6, 7}},
		"adj_indices": {Data: []int32{1, 0, 2, 2, 4, 4, 0}},
		"adj_data":    {Data: []float32{1, 1, 1, 1, 1, 1, 0}},
		"adj_shape":   {Data: []int64{5, 5}},
		// features 5×3: node v has value v+1 in column v%3
		"attr_indptr":  {Data: []int64{0, 1, 2, 3, 4, 5}},
		"attr_indices": {Data: []int32{0, 1, 2, 0, 1}},
		"attr_data":    {Data: []float32{1, 2, 3, 4, 5}},
		"attr_shape":   {Data: []int64{5, 3}},
		"labels":       {Data: []int8{0, 1, -1, 1, 0}},
		"class_names":  {Data: []string{"a", "b", "c"}},
		"node_names":   {Data: []string{"n0", "n1", "n2", "n3", "n4"}},
	}
}

func writeNPZ(t *testing.T, arrays map[string]*Array) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mini.npz")
	if err := Write(path, arrays); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadGNNBenchmark(t *testing.T) {
	d, err := LoadGNNBenchmark(writeNPZ(t, benchArrays()))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "mini" || d.NumNodes() != 5 || d.NumFeatures != 3 || d.NumClasses != 3 {
		t.Fatalf("got %q %d nodes %d features %d classes", d.Name, d.NumNodes(), d.NumFeatures, d.NumClasses)
	}
	// Symmetric, no self-loops, no duplicates: {0-1, 1-2, 3-4}.
	wantIndptr := []int64{0, 1, 3, 4, 5, 6}
	wantIndices := []int32{1, 0, 2, 1, 4, 3}
	if !slices.Equal(d.Graph.Indptr, wantIndptr) || !slices.Equal(d.Graph.Indices, wantIndices) {
		t.Errorf("graph %v %v, want %v %v", d.Graph.Indptr, d.Graph.Indices, wantIndptr, wantIndices)
	}
	wantX := []float32{1, 0, 0, 0, 2, 0, 0, 0, 3, 4, 0, 0, 0, 5, 0}
	if !slices.Equal(d.X, wantX) {
		t.Errorf("features %v, want %v", d.X, wantX)
	}
	if !slices.Equal(d.Y, []int32{0, 1, -1, 1, 0}) {
		t.Errorf("labels %v", d.Y)
	}
	if d.Split != nil {
		t.Error("gnn-benchmark files have no split")
	}
}

func TestLoadGNNBenchmarkVariants(t *testing.T) {
	// Dense features, one-hot CSR labels, no adj_data, no class names,
	// compressed members.
	a := benchArrays()
	for _, k := range []string{"attr_indptr", "attr_indices", "attr_data", "attr_shape", "labels", "class_names", "adj_data"} {
		delete(a, k)
	}
	a["attr_matrix"] = &Array{Shape: []int{5, 2}, Data: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	a["labels_indptr"] = &Array{Data: []int32{0, 1, 2, 2, 3, 4}}
	a["labels_indices"] = &Array{Data: []int32{3, 1, 1, 0}}
	a["labels_data"] = &Array{Data: []float32{1, 1, 1, 1}}
	a["labels_shape"] = &Array{Data: []int64{5, 4}}
	path := filepath.Join(t.TempDir(), "dense.npz")
	if err := WriteCompressed(path, a); err != nil {
		t.Fatal(err)
	}
	d, err := LoadGNNBenchmark(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFeatures != 2 || d.X[9] != 10 || d.NumClasses != 4 || !slices.Equal(d.Y, []int32{3, 1, -1, 1, 0}) {
		t.Errorf("got %d features, X=%v, %d classes, Y=%v", d.NumFeatures, d.X, d.NumClasses, d.Y)
	}
	// Without adj_data, the stored 4->0 entry is an edge.
	if !slices.Contains(d.Graph.Neighbors(0), 4) || !slices.Contains(d.Graph.Neighbors(4), 0) {
		t.Errorf("edge 4-0 missing: %v", d.Graph.Indices)
	}
}

func TestLoadGNNBenchmarkErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(a map[string]*Array)
		want   string
	}{
		{"no attributes", func(a map[string]*Array) {
			delete(a, "attr_indptr")
			delete(a, "attr_indices")
			delete(a, "attr_data")
			delete(a, "attr_shape")
		}, "no node attributes"},
		{"no labels", func(a map[string]*Array) { delete(a, "labels") }, "no labels"},
		{"no adjacency", func(a map[string]*Array) { delete(a, "adj_indptr"); delete(a, "adj_indices") }, "not a gnn-benchmark file"},
		{"missing shape", func(a map[string]*Array) { delete(a, "adj_shape") }, `missing array "adj_shape"`},
		{"missing indices", func(a map[string]*Array) { delete(a, "attr_indices") }, `missing array "attr_indices"`},
		{"edge out of range", func(a map[string]*Array) { a["adj_indices"].Data = []int32{1, 0, 2, 2, 4, 9, 0} }, "adj_indices: index 9 at position 5 out of range [0, 5)"},
		{"negative index", func(a map[string]*Array) { a["adj_indices"].Data = []int32{1, 0, 2, -2, 4, 4, 0} }, "index -2"},
		{"not square", func(a map[string]*Array) { a["adj_shape"].Data = []int64{5, 6} }, "5×6, not square"},
		{"indptr length", func(a map[string]*Array) { a["adj_indptr"].Data = []int32{0, 1, 3, 4, 7} }, "adj_indptr has 5 entries"},
		{"indptr end", func(a map[string]*Array) { a["adj_indptr"].Data = []int32{0, 1, 3, 4, 6, 6} }, "ends at 6 but adj_indices has 7"},
		{"indptr order", func(a map[string]*Array) { a["adj_indptr"].Data = []int32{0, 3, 1, 4, 6, 7} }, "decreases at row 1"},
		{"data length", func(a map[string]*Array) { a["adj_data"].Data = []float32{1} }, "adj_data has 1 values for 7 indices"},
		{"float indices", func(a map[string]*Array) { a["adj_indices"].Data = []float32{1, 0, 2, 2, 4, 4, 0} }, "not an integer type"},
		{"shape size", func(a map[string]*Array) { a["adj_shape"].Data = []int64{5} }, "adj_shape must hold two sizes"},
		{"label count", func(a map[string]*Array) { a["labels"].Data = []int8{0, 1, 1} }, "labels have shape [3] for 5 nodes"},
		{"float labels", func(a map[string]*Array) { a["labels"].Data = []float32{0, 1, 1, 1, 1} }, "labels: dtype <f4 is not an integer type"},
		{"class names", func(a map[string]*Array) { a["class_names"].Data = []string{"a"} }, "label 1 but class_names lists only 1 classes"},
		{"nan feature", func(a map[string]*Array) { a["attr_data"].Data = []float32{1, 2, 3, float32(math.NaN()), 5} },
			"attr_data: feature row 3, column 0 is NaN"},
		{"inf feature", func(a map[string]*Array) {
			delete(a, "attr_indptr")
			delete(a, "attr_indices")
			delete(a, "attr_data")
			delete(a, "attr_shape")
			a["attr_matrix"] = &Array{Shape: []int{5, 2}, Data: []float64{0, 1, 2, 3, 4, 5, 6, math.Inf(1), 8, 9}}
		}, "attr_matrix: feature row 3, column 1 is +Inf"},
		{"label 2e9", func(a map[string]*Array) {
			a["labels"].Data = []int64{0, 1, -1, 2e9, 0}
			delete(a, "class_names")
		}, "labels: label 2000000000 of node 3, but a class id must be below the node count (5)"},
		{"label = nodes", func(a map[string]*Array) { a["labels"].Data = []int64{0, 1, -1, 5, 0} }, "label 5 of node 3"},
		{"class names > nodes", func(a map[string]*Array) {
			a["class_names"].Data = []string{"a", "b", "c", "d", "e", "f"}
		}, "class_names lists 6 classes for 5 nodes"},
		{"one-hot classes 2e9", func(a map[string]*Array) {
			delete(a, "labels")
			delete(a, "class_names")
			a["labels_indptr"] = &Array{Data: []int32{0, 1, 1, 1, 1, 1}}
			a["labels_indices"] = &Array{Data: []int32{0}}
			a["labels_shape"] = &Array{Data: []int64{5, 2e9}}
		}, "labels_shape has 2000000000 classes for 5 nodes"},
		{"feature rows", func(a map[string]*Array) {
			a["attr_shape"].Data = []int64{4, 3}
			a["attr_indptr"].Data = []int64{0, 1, 2, 3, 5}
		}, "attr_shape has 4 rows for 5 nodes"},
		{"feature column", func(a map[string]*Array) { a["attr_indices"].Data = []int32{0, 1, 2, 0, 3} }, "attr_indices: index 3 at position 4 out of range [0, 3)"},
		{"feature values", func(a map[string]*Array) { delete(a, "attr_data") }, `missing array "attr_data"`},
		{"zero features", func(a map[string]*Array) {
			a["attr_shape"].Data = []int64{5, 0}
			a["attr_indptr"].Data = []int64{0, 0, 0, 0, 0, 0}
			a["attr_indices"].Data = []int32{}
			a["attr_data"].Data = []float32{}
		}, "0 columns"},
		{"all unlabeled", func(a map[string]*Array) {
			a["labels"].Data = []int8{-1, -1, -1, -1, -1}
			delete(a, "class_names")
		}, "no node has a label"},
		{"multi-label", func(a map[string]*Array) {
			delete(a, "labels")
			a["labels_indptr"] = &Array{Data: []int32{0, 2, 2, 2, 2, 2}}
			a["labels_indices"] = &Array{Data: []int32{0, 1}}
			a["labels_shape"] = &Array{Data: []int64{5, 2}}
		}, "several labels"},
	} {
		a := benchArrays()
		tc.change(a)
		path := writeNPZ(t, a)
		_, err := LoadGNNBenchmark(path)
		if err == nil {
			t.Errorf("%s: loaded without error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q, want the file name and %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadGNNBenchmarkTruncated(t *testing.T) {
	path := writeNPZ(t, benchArrays())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(b) - 1, len(b) / 2, 10, 0} {
		p := filepath.Join(t.TempDir(), "cut.npz")
		os.WriteFile(p, b[:cut], 0o644)
		if _, err := LoadGNNBenchmark(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}

// TestCora loads the real Cora file from the shared datasets folder.
func TestCora(t *testing.T) {
	path := filepath.Join("..", "..", "..", "..", "shared", "datasets", "cora.npz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared dataset %s not available (%v); it lives beside the repository checkout", path, err)
	}
	d, err := LoadGNNBenchmark(path)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "cora" || d.NumNodes() != 2708 || d.NumFeatures != 1433 || d.NumClasses != 7 {
		t.Fatalf("got %q: %d nodes, %d features, %d classes; want cora 2708/1433/7", d.Name, d.NumNodes(), d.NumFeatures, d.NumClasses)
	}
	// The file stores 5429 directed edges; symmetrized and deduplicated they
	// are the 10556 entries of PyG's Planetoid Cora.
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idx, err := f.Read("adj_indices")
	if err != nil {
		t.Fatal(err)
	}
	if idx.Len() != 5429 {
		t.Errorf("stored edges %d, want 5429", idx.Len())
	}
	if got := d.Graph.NumEdges(); got != 10556 {
		t.Errorf("symmetric entries %d, want 10556", got)
	}
	if !d.Graph.IsSymmetric() {
		t.Error("graph is not symmetric")
	}
	for v := int32(0); v < int32(d.NumNodes()); v++ {
		row := d.Graph.Neighbors(v)
		if slices.Contains(row, v) {
			t.Fatalf("self-loop at node %d", v)
		}
		for i := 1; i < len(row); i++ {
			if row[i] <= row[i-1] {
				t.Fatalf("row %d not strictly increasing", v)
			}
		}
	}
	// Binary bag-of-words features: 49216 ones.
	ones := 0
	for _, x := range d.X {
		if x == 1 {
			ones++
		} else if x != 0 {
			t.Fatalf("non-binary feature %v", x)
		}
	}
	if ones != 49216 {
		t.Errorf("%d nonzero features, want 49216", ones)
	}
	counts := make([]int, 7)
	for _, y := range d.Y {
		counts[y]++
	}
	// Class sizes of Cora (Case_Based ... Theory).
	if want := []int{298, 418, 818, 426, 217, 180, 351}; !reflect.DeepEqual(counts, want) {
		t.Errorf("class sizes %v, want %v", counts, want)
	}
	names, err := f.Read("class_names")
	if err != nil || names.Data.([]string)[2] != "Neural_Networks" {
		t.Errorf("class names: %v %v", names, err)
	}
}

// FuzzNPZ feeds arbitrary bytes to the archive reader, the array parser and
// the gnn-benchmark loader: they may fail, but must not panic or allocate
// without bound. Run: go test -run x -fuzz FuzzNPZ -fuzztime 60s ./gnn/data/npz/
// (add -fuzzminimizetime 5s to spend less of that time minimizing).
func FuzzNPZ(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzNPZ holds small valid and damaged archives
	// (kept small so that minimizing new inputs stays quick).
	old := maxDenseValues
	maxDenseValues = 1 << 22
	f.Cleanup(func() { maxDenseValues = old })
	f.Add(zipOf(f, 0, map[string][]byte{"a": rawNPY(2, "{'descr': '<U3', 'fortran_order': False, 'shape': (2, 1), }", make([]byte, 24))}))
	// The hostile-input cases: a declared dense shape of 64 × 1e9, a label
	// of 2e9 and a one-hot label matrix of 2e9 classes, deflated.
	for _, change := range []func(a map[string]*Array){
		func(a map[string]*Array) {},
		func(a map[string]*Array) { a["labels"].Data = []int64{0, 2e9, 1, 1, 0} },
		func(a map[string]*Array) {
			delete(a, "labels")
			a["labels_indptr"] = &Array{Data: []int32{0, 1, 1, 1, 1, 1}}
			a["labels_indices"] = &Array{Data: []int32{0}}
			a["labels_shape"] = &Array{Data: []int64{5, 2e9}}
		},
	} {
		a := sparseFeatureArrays(5, 1e9)
		change(a)
		var buf bytes.Buffer
		if err := Encode(&buf, a, true); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := NewReader(bytes.NewReader(b), int64(len(b)), "fuzz.npz")
		if err != nil {
			return
		}
		for _, name := range file.Names() {
			if a, err := file.Read(name); err == nil {
				a.Int64s()
				a.Float32s()
			}
		}
		if d, err := LoadGNNBenchmarkReader(bytes.NewReader(b), int64(len(b)), "fuzz"); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatalf("loader returned an invalid dataset: %v", err)
			}
		}
	})
}
