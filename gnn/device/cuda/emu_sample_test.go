package cuda

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/internal/chisq"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/sample"
)

// sampleCase is one launch of the emulated sampling kernel: a graph, the
// frontier it draws for, the fanout, the random stream and the grid (small
// grids make every thread stride over several frontier nodes). A star case
// (d > 0) draws for node 1 of a star of d neighbors at every frontier
// position, for the chi-square test.
type sampleCase struct {
	g      *graph.CSR
	nodes  []int32
	k, hop int
	key    uint64
	grid   int
	d      int // > 0: a star case of node 1 with neighbors 3..d+2
}

// starGraph returns a graph whose node 1 has d neighbors, nodes 3..d+2,
// between node 0 (neighbors 1, 2) and node 2 (neighbor 0).
func starGraph(d int) *graph.CSR {
	g := &graph.CSR{N: d + 3, Indptr: []int64{0, 2, int64(2 + d), int64(3 + d)}}
	g.Indices = []int32{1, 2}
	for p := 0; p < d; p++ {
		g.Indices = append(g.Indices, int32(p+3))
	}
	g.Indices = append(g.Indices, 0)
	for v := 3; v < d+3; v++ {
		g.Indptr = append(g.Indptr, g.Indptr[len(g.Indptr)-1])
	}
	return g
}

// randomCSR returns a graph of n nodes with degrees from 0 to 3*maxDeg and
// distinct neighbors per row.
func randomCSR(n, maxDeg int, seed uint64) *graph.CSR {
	r := rng.New(seed)
	g := &graph.CSR{N: n, Indptr: []int64{0}}
	for v := 0; v < n; v++ {
		d := r.Intn(3*maxDeg + 1)
		row := r.Perm(n)[:min(d, n)]
		slices.Sort(row)
		g.Indices = append(g.Indices, row...)
		g.Indptr = append(g.Indptr, int64(len(g.Indices)))
	}
	return g
}

func sampleCases() []sampleCase {
	var cs []sampleCase
	for i, c := range []struct{ d, k, trials int }{{5, 2, 6000}, {17, 16, 1500}, {40, 6, 3000}, {100, 10, 2000}} {
		nodes := make([]int32, c.trials)
		for j := range nodes {
			nodes[j] = 1
		}
		cs = append(cs, sampleCase{g: starGraph(c.d), nodes: nodes, k: c.k, hop: i, key: 0x9e3779b97f4a7c15 + uint64(i), grid: 3, d: c.d})
	}
	for i, k := range []int{1, 3, 10, 25} {
		g := randomCSR(300, k, uint64(i))
		nodes := rng.New(uint64(i) + 100).Perm(g.N)[:200]
		cs = append(cs, sampleCase{g: g, nodes: nodes, k: k, hop: 2, key: uint64(1) << 63 >> uint(i), grid: 1 + i})
	}
	return cs
}

// writeSampleCases writes the cases in the harness's format (see
// dump_samples in internal/emu/sampling.h).
func writeSampleCases(path string, cs []sampleCase) error {
	var b strings.Builder
	ints := func(v any) {
		b.WriteString(strings.Trim(fmt.Sprint(v), "[]"))
		b.WriteByte('\n')
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "%d %d %d %d %d %d %d\n", c.g.N, len(c.g.Indices), len(c.nodes), c.k, c.hop, c.key, c.grid)
		ints(c.g.Indptr)
		ints(c.g.Indices)
		ints(c.nodes)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// checkSampleDraws compares the emulated kernel's draws with the
// reference draw, bit for bit, and tests the star cases for uniformity
// (chi-square at significance 0.001; the seeds are fixed).
func checkSampleDraws(t *testing.T, path string, cs []sampleCase) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	next := func(n int) []int32 {
		if 4*n > len(b) {
			t.Fatalf("%d bytes of draws left, want %d", len(b), 4*n)
		}
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		b = b[4*n:]
		return v
	}
	for ci, c := range cs {
		n := len(c.nodes)
		out, count := next(n*c.k), next(n)
		wantOut, wantCount := make([]int32, n*c.k), make([]int32, n)
		for i := range wantOut {
			wantOut[i] = -1 // the harness's unused slots
		}
		if err := sample.DrawHop(c.g, c.nodes, c.k, c.key, c.hop, wantOut, wantCount); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(count, wantCount) || !slices.Equal(out, wantOut) {
			t.Fatalf("sample case %d: the kernel's draws differ from sample.DrawHop", ci)
		}
		if c.d == 0 {
			continue
		}
		hits := make([]int64, c.d)
		for _, u := range out {
			hits[u-3]++
		}
		stat, limit, err := chisq.Uniform(hits, n, c.k)
		if err != nil {
			t.Fatal(err)
		}
		if stat > limit {
			t.Errorf("sample case %d (degree %d, fanout %d): chi-square %.1f above %.1f (significance 0.001), counts %v", ci, c.d, c.k, stat, limit, hits)
		}
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes of draws left over", len(b))
	}
}
