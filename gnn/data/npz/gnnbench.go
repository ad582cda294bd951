package npz

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/profile/units"
)

// maxDenseValues bounds the size of the dense feature matrix built from a
// file's declared shape (16 Gi values, 64 GiB); tests lower it.
var maxDenseValues int64 = 1 << 34

// LoadGNNBenchmark loads a node-classification dataset stored in the
// gnn-benchmark .npz layout:
//
//   - adj_indices, adj_indptr, adj_shape and optionally adj_data: the
//     adjacency as a SciPy CSR matrix (entries whose adj_data is 0 are not
//     edges). The graph is made symmetric, without duplicate entries and
//     without self-loops.
//   - attr_data, attr_indices, attr_indptr, attr_shape (sparse CSR) or
//     attr_matrix (dense): the node features.
//   - labels (any integer dtype; negative means unlabeled), or the one-hot
//     CSR form labels_data, labels_indices, labels_indptr, labels_shape.
//   - class_names (optional): fixes the number of classes.
//
// Other members (node_names, idx_to_node, ...) are ignored. The dataset is
// named after the file and has no split (see data.PerClassSplit). Every
// error names the file and the problem.
//
// Sizes that the file declares are checked against what it holds before
// anything is allocated: a class count may not exceed the node count, and
// the dense feature matrix (rows × columns × 4 bytes, which a small sparse
// file may legitimately declare) must fit in the available memory.
func LoadGNNBenchmark(path string) (*data.Dataset, error) {
	return LoadGNNBenchmarkWith(path, Options{})
}

// Options control LoadGNNBenchmarkWith.
type Options struct {
	// MemLimit is the memory in bytes that the arrays and the dense
	// feature matrix may take; a file that declares more is refused with
	// the estimate. 0 means the memory available on the host (see
	// data.AvailableMemory).
	MemLimit int64
}

// LoadGNNBenchmarkWith is LoadGNNBenchmark with options.
func LoadGNNBenchmarkWith(path string, opt Options) (*data.Dataset, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	f.memLimit = opt.MemLimit
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	d, err := gnnBenchmark(f, name)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return d, nil
}

// LoadGNNBenchmarkReader is LoadGNNBenchmark for an archive held in r;
// name is the dataset's name and is used in error messages.
func LoadGNNBenchmarkReader(r io.ReaderAt, size int64, name string) (*data.Dataset, error) {
	f, err := NewReader(r, size, name)
	if err != nil {
		return nil, err
	}
	d, err := gnnBenchmark(f, name)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	return d, nil
}

