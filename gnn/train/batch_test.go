package train

import (
	"context"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// TestBatchesCarryTransposes checks that training batches leave the
// sampler workers with their prepared blocks' transposes built (for the
// model kinds whose backward reads them; GAT's does not), and that a
// training step on such a batch gives exactly the loss and weights that
// one on the same blocks without cached transposes gives.
func TestBatchesCarryTransposes(t *testing.T) {
	ds := plantedPartition(t, 400, 4, 7)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 30, 50, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE, nn.KindAPPNP, nn.KindGAT} {
		cfg := Defaults(kind)
		cfg.Sampler, cfg.Layers, cfg.Fanouts = SamplerNeighbor, 2, []int{5, 3}
		cfg.Epochs, cfg.Hidden, cfg.BatchSize = 1, 16, 32
		cfg.SamplerWorkers, cfg.Prefetch = 2, 2
		dev := cpu.New(2, 0)
		tr, err := newTrainer(cfg, ds, split, dev, nil)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		ref, err := newTrainer(cfg, ds, split, dev, nil)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		sch, err := tr.newSchedule()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		pipe := startPipeline(context.Background(), sch.(*pipelined).start)
		for i := 0; i < 3; i++ {
			p, err := pipe.take(context.Background(), nil, 1, i)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if p.err != nil {
				t.Fatalf("%s batch %d: %v", kind, i, p.err)
			}
			if p.epoch != 1 || p.index != i || len(p.blocks) == 0 {
				t.Fatalf("%s: got batch %d/%d with %d blocks, want 1/%d", kind, p.epoch, p.index, len(p.blocks), i)
			}
			fresh := make([]*graph.Block, len(p.blocks))
			for l, blk := range p.blocks {
				if want := tr.model.BackwardReadsTranspose(l); blk.HasTranspose() != want {
					t.Fatalf("%s batch %d block %d: transpose built %v, want %v", kind, i, l, blk.HasTranspose(), want)
				}
				if kind == nn.KindGCN && blk.Transpose().Weights == nil {
					t.Fatalf("%s batch %d block %d: transpose of the block before its weights were set", kind, i, l)
				}
				fresh[l] = &graph.Block{NumDst: blk.NumDst, NumSrc: blk.NumSrc, Indptr: blk.Indptr, Indices: blk.Indices, Weights: blk.Weights}
			}
			loss, ok, err := tr.step.step(dev, 1, i, p.blocks, p.x, nil, p.labels)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			wantLoss, wantOK, err := ref.step.step(dev, 1, i, fresh, p.x, nil, p.labels)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			p.free(dev)
			if loss != wantLoss || ok != wantOK {
				t.Fatalf("%s batch %d: loss %v (%d right), without cached transposes %v (%d)", kind, i, loss, ok, wantLoss, wantOK)
			}
		}
		pipe.stop()
		sameWeights(t, kind, tr.model, ref.model)
		tr.close()
		ref.close()
		if live := dev.Mem().Stats().Live; live != 0 {
			t.Fatalf("%s: %d bytes live at the end", kind, live)
		}
	}
}

// TestSerialBatchesCarryTransposes checks the same of a batch prepared on
// the training goroutine (the schedule without sampler workers).
func TestSerialBatchesCarryTransposes(t *testing.T) {
	ds := plantedPartition(t, 300, 3, 8)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 50, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults(nn.KindGCN)
	cfg.Sampler, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = SamplerNeighbor, 16, 32, []int{5, 3}
	dev := cpu.New(1, 0)
	tr, err := newTrainer(cfg, ds, split, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.close()
	p := tr.load.prepare(tr.sampler.NewWorker(), 1, 0, split.Train[:cfg.BatchSize], profile.LaneCompute)
	defer p.free(dev)
	if p.err != nil {
		t.Fatal(p.err)
	}
	for l, blk := range p.blocks {
		if want := tr.model.BackwardReadsTranspose(l); blk.HasTranspose() != want {
			t.Fatalf("block %d: transpose built %v, want %v", l, blk.HasTranspose(), want)
		}
	}
}

// sameWeights fails unless models a and b hold bitwise equal parameters.
func sameWeights(t *testing.T, kind nn.Kind, a, b *nn.Model) {
	t.Helper()
	for l := range a.Layers {
		pa, pb := a.Layers[l].Params(), b.Layers[l].Params()
		for k := range pa {
			wa, wb := pa[k].W.Data, pb[k].W.Data
			for j := range wa {
				if wa[j] != wb[j] {
					t.Fatalf("%s: layer %d %s[%d] = %v, without cached transposes %v", kind, l, pa[k].Name, j, wa[j], wb[j])
				}
			}
		}
	}
}
