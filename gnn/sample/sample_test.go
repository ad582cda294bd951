package sample

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// randomGraph returns a deduplicated directed graph with n nodes: about a
// tenth isolated, most with small degrees and a few hubs whose rows hold a
// large share of all nodes (to exercise every strategy of choose).
func randomGraph(t testing.TB, n int, seed uint64) *graph.CSR {
	t.Helper()
	r := rng.New(seed)
	var src, dst []int32
	for v := 0; v < n; v++ {
		var d int
		switch x := r.Float64(); {
		case x < 0.1:
			d = 0
		case x < 0.95:
			d = 1 + r.Intn(12)
		default:
			d = n/4 + r.Intn(n/2)
		}
		for range d {
			src = append(src, int32(r.Intn(n)))
			dst = append(dst, int32(v))
		}
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// referenceSample is a naive sampler with maps: it makes the same random
// choices as Worker.Sample (same stream, same choose) but maps ids with a
// Go map, so it checks the dense stamp array, generations and local ids.
func referenceSample(g *graph.CSR, fanouts []int, seed uint64, epoch, index int, targets []int32) *Batch {
	r := rng.New()
	r.Seed(rng.Mix(seed, uint64(epoch), uint64(index)))
	s := NewScratch(0)
	local := map[int32]int32{}
	nodes := []int32{}
	get := func(u int32) int32 {
		if l, ok := local[u]; ok {
			return l
		}
		local[u] = int32(len(nodes))
		nodes = append(nodes, u)
		return local[u]
	}
	for _, t := range targets {
		get(t)
	}
	blocks := make([]*graph.Block, len(fanouts))
	for h, k := range fanouts {
		numDst := len(nodes)
		b := &graph.Block{NumDst: numDst, Indptr: []int64{0}, Indices: []int32{}}
		for i := 0; i < numDst; i++ {
			row := g.Neighbors(nodes[i])
			if k < 0 || len(row) <= k {
				for _, u := range row {
					b.Indices = append(b.Indices, get(u))
				}
			} else {
				for _, p := range s.choose(r, len(row), k) {
					b.Indices = append(b.Indices, get(row[p]))
				}
			}
			b.Indptr = append(b.Indptr, int64(len(b.Indices)))
		}
		b.NumSrc = len(nodes)
		blocks[len(fanouts)-1-h] = b
	}
	return &Batch{Epoch: epoch, Index: index, Nodes: nodes, Blocks: blocks}
}

// checkBatch checks a batch's invariants against the graph with maps.
func checkBatch(t *testing.T, g *graph.CSR, fanouts []int, targets []int32, b *Batch) {
	t.Helper()
	L := len(fanouts)
	if len(b.Blocks) != L {
		t.Fatalf("%d blocks, want %d", len(b.Blocks), L)
	}
	if !slices.Equal(b.Targets(), targets) {
		t.Fatalf("targets %v, want %v", b.Targets(), targets)
	}
	seen := map[int32]int{}
	for i, v := range b.Nodes {
		if j, dup := seen[v]; dup {
			t.Fatalf("node %d at local %d and %d", v, j, i)
		}
		seen[v] = i
	}
	if last := b.Blocks[0]; last.NumSrc != len(b.Nodes) {
		t.Fatalf("outermost block has %d sources, batch %d nodes", last.NumSrc, len(b.Nodes))
	}
	for l, blk := range b.Blocks {
		if err := blk.Validate(); err != nil {
			t.Fatalf("block %d: %v", l, err)
		}
		if l+1 < L && b.Blocks[l+1].NumSrc != blk.NumDst {
			t.Fatalf("block %d has %d destinations, block %d %d sources", l, blk.NumDst, l+1, b.Blocks[l+1].NumSrc)
		}
	}
	// Hop by hop (innermost block first): rows are distinct neighbors of
	// the right count, and new nodes appear in order of discovery.
	known := len(targets)
	for h := 0; h < L; h++ {
		blk := b.Blocks[L-1-h]
		k := fanouts[h]
		if blk.NumDst != known {
			t.Fatalf("hop %d: %d destinations, want %d", h+1, blk.NumDst, known)
		}
		for i := 0; i < blk.NumDst; i++ {
			v := b.Nodes[i]
			nb := map[int32]bool{}
			for _, u := range g.Neighbors(v) {
				nb[u] = true
			}
			row := blk.Indices[blk.Indptr[i]:blk.Indptr[i+1]]
			want := g.Degree(v)
			if k >= 0 {
				want = min(want, k)
			}
			if len(row) != want {
				t.Fatalf("hop %d: node %d (degree %d) has %d sampled neighbors, want %d", h+1, v, g.Degree(v), len(row), want)
			}
			got := map[int32]bool{}
			for _, c := range row {
				u := b.Nodes[c]
				if !nb[u] {
					t.Fatalf("hop %d: sampled edge %d -> %d not in graph", h+1, u, v)
				}
				if got[u] {
					t.Fatalf("hop %d: node %d sampled neighbor %d twice", h+1, v, u)
				}
				got[u] = true
				if int(c) > known {
					t.Fatalf("hop %d: local id %d skips ahead of discovery (next new is %d)", h+1, c, known)
				}
				if int(c) == known {
					known++
				}
			}
		}
		if known != blk.NumSrc {
			t.Fatalf("hop %d: block has %d sources, discovered %d", h+1, blk.NumSrc, known)
		}
	}
}

func pickTargets(r *rng.Rand, n, k int) []int32 {
	p := r.Perm(n)
	return p[:k]
}

var fanoutCases = [][]int{{-1}, {3}, {2, -1}, {5, 3, 2}, {15, 10, 5}, {40}, {100, 2}, {1, 1, 1, 1}}

func TestSampleMatchesReference(t *testing.T) {
	for gi, n := range []int{50, 400, 3000} {
		g := randomGraph(t, n, uint64(gi)+7)
		r := rng.New(uint64(gi))
		for _, fan := range fanoutCases {
			t.Run(fmt.Sprintf("n%d/%v", n, fan), func(t *testing.T) {
				ns, err := NewNeighbor(g, fan, 42)
				if err != nil {
					t.Fatal(err)
				}
				w := ns.NewWorker()
				for idx := range 5 {
					targets := pickTargets(r, n, 1+r.Intn(min(n, 64)))
					b, err := w.Sample(3, idx, targets)
					if err != nil {
						t.Fatal(err)
					}
					checkBatch(t, g, fan, targets, b)
					want := referenceSample(g, fan, 42, 3, idx, targets)
					if !reflect.DeepEqual(b, want) {
						t.Fatalf("batch %d differs from the reference", idx)
					}
				}
			})
		}
	}
}

func TestGenerationWrap(t *testing.T) {
	g := randomGraph(t, 300, 1)
	fan := []int{4, 3}
	ns, _ := NewNeighbor(g, fan, 9)
	w := ns.NewWorker()
	w.s.gen = 1<<32 - 3
	r := rng.New(5)
	for idx := range 8 {
		targets := pickTargets(r, g.N, 20)
		b, err := w.Sample(0, idx, targets)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(b, referenceSample(g, fan, 9, 0, idx, targets)) {
			t.Fatalf("batch %d (generation %d) differs from the reference", idx, w.s.gen)
		}
	}
	if w.s.gen >= 1<<32 || w.s.gen > 8 {
		t.Fatalf("generation %d did not wrap", w.s.gen)
	}
}

func TestAllNeighborsIsExact(t *testing.T) {
	g := randomGraph(t, 500, 3)
	ns, _ := NewNeighbor(g, []int{-1, -1}, 1)
	targets := []int32{7, 3, 499, 0}
	b, err := ns.Sample(0, 0, targets)
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, g, []int{-1, -1}, targets, b)
	// Hop 1 is the targets' full rows in graph order.
	blk := b.Blocks[1]
	for i, v := range targets {
		var got []int32
		for _, c := range blk.Indices[blk.Indptr[i]:blk.Indptr[i+1]] {
			got = append(got, b.Nodes[c])
		}
		if !slices.Equal(got, g.Neighbors(v)) {
			t.Fatalf("row of %d: %v, want %v", v, got, g.Neighbors(v))
		}
	}
}

func TestIsolatedAndLargeFanouts(t *testing.T) {
	// 0 and 1 isolated; 2 has one neighbor; 3 has three.
	g, err := graph.FromEdges(5, []int32{4, 0, 1, 2}, []int32{2, 3, 3, 3}, true)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := NewNeighbor(g, []int{10, 10}, 1)
	b, err := ns.Sample(0, 0, []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, g, []int{10, 10}, []int32{0, 1}, b)
	if b.NumEdges() != 0 || len(b.Nodes) != 2 {
		t.Fatalf("isolated targets: %d edges, %d nodes", b.NumEdges(), len(b.Nodes))
	}
	b, err = ns.Sample(0, 1, []int32{3})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, g, []int{10, 10}, []int32{3}, b)
	if !slices.Equal(b.Nodes, []int32{3, 0, 1, 2, 4}) {
		t.Fatalf("nodes %v", b.Nodes)
	}
}

