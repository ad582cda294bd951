package sample

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/gnnscope/gnnscope/gnn/graph"
)

// BenchResult reports a sampling throughput measurement.
type BenchResult struct {
	// Drawer says where the hops were drawn: "" on the sampling
	// goroutines, else the HopDrawer's description (e.g. "cuda, graph in
	// device memory").
	Drawer    string `json:",omitempty"`
	Fanouts   []int
	BatchSize int
	Workers   int
	// Cores is min(Workers, GOMAXPROCS): the cores the workers could use.
	Cores   int
	Batches int
	// Edges counts the edges of all produced blocks; Nodes the sampled
	// nodes (len(Batch.Nodes)) summed over batches.
	Edges, Nodes int64
	Elapsed      time.Duration
	// EdgesPerSec is Edges / Elapsed; EdgesPerSecPerCore divides it by Cores.
	EdgesPerSec        float64
	EdgesPerSecPerCore float64
	BatchesPerSec      float64
	// CPUTime is the process CPU time (user + system, all threads) used
	// while measuring, and EdgesPerCPUSec is Edges / CPUTime: the per-core
	// rate, unaffected by other processes competing for the cores (though
	// not by their use of shared caches). Both are 0 where the platform
	// does not report CPU time.
	CPUTime        time.Duration
	EdgesPerCPUSec float64
}

// String formats the result on one line.
func (r BenchResult) String() string {
	on := ""
	if r.Drawer != "" {
		on = " drawn by " + r.Drawer
	}
	return fmt.Sprintf("fanouts %v batch %d workers %d%s: %d batches, %d edges in %v: %.2f M edges/s (%.2f M/s per core, %.2f M per CPU-second), %.1f batches/s",
		r.Fanouts, r.BatchSize, r.Workers, on, r.Batches, r.Edges, r.Elapsed.Round(time.Millisecond),
		r.EdgesPerSec/1e6, r.EdgesPerSecPerCore/1e6, r.EdgesPerCPUSec/1e6, r.BatchesPerSec)
}

// BenchSampling measures neighbor-sampling throughput: it streams shuffled
// epochs of train (seed 1) through workers goroutines until at least minTime
// has passed and at least one batch was delivered. Worker state is allocated
// and touched before the clock starts.
func BenchSampling(g *graph.CSR, train []int32, fanouts []int, batchSize, workers int, minTime time.Duration) (BenchResult, error) {
	return BenchSamplingDrawn(g, train, fanouts, batchSize, workers, minTime, nil, "")
}

// BenchSamplingDrawn is BenchSampling with the hops drawn by d (see
// Neighbor.SetDrawer; nil: on the workers), described by where in the
// result.
func BenchSamplingDrawn(g *graph.CSR, train []int32, fanouts []int, batchSize, workers int, minTime time.Duration, d HopDrawer, where string) (BenchResult, error) {
	const seed = 1
	res := BenchResult{Fanouts: append([]int(nil), fanouts...), BatchSize: batchSize, Drawer: where}
	if len(train) == 0 {
		return res, fmt.Errorf("bench sampling: no training nodes")
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	res.Workers = workers
	res.Cores = min(workers, runtime.GOMAXPROCS(0))
	ns, err := NewNeighbor(g, fanouts, seed)
	if err != nil {
		return res, fmt.Errorf("bench sampling: %w", err)
	}
	ns.SetDrawer(d)
	ws := make([]*Worker, workers)
	for i := range ws {
		ws[i] = ns.getWorker()
		for j := 0; j < len(ws[i].s.mark); j += 512 { // fault the pages in
			ws[i].s.mark[j] = 0
		}
	}
	for _, w := range ws {
		ns.putWorker(w)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cpu0, cpuOK := processCPU()
	start := time.Now()
	for epoch := 0; ; epoch++ {
		batches, err := Batches(train, batchSize, seed, epoch, true)
		if err != nil {
			return res, fmt.Errorf("bench sampling: %w", err)
		}
		done := false
		ectx, ecancel := context.WithCancel(ctx)
		for r := range ns.Stream(ectx, epoch, batches, workers) {
			if r.Err != nil {
				ecancel()
				return res, fmt.Errorf("bench sampling: %w", r.Err)
			}
			res.Batches++
			res.Edges += r.Batch.NumEdges()
			res.Nodes += int64(len(r.Batch.Nodes))
			res.Elapsed = time.Since(start)
			if res.Elapsed >= minTime {
				done = true
				ecancel()
				break
			}
		}
		ecancel()
		if done {
			break
		}
	}
	if cpu1, ok := processCPU(); ok && cpuOK {
		res.CPUTime = cpu1 - cpu0
		res.EdgesPerCPUSec = float64(res.Edges) / res.CPUTime.Seconds()
	}
	sec := res.Elapsed.Seconds()
	res.EdgesPerSec = float64(res.Edges) / sec
	res.EdgesPerSecPerCore = res.EdgesPerSec / float64(res.Cores)
	res.BatchesPerSec = float64(res.Batches) / sec
	return res, nil
}
