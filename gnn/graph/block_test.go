package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// sampleBlock: 3 destinations, 5 sources (destinations are sources 0..2).
//
//	dst 0 <- 1, 3
//	dst 1 <- 0, 1, 4
//	dst 2 <- (none)
func sampleBlock() *Block {
	return &Block{
		NumDst: 3, NumSrc: 5,
		Indptr:  []int64{0, 2, 5, 5},
		Indices: []int32{1, 3, 0, 1, 4},
		Weights: []float32{0.1, 0.2, 0.3, 0.4, 0.5},
	}
}

func TestBlockValidate(t *testing.T) {
	b := sampleBlock()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	if b.NumEdges() != 5 {
		t.Errorf("edges %d", b.NumEdges())
	}
	for _, tc := range []struct {
		change func(b *Block)
		want   string
	}{
		{func(b *Block) { b.NumSrc = 2 }, "3 destinations, 2 sources"},
		{func(b *Block) { b.Indptr = b.Indptr[:3] }, "bad indptr"},
		{func(b *Block) { b.Indptr[0] = 1 }, "bad indptr"},
		{func(b *Block) { b.Indptr[1] = 6 }, "not monotone at row 1"},
		{func(b *Block) { b.Indices = b.Indices[:4] }, "4 indices, indptr says 5"},
		{func(b *Block) { b.Indices[2] = 5 }, "source index 5 at 2 out of range [0, 5)"},
		{func(b *Block) { b.Weights = b.Weights[:2] }, "2 weights for 5 edges"},
	} {
		b := sampleBlock()
		tc.change(b)
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}

func TestBlockTranspose(t *testing.T) {
	b := sampleBlock()
	tr := b.Transpose()
	if tr.NumDst != 5 || tr.NumSrc != 3 {
		t.Fatalf("transpose has %d rows over %d columns", tr.NumDst, tr.NumSrc)
	}
	// source 0 -> dst 1 (w .3); 1 -> 0 (.1), 1 (.4); 2 -> none; 3 -> 0 (.2); 4 -> 1 (.5)
	if !slices.Equal(tr.Indptr, []int64{0, 1, 3, 3, 4, 5}) || !slices.Equal(tr.Indices, []int32{1, 0, 1, 0, 1}) {
		t.Errorf("got %v %v", tr.Indptr, tr.Indices)
	}
	if !slices.Equal(tr.Weights, []float32{0.3, 0.1, 0.4, 0.2, 0.5}) {
		t.Errorf("weights %v", tr.Weights)
	}
	if b.Transpose() != tr {
		t.Error("transpose not cached")
	}
	// Transposing the transpose gives the original edges and weights back.
	back := tr.Transpose()
	if back.NumDst != b.NumDst || !slices.Equal(back.Indptr, b.Indptr) || !slices.Equal(back.Indices, b.Indices) || !slices.Equal(back.Weights, b.Weights) {
		t.Errorf("double transpose %v %v %v", back.Indptr, back.Indices, back.Weights)
	}
	// Unweighted blocks give unweighted transposes.
	u := sampleBlock()
	u.Weights = nil
	if u.Transpose().Weights != nil {
		t.Error("weights invented")
	}
	// Setting weights drops the cached transpose.
	b.SetGCNWeights()
	if b.Transpose() == tr || !slices.Equal(b.Transpose().Weights, []float32{b.Weights[2], b.Weights[0], b.Weights[3], b.Weights[1], b.Weights[4]}) {
		t.Error("stale transpose after SetGCNWeights")
	}
}

// randomBlock returns a weighted block of nd destinations over ns sources
// with up to deg edges per row (repeated sources allowed), from seed.
func randomBlock(nd, ns, deg int, seed uint64) *Block {
	r := rand.New(rand.NewPCG(seed, 1))
	b := &Block{NumDst: nd, NumSrc: ns, Indptr: make([]int64, nd+1)}
	for i := 0; i < nd; i++ {
		for k := r.IntN(deg + 1); k > 0; k-- {
			b.Indices = append(b.Indices, int32(r.IntN(ns)))
			b.Weights = append(b.Weights, r.Float32())
		}
		b.Indptr[i+1] = int64(len(b.Indices))
	}
	return b
}

// dense returns the block as a dense float64 NumDst×NumSrc matrix, edge
// weights summed (1 per edge when unweighted).
func dense(b *Block) [][]float64 {
	m := make([][]float64, b.NumDst)
	for i := range m {
		m[i] = make([]float64, b.NumSrc)
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			w := 1.0
			if b.Weights != nil {
				w = float64(b.Weights[e])
			}
			m[i][b.Indices[e]] += w
		}
	}
	return m
}

