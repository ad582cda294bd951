package planetoid

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
)

// sharedListGraph returns a protocol-2 graph pickle, a dict that maps each
// of nodes nodes to one memoized list of neighbours neighbours (BINPUT
// once, BINGET for every other node): the expansion attack of issue F4.
func sharedListGraph(nodes, neighbours int) []byte {
	p := &py2{}
	p.op(0x80, 2, '}', '(') // PROTO 2, EMPTY_DICT, MARK
	p.int(0)
	p.op(']', 'q', 0, '(') // EMPTY_LIST, BINPUT 0, MARK
	for v := range neighbours {
		p.int(v)
	}
	p.op('e') // APPENDS
	for u := 1; u < nodes; u++ {
		p.int(u)
		p.op('h', 0) // BINGET 0
	}
	p.op('u', '.') // SETITEMS, STOP
	return p.Bytes()
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileSharedNeighbourList is issue F4 at a small scale: a 23 KB
// graph pickle whose 2000 nodes share one list of 5000 neighbours names
// 1e7 edges (80 MB of edge arrays). It is refused, naming the file,
// before the edges are expanded.
func TestHostileSharedNeighbourList(t *testing.T) {
	dir := t.TempDir()
	writePy2Fixture(t, dir, true)
	b := sharedListGraph(2000, 5000)
	if len(b) > 32<<10 {
		t.Fatalf("the hostile pickle is %d bytes, want a few KB", len(b))
	}
	path := filepath.Join(dir, "ind.tiny.graph")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = Load(dir, Options{}) })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "one neighbour list shared by many nodes") {
		t.Errorf("error %v, want the shared list refused naming %s", err, path)
	}
	if n > 64<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
}

// TestSharedNeighbourListWithinBound: sharing as such is not refused, only
// more edges than the file's bytes could hold.
func TestSharedNeighbourListWithinBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ind.tiny.graph")
	b := sharedListGraph(4, 10)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := readGraph(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.src) != 40 || len(g.dst) != 40 || g.src[39] != 3 || g.dst[39] != 9 {
		t.Errorf("got %d edges, last %d->%d; want 40, last 3->9", len(g.src), g.src[39], g.dst[39])
	}
}

// emptyCSR returns a protocol-2 pickle of a rows×cols SciPy CSR matrix
// that stores no value: a few bytes per row that ask for 4×rows×cols
// bytes once dense.
func emptyCSR(rows, cols int) []byte {
	p := &py2{}
	p.op(0x80, 2)
	p.global("scipy.sparse.csr", "csr_matrix")
	p.op(')', 0x81, '}', '(') // EMPTY_TUPLE, NEWOBJ, EMPTY_DICT, MARK
	p.str("_shape")
	p.int(rows)
	p.int(cols)
	p.op(0x86) // TUPLE2
	p.str("indices")
	p.array("i4", []int{0}, nil)
	p.str("indptr")
	p.array("i4", []int{rows + 1}, make([]byte, 4*(rows+1)))
	p.str("data")
	p.array("f4", []int{0}, nil)
	p.op('u', 'b', '.') // SETITEMS, BUILD, STOP
	return p.Bytes()
}

