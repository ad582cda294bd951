//go:build unix

package train

import (
	"os"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// BenchmarkInferDataset times one full layer-wise evaluation (GraphSAGE
// 3x256, the synth-products configuration of scripts/bench-vs-torch.sh,
// untrained weights of seed 0) of the dataset cache file named by
// $GNNSCOPE_BENCH_DATA, without it skipped. As in a run, the inference
// blocks and the first layer's input aggregate are built before (a run's
// setup builds them), untimed; each iteration starts from a fresh
// inference. It reports the process's CPU seconds per evaluation
// (cpu-s/op, steadier than wall time on a shared machine), the test
// accuracy and the sum of the predicted classes (equal before and after
// a change that keeps the numerics). With $GNNSCOPE_BENCH_PROFILE set, it
// writes a CPU profile of the evaluations alone (the setup left out) to
// that file: run with -benchtime 1x to see where an evaluation's time
// goes.
func BenchmarkInferDataset(b *testing.B) {
	path := os.Getenv("GNNSCOPE_BENCH_DATA")
	if path == "" {
		b.Skip("GNNSCOPE_BENCH_DATA names no dataset cache file")
	}
	ds, err := data.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	split := ds.Split
	if split == nil {
		split, _ = data.PerClassSplit(ds.Y, ds.NumClasses, 20, 500, 1000, 0)
	}
	cfg := Defaults("sage")
	cfg.Layers, cfg.Hidden, cfg.Fanouts, cfg.BatchSize = 3, 256, []int{15, 10, 5}, 1024
	dev := cpu.New(0, 0)
	tr, err := newTrainer(cfg, ds, split, dev, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.close()
	var acc, sum float64
	var cpuTime time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		inf := newInference(cfg, ds, tr.x, tr.deg, tr.isVal, &tr.mem, nil)
		inf.available = deviceAvailable(dev)
		chunks, err := inf.chunks(tr.model)
		if err == nil {
			_, err = inf.inputAggregate(dev, tr.model, chunks)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := processCPU()
		stop := profileTo(b, os.Getenv("GNNSCOPE_BENCH_PROFILE"))
		preds, err := inf.run(inferRequest{dev: dev, model: tr.model})
		stop()
		cpuTime += processCPU() - c0
		if err != nil {
			b.Fatal(err)
		}
		hit := 0
		for _, v := range split.Test {
			if preds[v] == ds.Y[v] {
				hit++
			}
		}
		acc = float64(hit) / float64(len(split.Test))
		sum = 0
		for _, c := range preds {
			sum += float64(c)
		}
	}
	b.ReportMetric(cpuTime.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(acc, "test-acc")
	b.ReportMetric(sum, "pred-sum")
}

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// profileTo starts a CPU profile into the file path (nothing when path is
// empty) and returns the function that stops it.
func profileTo(b *testing.B, path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}