// TestBlockTransposeConcurrent has several goroutines transpose one block
// at once, as sampler workers and the trainer may: every one must get the
// same cached transpose, and it must be the dense reference's transpose
// with each row's destinations in ascending order. Run with -race.
func TestBlockTransposeConcurrent(t *testing.T) {
	b := randomBlock(300, 700, 12, 5)
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	if b.HasTranspose() {
		t.Fatal("a new block reports a transpose")
	}
	const n = 8
	got := make([]*Block, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			<-start
			got[g] = b.Transpose()
		})
	}
	close(start)
	wg.Wait()
	for g := 1; g < n; g++ {
		if got[g] != got[0] {
			t.Fatalf("goroutine %d got another transpose than goroutine 0", g)
		}
	}
	if !b.HasTranspose() || b.Transpose() != got[0] {
		t.Fatal("transpose not cached")
	}
	tr := got[0]
	// (A transpose has more rows than columns, so Validate does not apply.)
	if tr.NumDst != b.NumSrc || tr.NumSrc != b.NumDst || len(tr.Indptr) != tr.NumDst+1 || tr.NumEdges() != b.NumEdges() {
		t.Fatalf("transpose is %d×%d with %d edges, block %d×%d with %d", tr.NumDst, tr.NumSrc, tr.NumEdges(), b.NumDst, b.NumSrc, b.NumEdges())
	}
	want, have := dense(b), dense(tr)
	for i := range want {
		for j := range want[i] {
			if want[i][j] != have[j][i] {
				t.Fatalf("transpose (%d, %d) = %g, block (%d, %d) = %g", j, i, have[j][i], i, j, want[i][j])
			}
		}
	}
	for s := 0; s < tr.NumDst; s++ {
		if !slices.IsSorted(tr.Indices[tr.Indptr[s]:tr.Indptr[s+1]]) {
			t.Fatalf("transpose row %d not in destination order", s)
		}
	}
}

// TestSetGCNWeightsDense compares the full-graph block weights with a dense
// float64 computation of D^-1/2 (A+I) D^-1/2.
func TestSetGCNWeightsDense(t *testing.T) {
	g, _, _ := randomGraph(40, 150, 11)
	g = g.Symmetrize().RemoveSelfLoops()
	n := g.N
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n)
		a[i][i] = 1
		for _, j := range g.Neighbors(int32(i)) {
			a[i][j] = 1
		}
	}
	deg := make([]float64, n)
	for i := range a {
		for j := range a[i] {
			deg[i] += a[i][j]
		}
	}
	b := FullBlock(g.AddSelfLoops())
	b.SetGCNWeights()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	nonzero := 0
	for i := range a {
		for j := range a[i] {
			if a[i][j] != 0 {
				nonzero++
			}
		}
	}
	if int(b.NumEdges()) != nonzero {
		t.Fatalf("block has %d entries, A+I has %d", b.NumEdges(), nonzero)
	}
	for i := 0; i < n; i++ {
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			j := b.Indices[e]
			want := a[i][j] / math.Sqrt(deg[i]*deg[j])
			if math.Abs(float64(b.Weights[e])-want) > 1e-6 {
				t.Fatalf("weight (%d, %d) = %v, want %v", i, j, b.Weights[e], want)
			}
		}
	}
	// The weighted aggregation of a vector equals the dense product.
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%7) - 3
	}
	for i := 0; i < n; i++ {
		var got, want float64
		for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
			got += float64(b.Weights[e]) * x[b.Indices[e]]
		}
		for j := 0; j < n; j++ {
			want += a[i][j] / math.Sqrt(deg[i]*deg[j]) * x[j]
		}
		if math.Abs(got-want) > 1e-5 {
			t.Fatalf("row %d: %v, want %v", i, got, want)
		}
	}
	// On the full graph, global degrees give the same weights.
	gl := FullBlock(g.AddSelfLoops())
	degf := make([]float32, n)
	for i := range degf {
		degf[i] = float32(deg[i])
	}
	gl.SetGCNWeightsGlobal(degf)
	for e := range gl.Weights {
		if math.Abs(float64(gl.Weights[e]-b.Weights[e])) > 1e-6 {
			t.Fatalf("global weight %d = %v, local %v", e, gl.Weights[e], b.Weights[e])
		}
	}
}

func TestSetGCNWeightsBipartite(t *testing.T) {
	b := sampleBlock()
	b.SetGCNWeights()
	// in-degrees: dst0 2, dst1 3; out-degrees: src0 1, src1 2, src3 1, src4 1
	want := []float64{1 / math.Sqrt(2*2), 1 / math.Sqrt(2*1), 1 / math.Sqrt(3*1), 1 / math.Sqrt(3*2), 1 / math.Sqrt(3*1)}
	for e, w := range want {
		if math.Abs(float64(b.Weights[e])-w) > 1e-6 {
			t.Errorf("edge %d: %v, want %v", e, b.Weights[e], w)
		}
	}
}

func TestBlockAddSelfLoops(t *testing.T) {
	b := sampleBlock()
	s := b.AddSelfLoops()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// dst 0 gains 0; dst 1 already has 1; dst 2 gains 2.
	if !slices.Equal(s.Indptr, []int64{0, 3, 6, 7}) || !slices.Equal(s.Indices, []int32{1, 3, 0, 0, 1, 4, 2}) {
		t.Errorf("got %v %v", s.Indptr, s.Indices)
	}
	if s.Weights != nil {
		t.Error("weights kept after adding self-loops")
	}
	if s.NumSrc != b.NumSrc || s.NumDst != b.NumDst {
		t.Error("sizes changed")
	}
	if again := s.AddSelfLoops(); !slices.Equal(again.Indices, s.Indices) {
		t.Error("self-loops duplicated")
	}
	if b.NumEdges() != 5 || b.Weights == nil {
		t.Error("original block modified")
	}
}

func TestFullBlock(t *testing.T) {
	g, _, _ := randomGraph(12, 40, 8)
	b := FullBlock(g)
	if b.NumDst != g.N || b.NumSrc != g.N || b.NumEdges() != g.NumEdges() || b.Validate() != nil {
		t.Errorf("full block %+v", b)
	}
}
