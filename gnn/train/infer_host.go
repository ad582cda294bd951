package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// On a device whose memory is the host's (device.HostMemory: the CPU
// backend), layer-wise inference reads the layers' host matrices in place
// instead of copying rows to the device: a chunk's sources are not
// gathered, the chunk aggregating straight from the whole input (or
// transformed) matrix over a block whose sources are the graph's node ids
// (evalChunk.gblk), and the destinations' own rows are views. The sums
// run in the same order over the same rows as from the gathered copy, so
// the results are the same to the bit; only the copies go. Under a budget
// the chunks are still sized by the accounting of the copies (evalPeak),
// which then bounds the device memory they hold from above: the views
// are not device allocations.

// hostViews returns dev's HostMemory when inference reads the host
// matrices in place: dev's memory is the host's and off (tests: the
// copies, as on an accelerator) is false.
func hostViews(dev device.Device, off bool) device.HostMemory {
	if off {
		return nil
	}
	h, ok := device.AsHostMemory(dev)
	if !ok {
		return nil
	}
	return h
}

// setGlobalBlocks sets every chunk's gblk (see globalBlock) that is not
// set yet. Chunks shared between evaluations (inference.cache) need
// inference.mu held.
func setGlobalBlocks(g *graph.CSR, chunks []evalChunk) {
	for i := range chunks {
		if chunks[i].gblk == nil {
			chunks[i].gblk = globalBlock(g, &chunks[i])
		}
	}
}

// globalBlock returns chunk ch's block with the graph's node ids as
// sources (NumSrc is the graph's N): the same rows, edges in the same
// order and the same weights. A chunk whose block is its destinations'
// whole CSR rows (evalChunk.whole) shares the graph's indices; another
// gets a translated copy.
func globalBlock(g *graph.CSR, ch *evalChunk) *graph.Block {
	b := ch.blk
	ne := b.NumEdges()
	var idx []int32
	if ch.whole {
		base := g.Indptr[ch.lo]
		idx = g.Indices[base : base+ne]
	} else {
		idx = make([]int32, ne)
		for e, j := range b.Indices[:ne] {
			idx[e] = ch.src[j]
		}
	}
	return &graph.Block{NumDst: b.NumDst, NumSrc: g.N, Indptr: b.Indptr, Indices: idx, Weights: b.Weights}
}

// rows returns rows [lo, hi) of the host matrix h (cols wide) on dev: a
// view when the pass reads host matrices in place, else a copy. The
// caller frees it either way (freeing a view releases nothing).
func (p *layerPass) rows(dev device.Device, h []float32, lo, hi, cols int) (*tensor.Tensor, error) {
	if p.host != nil {
		return p.host.HostView(h[lo*cols:hi*cols], hi-lo, cols), nil
	}
	x, err := dev.Alloc(hi-lo, cols)
	if err != nil {
		return nil, err
	}
	dev.CopyFromHost(x, h[lo*cols:hi*cols])
	return x, nil
}

// inPlace reports whether the pass's layer aggregates over global blocks
// from the host matrices: the pass reads them in place and the layer's
// aggregation is the device's (nn.Precomputable: GCN and GraphSAGE).
func (p *layerPass) inPlace() bool {
	if p.host == nil {
		return false
	}
	_, ok := p.model.Layers[p.layer].(nn.Precomputable)
	return ok
}

// fromHostAggregate runs a layer that aggregates first on a chunk from the
// host input matrix in place: the aggregate of the chunk's global block
// over the whole input, then the layer from it (as Forward, in the same
// order of operations).
func (p *layerPass) fromHostAggregate(dev device.Device, ch evalChunk) (*tensor.Tensor, error) {
	layer := p.model.Layers[p.layer]
	pc := layer.(nn.Precomputable)
	n := len(p.in) / p.dim
	c := &nn.Context{Dev: dev}
	a, err := pc.Aggregate(c, ch.gblk, p.host.HostView(p.in, n, p.dim))
	if err != nil {
		return nil, fmt.Errorf("layer %d: %w", p.layer+1, err)
	}
	defer dev.Free(a)
	var xd *tensor.Tensor
	if usesRoot(layer) {
		xd = p.host.HostView(p.in[ch.lo*p.dim:ch.hi*p.dim], ch.hi-ch.lo, p.dim)
	}
	return p.fromAggregateRows(dev, ch, a, xd)
}

// dest returns the view of chunk ch's rows of the layer's output matrix
// that the chunk's output may be written into, when the pass reads host
// matrices in place and the layer is not the last (whose output is not
// kept), else nil.
func (p *layerPass) dest(ch evalChunk) *tensor.Tensor {
	if p.host == nil || p.last {
		return nil
	}
	return p.host.HostView(p.next[ch.lo*p.out:ch.hi*p.out], ch.hi-ch.lo, p.out)
}

// aggregatesFirst reports whether layer l of m is a Precomputable layer
// that aggregates its input before transforming it.
func aggregatesFirst(m *nn.Model, l int) bool {
	p, ok := m.Layers[l].(nn.Precomputable)
	return ok && p.AggregatesFirst()
}
