package train

import (
	"fmt"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/profile"
)

// inferOut is what one inference pass computes: each hidden layer's
// output, the cross-entropy of every node's logits and the predictions.
type inferOut struct {
	hidden [][]float32
	ce     float64
	preds  []int32
}

// inferAll runs one inference pass of model m over every node.
func inferAll(t *testing.T, inf *inference, dev device.Device, m *nn.Model) inferOut {
	t.Helper()
	all := make([]bool, inf.g.N)
	for i := range all {
		all[i] = true
	}
	var out inferOut
	ce := &valCE{isVal: all, y: inf.y}
	preds, err := inf.run(inferRequest{dev: dev, model: m, ce: ce, keep: func(l int, h []float32) error {
		out.hidden = append(out.hidden, append([]float32(nil), h...))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	out.ce, out.preds = ce.loss(), preds
	return out
}

// closeTo reports whether a and b agree within float32 rounding.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-5*(1+math.Abs(b)) }

// TestInferenceTransformsOnce: inference that transforms every layer's
// input once and aggregates the transformed rows per chunk, and runs the
// first layer from the input aggregate whichever order the layer takes,
// computes what running every layer on each chunk's input rows computes
// (hidden layers, logits, predictions), for GCN, GraphSAGE and GAT layers
// that transform first and GCN and GraphSAGE layers that aggregate first,
// over several chunks, with and without an inference cut.
func TestInferenceTransformsOnce(t *testing.T) {
	ds := plantedPartition(t, 700, 4, 5)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 150, 300, 0)
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE, nn.KindGAT} {
		for _, cut := range []float64{0, 0.3} {
			cfg := Defaults(kind)
			cfg.Sampler, cfg.Epochs = SamplerFull, 1
			// 8 features → 6 → 6 → 4 classes: the first and last layers
			// transform first, the middle one aggregates first.
			cfg.Hidden, cfg.Layers, cfg.EvalChunk, cfg.EvalCut = 6, 3, 96, cut
			if kind == nn.KindGAT {
				cfg.Hidden, cfg.Heads = 3, 2
			}
			tr, err := newTrainer(cfg, ds, split, cpu.New(2, 0), nil)
			if err != nil {
				t.Fatal(err)
			}
			if kind != nn.KindGAT && (tr.model.Transformer(0) == nil || tr.model.Transformer(1) != nil || tr.model.Transformer(2) == nil) {
				t.Fatalf("%s: the layers do not transform first, aggregate first, transform first", kind)
			}
			chunks, err := tr.inf.chunks(tr.model)
			if err != nil || len(chunks) < 5 {
				t.Fatalf("%s: %d chunks, %v", kind, len(chunks), err)
			}
			tr.inf.opts = inferOptions{noAggCache: true, noTransform: true}
			want := inferAll(t, tr.inf, tr.dev, tr.model)
			for _, v := range []struct{ noAgg, noTransform bool }{{true, false}, {false, false}, {false, true}} {
				tr.inf.opts = inferOptions{noAggCache: v.noAgg, noTransform: v.noTransform}
				what := fmt.Sprintf("%s cut %g no aggregate %t no transform %t", kind, cut, v.noAgg, v.noTransform)
				compareInference(t, what, inferAll(t, tr.inf, tr.dev, tr.model), want)
			}
			if cut > 0 && tr.inf.cut() == 0 {
				t.Fatalf("%s: nothing cut", kind)
			}
			tr.close()
		}
	}
}

// compareInference fails unless got is want up to float32 rounding.
func compareInference(t *testing.T, what string, got, want inferOut) {
	t.Helper()
	for l := range want.hidden {
		for i, v := range want.hidden[l] {
			if !closeTo(float64(got.hidden[l][i]), float64(v)) {
				t.Fatalf("%s: layer %d value %d: %g, per chunk %g", what, l+1, i, got.hidden[l][i], v)
			}
		}
	}
	if !closeTo(got.ce, want.ce) || math.IsNaN(got.ce) {
		t.Fatalf("%s: cross-entropy %g, per chunk %g", what, got.ce, want.ce)
	}
	for i := range want.preds {
		if got.preds[i] != want.preds[i] {
			t.Fatalf("%s: node %d predicted %d, per chunk %d", what, i, got.preds[i], want.preds[i])
		}
	}
}

// bandedGraph is a dataset of n nodes, each linked to the 4 before and
// after it, with 8 features and 4 classes planted as in plantedPartition:
// a chunk of consecutive destinations has few sources beyond its own, so
// that chunk sizes follow the room they are given.
func bandedGraph(t *testing.T, n int) *data.Dataset {
	t.Helper()
	var src, dst []int32
	for i := 0; i < n; i++ {
		for k := 1; k <= 4 && i+k < n; k++ {
			src, dst = append(src, int32(i), int32(i+k)), append(dst, int32(i+k), int32(i))
		}
	}
	g, err := graph.FromEdges(n, src, dst, true)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(9)
	const f, classes = 8, 4
	y := make([]int32, n)
	x := make([]float32, n*f)
	for i := range y {
		y[i] = int32(i / 50 % classes)
		for j := 0; j < f; j++ {
			x[i*f+j] = float32(r.NormFloat64())
		}
		x[i*f+int(y[i])] += 0.7
	}
	ds := &data.Dataset{Name: "banded", Graph: g, X: x, NumFeatures: f, Y: y, NumClasses: classes}
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	return ds
}

// checkChunks checks that chunks cover the graph's n nodes in order and
// that each chunk's predicted peak fits room, and returns their number.
func checkChunks(t *testing.T, what string, m *nn.Model, chunks []evalChunk, n int, room int64) int {
	t.Helper()
	lo := 0
	for _, ch := range chunks {
		if ch.lo != lo || ch.hi <= ch.lo {
			t.Fatalf("%s: chunk [%d, %d) after %d", what, ch.lo, ch.hi, lo)
		}
		if p := evalPeak(m, ch.blk.NumSrc, ch.blk.NumDst); room > 0 && p > room {
			t.Fatalf("%s: chunk [%d, %d) predicted %d, room %d", what, ch.lo, ch.hi, p, room)
		}
		lo = ch.hi
	}
	if lo != n {
		t.Fatalf("%s: chunks end at %d of %d nodes", what, lo, n)
	}
	return len(chunks)
}

// TestAutoEvalChunks: automatic inference chunks are one chunk of the
// whole graph when it fits, and otherwise chunks whose predicted peak fits
// the budget, or the share of the memory available without one; an
// explicit --eval-chunk bounds them.
func TestAutoEvalChunks(t *testing.T) {
	ds := bandedGraph(t, 3000)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	n := ds.Graph.N
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE, nn.KindGAT} {
		cfg := Defaults(kind)
		cfg.Hidden = 16
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		whole := evalPeak(tr.model, n, n)
		for _, tc := range []struct {
			name             string
			chunk            int
			budget, avail    int64
			minCount, maxCnt int
		}{
			{"fits", 0, 0, 1 << 40, 1, 1},
			{"unknown memory", 0, 0, 0, 1, 1},
			{"available", 0, 0, autoRoomShare * whole / 3, 3, n / minEvalChunk},
			{"budget", 0, tr.inf.resident + whole/3, 1 << 40, 3, n / minEvalChunk},
			{"bound", 100, 0, 1 << 40, (n + 99) / 100, (n + 99) / 100},
		} {
			inf := newInference(cfg, ds, tr.x, tr.deg, tr.isVal, &tr.mem, nil)
			inf.cfg.EvalChunk, inf.budget, inf.available = tc.chunk, tc.budget, func() int64 { return tc.avail }
			chunks, err := inf.chunks(tr.model)
			if err != nil {
				t.Fatalf("%s/%s: %v", kind, tc.name, err)
			}
			room := inf.room()
			if k := checkChunks(t, string(kind)+"/"+tc.name, tr.model, chunks, n, room); k < tc.minCount || k > tc.maxCnt || inf.cut() != 0 {
				t.Fatalf("%s/%s: %d chunks (want %d to %d), %d edges cut", kind, tc.name, k, tc.minCount, tc.maxCnt, inf.cut())
			}
		}
		tr.close()
	}
}

