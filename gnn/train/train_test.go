package train

import (
	"context"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// plantedPartition makes a small homophilous graph whose labels are only
// weakly visible in the features, so models must use the edges.
func plantedPartition(t *testing.T, n, classes int, seed uint64) *data.Dataset {
	t.Helper()
	r := rng.New(seed)
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i % classes)
	}
	var src, dst []int32
	for i := 0; i < n; i++ {
		for k := 0; k < 4; k++ {
			j := r.Intn(n)
			if r.Float64() < 0.9 { // same class
				j = (j/classes)*classes + int(y[i])
				if j >= n {
					j -= classes
				}
			}
			if j != i {
				src, dst = append(src, int32(i), int32(j)), append(dst, int32(j), int32(i))
			}
		}
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	const f = 8
	x := make([]float32, n*f)
	for i := 0; i < n; i++ {
		for j := 0; j < f; j++ {
			x[i*f+j] = float32(r.NormFloat64())
		}
		x[i*f+int(y[i])%f] += 0.7
	}
	ds := &data.Dataset{Name: "planted", Graph: g, X: x, NumFeatures: f, Y: y, NumClasses: classes}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestTrainLearnsAndIsDeterministic(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 1)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model   nn.Kind
		sampler Sampler
	}{{"gcn", "full"}, {"gcn", "neighbor"}, {"sage", "full"}, {"sage", "neighbor"}} {
		t.Run(string(tc.model)+"/"+string(tc.sampler), func(t *testing.T) {
			cfg := Defaults(tc.model)
			cfg.Sampler, cfg.Epochs, cfg.Hidden, cfg.BatchSize = tc.sampler, 30, 32, 32
			cfg.Fanouts = []int{5, 5}
			cfg.EvalChunk = 128 // several chunks: exercises layer-wise inference
			dev := cpu.New(2, 0)
			a, err := Run(context.Background(), cfg, ds, split, dev, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if a.TestAcc < 0.6 {
				t.Errorf("test accuracy %.3f: the model did not learn (chance is 0.25)", a.TestAcc)
			}
			if live := dev.Mem().Stats().Live; live != 0 {
				t.Errorf("%d bytes still live after the run", live)
			}
			b, err := Run(context.Background(), cfg, ds, split, cpu.New(1, 0), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.History {
				if a.History[i].Loss != b.History[i].Loss || a.History[i].ValAcc != b.History[i].ValAcc {
					t.Fatalf("epoch %d differs between runs with 2 and 1 threads: %+v vs %+v", i+1, a.History[i], b.History[i])
				}
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	cfg := Defaults("sage")
	cfg.Fanouts = []int{10}
	cfg.Dropout = 1
	if err := cfg.Validate(); err == nil {
		t.Fatal("expected an error for one fanout with two layers and dropout 1")
	}
	cfg = Defaults("gin")
	if err := cfg.Validate(); err == nil {
		t.Fatal("expected an error for an unknown model")
	}
	if err := Defaults("gat").Validate(); err != nil {
		t.Fatal(err)
	}
	for _, model := range nn.Kinds {
		cfg = Defaults(model)
		cfg.Sampler, cfg.Parts, cfg.PartsPerBatch = "gas", 4, 1
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s with gas: %v", model, err)
		}
	}
	cfg = Defaults("gcnii")
	bad := -0.1
	cfg.Activation, cfg.Alpha, cfg.Theta, cfg.WDConv, cfg.WDOut, cfg.ClipNorm, cfg.Patience = "tanh", 1.5, -1, &bad, &bad, -1, -1
	err := cfg.Validate()
	for _, want := range []string{"activation", "alpha", "theta", "conv weight decay", "output weight decay", "clip norm", "patience"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
	cfg = Defaults("appnp")
	cfg.Activation = "elu"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "own ReLU") {
		t.Errorf("appnp with elu: %v", err)
	}
	if err := Defaults("gcn").Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCanceled(t *testing.T) {
	ds := plantedPartition(t, 100, 2, 2)
	split, _ := data.PerClassSplit(ds.Y, 2, 10, 20, 20, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Defaults("gcn"), ds, split, cpu.New(1, 0), Options{}); err == nil {
		t.Fatal("expected an error from a canceled context")
	}
}

// TestPatience checks that training stops Patience epochs after the best
// validation accuracy, with evaluation in turn and overlapped (where the
// epoch that trained while the deciding evaluation ran is kept, not
// evaluated).
func TestPatience(t *testing.T) {
	ds := plantedPartition(t, 200, 2, 4)
	split, _ := data.PerClassSplit(ds.Y, 2, 10, 50, 100, 0)
	for _, overlap := range []bool{false, true} {
		cfg := Defaults("gcn")
		cfg.Epochs, cfg.Patience, cfg.OverlapEval = 300, 5, overlap
		res, err := Run(context.Background(), cfg, ds, split, cpu.New(1, 0), Options{})
		if err != nil {
			t.Fatal(err)
		}
		extra := 0
		if overlap {
			extra = 1
		}
		if res.Epochs >= cfg.Epochs || res.Epochs != res.BestEpoch+cfg.Patience+extra || len(res.History) != res.Epochs {
			t.Errorf("overlap %v: %d epochs trained (%d in history), best at %d, patience %d", overlap, res.Epochs, len(res.History), res.BestEpoch, cfg.Patience)
		}
	}
}