func gnnBenchmark(f *File, name string) (*data.Dataset, error) {
	if !f.Has("adj_indptr") && !f.Has("adj_indices") {
		return nil, fmt.Errorf("no adjacency (adj_indices, adj_indptr, adj_shape): not a gnn-benchmark file (arrays: %s)", strings.Join(f.names, ", "))
	}
	g, err := readAdjacency(f)
	if err != nil {
		return nil, err
	}
	n := g.N
	x, nf, err := readFeatures(f, n)
	if err != nil {
		return nil, err
	}
	y, classes, err := readLabels(f, n)
	if err != nil {
		return nil, err
	}
	d := &data.Dataset{
		Name:        name,
		Graph:       g.Symmetrize().RemoveSelfLoops(),
		X:           x,
		NumFeatures: nf,
		Y:           y,
		NumClasses:  classes,
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// sparseCSR is a SciPy CSR matrix as stored in the file, checked.
type sparseCSR struct {
	rows, cols int
	indptr     []int64
	indices    []int64
	values     []float32 // nil when the file has no data array
}

// readCSR reads prefix_indptr, prefix_indices, prefix_shape and (optionally
// unless needData) prefix_data, and checks them against each other.
func readCSR(f *File, prefix string, needData bool) (*sparseCSR, error) {
	get := func(suffix string, optional bool) (*Array, error) {
		key := prefix + "_" + suffix
		if !f.Has(key) {
			if optional {
				return nil, nil
			}
			return nil, fmt.Errorf("missing array %q", key)
		}
		return f.Read(key)
	}
	shapeArr, err := get("shape", false)
	if err != nil {
		return nil, err
	}
	shape, err := shapeArr.Int64s()
	if err != nil || len(shape) != 2 || shape[0] < 0 || shape[1] < 0 || shape[0] > math.MaxInt32 || shape[1] > math.MaxInt32 {
		return nil, fmt.Errorf("%s_shape must hold two sizes below 2^31, got %v (%s)", prefix, shapeArr.Data, shapeArr.descrOrType())
	}
	m := &sparseCSR{rows: int(shape[0]), cols: int(shape[1])}
	ptrArr, err := get("indptr", false)
	if err != nil {
		return nil, err
	}
	if m.indptr, err = ptrArr.Int64s(); err != nil {
		return nil, fmt.Errorf("%s_indptr: %w", prefix, err)
	}
	if len(m.indptr) != m.rows+1 {
		return nil, fmt.Errorf("%s_indptr has %d entries, %s_shape says %d rows (want rows+1)", prefix, len(m.indptr), prefix, m.rows)
	}
	idxArr, err := get("indices", false)
	if err != nil {
		return nil, err
	}
	if m.indices, err = idxArr.Int64s(); err != nil {
		return nil, fmt.Errorf("%s_indices: %w", prefix, err)
	}
	if m.indptr[0] != 0 {
		return nil, fmt.Errorf("%s_indptr starts at %d, want 0", prefix, m.indptr[0])
	}
	for i := 0; i < m.rows; i++ {
		if m.indptr[i+1] < m.indptr[i] {
			return nil, fmt.Errorf("%s_indptr decreases at row %d (%d > %d)", prefix, i, m.indptr[i], m.indptr[i+1])
		}
	}
	if last := m.indptr[m.rows]; last != int64(len(m.indices)) {
		return nil, fmt.Errorf("%s_indptr ends at %d but %s_indices has %d entries", prefix, last, prefix, len(m.indices))
	}
	for i, c := range m.indices {
		if c < 0 || c >= int64(m.cols) {
			return nil, fmt.Errorf("%s_indices: index %d at position %d out of range [0, %d)", prefix, c, i, m.cols)
		}
	}
	dataArr, err := get("data", !needData)
	if err != nil {
		return nil, err
	}
	if dataArr != nil {
		if m.values, err = dataArr.Float32s(); err != nil {
			return nil, fmt.Errorf("%s_data: %w", prefix, err)
		}
		if len(m.values) != len(m.indices) {
			return nil, fmt.Errorf("%s_data has %d values for %d indices", prefix, len(m.values), len(m.indices))
		}
	}
	return m, nil
}

// readAdjacency returns the stored adjacency as a (not yet symmetric) CSR.
func readAdjacency(f *File) (*graph.CSR, error) {
	m, err := readCSR(f, "adj", false)
	if err != nil {
		return nil, err
	}
	if m.rows != m.cols {
		return nil, fmt.Errorf("adjacency is %d×%d, not square", m.rows, m.cols)
	}
	g := &graph.CSR{N: m.rows, Indptr: make([]int64, m.rows+1), Indices: make([]int32, 0, len(m.indices))}
	for v := 0; v < m.rows; v++ {
		for e := m.indptr[v]; e < m.indptr[v+1]; e++ {
			if m.values != nil && m.values[e] == 0 {
				continue // explicit zero: not an edge
			}
			g.Indices = append(g.Indices, int32(m.indices[e]))
		}
		g.Indptr[v+1] = int64(len(g.Indices))
	}
	return g, nil
}

// readFeatures returns the dense row-major feature matrix.
func readFeatures(f *File, n int) ([]float32, int, error) {
	switch {
	case f.Has("attr_indptr") || f.Has("attr_data"):
		m, err := readCSR(f, "attr", true)
		if err != nil {
			return nil, 0, err
		}
		if m.rows != n {
			return nil, 0, fmt.Errorf("attr_shape has %d rows for %d nodes", m.rows, n)
		}
		if err := checkDense("attr_shape", n, m.cols, f.memLimit); err != nil {
			return nil, 0, err
		}
		if err := checkDensify(n, m.cols, len(m.indices), f.memLimit); err != nil {
			return nil, 0, err
		}
		x := make([]float32, n*m.cols)
		for v := 0; v < n; v++ {
			row := x[v*m.cols : (v+1)*m.cols]
			for e := m.indptr[v]; e < m.indptr[v+1]; e++ {
				if val := m.values[e]; val-val != 0 {
					return nil, 0, fmt.Errorf("attr_data: feature row %d, column %d is %v (node features must be finite)", v, m.indices[e], val)
				}
				row[m.indices[e]] += m.values[e] // duplicates add up, as in SciPy
			}
		}
		return x, m.cols, nil
	case f.Has("attr_matrix"):
		a, err := f.Read("attr_matrix")
		if err != nil {
			return nil, 0, err
		}
		if len(a.Shape) != 2 || a.Shape[0] != n {
			return nil, 0, fmt.Errorf("attr_matrix has shape %v, want (%d, features)", a.Shape, n)
		}
		if err := checkDense("attr_matrix", n, a.Shape[1], f.memLimit); err != nil {
			return nil, 0, err
		}
		x, err := a.Float32s()
		if err != nil {
			return nil, 0, fmt.Errorf("attr_matrix: %w", err)
		}
		if err := data.CheckFinite(x, a.Shape[1]); err != nil {
			return nil, 0, fmt.Errorf("attr_matrix: %w", err)
		}
		return x, a.Shape[1], nil
	}
	return nil, 0, errors.New("no node attributes (attr_data/attr_indices/attr_indptr/attr_shape or attr_matrix); gnnscope needs node features")
}

// checkDense checks the n × cols dense feature matrix that field declares
// before it is allocated: against maxDenseValues, and its size in bytes
// against limit (see data.CheckAlloc). Both errors give the estimate.
func checkDense(field string, n, cols int, limit int64) error {
	if cols <= 0 {
		return fmt.Errorf("%s: node features have %d columns", field, cols)
	}
	values := int64(n) * int64(cols)
	if values > maxDenseValues {
		return fmt.Errorf("%s: a dense feature matrix of %d×%d values (%s) is more than gnnscope handles (%d values)",
			field, n, cols, units.Bytes(4*values), maxDenseValues)
	}
	what := fmt.Sprintf("%s: the dense %d×%d float32 feature matrix", field, n, cols)
	return data.CheckAlloc(what, 4*values, limit)
}

// Densifying sparse features: without an explicit memory limit, the dense
// matrix that a sparse attr_* triple declares may take at most
// maxDensifyRatio times the bytes of its stored entries (and row
// pointers), or minDensifyBytes if that is more. Real bag-of-words
// features are denser than 1 in 4096 (Cora's are about 1 in 80), so only
// a shape that the data does not back is refused; an explicit MemLimit
// replaces this bound.
const (
	maxDensifyRatio = 4096
	minDensifyBytes = 1 << 30
)

// checkDensify applies the bound above to an n × cols matrix of nnz
// stored entries.
func checkDensify(n, cols, nnz int, limit int64) error {
	if limit > 0 {
		return nil
	}
	dense := 4 * int64(n) * int64(cols)
	allowed := max(minDensifyBytes, maxDensifyRatio*4*(int64(nnz)+int64(n)))
	if dense <= allowed {
		return nil
	}
	return fmt.Errorf("attr_shape: the dense %d×%d float32 feature matrix would take %s for %d stored values; "+
		"sparse features are made dense only up to %d times their stored size or %s (set a memory limit to allow more)",
		n, cols, units.Bytes(dense), nnz, maxDensifyRatio, units.Bytes(minDensifyBytes))
}

// readLabels returns one label per node (-1 unlabeled) and the class count.
func readLabels(f *File, n int) ([]int32, int, error) {
	y := make([]int32, n)
	maxLabel := int64(-1)
	switch {
	case f.Has("labels"):
		a, err := f.Read("labels")
		if err != nil {
			return nil, 0, err
		}
		if !(len(a.Shape) == 1 || len(a.Shape) == 2 && a.Shape[1] == 1) || a.Len() != n {
			return nil, 0, fmt.Errorf("labels have shape %v for %d nodes, want (%d,)", a.Shape, n, n)
		}
		vals, err := a.Int64s()
		if err != nil {
			return nil, 0, fmt.Errorf("labels: %w", err)
		}
		for i, v := range vals {
			switch {
			case v < 0:
				y[i] = -1
			case v >= int64(n):
				return nil, 0, fmt.Errorf("labels: label %d of node %d, but a class id must be below the node count (%d)", v, i, n)
			default:
				y[i] = int32(v)
				maxLabel = max(maxLabel, v)
			}
		}
	case f.Has("labels_indptr") || f.Has("labels_data"):
		m, err := readCSR(f, "labels", false)
		if err != nil {
			return nil, 0, err
		}
		if m.rows != n {
			return nil, 0, fmt.Errorf("labels_shape has %d rows for %d nodes", m.rows, n)
		}
		if m.cols > n {
			return nil, 0, fmt.Errorf("labels_shape has %d classes for %d nodes (there cannot be more classes than nodes)", m.cols, n)
		}
		for v := 0; v < n; v++ {
			y[v] = -1
			for e := m.indptr[v]; e < m.indptr[v+1]; e++ {
				if m.values != nil && m.values[e] == 0 {
					continue
				}
				if y[v] >= 0 && y[v] != int32(m.indices[e]) {
					return nil, 0, fmt.Errorf("node %d has several labels (%d and %d); multi-label datasets are not supported", v, y[v], m.indices[e])
				}
				y[v] = int32(m.indices[e])
			}
		}
		maxLabel = int64(m.cols) - 1
	default:
		return nil, 0, errors.New("no labels (labels, or labels_data/labels_indices/labels_indptr/labels_shape); gnnscope needs node labels")
	}
	classes := int(maxLabel + 1)
	if f.Has("class_names") {
		a, err := f.Read("class_names")
		switch {
		case errors.Is(err, ErrUnsupported):
			// e.g. a pickled list: the names are optional, skip them.
		case err != nil:
			return nil, 0, err
		default:
			if names, ok := a.Data.([]string); ok && len(a.Shape) == 1 {
				if int64(len(names)) <= maxLabel {
					return nil, 0, fmt.Errorf("label %d but class_names lists only %d classes", maxLabel, len(names))
				}
				if len(names) > n {
					return nil, 0, fmt.Errorf("class_names lists %d classes for %d nodes (there cannot be more classes than nodes)", len(names), n)
				}
				classes = len(names)
			}
		}
	}
	if classes <= 0 {
		return nil, 0, errors.New("no node has a label")
	}
	return y, classes, nil
}
