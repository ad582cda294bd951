package planetoid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fixture's numbers (testdata/gen.py writes the same with NumPy and
// SciPy): 515 nodes, 5 features, 3 classes; allx holds nodes 0-509 (3
// training and 500 validation nodes first), the test nodes are 513, 510,
// 514, 511 in file order, node 512 is skipped.
const (
	fixF        = 5
	fixAllxRows = 510
	fixNodes    = 515
	fixSkipped  = 512
)

var fixTest = []int{513, 510, 514, 511}

// fixEdges are the graph dict's lists in file order, a self-loop and a
// duplicate included; node 512 has an empty list.
var fixEdges = [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8},
	{8, 510}, {510, 511}, {511, 513}, {513, 514}, {514, 0}, {2, 3}, {5, 5}, {6, 2}}

func fixFeatures(v int) []float32 {
	row := make([]float32, fixF)
	row[v%fixF] = 1 + float32(v)/8
	row[(v*3+1)%fixF] = 0.5
	return row
}

func fixLabel(v int) int32 { return int32(v % 3) }

// checkFixture checks a dataset loaded from the fixture.
func checkFixture(t *testing.T, dir string) {
	t.Helper()
	d, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny" || d.NumNodes() != fixNodes || d.NumFeatures != fixF || d.NumClasses != 3 {
		t.Fatalf("dataset %s: %d nodes, %d features, %d classes", d.Name, d.NumNodes(), d.NumFeatures, d.NumClasses)
	}
	for v := range fixNodes {
		want, label := fixFeatures(v), fixLabel(v)
		if v == fixSkipped {
			want, label = make([]float32, fixF), -1
		}
		if got := d.X[v*fixF : (v+1)*fixF]; !slices.Equal(got, want) {
			t.Errorf("node %d: features %v, want %v", v, got, want)
		}
		if d.Y[v] != label {
			t.Errorf("node %d: label %d, want %d", v, d.Y[v], label)
		}
	}
	// Symmetric, without duplicates or self-loops.
	adj := map[int]map[int]bool{}
	for _, e := range fixEdges {
		if e[0] == e[1] {
			continue
		}
		for _, p := range [][2]int{e, {e[1], e[0]}} {
			if adj[p[0]] == nil {
				adj[p[0]] = map[int]bool{}
			}
			adj[p[0]][p[1]] = true
		}
	}
	for v := range fixNodes {
		var want []int32
		for u := range adj[v] {
			want = append(want, int32(u))
		}
		slices.Sort(want)
		if got := d.Graph.Neighbors(int32(v)); !slices.Equal(got, want) {
			t.Errorf("node %d: neighbors %v, want %v", v, got, want)
		}
	}
	s := d.Split
	valid := make([]int32, NumValid)
	for i := range valid {
		valid[i] = int32(3 + i)
	}
	if s == nil || !slices.Equal(s.Train, []int32{0, 1, 2}) || !slices.Equal(s.Valid, valid) || !slices.Equal(s.Test, []int32{510, 511, 513, 514}) {
		t.Errorf("split: train %v, %d valid from %v, test %v", s.Train, len(s.Valid), s.Valid[:1], s.Test)
	}
	// A smaller validation set on request.
	if d, err := Load(dir, Options{NumValid: 4}); err != nil || !slices.Equal(d.Split.Valid, []int32{3, 4, 5, 6}) {
		t.Errorf("4 validation nodes: %v", err)
	}
}

// TestLoadFixtures: files pickled by NumPy and SciPy with protocols 2 and
// 4 (testdata/gen.py), and files in the layout Python 2's cPickle wrote
// the published ones (written here), load to the same dataset.
func TestLoadFixtures(t *testing.T) {
	for _, proto := range []string{"proto2", "proto4"} {
		t.Run(proto, func(t *testing.T) { checkFixture(t, filepath.Join("testdata", proto)) })
	}
	t.Run("python2", func(t *testing.T) {
		dir := t.TempDir()
		writePy2Fixture(t, filepath.Join(dir, "raw"), false) // PyG's layout: NAME/raw/ind.*
		checkFixture(t, dir)
	})
	t.Run("python2 plain dict graph", func(t *testing.T) {
		dir := t.TempDir()
		writePy2Fixture(t, dir, true)
		checkFixture(t, dir)
	})
}

// TestRoot: the files are found in the folder or its raw/; no files, or
// two datasets in one folder, are errors that say so.
func TestRoot(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Root(dir); err == nil || !strings.Contains(err.Error(), "no Planetoid files") {
		t.Fatalf("empty folder: %v", err)
	}
	raw := filepath.Join(dir, "raw")
	os.MkdirAll(raw, 0o755)
	os.WriteFile(filepath.Join(raw, "ind.cora.test.index"), []byte("1\n"), 0o644)
	if f, name, err := Root(dir); err != nil || f != raw || name != "cora" {
		t.Fatalf("Root = %s, %s, %v", f, name, err)
	}
	os.WriteFile(filepath.Join(raw, "ind.citeseer.test.index"), []byte("1\n"), 0o644)
	if _, _, err := Root(raw); err == nil || !strings.Contains(err.Error(), "several") {
		t.Fatalf("two datasets: %v", err)
	}
}

