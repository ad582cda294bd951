package nn

import (
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// TestWeightDecayGroups checks which weight decay each parameter of every
// model kind gets: none for biases, the output group's when set, else the
// convolutions' or the dense layers'.
func TestWeightDecayGroups(t *testing.T) {
	dev := cpu.New(1, 0)
	out := float32(0.3)
	for _, kind := range Kinds {
		m, err := New(dev, Spec{Kind: kind, In: 5, Hidden: 4, Out: 3, Layers: 3, Heads: 2, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		o := NewAdam(0.01, 0.1)
		o.ConvWeightDecay = 0.2
		for _, p := range m.Params() {
			want := float32(0.1)
			switch {
			case !p.Decay:
				want = 0
			case p.Conv:
				want = 0.2
			}
			if got := o.decay(p); got != want {
				t.Errorf("%s %s: decay %g, want %g", kind, p.Name, got, want)
			}
		}
		o.OutWeightDecay = &out
		outs := 0
		for _, p := range m.Params() {
			if p.Output && p.Decay {
				outs++
				if got := o.decay(p); got != out {
					t.Errorf("%s %s: output decay %g, want %g", kind, p.Name, got, out)
				}
			}
		}
		if want := map[Kind]int{"gcn": 1, "sage": 2, "gat": 3, "appnp": 1, "gcnii": 1}[kind]; outs != want {
			t.Errorf("%s: %d decayed output parameters, want %d (the output layer's weights)", kind, outs, want)
		}
		wantConv := map[Kind]bool{"gcn": true, "sage": true, "gat": true, "appnp": false, "gcnii": true}[kind]
		conv := false
		for _, p := range m.Params() {
			conv = conv || p.Conv
		}
		if conv != wantConv {
			t.Errorf("%s: has conv parameters %v, want %v", kind, conv, wantConv)
		}
		m.Free(dev)
	}
}

// TestClipNorm checks that a step scales gradients to the clip norm when
// their global norm exceeds it and leaves them alone otherwise.
func TestClipNorm(t *testing.T) {
	dev := cpu.New(1, 0)
	r := rng.New(1)
	m, err := New(dev, Spec{Kind: "gcn", In: 5, Hidden: 4, Out: 3, Layers: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float32{10, 0.01} {
		for _, p := range m.Params() {
			g := randTensor(t, dev, r, p.G.Rows, p.G.Cols)
			dev.Copy(p.G, g)
			dev.Scale(scale, p.G)
			dev.Free(g)
		}
		before := GradNorm(dev, m.Params())
		o := NewAdam(0.01, 0)
		o.ClipNorm = 1
		o.Step(dev, m.Params())
		after := GradNorm(dev, m.Params())
		want := math.Min(before, 1)
		if math.Abs(after-want) > 1e-5*want {
			t.Errorf("gradient norm %g before, %g after clipping to 1, want %g", before, after, want)
		}
	}
	m.Free(dev)
}
