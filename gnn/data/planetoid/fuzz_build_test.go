package planetoid

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// indexModel parses a test.index file the simple way: split on newlines,
// trim, skip empty lines, parse the rest as non-negative integers.
func indexModel(b []byte) ([]int64, bool) {
	var out []int64
	for _, line := range strings.Split(string(b), "\n") {
		s := strings.TrimSpace(line)
		if s == "" {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// FuzzTestIndex: the test.index reader gives the node ids of the simple model above
// or an error naming the file, and what it reads back from its own
// rendering is the same list. Run:
// go test -run x -fuzz FuzzTestIndex -fuzztime 20s ./gnn/data/planetoid/
func FuzzTestIndex(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "proto2", "ind.tiny.test.index"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, s := range []string{"", "\n\n", " 7 \r\n\n8\n", "-1\n", "1e3\n", "+5\n", "0x10\n",
		"9223372036854775807\n", "9223372036854775808\n", "1\x002\n", strings.Repeat("1", 70000), "5\n" + strings.Repeat(" ", maxIndexLine) + "\n"} {
		f.Add([]byte(s))
	}
	const path = "ind.fuzz.test.index"
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseIndex(path, bytes.NewReader(b))
		want, ok := indexModel(b)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			if ok && !slices.ContainsFunc(strings.Split(string(b), "\n"), func(l string) bool { return len(l) >= maxIndexLine-1 }) {
				t.Fatalf("refused %q, which the model reads as %v: %v", b, want, err)
			}
			return
		}
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("read %v from %q; the model says %v (ok %v)", got, b, want, ok)
		}
		var sb strings.Builder
		for _, v := range got {
			fmt.Fprintf(&sb, "%d\n", v)
		}
		if again, err := parseIndex(path, strings.NewReader(sb.String())); err != nil || !slices.Equal(again, got) {
			t.Fatalf("round trip of %v gave %v, %v", got, again, err)
		}
	})
}

// fuzzFiles decodes the decoded contents of a Planetoid dataset from b:
// small shapes, labels (some missing), test indices and edges whose node
// ids stay small (so a run never allocates much) except for a few
// hostile values (negative, past 2^30), which must be refused.
func fuzzFiles(b []byte) (*files, int) {
	next := func() byte {
		if len(b) == 0 {
			return 0
		}
		c := b[0]
		b = b[1:]
		return c
	}
	id := func() int64 {
		v := int64(binary.LittleEndian.Uint16([]byte{next(), next()}))
		switch v {
		case 0xffff:
			return -1
		case 0xfffe:
			return 1<<30 + 1
		case 0xfffd:
			return 1 << 31
		}
		return v % 600
	}
	w, k := 1+int(next()%4), 1+int(next()%4)
	dense := func(rows int) denseRows {
		d := denseRows{rows: rows, cols: w, vals: make([]float32, rows*w)}
		for i := range d.vals {
			d.vals[i] = float32(int8(next())) / 8
		}
		return d
	}
	labels := func(rows int) labelRows {
		l := labelRows{rows: rows, cols: k, labels: make([]int32, rows)}
		for i := range l.labels {
			l.labels[i] = int32(next())%int32(k+1) - 1
		}
		return l
	}
	f := &files{name: "fuzz"}
	allx, x, tx := int(next()%40), int(next()%8), int(next()%8)
	f.allx, f.ally = dense(allx), labels(allx)
	f.x, f.y = dense(x), labels(x)
	f.tx, f.ty = dense(tx), labels(tx)
	for range tx {
		f.testIdx = append(f.testIdx, id())
	}
	numValid := int(next() % 8)
	for len(b) >= 4 {
		u, v := id(), id()
		f.adj.src, f.adj.dst = append(f.adj.src, int32(u)), append(f.adj.dst, int32(v))
	}
	return f, numValid
}

// validFuzzFiles encodes, for fuzzFiles, a small dataset that builds: 3
// features, 3 classes, 20 allx rows (4 training nodes, 6 validation
// nodes), 2 test nodes at 25 and 22, and a few edges with a self-loop and
// a duplicate.
func validFuzzFiles() []byte {
	b := []byte{2, 2, 20, 4, 2}
	rows := func(n int) {
		for i := range n * 3 {
			b = append(b, byte(i))
		}
		for i := range n {
			b = append(b, byte(1+i%3)) // labels 0, 1, 2
		}
	}
	rows(20)
	rows(4)
	rows(2)
	b = append(b, 25, 0, 22, 0, 6)
	for _, e := range [][2]byte{{0, 1}, {1, 2}, {2, 25}, {3, 3}, {0, 1}, {22, 7}} {
		b = append(b, e[0], 0, e[1], 0)
	}
	return b
}

// TestFuzzBuildGraphSeed checks that validFuzzFiles builds, so that the
// fuzzer's properties are checked from its first seed on.
func TestFuzzBuildGraphSeed(t *testing.T) {
	fs, numValid := fuzzFiles(validFuzzFiles())
	d, err := fs.build(numValid)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumNodes() != 26 || len(d.Split.Valid) != 6 || len(d.Split.Test) != 2 || len(d.Graph.Indices) != 8 {
		t.Fatalf("%d nodes, %d valid, %d test, %d stored edges", d.NumNodes(), len(d.Split.Valid), len(d.Split.Test), len(d.Graph.Indices))
	}
}

// FuzzBuildGraph: building a dataset from decoded files (any shapes,
// labels, test indices and edges) gives an error or a valid dataset whose
// graph is symmetric, sorted, without duplicates or self-loops, holds
// every input edge between distinct nodes, and spans every id named. Run:
// go test -run x -fuzz FuzzBuildGraph -fuzztime 20s ./gnn/data/planetoid/
func FuzzBuildGraph(f *testing.F) {
	f.Add([]byte{})
	f.Add(validFuzzFiles())
	f.Add([]byte{0, 0, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0, 1, 0, 0xff, 0xff})
	f.Add([]byte{0, 0, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0xfd, 0xff, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, numValid := fuzzFiles(b)
		d, err := fs.build(numValid)
		if err != nil {
			if !strings.Contains(err.Error(), "planetoid fuzz") && !strings.Contains(err.Error(), "dataset fuzz") {
				t.Fatalf("error %q does not name the dataset", err)
			}
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		n := int64(fs.allx.rows)
		for _, v := range fs.testIdx {
			n = max(n, v+1)
		}
		for i := range fs.adj.src {
			n = max(n, int64(fs.adj.src[i])+1, int64(fs.adj.dst[i])+1)
		}
		if int64(d.NumNodes()) != n {
			t.Fatalf("%d nodes, the files name %d", d.NumNodes(), n)
		}
		g := d.Graph
		has := func(u, v int32) bool {
			_, ok := slices.BinarySearch(g.Indices[g.Indptr[u]:g.Indptr[u+1]], v)
			return ok
		}
		for u := range int32(g.N) {
			row := g.Indices[g.Indptr[u]:g.Indptr[u+1]]
			for i, v := range row {
				if v == u || (i > 0 && row[i-1] >= v) || !has(v, u) {
					t.Fatalf("row %d is %v: self-loop, unsorted, duplicate or not symmetric", u, row)
				}
			}
		}
		for i, u := range fs.adj.src {
			if v := fs.adj.dst[i]; u != v && !has(u, v) {
				t.Fatalf("edge %d-%d lost", u, v)
			}
		}
		for _, v := range d.Split.Test {
			if d.Y[v] < 0 {
				t.Fatalf("test node %d has no label", v)
			}
		}
	})
}
