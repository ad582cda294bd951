package sample

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/internal/chisq"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// TestDrawnBatchesKeepTheFormat samples with the device sampler's draws
// (DrawHop, as the kernel computes them) and checks every batch as the
// CPU sampler's: targets first, prefixes, distinct neighbors of the right
// count, discovery order; and that a batch depends only on its
// coordinates.
func TestDrawnBatchesKeepTheFormat(t *testing.T) {
	for gi, n := range []int{50, 400, 3000} {
		g := randomGraph(t, n, uint64(gi)+7)
		r := rng.New(uint64(gi))
		for _, fan := range fanoutCases {
			t.Run(fmt.Sprintf("n%d/%v", n, fan), func(t *testing.T) {
				ns, err := NewNeighbor(g, fan, 42)
				if err != nil {
					t.Fatal(err)
				}
				ns.SetDrawer(CPUDrawer{G: g})
				w, w2 := ns.NewWorker(), ns.NewWorker()
				for idx := range 5 {
					targets := pickTargets(r, n, 1+r.Intn(min(n, 64)))
					b, err := w.Sample(3, idx, targets)
					if err != nil {
						t.Fatal(err)
					}
					checkBatch(t, g, fan, targets, b)
					again, err := w2.Sample(3, idx, targets)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(b, again) {
						t.Fatalf("batch %d differs between workers", idx)
					}
				}
			})
		}
	}
}

// star returns a graph whose node 1 has d neighbors (nodes 3..d+2), with
// nodes 0 and 2 of other degrees around it so that row 1 starts inside
// the index array.
func star(t testing.TB, d int) *graph.CSR {
	t.Helper()
	src := []int32{1, 2, 0}
	dst := []int32{0, 0, 2}
	for p := 0; p < d; p++ {
		src = append(src, int32(p+3))
		dst = append(dst, 1)
	}
	g, err := graph.FromEdges(d+3, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDrawHopUniform draws the neighbors of one node many times (every
// frontier position is its own random stream) and tests with a chi-square
// test, at significance 0.001 with fixed seeds, that every neighbor is
// equally likely.
func TestDrawHopUniform(t *testing.T) {
	for _, c := range []struct{ d, k, trials int }{
		{5, 2, 20000}, {17, 16, 4000}, {40, 6, 10000}, {100, 10, 10000}, {300, 25, 4000},
	} {
		g := star(t, c.d)
		nodes := make([]int32, c.trials)
		for i := range nodes {
			nodes[i] = 1
		}
		out := make([]int32, c.trials*c.k)
		count := make([]int32, c.trials)
		if err := DrawHop(g, nodes, c.k, uint64(c.d)<<32|uint64(c.k), 1, out, count); err != nil {
			t.Fatal(err)
		}
		hits := make([]int64, c.d)
		seen := make([]int, c.d)
		for i := range nodes {
			if count[i] != int32(c.k) {
				t.Fatalf("d=%d k=%d: %d neighbors drawn", c.d, c.k, count[i])
			}
			for _, u := range out[i*c.k : (i+1)*c.k] {
				p := int(u) - 3
				if p < 0 || p >= c.d || seen[p] == i+1 {
					t.Fatalf("d=%d k=%d: drew %d (not a neighbor, or twice)", c.d, c.k, u)
				}
				seen[p] = i + 1
				hits[p]++
			}
		}
		stat, limit, err := chisq.Uniform(hits, c.trials, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if stat > limit {
			t.Errorf("d=%d k=%d: chi-square %.1f above %.1f (0.001), counts %v", c.d, c.k, stat, limit, hits)
		}
	}
}

// badDrawer returns what a broken device might.
type badDrawer struct{ count, id int32 }

func (b badDrawer) DrawHop(nodes []int32, k int, key uint64, hop int, out, count []int32) error {
	if b.count == 0 {
		return errors.New("device lost")
	}
	for i := range count {
		count[i] = b.count
		out[i*k] = b.id
	}
	return nil
}

// TestDrawErrors: bad arguments and a drawer's errors or impossible
// answers fail the batch with a message.
func TestDrawErrors(t *testing.T) {
	g := star(t, 10)
	if err := DrawHop(g, []int32{1}, 0, 1, 0, nil, make([]int32, 1)); err == nil {
		t.Fatal("fanout 0 accepted")
	}
	if err := DrawHop(g, []int32{1}, 3, 1, 0, make([]int32, 2), make([]int32, 1)); err == nil {
		t.Fatal("short output accepted")
	}
	if err := DrawHop(g, []int32{99}, 3, 1, 0, make([]int32, 3), make([]int32, 1)); err == nil {
		t.Fatal("node out of range accepted")
	}
	for _, c := range []struct {
		d    badDrawer
		want string
	}{
		{badDrawer{}, "device lost"},
		{badDrawer{count: 9, id: 3}, "9 neighbors for fanout 3"},
		{badDrawer{count: 1, id: 1000}, "node 1000, out of range"},
	} {
		ns, _ := NewNeighbor(g, []int{3}, 1)
		ns.SetDrawer(c.d)
		if ns.Drawer() == nil {
			t.Fatal("no drawer")
		}
		_, err := ns.Sample(0, 0, []int32{1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}

// TestBenchSamplingDrawn measures with the hops drawn by a drawer.
func TestBenchSamplingDrawn(t *testing.T) {
	g := randomGraph(t, 1000, 9)
	res, err := BenchSamplingDrawn(g, pickTargets(rng.New(1), g.N, 300), []int{5, 5}, 32, 2, 0, CPUDrawer{G: g}, "the reference")
	if err != nil {
		t.Fatal(err)
	}
	if res.Edges <= 0 || res.EdgesPerSec <= 0 || !strings.Contains(res.String(), "drawn by the reference") {
		t.Fatalf("%+v", res)
	}
}
