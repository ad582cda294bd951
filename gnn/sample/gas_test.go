package sample

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/partition"
)

// checkGASLayout checks that Perm and Inv are inverse bijections, that every
// part is the contiguous range PartPtr says, stable within the part, and
// that Graph() is g relabeled.
func checkGASLayout(t *testing.T, g *graph.CSR, parts []int32, k int, s *GAS) {
	t.Helper()
	n := g.N
	if len(s.Perm) != n || len(s.Inv) != n || len(s.PartPtr) != k+1 {
		t.Fatalf("lengths: perm %d inv %d partptr %d (n %d, k %d)", len(s.Perm), len(s.Inv), len(s.PartPtr), n, k)
	}
	seen := make([]bool, n)
	for v, i := range s.Perm {
		if i < 0 || int(i) >= n || seen[i] {
			t.Fatalf("perm not a bijection at %d -> %d", v, i)
		}
		seen[i] = true
		if s.Inv[i] != int32(v) {
			t.Fatalf("inv[perm[%d]] = %d", v, s.Inv[i])
		}
	}
	if s.PartPtr[0] != 0 || s.PartPtr[k] != int64(n) {
		t.Fatalf("partptr spans [%d, %d), want [0, %d)", s.PartPtr[0], s.PartPtr[k], n)
	}
	for p := range k {
		for i := s.PartPtr[p]; i < s.PartPtr[p+1]; i++ {
			if parts[s.Inv[i]] != int32(p) {
				t.Fatalf("permuted %d (node %d, part %d) inside part %d's range", i, s.Inv[i], parts[s.Inv[i]], p)
			}
			if i > s.PartPtr[p] && s.Inv[i-1] > s.Inv[i] {
				t.Fatalf("part %d not stable: %d before %d", p, s.Inv[i-1], s.Inv[i])
			}
		}
	}
	pg := s.Graph()
	if err := pg.Validate(); err != nil {
		t.Fatal(err)
	}
	for v := range n {
		var want []int32
		for _, u := range g.Neighbors(int32(v)) {
			want = append(want, s.Perm[u])
		}
		slices.Sort(want)
		got := pg.Neighbors(s.Perm[v])
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("row of node %d: %v, want %v", v, got, want)
		}
	}
}

// checkGASBatch checks a batch against a naive computation with maps.
func checkGASBatch(t *testing.T, s *GAS, partIDs []int32, layers int, b *GASBatch) {
	t.Helper()
	g := s.Graph()
	ps := slices.Sorted(slices.Values(partIDs))
	if !slices.Equal(b.Parts, ps) {
		t.Fatalf("parts %v, want %v", b.Parts, ps)
	}
	var in []int32
	inSet := map[int32]bool{}
	for _, p := range ps {
		for i := s.PartPtr[p]; i < s.PartPtr[p+1]; i++ {
			in = append(in, int32(i))
			inSet[int32(i)] = true
		}
	}
	if b.InBatch != len(in) || b.NumTargets() != len(in) || !slices.Equal(b.Targets(), in) {
		t.Fatalf("in-batch %d nodes %v, want %v", b.InBatch, b.Targets(), in)
	}
	haloSet := map[int32]bool{}
	for _, v := range in {
		for _, u := range g.Neighbors(v) {
			if !inSet[u] {
				haloSet[u] = true
			}
		}
	}
	halo := slices.Sorted(func(yield func(int32) bool) {
		for u := range haloSet {
			if !yield(u) {
				return
			}
		}
	})
	if !slices.Equal(b.Halo, halo) && !(len(b.Halo) == 0 && len(halo) == 0) {
		t.Fatalf("halo %v, want %v", b.Halo, halo)
	}
	if !slices.Equal(b.Nodes[b.InBatch:], b.Halo) || len(b.Nodes) != len(in)+len(halo) {
		t.Fatalf("nodes %v: not in-batch %v then halo %v", b.Nodes, in, halo)
	}
	if len(b.Blocks) != layers {
		t.Fatalf("%d blocks, want %d", len(b.Blocks), layers)
	}
	for l, blk := range b.Blocks {
		if err := blk.Validate(); err != nil {
			t.Fatalf("block %d: %v", l, err)
		}
		if blk.NumDst != len(in) || blk.NumSrc != len(b.Nodes) {
			t.Fatalf("block %d: %d dst %d src, want %d %d", l, blk.NumDst, blk.NumSrc, len(in), len(b.Nodes))
		}
		for i, v := range in {
			row := blk.Indices[blk.Indptr[i]:blk.Indptr[i+1]]
			if len(row) != g.Degree(v) {
				t.Fatalf("block %d row %d: %d edges, degree %d", l, i, len(row), g.Degree(v))
			}
			for j, c := range row {
				if b.Nodes[c] != g.Neighbors(v)[j] {
					t.Fatalf("block %d row %d entry %d: source %d, want %d", l, i, j, b.Nodes[c], g.Neighbors(v)[j])
				}
			}
		}
	}
	// Push ranges: ascending, non-adjacent, non-empty, covering exactly in.
	var covered []int32
	for i, r := range b.PushRanges {
		if r.Count <= 0 {
			t.Fatalf("push range %d empty: %+v", i, r)
		}
		if i > 0 {
			prev := b.PushRanges[i-1]
			if prev.Offset+prev.Count >= r.Offset {
				t.Fatalf("push ranges %+v and %+v overlap or touch", prev, r)
			}
		}
		for v := r.Offset; v < r.Offset+r.Count; v++ {
			covered = append(covered, int32(v))
		}
	}
	if !slices.Equal(covered, in) {
		t.Fatalf("push ranges %v cover %v, want %v", b.PushRanges, covered, in)
	}
}

