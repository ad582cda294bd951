package planetoid

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nlpodyssey/gopickle/types"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/graph"
)

// NumValid is the size of the public split's validation set: the 500 nodes
// after the training nodes in file order (Kipf & Welling; PyG's "public"
// split).
const NumValid = 500

// ErrNoFiles is the error Root wraps when a folder holds no Planetoid
// dataset (as opposed to a broken or ambiguous one).
var ErrNoFiles = errors.New("no Planetoid files")

// parts are the suffixes of a Planetoid dataset's files, ind.NAME.SUFFIX.
var parts = []string{"x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"}

// Root finds the Planetoid files under dir: in dir itself or in its raw/
// folder (PyG's layout, e.g. Cora/raw/). It returns the folder holding
// them and the dataset's name (cora of ind.cora.x).
func Root(dir string) (folder, name string, err error) {
	for _, d := range []string{dir, filepath.Join(dir, "raw")} {
		matches, _ := filepath.Glob(filepath.Join(d, "ind.*.test.index"))
		switch len(matches) {
		case 0:
			continue
		case 1:
			base := filepath.Base(matches[0])
			return d, strings.TrimSuffix(strings.TrimPrefix(base, "ind."), ".test.index"), nil
		default:
			names := make([]string, len(matches))
			for i, m := range matches {
				names[i] = filepath.Base(m)
			}
			return "", "", fmt.Errorf("%s: several Planetoid datasets (%s): give a folder that holds one", d, strings.Join(names, ", "))
		}
	}
	return "", "", fmt.Errorf("%s: %w (expected ind.NAME.test.index beside ind.NAME.{x,tx,allx,y,ty,ally,graph}, here or in raw/)", dir, ErrNoFiles)
}

// Options control Load.
type Options struct {
	// NumValid is the number of validation nodes after the training nodes;
	// 0 means NumValid (500), the public split's.
	NumValid int
}

// Load reads the Planetoid dataset under dir (see Root) and returns it
// with its public split. Nodes are numbered as in the files: allx's rows
// first, then the test nodes at the ids ind.NAME.test.index gives (row i
// of tx and ty is node test.index[i]). Ids between the test nodes that the
// index skips (CiteSeer has 15) are isolated nodes without features or
// label (-1), as in PyG. Labels are the one-hot rows' argmax; a row of
// zeros is unlabeled. The graph is made symmetric without duplicates or
// self-loops. The split: training nodes 0..len(y)-1, validation the next
// NumValid (opt.NumValid), test the indexed nodes.
func Load(dir string, opt Options) (*data.Dataset, error) {
	numValid := opt.NumValid
	if numValid == 0 {
		numValid = NumValid
	}
	if numValid < 0 {
		return nil, fmt.Errorf("planetoid: %d validation nodes", numValid)
	}
	folder, name, err := Root(dir)
	if err != nil {
		return nil, err
	}
	f, err := readFiles(folder, name)
	if err != nil {
		return nil, err
	}
	d, err := f.build(numValid)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", folder, err)
	}
	return d, nil
}