// TestLoadErrors: broken or foreign files are errors naming the file, and
// nothing from a pickle is executed.
func TestLoadErrors(t *testing.T) {
	copyFixture := func(t *testing.T) string {
		dir := t.TempDir()
		ents, _ := os.ReadDir(filepath.Join("testdata", "proto4"))
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("testdata", "proto4", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
		return dir
	}
	for _, c := range []struct {
		name, file string
		content    []byte
		want       string
	}{
		{"truncated", "ind.tiny.allx", []byte("\x80\x02cscipy.sparse.csr\ncsr_matrix\n"), "ind.tiny.allx"},
		{"not a pickle", "ind.tiny.ty", []byte("hello"), "ind.tiny.ty"},
		{"foreign class", "ind.tiny.graph", []byte("\x80\x02cos\nsystem\nq\x00U\x02lsq\x01\x85q\x02Rq\x03."), "unsupported class os.system"},
		{"bad index", "ind.tiny.test.index", []byte("513\nnine\n"), "ind.tiny.test.index:2"},
		{"index inside allx", "ind.tiny.test.index", []byte("513\n3\n514\n511\n"), "test index 3 falls among allx"},
		{"index twice", "ind.tiny.test.index", []byte("513\n510\n513\n511\n"), "test index 513 appears twice"},
		{"index count", "ind.tiny.test.index", []byte("513\n510\n"), "2 test indices in ind.tiny.test.index for 4 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyFixture(t)
			os.WriteFile(filepath.Join(dir, c.file), c.content, 0o644)
			_, err := Load(dir, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
	dir := copyFixture(t)
	os.Remove(filepath.Join(dir, "ind.tiny.ally"))
	if _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "ind.tiny.ally") {
		t.Fatalf("missing ally: %v", err)
	}
	// A test node whose one-hot row is all zeros has no label: refused, as
	// a split node that could not be scored.
	dir = copyFixture(t)
	ty := make([]float64, 3*len(fixTest))
	for i, v := range fixTest {
		if v != 514 {
			ty[3*i+int(fixLabel(v))] = 1
		}
	}
	p := &py2{}
	p.op(0x80, 2)
	p.array("f8", []int{len(fixTest), 3}, le(ty))
	p.op('.')
	if err := os.WriteFile(filepath.Join(dir, "ind.tiny.ty"), p.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "split node 514 has no label") {
		t.Fatalf("unlabeled test node: %v", err)
	}
	// A NaN or an infinite feature is refused, naming the file and row.
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		dir = copyFixture(t)
		tx := make([]float64, fixF*len(fixTest))
		tx[2*fixF+3] = bad
		tx[3*fixF] = bad
		p := &py2{}
		p.op(0x80, 2)
		p.array("f8", []int{len(fixTest), fixF}, le(tx))
		p.op('.')
		if err := os.WriteFile(filepath.Join(dir, "ind.tiny.tx"), p.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("ind.tiny.tx: feature row 2, column 3 is %v", float32(bad))
		if _, err := Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v feature: %v, want %q", bad, err, want)
		}
	}
	// 600 validation nodes do not fit 510 rows of allx.
	if _, err := Load(copyFixture(t), Options{NumValid: 600}); err == nil || !strings.Contains(err.Error(), "600 validation") {
		t.Fatalf("too many validation nodes: %v", err)
	}
}

// py2 writes pickles as Python 2's cPickle did with protocol 2: module
// globals, str (SHORT_BINSTRING/BINSTRING) for names and raw array bytes,
// NEWOBJ for SciPy matrices.
type py2 struct{ bytes.Buffer }

func (p *py2) op(b ...byte)               { p.Write(b) }
func (p *py2) global(module, name string) { fmt.Fprintf(p, "c%s\n%s\n", module, name) }
func (p *py2) str(s string) {
	if len(s) < 256 {
		p.op('U', byte(len(s)))
	} else {
		p.op('T')
		binary.Write(p, binary.LittleEndian, int32(len(s)))
	}
	p.WriteString(s)
}
func (p *py2) int(v int) {
	switch {
	case v >= 0 && v < 256:
		p.op('K', byte(v))
	case v >= 0 && v < 65536:
		p.op('M', byte(v), byte(v>>8))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		p.op('J')
		binary.Write(p, binary.LittleEndian, int32(v))
	default:
		p.op(0x8a, 8) // LONG1 of 8 bytes
		binary.Write(p, binary.LittleEndian, int64(v))
	}
}

// array writes a NumPy array: _reconstruct(ndarray, (0,), 'b') and its
// state (1, shape, dtype(kind), False, raw).
func (p *py2) array(kind string, shape []int, raw []byte) {
	p.global("numpy.core.multiarray", "_reconstruct")
	p.global("numpy", "ndarray")
	p.int(0)
	p.op(0x85) // TUPLE1
	p.str("b")
	p.op(0x87, 'R', '(') // TUPLE3, REDUCE, MARK
	p.int(1)
	p.op('(')
	for _, d := range shape {
		p.int(d)
	}
	p.op('t')
	p.global("numpy", "dtype")
	p.str(kind)
	p.int(0)
	p.int(1)
	p.op(0x87, 'R', '(') // TUPLE3, REDUCE, MARK
	p.int(3)
	p.str("<")
	p.op('N', 'N', 'N')
	p.op('J', 0xff, 0xff, 0xff, 0xff, 'J', 0xff, 0xff, 0xff, 0xff)
	p.int(0)
	p.op('t', 'b', 0x89) // TUPLE, BUILD, NEWFALSE
	p.str(string(raw))
	p.op('t', 'b') // TUPLE, BUILD
}

func le[T any](vals []T) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, vals)
	return b.Bytes()
}