// TestAutoEvalChunksUnderBudget: under a budget that the whole graph's
// inference exceeds, automatic chunks keep every measured and predicted
// inference peak within the budget, in several chunks per evaluation, and
// the accuracies are those of a run without a budget.
func TestAutoEvalChunksUnderBudget(t *testing.T) {
	ds := bandedGraph(t, 4000)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE} {
		cfg := memConfig(kind)
		cfg.EvalChunk = 0
		free, evs := runRecorded(t, cfg, ds, split)
		if n := len(eventsOf(evs, profile.TypeMem, profile.PhaseEval)); n != cfg.Epochs {
			t.Fatalf("%s: %d eval chunks in %d epochs without a budget, want one each", kind, n, cfg.Epochs)
		}
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		budget := tr.mem.resident + evalPeak(tr.model, ds.Graph.N, ds.Graph.N)/3
		tr.close()
		cfg.MemBudget = memory.Size(budget)
		res, evs := runRecorded(t, cfg, ds, split)
		ev := eventsOf(evs, profile.TypeMem, profile.PhaseEval)
		if len(ev) < 3*cfg.Epochs {
			t.Fatalf("%s: %d eval chunks in %d epochs", kind, len(ev), cfg.Epochs)
		}
		for _, e := range ev {
			if e.Peak > e.Predicted || e.Predicted > budget || e.Live > budget {
				t.Fatalf("%s: eval chunk %d: peak %d, predicted %d, live %d, budget %d", kind, e.Batch, e.Peak, e.Predicted, e.Live, budget)
			}
		}
		if res.TestAcc != free.TestAcc || !closeTo(res.ValLoss, free.ValLoss) || res.EvalCutEdges != 0 {
			t.Fatalf("%s: test acc %g, val loss %g, %d edges cut; without a budget %g, %g", kind, res.TestAcc, res.ValLoss, res.EvalCutEdges, free.TestAcc, free.ValLoss)
		}
	}
}

