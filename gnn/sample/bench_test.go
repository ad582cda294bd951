package sample

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data/synth"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// benchGraph is a graph with its training nodes, built once per process.
type benchGraph struct {
	g     *graph.CSR
	train []int32
	desc  string
	err   error
}

var (
	productsOnce, smallOnce sync.Once
	productsGraph           benchGraph
	smallGraph              benchGraph
)

// loadBench generates the synth preset, or, when the generator fails, a
// power-law graph of the same size and mean degree (see powerLawGraph).
func loadBench(preset string) benchGraph {
	p, ok := synth.Lookup(preset)
	if !ok {
		return benchGraph{err: fmt.Errorf("no synth preset %q", preset)}
	}
	if ds, err := synth.Generate(p.Config, 1, nil); err == nil && ds.Split != nil {
		return benchGraph{g: ds.Graph, train: ds.Split.Train, desc: preset}
	}
	cfg := p.Config
	g := powerLawGraph(cfg.Nodes, cfg.AvgDegree, 2.1, 0.007, 1)
	r := rng.New(2)
	train := r.Perm(g.N)[:int(float64(g.N)*cfg.TrainFrac)]
	return benchGraph{g: g, train: train, desc: "power-law stand-in for " + preset}
}

func products(b *testing.B) benchGraph {
	productsOnce.Do(func() { productsGraph = loadBench("synth-products") })
	if productsGraph.err != nil {
		b.Fatal(productsGraph.err)
	}
	return productsGraph
}

func small(b *testing.B) benchGraph {
	smallOnce.Do(func() { smallGraph = loadBench("synth-small") })
	if smallGraph.err != nil {
		b.Fatal(smallGraph.err)
	}
	return smallGraph
}

// powerLawGraph builds a directed configuration-model graph: node
// propensities follow a Pareto law with tail index gamma-1 capped at
// maxFrac*n, each row's length is its node's propensity scaled to the mean
// degree, and row entries are a random shuffle of all stubs, so a node is
// picked as a neighbor in proportion to its degree (hubs are shared, as in
// real graphs). Multi-edges and self-loops are rare and kept.
func powerLawGraph(n int, avgDeg, gamma, maxFrac float64, seed uint64) *graph.CSR {
	r := rng.New(seed)
	w := make([]float64, n)
	capW := maxFrac * float64(n)
	sum := 0.0
	for i := range w {
		u := 1 - r.Float64()
		w[i] = min(math.Pow(u, -1/(gamma-1)), capW)
		sum += w[i]
	}
	scale := avgDeg * float64(n) / sum
	indptr := make([]int64, n+1)
	for i, x := range w {
		d := int64(x * scale)
		if r.Float64() < x*scale-float64(d) {
			d++
		}
		indptr[i+1] = indptr[i] + d
	}
	idx := make([]int32, indptr[n])
	for v := 0; v < n; v++ {
		for e := indptr[v]; e < indptr[v+1]; e++ {
			idx[e] = int32(v)
		}
	}
	r.Shuffle(idx)
	return &graph.CSR{N: n, Indptr: indptr, Indices: idx}
}

// benchSample measures Stream with the given workers over b.N batches and
// reports sampled edges per second, in total and per core.
func benchSample(b *testing.B, bg benchGraph, fanouts []int, batchSize, workers int) {
	ns, err := NewNeighbor(bg.g, fanouts, 1)
	if err != nil {
		b.Fatal(err)
	}
	// Warm the worker pool so allocation of the stamp arrays is not timed.
	ws := make([]*Worker, workers)
	for i := range ws {
		ws[i] = ns.getWorker()
		if _, err := ws[i].Sample(-1, i, bg.train[:batchSize]); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range ws {
		ns.putWorker(w)
	}
	epoch, _ := Batches(bg.train, batchSize, 1, 0, true)
	epoch = epoch[:len(epoch)-1] // all full batches
	batches := make([][]int32, b.N)
	for i := range batches {
		batches[i] = epoch[i%len(epoch)]
	}
	var edges int64
	b.ResetTimer()
	cpu0, _ := processCPU()
	start := time.Now()
	for r := range ns.Stream(context.Background(), 0, batches, workers) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		edges += r.Batch.NumEdges()
	}
	sec := time.Since(start).Seconds()
	cpu1, _ := processCPU()
	b.StopTimer()
	cores := min(workers, runtime.GOMAXPROCS(0))
	b.ReportMetric(float64(edges)/sec, "edges/s")
	b.ReportMetric(float64(edges)/sec/float64(cores), "edges/s/core")
	b.ReportMetric(float64(edges)/float64(b.N), "edges/batch")
	if cpu := (cpu1 - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(edges)/cpu, "edges/cpu-s")
	}
}

// BenchmarkNeighborSample samples fanouts 15,10,5 with batches of 1024 on
// synth-products (2.4M nodes, ~62M edges).
func BenchmarkNeighborSample(b *testing.B) {
	bg := products(b)
	b.Logf("graph: %s, %d nodes, %d edges, %d training nodes", bg.desc, bg.g.N, bg.g.NumEdges(), len(bg.train))
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchSample(b, bg, []int{15, 10, 5}, 1024, w)
		})
	}
}

// BenchmarkNeighborSampleSmall is the same on synth-small (100k nodes).
func BenchmarkNeighborSampleSmall(b *testing.B) {
	bg := small(b)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchSample(b, bg, []int{15, 10, 5}, 1024, w)
		})
	}
}
