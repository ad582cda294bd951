package nn

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// newGCNII builds GCNII (Chen et al., 2020; PyG's GCN2Conv with shared
// weights) as spec.Layers propagation steps of width Hidden:
//
//	x0 = ReLU(lin0(dropout(x)))
//	x_l = ReLU(((1-α) Â x_{l-1}' + α x0)((1-β_l) I + β_l W_l)),  x' = dropout(x)
//	logits = lin1(dropout(x_L))
//
// with β_l = ln(λ/l + 1). The first step also computes x0, the last applies
// lin1. spec.Layers is the number of GCN2Conv layers.
func newGCNII(dev device.Device, spec Spec, r *rng.Rand) ([]Layer, error) {
	alpha, theta := float32(DefaultAlpha), float64(DefaultTheta)
	if spec.Alpha != 0 {
		alpha = spec.Alpha
	}
	if spec.Theta != 0 {
		theta = float64(spec.Theta)
	}
	L, C := spec.Layers, spec.Hidden
	var layers []Layer
	var loose []*Param // allocated but not yet in a layer
	fail := func(err error) ([]Layer, error) {
		for _, p := range loose {
			p.free(dev)
		}
		for _, l := range layers {
			for _, p := range l.Params() {
				p.free(dev)
			}
		}
		return nil, fmt.Errorf("build gcnii: %w", err)
	}
	for k := 0; k < L; k++ {
		l := &PropConv{In: 2 * C, Out: 2 * C, C: C, Alpha: alpha, Beta: float32(math.Log(theta/float64(k+1) + 1)),
			ReLU: true, DropH: true, Dropout: spec.Dropout, First: k == 0, Last: k == L-1, site: propSite + 8*k}
		loose = loose[:0]
		if l.First {
			l.In = spec.In
			lin0, err := NewLinear(dev, "lin0", spec.In, C, r)
			if err != nil {
				return fail(err)
			}
			loose = append(loose, lin0.W, lin0.B)
			l.Stem, l.StemReLU = []*Linear{lin0}, true
		}
		w, err := newParam(dev, fmt.Sprintf("conv%d.weight", k+1), C, C, true)
		if err != nil {
			return fail(err)
		}
		loose = append(loose, w)
		glorot(dev, w, r)
		w.Conv = true
		l.W = w
		if l.Last {
			lin1, err := NewLinear(dev, "lin1", C, spec.Out, r)
			if err != nil {
				return fail(err)
			}
			l.Head, l.Out = lin1, spec.Out
			lin1.W.Output, lin1.B.Output = true, true
		}
		loose = loose[:0]
		layers = append(layers, l)
	}
	return layers, nil
}
