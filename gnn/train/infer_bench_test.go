package train

import (
	"os"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// BenchmarkInferDataset times one full layer-wise evaluation (GraphSAGE
// 3x256, the synth-products configuration of scripts/bench-vs-torch.sh)
// of the dataset cache file named by $GNNSCOPE_BENCH_DATA, from a fresh
// inference each time: the chunks and the first layer's aggregate are
// built in every iteration, as in a run's first evaluation. Without the
// variable it is skipped. Run with -benchtime 1x -cpuprofile to see where
// an evaluation's time goes.
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
	b.ResetTimer()
	for range b.N {
		inf := newInference(cfg, ds, tr.x, tr.deg, tr.isVal, &tr.mem, nil)
		inf.available = deviceAvailable(dev)
		preds, err := inf.predict(dev, tr.model)
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
	b.ReportMetric(acc, "test-acc")
	b.ReportMetric(sum, "pred-sum")
}