// TestEvalPeakMeasured: an inference chunk's recorded peak is its
// analytic one (evalPeak) when a GraphSAGE first layer run from the input
// aggregate holds the largest peak, and within it for GAT, on a device
// that copies the chunks' rows (as an accelerator does); within it for
// both on the CPU, which reads the host matrices in place.
func TestEvalPeakMeasured(t *testing.T) {
	ds := bandedGraph(t, 2000)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, kind := range []nn.Kind{nn.KindSAGE, nn.KindGAT} {
		for _, copies := range []bool{true, false} {
			cfg := memConfig(kind)
			cfg.Hidden, cfg.Heads, cfg.EvalChunk, cfg.MemBudget = 4, 2, 300, 1<<30
			var dev device.Device = cpu.New(2, 0)
			if copies {
				dev = copyingDevice{dev}
			}
			res, evs := runRecordedOn(t, cfg, ds, split, dev)
			ev := eventsOf(evs, profile.TypeMem, profile.PhaseEval)
			if len(ev) < 7*cfg.Epochs {
				t.Fatalf("%s: %d eval chunks in %d epochs", kind, len(ev), cfg.Epochs)
			}
			for _, e := range ev {
				if e.Peak > e.Predicted || e.Peak <= res.ParamBytes || (kind == nn.KindSAGE && copies && e.Peak != e.Predicted) {
					t.Fatalf("%s (copies %v): eval chunk %d: peak %d, analytic %d", kind, copies, e.Batch, e.Peak, e.Predicted)
				}
			}
		}
	}
}

// TestEvalLayerPeakMeasured: for a layer that transforms first, each
// chunk's measured peak over the transform pass and the chunk pass is the
// analytic evalLayerPeak, for GCN, GraphSAGE and GAT.
func TestEvalLayerPeakMeasured(t *testing.T) {
	ds := bandedGraph(t, 2000)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE, nn.KindGAT} {
		cfg := Defaults(kind)
		cfg.Sampler, cfg.Hidden, cfg.Heads, cfg.EvalChunk = SamplerFull, 4, 2, 300
		tr, err := newTrainer(cfg, ds, split, cpu.New(1, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := tr.inf.chunks(tr.model)
		if err != nil || len(chunks) < 6 {
			t.Fatalf("%s: %d chunks, %v", kind, len(chunks), err)
		}
		in, out := tr.model.Layers[0].Dims()
		p := &layerPass{dev: tr.dev, model: tr.model, in: tr.x, dim: in, out: out, next: make([]float32, ds.Graph.N*out)}
		peaks := make([]int64, len(chunks))
		if err := p.transformAll(chunks, peaks, nil); err != nil || p.t == nil {
			t.Fatalf("%s: transform: %v", kind, err)
		}
		for i, ch := range chunks {
			if err := p.chunk(ch, &peaks[i]); err != nil {
				t.Fatal(err)
			}
			if want := evalLayerPeak(tr.model, 0, ch.blk.NumSrc, ch.blk.NumDst); peaks[i] != want {
				t.Fatalf("%s: chunk %d: peak %d, analytic %d", kind, i, peaks[i], want)
			}
		}
		tr.close()
	}
}

// gpuLike is a CPU device that describes itself as a CUDA device of mem
// bytes.
type gpuLike struct {
	device.Device
	mem int64
}

func (g gpuLike) Info() device.Info {
	return device.Info{Backend: device.KindCUDA, Name: "test GPU", Memory: g.mem}
}

// TestDeviceAvailable: without a budget, automatic chunks on a GPU are
// sized from its free memory, on the CPU from the host's.
func TestDeviceAvailable(t *testing.T) {
	dev := cpu.New(1, 0)
	if f := deviceAvailable(dev); f != nil {
		t.Error("a CPU device sizes chunks from something else than host memory")
	}
	x, err := dev.Alloc(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(x)
	f := deviceAvailable(gpuLike{dev, 1 << 20})
	if f == nil {
		t.Fatal("a GPU sizes chunks from host memory")
	}
	if got := f(); got != 1<<20-4000 {
		t.Errorf("GPU of 1 MiB with 4000 bytes live: %d available", got)
	}
}

// TestAutoChunkHostCap: automatic chunks in host memory take at most
// maxHostChunk destinations; on a GPU (its memory given) the whole graph.
func TestAutoChunkHostCap(t *testing.T) {
	gpu := func() int64 { return 1 << 30 }
	for _, c := range []struct {
		n         int
		available func() int64
		want      int
	}{{0, nil, 1}, {1000, nil, 1000}, {maxHostChunk * 3, nil, maxHostChunk}, {maxHostChunk * 3, gpu, maxHostChunk * 3}} {
		if got := autoChunk(c.n, c.available); got != c.want {
			t.Errorf("autoChunk(%d, gpu %v) = %d, want %d", c.n, c.available != nil, got, c.want)
		}
	}
}