// checkGASBatches checks that an epoch's batches hold every non-empty part
// exactly once, in groups of partsPerBatch.
func checkGASBatches(t *testing.T, s *GAS, batches [][]int32, partsPerBatch int) {
	t.Helper()
	var all []int32
	for i, b := range batches {
		if len(b) == 0 || len(b) > partsPerBatch || (i < len(batches)-1 && len(b) != partsPerBatch) {
			t.Fatalf("batch %d has %d parts (B = %d, %d batches)", i, len(b), partsPerBatch, len(batches))
		}
		all = append(all, b...)
	}
	slices.Sort(all)
	var want []int32
	for p := range s.NumParts() {
		if s.PartPtr[p+1] > s.PartPtr[p] {
			want = append(want, int32(p))
		}
	}
	if !slices.Equal(all, want) && !(len(all) == 0 && len(want) == 0) {
		t.Fatalf("batches hold parts %v, want each of %v once", all, want)
	}
}

func TestGASKWay(t *testing.T) {
	g := randomGraph(t, 600, 11).Symmetrize()
	const k = 12
	res, err := partition.KWay(g, k, partition.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewGAS(g, res.Parts, k)
	if err != nil {
		t.Fatal(err)
	}
	checkGASLayout(t, g, res.Parts, k, s)
	for _, B := range []int{1, 3, 5, 12, 20} {
		for epoch := range 2 {
			bs, err := s.Batches(epoch, B, 7)
			if err != nil {
				t.Fatal(err)
			}
			checkGASBatches(t, s, bs, B)
			for i, ps := range bs {
				b, err := s.Batch(epoch, i, ps, 3)
				if err != nil {
					t.Fatal(err)
				}
				if b.Epoch != epoch || b.Index != i {
					t.Fatalf("batch records epoch %d index %d", b.Epoch, b.Index)
				}
				checkGASBatch(t, s, ps, 3, b)
			}
		}
	}
}

func TestGASDirectedDuplicatesSelfLoops(t *testing.T) {
	// Not symmetric, with duplicate edges and self loops kept: the block
	// must hold every row entry.
	src := []int32{1, 1, 2, 0, 3, 4, 5, 5, 0, 6}
	dst := []int32{0, 0, 0, 1, 3, 3, 4, 6, 6, 6}
	g, err := graph.FromEdges(7, src, dst, false)
	if err != nil {
		t.Fatal(err)
	}
	parts := []int32{1, 0, 1, 2, 0, 2, 1}
	s, err := NewGAS(g, parts, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkGASLayout(t, g, parts, 3, s)
	for _, ps := range [][]int32{{0}, {1}, {2}, {2, 0}, {1, 2}, {0, 1, 2}} {
		b, err := s.Batch(0, 0, ps, 2)
		if err != nil {
			t.Fatal(err)
		}
		checkGASBatch(t, s, ps, 2, b)
	}
	// All parts: no halo, one push range, the whole graph.
	b, _ := s.Batch(0, 0, []int32{2, 1, 0}, 1)
	if len(b.Halo) != 0 || !reflect.DeepEqual(b.PushRanges, []Range{{0, 7}}) || b.NumEdges() != g.NumEdges() {
		t.Fatalf("full batch: halo %v ranges %v edges %d", b.Halo, b.PushRanges, b.NumEdges())
	}
	orig, err := s.OriginalIDs(b.Nodes)
	if err != nil || !slices.Equal(orig, s.Inv) {
		t.Fatalf("original ids %v (%v), want %v", orig, err, s.Inv)
	}
}

func TestGASEmptyPartsAndIsolated(t *testing.T) {
	// 8 nodes, 2 and 7 isolated; k = 6 with parts 1, 3 and 5 empty.
	g, err := graph.FromEdges(8, []int32{0, 1, 3, 4, 5, 6, 0}, []int32{1, 0, 4, 3, 6, 5, 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	parts := []int32{0, 0, 2, 4, 4, 2, 0, 4}
	s, err := NewGAS(g, parts, 6)
	if err != nil {
		t.Fatal(err)
	}
	checkGASLayout(t, g, parts, 6, s)
	for epoch := range 3 {
		bs, err := s.Batches(epoch, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkGASBatches(t, s, bs, 2)
		for i, ps := range bs {
			b, err := s.Batch(epoch, i, ps, 2)
			if err != nil {
				t.Fatal(err)
			}
			checkGASBatch(t, s, ps, 2, b)
		}
	}
	// Empty parts between non-empty ones merge the push ranges.
	b, err := s.Batch(0, 0, []int32{4, 3, 2, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkGASBatch(t, s, []int32{4, 3, 2, 1}, 2, b)
	if len(b.PushRanges) != 1 {
		t.Fatalf("push ranges %v, want one merged range", b.PushRanges)
	}
	// A batch of isolated nodes only: no halo, no edges.
	iso := mustGAS(t, g, []int32{0, 0, 1, 0, 0, 0, 0, 1}, 2)
	b, err = iso.Batch(0, 0, []int32{1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkGASBatch(t, iso, []int32{1}, 2, b)
	if len(b.Halo) != 0 || b.NumEdges() != 0 {
		t.Fatalf("isolated batch: halo %v, %d edges", b.Halo, b.NumEdges())
	}
	// The empty graph: one (empty) part, no batches.
	e, err := NewGAS(&graph.CSR{N: 0, Indptr: []int64{0}}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if bs, err := e.Batches(0, 1, 0); err != nil || len(bs) != 0 {
		t.Fatalf("empty graph batches %v, %v", bs, err)
	}
}

// mustGAS is NewGAS failing the test on error.
func mustGAS(t *testing.T, g *graph.CSR, parts []int32, k int) *GAS {
	t.Helper()
	s, err := NewGAS(g, parts, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGASBatchesDeterministic(t *testing.T) {
	g := randomGraph(t, 200, 5)
	parts := make([]int32, g.N)
	for v := range parts {
		parts[v] = int32(v % 40)
	}
	s := mustGAS(t, g, parts, 40)
	a0, _ := s.Batches(0, 4, 9)
	b0, _ := s.Batches(0, 4, 9)
	a1, _ := s.Batches(1, 4, 9)
	c0, _ := s.Batches(0, 4, 10)
	if !reflect.DeepEqual(a0, b0) {
		t.Error("same (seed, epoch), different batches")
	}
	if reflect.DeepEqual(a0, a1) {
		t.Error("epochs 0 and 1 have the same order")
	}
	if reflect.DeepEqual(a0, c0) {
		t.Error("seeds 9 and 10 have the same order")
	}
	x, err := s.Batch(0, 0, a0[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	y, _ := s.Batch(0, 0, a0[0], 2)
	if !reflect.DeepEqual(x.Nodes, y.Nodes) || !reflect.DeepEqual(x.Blocks[0].Indices, y.Blocks[0].Indices) {
		t.Error("same parts, different batches")
	}
}

func TestGASValidation(t *testing.T) {
	g, _ := graph.FromEdges(4, []int32{0, 1}, []int32{1, 2}, true)
	for _, c := range []struct {
		g     *graph.CSR
		parts []int32
		k     int
		want  string
	}{
		{nil, nil, 1, "nil graph"},
		{&graph.CSR{N: 2, Indptr: []int64{0, 1, 1}, Indices: []int32{5}}, []int32{0, 0}, 1, "out of range"},
		{g, []int32{0, 0, 0, 0}, 0, "need 1 <= k"},
		{g, []int32{0, 0, 0, 0}, 5, "need 1 <= k"},
		{g, []int32{0, 0, 0}, 2, "3 part assignments for 4 nodes"},
		{g, []int32{0, 1, 2, 0}, 2, "node 2 is in part 2"},
		{g, []int32{0, -1, 0, 0}, 2, "node 1 is in part -1"},
	} {
		if _, err := NewGAS(c.g, c.parts, c.k); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewGAS(k=%d, parts %v): error %v, want %q", c.k, c.parts, err, c.want)
		}
	}
	s := mustGAS(t, g, []int32{0, 0, 2, 2}, 3)
	if _, err := s.Batches(0, 0, 1); err == nil || !strings.Contains(err.Error(), "0 parts per batch") {
		t.Errorf("B = 0: %v", err)
	}
	for _, c := range []struct {
		parts  []int32
		layers int
		want   string
	}{
		{[]int32{0}, 0, "0 layers"},
		{nil, 1, "no parts"},
		{[]int32{0, 3}, 1, "part 3 out of range"},
		{[]int32{-1}, 1, "part -1 out of range"},
		{[]int32{2, 0, 2}, 1, "part 2 listed twice"},
		{[]int32{1}, 1, "all empty"},
	} {
		if _, err := s.Batch(0, 4, c.parts, c.layers); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Batch(%v, layers %d): error %v, want %q", c.parts, c.layers, err, c.want)
		}
	}
	if _, err := s.PartRange(3); err == nil {
		t.Error("PartRange(3) of 3 parts: no error")
	}
	if r, err := s.PartRange(2); err != nil || r != (Range{2, 2}) {
		t.Errorf("PartRange(2) = %v, %v", r, err)
	}
	if _, err := s.OriginalIDs([]int32{4}); err == nil {
		t.Error("OriginalIDs(4) of 4 nodes: no error")
	}
}

func TestGASConcurrent(t *testing.T) {
	g := randomGraph(t, 300, 2)
	parts := make([]int32, g.N)
	for v := range parts {
		parts[v] = int32(v * 7 % 10)
	}
	s := mustGAS(t, g, parts, 10)
	bs, _ := s.Batches(0, 2, 1)
	want := make([]*GASBatch, len(bs))
	for i, ps := range bs {
		want[i], _ = s.Batch(0, i, ps, 2)
	}
	errs := make(chan error, 4*len(bs))
	done := make(chan struct{})
	for w := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range bs {
				j := (i + w) % len(bs)
				b, err := s.Batch(0, j, bs[j], 2)
				if err != nil {
					errs <- err
					return
				}
				if !reflect.DeepEqual(b.Nodes, want[j].Nodes) || !reflect.DeepEqual(b.Blocks[0].Indices, want[j].Blocks[0].Indices) {
					errs <- fmt.Errorf("batch %d differs when built concurrently", j)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
