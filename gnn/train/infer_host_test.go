package train

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// TestInferHostViewsExact: inference that reads the host matrices in place
// (the CPU device without a budget, see infer_host.go) gives every hidden
// layer's output and every prediction bit for bit as the path that copies
// the chunks' rows to the device, for GCN, GraphSAGE and GAT, layers that
// aggregate first and layers that transform first, with and without the
// first layer's cached aggregate and with cut chunks (translated global
// blocks). The in-place pass fills each host matrix it reuses with NaNs
// first (hostMats.poison), so a row read before it is written shows.
func TestInferHostViewsExact(t *testing.T) {
	ds := bandedGraph(t, 3000)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	for _, kind := range []nn.Kind{nn.KindGCN, nn.KindSAGE, nn.KindGAT} {
		for _, hidden := range []int{16, 4} {
			for _, cut := range []float64{0, 0.3} {
				cfg := Defaults(kind)
				layers := 3 + hidden%16/4 // 4 at width 4: a reused matrix takes a layer's output
				cfg.Sampler, cfg.Layers, cfg.Hidden, cfg.Heads, cfg.EvalChunk, cfg.EvalCut = SamplerFull, layers, hidden, 2, 700, cut
				tr, err := newTrainer(cfg, ds, split, cpu.New(2, 0), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, noAgg := range []bool{false, true} {
					name := fmt.Sprintf("%s/hidden %d/cut %g/no cache %v", kind, hidden, cut, noAgg)
					// A fresh inference each: no chunks or aggregate shared.
					fresh := func(copy bool) *inference {
						inf := newInference(cfg, tr.ds, tr.x, tr.deg, tr.isVal, &tr.mem, nil)
						inf.opts = inferOptions{noAggCache: noAgg, noHostViews: copy, poisonMats: !copy}
						return inf
					}
					want := inferOutputs(t, name, fresh(true), tr.dev, tr.model, true)
					got := inferOutputs(t, name, fresh(false), tr.dev, tr.model, false)
					for l := range want {
						if !slices.Equal(floatBits(got[l]), floatBits(want[l])) {
							t.Fatalf("%s: output %d differs in place", name, l)
						}
					}
				}
				tr.close()
			}
		}
	}
}

// inferOutputs runs one inference of model m with inf and returns each
// hidden layer's output and the predictions (as floats), failing unless
// the pass read the host matrices in place exactly when copy is false.
func inferOutputs(t *testing.T, name string, inf *inference, dev device.Device, m *nn.Model, copy bool) [][]float32 {
	t.Helper()
	var out [][]float32
	keep := func(_ int, h []float32) error {
		out = append(out, slices.Clone(h))
		return nil
	}
	preds, err := inf.run(inferRequest{dev: dev, model: m, keep: keep})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	chunks, err := inf.chunks(m)
	if err != nil || len(chunks) < 4 {
		t.Fatalf("%s: %d chunks, %v", name, len(chunks), err)
	}
	if inPlace := chunks[0].gblk != nil; inPlace == copy {
		t.Fatalf("%s: in place %v with copies %v", name, inPlace, copy)
	}
	p := make([]float32, len(preds))
	for i, c := range preds {
		p[i] = float32(c)
	}
	return append(out, p)
}

// copyingDevice is a device that hides its device.HostMemory, so that
// inference copies the chunks' rows as on an accelerator.
type copyingDevice struct{ device.Device }

// runRecordedOn is runRecorded on dev.
func runRecordedOn(t *testing.T, cfg Config, ds *data.Dataset, split *data.Split, dev device.Device) (*Result, []profile.Event) {
	t.Helper()
	sink := &memSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	rec.RunStart("r", "s", "v", nil, &profile.Host{Cores: 2})
	res, err := Run(context.Background(), cfg, ds, split, dev, Options{Recorder: rec})
	if cerr := rec.Close("", err, nil); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes live after the run", live)
	}
	return res, sink.evs
}

// floatBits returns the bit patterns of x.
func floatBits(x []float32) []uint32 {
	b := make([]uint32, len(x))
	for i, v := range x {
		b[i] = math.Float32bits(v)
	}
	return b
}