// TestDenseMemoryCheck: the dense size of a CSR matrix is checked against
// the memory limit before it is allocated, and the error gives the
// estimate.
func TestDenseMemoryCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ind.tiny.allx")
	if err := os.WriteFile(path, emptyCSR(2048, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := readPickle(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(*csrMatrix)
	if !ok {
		t.Fatalf("%T, want a CSR matrix", v)
	}
	want := "the dense 2048×1024 float32 matrix of a csr_matrix needs about 8.0 MiB, more than the memory limit (1.0 MiB)"
	if _, err := m.dense(1 << 20); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if vals, err := m.dense(8 << 20); err != nil || len(vals) != 2048*1024 {
		t.Errorf("at the limit: %d values, %v", len(vals), err)
	}
}

// TestDenseMemoryCheckHost loads a 4 GiB dense declaration where the host
// has less memory available: the error names the file and allocates
// nothing of that size.
func TestDenseMemoryCheckHost(t *testing.T) {
	avail := data.AvailableMemory()
	if avail == 0 || avail >= 4<<30 {
		t.Skipf("available memory %d unknown or above the 4 GiB the file declares", avail)
	}
	path := filepath.Join(t.TempDir(), "ind.tiny.allx")
	if err := os.WriteFile(path, emptyCSR(1<<15, 1<<15), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = readDense(path) })
	if err == nil || !strings.Contains(err.Error(), path+": the dense 32768×32768 float32 matrix") ||
		!strings.Contains(err.Error(), "more than the available memory") {
		t.Errorf("error %v", err)
	}
	if n > 64<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
}

// TestHostileLargeNodeID: one neighbour id of 2^30 in a graph of a few
// bytes would make a feature row, a label and graph offsets for 2^30
// nodes; the node count is checked against the available memory first,
// and the error names the file that holds the id.
func TestHostileLargeNodeID(t *testing.T) {
	const id = 1 << 30
	need := int64(id+1) * nodeBytes(fixF)
	if avail := data.AvailableMemory(); avail == 0 || avail >= need {
		t.Skipf("available memory %d unknown or above the %d bytes the graph asks for", avail, need)
	}
	dir := t.TempDir()
	writePy2Fixture(t, dir, true)
	p := &py2{}
	p.op(0x80, 2, '}', '(') // PROTO 2, EMPTY_DICT, MARK
	p.int(0)
	p.op(']', '(')
	p.int(id)
	p.op('e', 'u', '.') // APPENDS, SETITEMS, STOP
	if err := os.WriteFile(filepath.Join(dir, "ind.tiny.graph"), p.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	n := allocated(func() { _, err = Load(dir, Options{}) })
	want := "planetoid tiny: 1073741825 nodes (the largest id, 1073741824, is in ind.tiny.graph) of 5 features needs about"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than the available memory") {
		t.Errorf("error %v, want %q", err, want)
	}
	if n > 64<<20 {
		t.Errorf("refusing it allocated %d bytes", n)
	}
}

// TestHostileArrayShape: a NumPy array whose shape multiplies past the
// integer range (2^33 × 2^31 × 4 bytes wraps to 0) once matched its empty
// data and then panicked when read; a label matrix without a class column
// made its rows unbounded by the data. Both are errors naming the file.
func TestHostileArrayShape(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
		read  func(string) error
		want  string
	}{
		{"overflow", []int{1 << 33, 1 << 31}, func(p string) error { _, err := readDense(p); return err }, "too many elements"},
		{"huge dimension", []int{1 << 40, 0}, func(p string) error { _, err := readDense(p); return err }, "too many elements"},
		{"no class", []int{1 << 30, 0}, func(p string) error { _, err := readLabels(p); return err }, "has no class column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ind.tiny.ally")
			p := &py2{}
			p.op(0x80, 2)
			p.array("f4", c.shape, nil)
			p.op('.')
			if err := os.WriteFile(path, p.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			n := allocated(func() { err = c.read(path) })
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q naming the file", err, c.want)
			}
			if n > 64<<20 {
				t.Errorf("refusing it allocated %d bytes", n)
			}
		})
	}
}

// TestHostileNestedMarks: a pickle of a million MARKs (1 MB) cost the
// unpickler 300 MB of saved stacks; it is refused before it runs, while
// the nesting real files have passes.
func TestHostileNestedMarks(t *testing.T) {
	deep := append(append([]byte{0x80, 2}, bytes.Repeat([]byte{'('}, 1_000_000)...), '.')
	if err := checkOps(deep); err == nil || !strings.Contains(err.Error(), "MARKs open") {
		t.Errorf("a million MARKs: %v", err)
	}
	var ok []byte
	for range 2 * maxMarks {
		ok = append(ok, '(', 'l') // MARK, LIST: one open at a time
	}
	if err := checkOps(append(append([]byte{0x80, 2}, ok...), '.')); err != nil {
		t.Errorf("closed MARKs: %v", err)
	}
}

// TestHostileIndexLine: a test.index line longer than any node id is an
// error naming the file and the line, and the bytes of a bad id are not
// all copied into the message.
func TestHostileIndexLine(t *testing.T) {
	const path = "ind.x.test.index"
	_, err := parseIndex(path, strings.NewReader("1\n2\n"+strings.Repeat("7", 1<<20)+"\n"))
	if err == nil || !strings.Contains(err.Error(), path+":3: line longer than") {
		t.Errorf("long line: %v", err)
	}
	_, err = parseIndex(path, strings.NewReader("1\nx"+strings.Repeat("7", 1000)+"\n"))
	if err == nil || !strings.Contains(err.Error(), path+":2:") || len(err.Error()) > 200 {
		t.Errorf("bad id: %v", err)
	}
}
