package train

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// gasModels are the models GAS trains.
var gasModels = nn.Kinds

func gasConfig(model nn.Kind) Config {
	cfg := Defaults(model)
	cfg.Sampler, cfg.Parts, cfg.PartsPerBatch = "gas", 12, 3
	cfg.Epochs, cfg.Hidden, cfg.EvalChunk, cfg.Layers, cfg.Patience = 30, 32, 128, 2, 0
	if model == "gat" {
		cfg.Heads = 2
	}
	return cfg
}

// embedDim is the width of the hidden embeddings GAS keeps for cfg: the
// hidden width (all heads for GAT), the classes for APPNP.
func embedDim(cfg Config, classes int) int {
	switch cfg.Model {
	case "gat":
		return cfg.Hidden * cfg.Heads
	case "appnp":
		return classes
	}
	return cfg.Hidden
}

func TestGASLearnsAndIsDeterministic(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 1)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 150, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range gasModels {
		t.Run(string(model), func(t *testing.T) {
			cfg := gasConfig(model)
			sink := &memSink{}
			rec := profile.NewRecorder(sink, profile.RecorderOptions{})
			dev := cpu.New(2, 0)
			a, err := Run(context.Background(), cfg, ds, split, dev, Options{Recorder: rec})
			rec.Close("", err, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.TestAcc < 0.6 {
				t.Errorf("test accuracy %.3f: the model did not learn (chance is 0.25)", a.TestAcc)
			}
			if live := dev.Mem().Stats().Live; live != 0 {
				t.Errorf("%d bytes still live after the run", live)
			}
			// One history of 600 rows x its dims (4 bytes) plus 8-byte steps.
			if want := int64(600*embedDim(cfg, ds.NumClasses)*4 + 600*8); a.HistoryBytes != want {
				t.Errorf("history bytes %d, want %d", a.HistoryBytes, want)
			}
			if a.StalenessMean == nil || a.StalenessMax == nil || a.HistoryRelErr == nil {
				t.Fatalf("missing history figures: %+v", a)
			}
			// 4 batches per epoch and a refresh at every evaluation (each
			// epoch): a halo row was written at most 3 steps ago; rows
			// refreshed just before the epoch's first batch have age 0.
			if *a.StalenessMean <= 0 || *a.StalenessMean > 3 || *a.StalenessMax != 3 {
				t.Errorf("staleness mean %.2f max %d: implausible for 4 batches per epoch", *a.StalenessMean, *a.StalenessMax)
			}
			// Histories hold training-mode embeddings (with dropout), as
			// GAS's do: under GAT's and GCNII's dropout of 0.6 they differ
			// from the exact ones by more than their norm.
			limit := 1.0
			if model == "gat" || model == "gcnii" {
				limit = 3
			}
			if e := *a.HistoryRelErr; !(e > 0 && e < limit) {
				t.Errorf("history relative error %g", e)
			}
			stale := eventsOf(sink.evs, profile.TypeStale, "")
			if want := cfg.Epochs * 4; len(stale) != want {
				t.Errorf("%d stale events, want %d (one per batch and hidden layer)", len(stale), want)
			}
			for _, e := range stale {
				if e.Layer != 0 || e.Mean < 0 || e.Max > 3 || (e.Batch == 0 && e.Max != 0) || len(e.Hist) == 0 {
					t.Fatalf("stale event %+v", e)
				}
			}
			if he := eventsOf(sink.evs, profile.TypeHistErr, ""); len(he) != cfg.Epochs {
				t.Errorf("%d hist_err events, want %d (one per evaluation)", len(he), cfg.Epochs)
			}
			for _, st := range []string{profile.StageHistoryPull, profile.StageHistoryPush, profile.StageSample, profile.StageTransfer, profile.StageTrain} {
				if _, ok := a.StageS[st]; !ok {
					t.Errorf("no %s span", st)
				}
			}
			b, err := Run(context.Background(), cfg, ds, split, cpu.New(3, 0), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range a.History {
				if a.History[i].Loss != b.History[i].Loss || a.History[i].TestAcc != b.History[i].TestAcc {
					t.Fatalf("epoch %d differs between runs: %+v vs %+v", i+1, a.History[i], b.History[i])
				}
			}
		})
	}
}

// With every part in one batch there is no halo: a GAS step is the full-batch
// step on a renumbered graph, so the loss trajectories agree up to float
// summation order.
func TestGASWholeGraphEqualsFullBatch(t *testing.T) {
	ds := plantedPartition(t, 300, 3, 2)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 60, 120, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range gasModels {
		for _, layers := range []int{2, 3} {
			cfg := gasConfig(model)
			cfg.Dropout, cfg.AttnDropout, cfg.Epochs, cfg.Layers = 0, 0, 40, layers
			cfg.Parts, cfg.PartsPerBatch = 6, 6
			full := cfg
			full.Sampler = "full"
			g, err := Run(context.Background(), cfg, ds, split, cpu.New(1, 0), Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := Run(context.Background(), full, ds, split, cpu.New(1, 0), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range f.History {
				lg, lf := g.History[i].Loss, f.History[i].Loss
				if math.Abs(lg-lf) > 1e-4*math.Abs(lf) || g.History[i].Batches != 1 {
					t.Fatalf("%s/%d layers epoch %d: gas loss %.8f (%d batches), full %.8f", model, layers, i+1, lg, g.History[i].Batches, lf)
				}
			}
			if g.StalenessMean != nil {
				t.Errorf("%s: staleness reported without a halo", model)
			}
		}
	}
}

// TestGASPartBalance: parts balanced by edges (PartBalance edges) are a
// different partition from node-balanced ones, whose parts hold evener
// edge volumes; training on them runs and learns.
func TestGASPartBalance(t *testing.T) {
	ds := plantedPartition(t, 600, 3, 5)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 60, 120, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := ds.Graph
	volumes := func(cfg Config) (parts []int32, spread float64) {
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.close()
		s, err := tr.newSchedule()
		if err != nil {
			t.Fatal(err)
		}
		sch := s.(*gasSchedule)
		defer sch.close()
		// The loader numbers nodes part by part: part p is the permuted
		// ids [PartPtr[p], PartPtr[p+1]), original node Inv[i].
		ld := sch.s.loader
		vol := make([]int64, cfg.Parts)
		parts = make([]int32, g.N)
		for p := 0; p < cfg.Parts; p++ {
			for i := ld.PartPtr[p]; i < ld.PartPtr[p+1]; i++ {
				v := ld.Inv[i]
				parts[v] = int32(p)
				vol[p] += g.Indptr[v+1] - g.Indptr[v] + 1
			}
		}
		var total int64
		for _, x := range vol {
			total += x
		}
		return parts, float64(slices.Max(vol)) * float64(cfg.Parts) / float64(total)
	}
	cfg := gasConfig("gcn")
	nodeParts, nodeSpread := volumes(cfg)
	cfg.PartBalance = PartBalanceEdges
	edgeParts, edgeSpread := volumes(cfg)
	if slices.Equal(nodeParts, edgeParts) {
		t.Fatal("edge-balanced parts are the node-balanced ones")
	}
	t.Logf("largest edge volume over the mean: %.3f balancing edges, %.3f balancing nodes", edgeSpread, nodeSpread)
	if edgeSpread > 1.05 || edgeSpread >= nodeSpread {
		t.Errorf("largest edge volume over the mean: %.3f balancing edges, %.3f balancing nodes", edgeSpread, nodeSpread)
	}
	res, err := Run(context.Background(), cfg, ds, split, cpu.New(1, 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.TestAcc < 0.6 {
		t.Errorf("edge-balanced GAS test accuracy %.3f", res.TestAcc)
	}
}

func TestGASConfigErrors(t *testing.T) {
	cfg := gasConfig("gcn")
	cfg.Parts, cfg.PartsPerBatch, cfg.OverlapEval, cfg.PartBalance = 0, 0, true, "halo"
	err := cfg.Validate()
	for _, want := range []string{"--parts", "--parts-per-batch", "overlapped evaluation", `part balance "halo"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
	ds := plantedPartition(t, 50, 2, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 5, 5, 10, 0)
	cfg = gasConfig("gcn")
	cfg.Parts = 51
	if _, err := Run(context.Background(), cfg, ds, split, cpu.New(1, 0), Options{}); err == nil || !strings.Contains(err.Error(), "parts") {
		t.Errorf("too many parts: %v", err)
	}
}