func TestDeterminism(t *testing.T) {
	g := randomGraph(t, 2000, 4)
	fan := []int{5, 4, 3}
	a, _ := NewNeighbor(g, fan, 77)
	c, _ := NewNeighbor(g, fan, 77)
	targets := pickTargets(rng.New(1), g.N, 100)
	want, _ := a.Sample(2, 5, targets)
	w := c.NewWorker()
	for idx := range 3 { // other batches in between must not matter
		if _, err := w.Sample(2, idx, targets); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := w.Sample(2, 5, targets)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("same (seed, epoch, index) gave different batches")
	}
	other, _ := w.Sample(3, 5, targets)
	if reflect.DeepEqual(other.Nodes, want.Nodes) {
		t.Fatal("another epoch gave the same batch")
	}
	d, _ := NewNeighbor(g, fan, 78)
	other, _ = d.Sample(2, 5, targets)
	if reflect.DeepEqual(other.Nodes, want.Nodes) {
		t.Fatal("another seed gave the same batch")
	}
}

func TestStreamIdenticalAcrossWorkers(t *testing.T) {
	g := randomGraph(t, 3000, 5)
	ns, _ := NewNeighbor(g, []int{6, 4, 2}, 11)
	train := pickTargets(rng.New(2), g.N, 1500)
	batches, err := Batches(train, 64, 11, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(workers, depth int) []*Batch {
		var out []*Batch
		for r := range ns.StreamDepth(context.Background(), 1, batches, workers, depth) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			out = append(out, r.Batch)
		}
		return out
	}
	want := collect(1, 0)
	if len(want) != len(batches) {
		t.Fatalf("%d batches, want %d", len(want), len(batches))
	}
	for i, b := range want {
		if b.Index != i || b.Epoch != 1 || !slices.Equal(b.Targets(), batches[i]) {
			t.Fatalf("batch %d out of order", i)
		}
		checkBatch(t, g, []int{6, 4, 2}, batches[i], b)
	}
	for _, c := range [][2]int{{2, 0}, {4, 0}, {4, 4}, {3, 1}, {8, 50}} {
		if got := collect(c[0], c[1]); !reflect.DeepEqual(got, want) {
			t.Fatalf("workers %d depth %d: batches differ from 1 worker", c[0], c[1])
		}
	}
	if got := collect(2, 0); !reflect.DeepEqual(got, want) {
		t.Fatal("reusing pooled workers changed the batches")
	}
	var none int
	for range ns.Stream(context.Background(), 0, nil, 3) {
		none++
	}
	if none != 0 {
		t.Fatalf("empty epoch gave %d results", none)
	}
}