// build checks the decoded files against each other and builds the
// dataset with its public split of numValid validation nodes.
func (f *files) build(numValid int) (*data.Dataset, error) {
	if err := f.check(numValid); err != nil {
		return nil, err
	}
	n, err := f.numNodes()
	if err != nil {
		return nil, err
	}
	d, test, err := f.dataset(n)
	if err != nil {
		return nil, err
	}
	if d.Split, err = publicSplit(d, f.x.rows, numValid, test); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// files holds the decoded contents of a dataset's ind.NAME.* files.
type files struct {
	name        string
	allx, tx, x denseRows
	ally, ty, y labelRows
	testIdx     []int64
	adj         edgeList
}

// readFiles checks that every file of dataset name is in folder, then reads
// them all.
func readFiles(folder, name string) (*files, error) {
	path := func(p string) string { return filepath.Join(folder, "ind."+name+"."+p) }
	for _, p := range parts {
		fi, err := os.Stat(path(p))
		if err != nil {
			return nil, fmt.Errorf("planetoid %s: %w", name, err)
		}
		if !fi.Mode().IsRegular() { // reading a FIFO would wait for a writer
			return nil, fmt.Errorf("planetoid %s: %s is not a regular file (%v)", name, path(p), fi.Mode().Type())
		}
	}
	f := &files{name: name}
	var err error
	if f.allx, err = readDense(path("allx")); err != nil {
		return nil, err
	}
	if f.tx, err = readDense(path("tx")); err != nil {
		return nil, err
	}
	if f.x, err = readDense(path("x")); err != nil {
		return nil, err
	}
	if f.ally, err = readLabels(path("ally")); err != nil {
		return nil, err
	}
	if f.ty, err = readLabels(path("ty")); err != nil {
		return nil, err
	}
	if f.y, err = readLabels(path("y")); err != nil {
		return nil, err
	}
	if f.testIdx, err = readIndex(path("test.index")); err != nil {
		return nil, err
	}
	if f.adj, err = readGraph(path("graph")); err != nil {
		return nil, err
	}
	return f, nil
}

// check verifies that the files agree on the feature width, the number of
// rows and classes and the number of test nodes, and that allx holds the
// training and numValid validation nodes.
func (f *files) check(numValid int) error {
	name, allx, tx, x, ally, ty, y := f.name, f.allx, f.tx, f.x, f.ally, f.ty, f.y
	switch {
	case tx.cols != allx.cols || x.cols != allx.cols:
		return fmt.Errorf("planetoid %s: feature widths differ: allx %d, tx %d, x %d", name, allx.cols, tx.cols, x.cols)
	case ally.rows != allx.rows || ty.rows != tx.rows || y.rows != x.rows:
		return fmt.Errorf("planetoid %s: label rows do not match feature rows: ally %d/allx %d, ty %d/tx %d, y %d/x %d",
			name, ally.rows, allx.rows, ty.rows, tx.rows, y.rows, x.rows)
	case ally.cols != ty.cols || y.cols != ally.cols:
		return fmt.Errorf("planetoid %s: class counts differ: ally %d, ty %d, y %d", name, ally.cols, ty.cols, y.cols)
	case len(f.testIdx) != tx.rows:
		return fmt.Errorf("planetoid %[1]s: %[2]d test indices in ind.%[1]s.test.index for %[3]d rows of ind.%[1]s.tx", name, len(f.testIdx), tx.rows)
	case x.rows+numValid > allx.rows:
		return fmt.Errorf("planetoid %s: %d training and %d validation nodes, but allx has %d rows", name, x.rows, numValid, allx.rows)
	}
	return nil
}

// numNodes checks the test indices and the graph's node ids and returns the
// number of nodes: one past the largest id among allx's rows, the test
// nodes and the graph's endpoints. A single large id asks for a feature
// row, a label and graph offsets for every node below it, so that count is
// checked against the available memory (see nodeBytes) before anything is
// allocated.
func (f *files) numNodes() (int, error) {
	name := f.name
	n, from := f.allx.rows, "allx"
	seen := make(map[int64]bool, len(f.testIdx))
	for _, v := range f.testIdx {
		if v < int64(f.allx.rows) {
			return 0, fmt.Errorf("planetoid %s: test index %d falls among allx's %d rows", name, v, f.allx.rows)
		}
		if v > 1<<30 {
			return 0, fmt.Errorf("planetoid %s: test index %d is too large", name, v)
		}
		if seen[v] {
			return 0, fmt.Errorf("planetoid %s: test index %d appears twice", name, v)
		}
		seen[v] = true
		if int(v) >= n {
			n, from = int(v)+1, "test.index"
		}
	}
	for i, k := range f.adj.src {
		if k < 0 || f.adj.dst[i] < 0 {
			return 0, fmt.Errorf("planetoid %s: graph has a negative node id", name)
		}
		if m := int(max(k, f.adj.dst[i])) + 1; m > n {
			n, from = m, "graph"
		}
	}
	what := fmt.Sprintf("planetoid %s: %d nodes (the largest id, %d, is in ind.%s.%s) of %d features", name, n, n-1, name, from, f.allx.cols)
	if err := data.CheckAlloc(what, int64(n)*nodeBytes(f.allx.cols), 0); err != nil {
		return 0, err
	}
	return n, nil
}

// nodeBytes estimates the memory a dataset of width features takes per
// node before any edge: a float32 feature row, an int32 label and the
// int64 offsets of the three graphs built in turn (read, symmetric,
// without self-loops).
func nodeBytes(width int) int64 { return 4*int64(width) + 4 + 3*8 }

// dataset builds the n-node dataset without its split: allx's rows first,
// tx's rows at the test indices, -1 labels elsewhere, and the symmetric
// graph without self-loops. It also returns the test nodes in order.
func (f *files) dataset(n int) (*data.Dataset, []int32, error) {
	w := f.allx.cols
	d := &data.Dataset{
		Name:        f.name,
		X:           make([]float32, n*w),
		NumFeatures: w,
		Y:           make([]int32, n),
		NumClasses:  f.ally.cols,
	}
	copy(d.X, f.allx.vals)
	for i := range d.Y {
		d.Y[i] = -1
	}
	copy(d.Y, f.ally.labels)
	test := make([]int32, len(f.testIdx))
	for i, v := range f.testIdx {
		copy(d.X[int(v)*w:int(v+1)*w], f.tx.vals[i*w:(i+1)*w])
		d.Y[v] = f.ty.labels[i]
		test[i] = int32(v)
	}
	slices.Sort(test)
	g, err := graph.FromEdges(n, f.adj.src, f.adj.dst, true)
	if err != nil {
		return nil, nil, fmt.Errorf("planetoid %s: graph: %w", f.name, err)
	}
	d.Graph = g.Symmetrize().RemoveSelfLoops()
	return d, test, nil
}

// publicSplit returns the split of d: training nodes 0..numTrain-1,
// validation the next numValid, test the given nodes; every one of them
// must have a label.
func publicSplit(d *data.Dataset, numTrain, numValid int, test []int32) (*data.Split, error) {
	split := &data.Split{Train: make([]int32, numTrain), Valid: make([]int32, numValid), Test: test}
	for i := range split.Train {
		split.Train[i] = int32(i)
	}
	for i := range split.Valid {
		split.Valid[i] = int32(numTrain + i)
	}
	for _, part := range [][]int32{split.Train, split.Valid, split.Test} {
		for _, v := range part {
			if d.Y[v] < 0 {
				return nil, fmt.Errorf("planetoid %s: split node %d has no label", d.Name, v)
			}
		}
	}
	return split, nil
}

// denseRows is a feature matrix read from a pickle.
type denseRows struct {
	rows, cols int
	vals       []float32
}

// readDense reads a pickled SciPy CSR matrix (or a 2-D NumPy array) as
// dense rows.
func readDense(path string) (denseRows, error) {
	v, err := readPickle(path)
	if err != nil {
		return denseRows{}, err
	}
	switch m := v.(type) {
	case *csrMatrix:
		vals, err := m.dense(0)
		if err != nil {
			return denseRows{}, fmt.Errorf("%s: %w", path, err)
		}
		return finite(path, denseRows{m.rows, m.cols, vals})
	case *ndarray:
		if err := m.filled(); err != nil {
			return denseRows{}, fmt.Errorf("%s: %w", path, err)
		}
		if len(m.shape) != 2 {
			return denseRows{}, fmt.Errorf("%s: array of shape %v, want a matrix", path, m.shape)
		}
		out := denseRows{m.shape[0], m.shape[1], make([]float32, m.len())}
		for i := range out.rows {
			for j := range out.cols {
				out.vals[i*out.cols+j] = float32(m.matrix(i, j))
			}
		}
		return finite(path, out)
	}
	return denseRows{}, fmt.Errorf("%s: %T, want a SciPy CSR matrix of features", path, v)
}

// finite returns d, or an error naming path and the first row of d that
// holds a NaN or an infinite value.
func finite(path string, d denseRows) (denseRows, error) {
	if err := data.CheckFinite(d.vals, d.cols); err != nil {
		return denseRows{}, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// labelRows are labels read from a pickled one-hot matrix.
type labelRows struct {
	rows, cols int
	labels     []int32 // argmax of each row; -1 for a row of zeros
}

// readLabels reads a pickled one-hot NumPy matrix as labels.
func readLabels(path string) (labelRows, error) {
	v, err := readPickle(path)
	if err != nil {
		return labelRows{}, err
	}
	a, ok := v.(*ndarray)
	if !ok || a.filled() != nil || len(a.shape) != 2 {
		return labelRows{}, fmt.Errorf("%s: %T, want a one-hot NumPy matrix", path, v)
	}
	if a.shape[1] == 0 {
		// Without classes the data bytes would not bound the rows.
		return labelRows{}, fmt.Errorf("%s: one-hot matrix of shape %v has no class column", path, a.shape)
	}
	out := labelRows{rows: a.shape[0], cols: a.shape[1], labels: make([]int32, a.shape[0])}
	for i := range out.rows {
		out.labels[i] = -1
		for j := range out.cols {
			switch a.matrix(i, j) {
			case 0:
			case 1:
				if out.labels[i] >= 0 {
					return labelRows{}, fmt.Errorf("%s: row %d has several classes", path, i)
				}
				out.labels[i] = int32(j)
			default:
				return labelRows{}, fmt.Errorf("%s: row %d: value %g, want a one-hot row", path, i, a.matrix(i, j))
			}
		}
	}
	return out, nil
}

// maxIndexLine bounds a line of ind.NAME.test.index: a node id and some
// blanks take a few dozen bytes.
const maxIndexLine = 4 << 10

// readIndex reads ind.NAME.test.index: one node id per line.
func readIndex(path string) ([]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseIndex(path, f)
}

// parseIndex reads the node ids of a test.index file from r; errors name
// path.
func parseIndex(path string, r io.Reader) ([]int64, error) {
	var out []int64
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxIndexLine)
	line := 1
	for ; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			if len(s) > 40 {
				s = s[:40] + "..."
			}
			return nil, fmt.Errorf("%s:%d: %q is not a node id", path, line, s)
		}
		out = append(out, v)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: line longer than %d bytes (a node id per line expected)", path, line, maxIndexLine)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// edgeList holds the graph pickle's edges.
type edgeList struct{ src, dst []int32 }

// edgesPerByte bounds the edges a graph pickle may name per byte of the
// file. Each neighbour written by pickle takes at least 2 bytes (BININT1
// and its byte), so an honest file names at most one edge per 2 bytes;
// only a pickle that makes many nodes share one memoized list names more,
// and such a file is refused before its edges are expanded.
const edgesPerByte = 1

// readGraph reads the pickled dict of adjacency lists.
func readGraph(path string) (edgeList, error) {
	v, size, err := readPickleSize(path)
	if err != nil {
		return edgeList{}, err
	}
	var keys, lists []any
	switch d := v.(type) {
	case *intListDict:
		keys, lists = d.keys, d.lists
	case *types.Dict:
		for _, e := range *d {
			keys, lists = append(keys, e.Key), append(lists, e.Value)
		}
	default:
		return edgeList{}, fmt.Errorf("%s: %T, want a dict of adjacency lists", path, v)
	}
	var edges int64
	for i, k := range keys {
		u, ok := asInt(k)
		if !ok || u < 0 || u > 1<<30 {
			return edgeList{}, fmt.Errorf("%s: key %v is not a node id", path, k)
		}
		l, ok := lists[i].(*types.List)
		if !ok {
			return edgeList{}, fmt.Errorf("%s: node %d: %T, want a list of neighbors", path, u, lists[i])
		}
		if edges += int64(l.Len()); edges > edgesPerByte*size {
			return edgeList{}, fmt.Errorf("%s: the graph names %d edges by node %d, more than the %d a file of %d bytes can hold (one neighbour list shared by many nodes?)",
				path, edges, u, edgesPerByte*size, size)
		}
	}
	if err := data.CheckAlloc(fmt.Sprintf("%s: %d edges", path, edges), 8*edges, 0); err != nil {
		return edgeList{}, err
	}
	out := edgeList{src: make([]int32, 0, edges), dst: make([]int32, 0, edges)}
	for i, k := range keys {
		u, _ := asInt(k)
		for _, w := range *lists[i].(*types.List) {
			v, ok := asInt(w)
			if !ok || v < 0 || v > 1<<30 {
				return edgeList{}, fmt.Errorf("%s: node %d: neighbor %v is not a node id", path, u, w)
			}
			out.src = append(out.src, int32(u))
			out.dst = append(out.dst, int32(v))
		}
	}
	return out, nil
}