// csr writes rows as a SciPy CSR matrix (float32 data, int32 indices).
func (p *py2) csr(rows [][]float32) {
	var data []float32
	var indices []int32
	indptr := []int32{0}
	for _, r := range rows {
		for j, v := range r {
			if v != 0 {
				data, indices = append(data, v), append(indices, int32(j))
			}
		}
		indptr = append(indptr, int32(len(indices)))
	}
	p.global("scipy.sparse.csr", "csr_matrix")
	p.op(')', 0x81, '}', '(') // EMPTY_TUPLE, NEWOBJ, EMPTY_DICT, MARK
	p.str("_shape")
	p.int(len(rows))
	p.int(fixF)
	p.op(0x86) // TUPLE2
	p.str("maxprint")
	p.int(50)
	p.str("indices")
	p.array("i4", []int{len(indices)}, le(indices))
	p.str("indptr")
	p.array("i4", []int{len(indptr)}, le(indptr))
	p.str("format")
	p.str("csr")
	p.str("data")
	p.array("f4", []int{len(data)}, le(data))
	p.op('u', 'b') // SETITEMS, BUILD
}

// onehot writes the labels of nodes as a one-hot float64 matrix.
func (p *py2) onehot(nodes []int) {
	vals := make([]float64, 3*len(nodes))
	for i, v := range nodes {
		vals[3*i+int(fixLabel(v))] = 1
	}
	p.array("f8", []int{len(nodes), 3}, le(vals))
}

// writePy2Fixture writes the fixture into dir as Python 2 wrote such files.
// With plainDict the graph is a plain dict rather than a defaultdict.
func writePy2Fixture(t *testing.T, dir string, plainDict bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, fill func(p *py2)) {
		p := &py2{}
		p.op(0x80, 2)
		fill(p)
		p.op('.')
		if err := os.WriteFile(filepath.Join(dir, "ind.tiny."+name), p.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nodes := func(from, to int) []int {
		var out []int
		for v := from; v < to; v++ {
			out = append(out, v)
		}
		return out
	}
	rows := func(vs []int) [][]float32 {
		var out [][]float32
		for _, v := range vs {
			out = append(out, fixFeatures(v))
		}
		return out
	}
	write("x", func(p *py2) { p.csr(rows(nodes(0, 3))) })
	write("allx", func(p *py2) { p.csr(rows(nodes(0, fixAllxRows))) })
	write("tx", func(p *py2) { p.csr(rows(fixTest)) })
	write("y", func(p *py2) { p.onehot(nodes(0, 3)) })
	write("ally", func(p *py2) { p.onehot(nodes(0, fixAllxRows)) })
	write("ty", func(p *py2) { p.onehot(fixTest) })
	write("graph", func(p *py2) {
		if plainDict {
			p.op('}', '(') // EMPTY_DICT, MARK
		} else {
			p.global("collections", "defaultdict")
			p.global("__builtin__", "list")
			p.op(0x85, 'R', '(') // TUPLE1, REDUCE, MARK
		}
		lists := map[int][]int{}
		var order []int // keys in order of first appearance, as gen.py's dict
		for _, e := range fixEdges {
			if _, ok := lists[e[0]]; !ok {
				order = append(order, e[0])
			}
			lists[e[0]] = append(lists[e[0]], e[1])
		}
		order = append(order, fixSkipped) // an isolated node's empty list
		for _, u := range order {
			p.int(u)
			p.op(']', '(')
			for _, v := range lists[u] {
				p.int(v)
			}
			p.op('e') // APPENDS
		}
		p.op('u') // SETITEMS
	})
	var idx strings.Builder
	for _, v := range fixTest {
		fmt.Fprintf(&idx, "%d\n", v)
	}
	if err := os.WriteFile(filepath.Join(dir, "ind.tiny.test.index"), []byte(idx.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWritePy2Fixture writes the Python 2 layout into $PLANETOID_PY2_DIR
// when it is set, so that Python can check the writer above.
func TestWritePy2Fixture(t *testing.T) {
	dir := os.Getenv("PLANETOID_PY2_DIR")
	if dir == "" {
		t.Skip("PLANETOID_PY2_DIR not set: nothing to write")
	}
	writePy2Fixture(t, dir, false)
}