func TestStreamErrorAndCancel(t *testing.T) {
	g := randomGraph(t, 200, 6)
	ns, _ := NewNeighbor(g, []int{3, 3}, 1)
	batches := [][]int32{{1, 2}, {3}, {4, 200}, {5}, {6}}
	var got []Result
	for r := range ns.Stream(context.Background(), 0, batches, 2) {
		got = append(got, r)
	}
	if len(got) != 3 || got[2].Err == nil || got[0].Err != nil || got[1].Err != nil {
		t.Fatalf("want two batches then an error, got %d results", len(got))
	}
	if !strings.Contains(got[2].Err.Error(), "out of range") {
		t.Fatalf("error %q", got[2].Err)
	}

	many := make([][]int32, 100)
	for i := range many {
		many[i] = []int32{int32(i)}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	for r := range ns.Stream(ctx, 0, many, 3) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if n++; n == 5 {
			cancel()
		}
	}
	if n > 5+1 {
		t.Fatalf("received %d batches after canceling at 5", n)
	}
	// Every worker went back to the pool.
	if len(ns.free) != 3 {
		t.Fatalf("%d pooled workers, want 3", len(ns.free))
	}
}

func TestValidation(t *testing.T) {
	g := randomGraph(t, 50, 7)
	for _, c := range []struct {
		g   *graph.CSR
		fan []int
		msg string
	}{
		{nil, []int{1}, "nil graph"},
		{g, nil, "no fanouts"},
		{g, []int{3, 0}, "fanout 0 of hop 2"},
		{g, []int{-2}, "fanout -2 of hop 1"},
		{&graph.CSR{N: 3, Indptr: []int64{0, 1}}, []int{1}, "row pointers"},
	} {
		if _, err := NewNeighbor(c.g, c.fan, 0); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("NewNeighbor(%v): error %v, want %q", c.fan, err, c.msg)
		}
	}
	ns, _ := NewNeighbor(g, []int{2}, 0)
	for _, c := range []struct {
		targets []int32
		msg     string
	}{
		{nil, "no targets"},
		{[]int32{1, 50}, "target 50 (position 1) out of range"},
		{[]int32{-1}, "out of range"},
		{[]int32{4, 5, 4}, "target 4 listed twice (positions 0 and 2)"},
	} {
		if _, err := ns.Sample(0, 0, c.targets); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Sample(%v): error %v, want %q", c.targets, err, c.msg)
		}
	}
	if _, err := Batches([]int32{1}, 0, 0, 0, false); err == nil {
		t.Error("Batches accepted batch size 0")
	}
	if _, err := LayerwiseChunks(10, 0); err == nil {
		t.Error("LayerwiseChunks accepted chunk 0")
	}
	if _, err := LayerwiseChunks(-1, 3); err == nil {
		t.Error("LayerwiseChunks accepted n -1")
	}
	if _, _, err := FullBlock(g, []int32{1, 1}, nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("FullBlock duplicate: %v", err)
	}
	if _, _, err := FullBlock(g, []int32{50}, nil); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("FullBlock out of range: %v", err)
	}
	if _, _, err := FullBlock(g, []int32{1}, NewScratch(10)); err == nil {
		t.Error("FullBlock accepted a scratch too small")
	}
}

