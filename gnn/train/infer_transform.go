package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Layers that transform first (nn.NodeTransform: GCN and GraphSAGE layers
// narrowing their input, every GAT layer) are evaluated in two passes: the
// transform of every node's input row, once, over the chunks' destination
// ranges (which cover every node once), then the aggregation of each
// chunk from the transformed rows of its sources. Running the layer on each
// chunk instead would transform a source's row again in every chunk that
// reads it, and gather the wider input rows.

// transformAll fills p.t with the layer's transform of every node's input
// row when the layer transforms first (and does not run from the first
// layer's precomputed aggregate), one chunk's destination range at a time,
// raising peaks[i] to chunk i's measured peak. grant, if not nil, takes
// chunk i's memory grant and returns its release.
func (p *layerPass) transformAll(chunks []evalChunk, peaks []int64, grant func(i int, ch evalChunk) func()) error {
	if p.agg != nil {
		return nil
	}
	tr := p.model.Transformer(p.layer)
	if tr == nil {
		return nil
	}
	n := 0
	if len(chunks) > 0 {
		n = chunks[len(chunks)-1].hi
	}
	p.tr, p.tw = tr, tr.TransformWidth()
	p.t = p.mats.get(n * p.tw)
	for i, ch := range chunks {
		release := func() {}
		if grant != nil {
			release = grant(i, ch)
		}
		err := p.transformRows(ch.lo, ch.hi, &peaks[i])
		release()
		if err != nil {
			return fmt.Errorf("layer %d: transform: %w", p.layer+1, err)
		}
	}
	return nil
}

// transformRows transforms the input rows [lo, hi) into p.t, raising
// *peak to its own peak: the input rows and their transform.
func (p *layerPass) transformRows(lo, hi int, peak *int64) error {
	scope := device.NewScope()
	dev := device.Scoped(p.dev, scope)
	x, err := p.rows(dev, p.in, lo, hi, p.dim)
	if err != nil {
		return err
	}
	defer dev.Free(x)
	c := &nn.Context{Dev: dev}
	if p.host != nil {
		// Straight into p.t's rows where the layer can.
		t := p.host.HostView(p.t[lo*p.tw:hi*p.tw], hi-lo, p.tw)
		if p.model.TransformInto(c, p.layer, x, t) {
			*peak = max(*peak, scope.Peak())
			return nil
		}
	}
	t, err := p.tr.Transform(c, x)
	if err != nil {
		return err
	}
	dev.CopyToHost(p.t[lo*p.tw:hi*p.tw], t)
	dev.Free(t)
	*peak = max(*peak, scope.Peak())
	return nil
}

// fromTransformed runs the layer on a chunk from the transformed rows of
// its sources (and the destinations' own input rows, when the layer reads
// them): no source row is transformed again.
func (p *layerPass) fromTransformed(dev device.Device, ch evalChunk) (*tensor.Tensor, error) {
	blk := ch.blk
	var t *tensor.Tensor
	if p.inPlace() {
		// Every node's transformed row in place, over the global block
		// (see infer_host.go).
		blk, t = ch.gblk, p.host.HostView(p.t, len(p.t)/p.tw, p.tw)
	} else {
		var err error
		if t, err = dev.Alloc(len(ch.src), p.tw); err != nil {
			return nil, err
		}
		defer dev.Free(t)
		dev.GatherHost(t, p.t, ch.src)
	}
	var xd *tensor.Tensor
	if p.tr.UsesRoot() {
		var err error
		if xd, err = p.rows(dev, p.in, ch.lo, ch.hi, p.dim); err != nil {
			return nil, err
		}
		defer dev.Free(xd)
	}
	y, err := p.model.FromTransformed(&nn.Context{Dev: dev}, p.layer, blk, t, xd)
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", p.layer+1, err)
	}
	return y, nil
}

// evalLayerPeak is the device memory one chunk of layer-wise inference
// with ns sources and nd destinations holds at its peak in layer l of m.
// A layer that transforms first holds, in its transform pass, the
// destinations' input rows and their transform, and in its chunk pass the
// sources' transformed rows, the output and, with a root weight, the
// destinations' input rows. Other layers: see evalLayerBytes.
func evalLayerPeak(m *nn.Model, l, ns, nd int) int64 {
	in, out := m.Layers[l].Dims()
	tr := m.Transformer(l)
	if tr == nil {
		return evalLayerBytes(in, out, ns, nd)
	}
	w := int64(tr.TransformWidth())
	chunk := int64(ns)*w + int64(nd)*int64(out)
	if tr.UsesRoot() {
		chunk += int64(nd) * int64(in)
	}
	return 4 * max(chunk, int64(nd)*(int64(in)+w))
}

// inputAggregateBytes is the device memory one chunk of ns sources and nd
// destinations holds at its peak while the first layer's input aggregate
// is computed (the sources' input rows and the destinations' aggregate)
// and in the first layer run from it (the aggregate, the destinations' own
// rows when the layer reads them, the output); 0 when that layer cannot
// run from an aggregate (see inference.inputAggregate).
func inputAggregateBytes(m *nn.Model, ns, nd int) int64 {
	layer := m.Layers[0]
	if _, ok := layer.(nn.Precomputable); !ok {
		return 0
	}
	in, out := layer.Dims()
	run := int64(nd) * int64(in+out)
	if usesRoot(layer) {
		run += int64(nd) * int64(in)
	}
	return 4 * max(int64(ns+nd)*int64(in), run)
}

// usesRoot reports whether layer reads the destinations' own input rows
// beside the aggregate of their neighbors' (a layer that does not say is
// assumed to).
func usesRoot(layer nn.Layer) bool {
	if r, ok := layer.(interface{ UsesRoot() bool }); ok {
		return r.UsesRoot()
	}
	return true
}