func TestBatches(t *testing.T) {
	nodes := pickTargets(rng.New(3), 1000, 777)
	orig := slices.Clone(nodes)
	b1, err := Batches(nodes, 100, 5, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nodes, orig) {
		t.Fatal("Batches modified its input")
	}
	if len(b1) != 8 || len(b1[7]) != 77 {
		t.Fatalf("%d batches, last of %d", len(b1), len(b1[len(b1)-1]))
	}
	var all []int32
	for _, b := range b1 {
		if cap(b) != len(b) {
			t.Fatal("batch capacity not clipped")
		}
		all = append(all, b...)
	}
	if slices.Equal(all, orig) {
		t.Fatal("shuffle kept the order")
	}
	slices.Sort(all)
	sorted := slices.Sorted(slices.Values(orig))
	if !slices.Equal(all, sorted) {
		t.Fatal("batches are not a permutation of the nodes")
	}
	b2, _ := Batches(nodes, 100, 5, 0, true)
	if !reflect.DeepEqual(b1, b2) {
		t.Fatal("same (seed, epoch) gave different batches")
	}
	b3, _ := Batches(nodes, 100, 5, 1, true)
	if reflect.DeepEqual(b1, b3) {
		t.Fatal("another epoch gave the same order")
	}
	plain, _ := Batches(nodes, 1000, 5, 0, false)
	if len(plain) != 1 || !slices.Equal(plain[0], orig) {
		t.Fatal("unshuffled batches changed the order")
	}
	if empty, _ := Batches(nil, 4, 0, 0, true); len(empty) != 0 {
		t.Fatal("no nodes gave batches")
	}
}

func TestFullBlockLayerwise(t *testing.T) {
	g := randomGraph(t, 700, 8)
	chunks, err := LayerwiseChunks(g.N, 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 11 || len(chunks[10]) != 700-640 {
		t.Fatalf("%d chunks", len(chunks))
	}
	s := NewScratch(g.N)
	var edges int64
	for ci, dst := range chunks {
		if dst[0] != int32(64*ci) {
			t.Fatalf("chunk %d starts at %d", ci, dst[0])
		}
		b, src, err := FullBlock(g, dst, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		if b.NumSrc != len(src) || !slices.Equal(src[:len(dst)], dst) {
			t.Fatal("sources do not start with the destinations")
		}
		uniq := map[int32]bool{}
		for _, v := range src {
			uniq[v] = true
		}
		if len(uniq) != len(src) {
			t.Fatal("repeated source")
		}
		for i, v := range dst {
			var got []int32
			for _, c := range b.Indices[b.Indptr[i]:b.Indptr[i+1]] {
				got = append(got, src[c])
			}
			if !slices.Equal(got, g.Neighbors(v)) {
				t.Fatalf("row of %d differs from the graph", v)
			}
		}
		edges += b.NumEdges()
	}
	if edges != g.NumEdges() {
		t.Fatalf("chunks cover %d edges, graph has %d", edges, g.NumEdges())
	}
	b, src, err := FullBlock(g, nil, nil)
	if err != nil || b.NumDst != 0 || b.NumSrc != 0 || len(src) != 0 || b.Validate() != nil {
		t.Fatalf("empty destinations: %v %+v", err, b)
	}
}

// TestChooseUniform checks each strategy of choose: distinct in-range picks
// and, for every position, a frequency close to k/d (chi-square, fixed seed).
func TestChooseUniform(t *testing.T) {
	for _, c := range []struct{ d, k, trials int }{
		{17, 16, 4000},  // Floyd, linear scan, k near d
		{50, 5, 20000},  // Floyd, linear scan
		{30, 25, 4000},  // partial Fisher-Yates
		{100, 30, 4000}, // partial Fisher-Yates
		{500, 40, 8000}, // Floyd with hash set
		{3, 1, 30000},
	} {
		s := NewScratch(0)
		r := rng.New(uint64(c.d*1000 + c.k))
		count := make([]float64, c.d)
		seen := make([]int, c.d)
		for trial := 1; trial <= c.trials; trial++ {
			p := s.choose(r, c.d, c.k)
			if len(p) != c.k {
				t.Fatalf("d=%d k=%d: %d picks", c.d, c.k, len(p))
			}
			for _, x := range p {
				if x < 0 || int(x) >= c.d || seen[x] == trial {
					t.Fatalf("d=%d k=%d: pick %d out of range or repeated", c.d, c.k, x)
				}
				seen[x] = trial
				count[x]++
			}
		}
		// Each position is picked Binomial(trials, k/d) times.
		pr := float64(c.k) / float64(c.d)
		mean := float64(c.trials) * pr
		chi := 0.0
		for _, x := range count {
			chi += (x - mean) * (x - mean) / (mean * (1 - pr))
		}
		// chi ~ d-1 degrees of freedom (the counts sum to trials*k); allow
		// a wide margin: mean + 6 standard deviations.
		df := float64(c.d - 1)
		if limit := df + 6*math.Sqrt(2*df); chi > limit {
			t.Errorf("d=%d k=%d: chi-square %.1f > %.1f, counts %v", c.d, c.k, chi, limit, count)
		}
	}
}

func TestBenchSamplingSmall(t *testing.T) {
	g := randomGraph(t, 1000, 9)
	res, err := BenchSampling(g, pickTargets(rng.New(1), g.N, 300), []int{5, 5}, 32, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Batches != 1 || res.Edges <= 0 || res.EdgesPerSec <= 0 || res.Cores < 1 {
		t.Fatalf("%+v", res)
	}
	if _, err := BenchSampling(g, nil, []int{5}, 32, 1, 0); err == nil {
		t.Fatal("no training nodes accepted")
	}
	if _, err := BenchSampling(g, []int32{5000}, []int{5}, 32, 1, 0); err == nil {
		t.Fatal("target out of range accepted")
	}
}

// TestSampleUniformEndToEnd checks that, across batch indices, a target's
// sampled neighbors are spread uniformly over its row (loose chi-square).
func TestSampleUniformEndToEnd(t *testing.T) {
	const d, k, trials = 40, 6, 3000
	src := make([]int32, d)
	dst := make([]int32, d)
	for i := range src {
		src[i], dst[i] = int32(i+1), 0
	}
	g, err := graph.FromEdges(d+1, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	ns, _ := NewNeighbor(g, []int{k}, 123)
	w := ns.NewWorker()
	count := make([]float64, d+1)
	for idx := range trials {
		b, err := w.Sample(idx%7, idx, []int32{0})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range b.Nodes[1:] {
			count[v]++
		}
	}
	pr := float64(k) / d
	mean := trials * pr
	chi := 0.0
	for _, x := range count[1:] {
		chi += (x - mean) * (x - mean) / (mean * (1 - pr))
	}
	if df := float64(d - 1); chi > df+6*math.Sqrt(2*df) {
		t.Fatalf("chi-square %.1f for %v degrees of freedom, counts %v", chi, df, count[1:])
	}
}
