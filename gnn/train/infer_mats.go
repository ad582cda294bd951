package train

import (
	"math"
	"runtime/debug"

	"github.com/gnnscope/gnnscope/gnn/hostmem"
	"github.com/gnnscope/gnnscope/gnn/nn"
)

// hostMats hands out the host matrices of one inference pass (the layers'
// outputs and transformed rows), outside the Go heap (gnn/hostmem), takes
// back those no layer reads any more so that the next layer reuses them,
// and frees them all when the pass ends. In the Go heap, on synth-products
// (GraphSAGE 3×256), the two 2.5 GB layer outputs raised the collector's
// target by a quarter of their size, and each dead one stayed resident
// until a collection. A matrix handed out again is not zeroed: every pass
// writes all its rows before reading them.
type hostMats struct {
	all  []*hostmem.Matrix
	free []*hostmem.Matrix
	// poison fills a reused matrix with NaNs (tests: a row read before
	// it is written shows).
	poison bool
}

// get returns a matrix of n values: the smallest free one large enough,
// or a new one (always a new one, from the Go heap, from a nil hostMats).
func (h *hostMats) get(n int) []float32 {
	if h == nil {
		return make([]float32, n)
	}
	best := -1
	for i, m := range h.free {
		if len(m.Data) >= n && (best < 0 || len(m.Data) < len(h.free[best].Data)) {
			best = i
		}
	}
	if best < 0 {
		m := hostmem.Alloc(n)
		h.all = append(h.all, m)
		return m.Data
	}
	m := h.free[best].Data[:n]
	h.free = append(h.free[:best], h.free[best+1:]...)
	if h.poison {
		nan := float32(math.NaN())
		for i := range m {
			m[i] = nan
		}
	}
	return m
}

// put takes back s, a matrix from get that its holder no longer reads
// (nil, or a slice get did not hand out, is ignored).
func (h *hostMats) put(s []float32) {
	if h == nil || len(s) == 0 {
		return
	}
	for _, m := range h.all {
		if &m.Data[0] == &s[0] {
			h.free = append(h.free, m)
			return
		}
	}
}

// release frees every matrix get handed out: none may be read afterwards.
func (h *hostMats) release() {
	for _, m := range h.all {
		_ = m.Free() // a failed unmap leaves the mapping: memory, not data, lost
	}
	h.all, h.free = nil, nil
}

// done hands back the matrices layer l of the pass no longer needs once
// it is complete: its input, when an earlier layer wrote it (layer 0
// reads the features), and its transformed rows.
func (p *layerPass) done(l int) {
	if l > 0 {
		p.mats.put(p.in)
	}
	p.mats.put(p.t)
	p.t = nil
}

// returnFreeHeap returns the Go heap's free pages to the operating system
// before a pass whose matrices (rows × the model's widest layer, twice:
// an input and an output) take minReturnBytes or more. The pages training
// freed stay resident until the scavenger gets to them, and the pass's
// matrices, mapped outside the heap, would come on top: on synth-products
// about 0.5 GB of them. One forced collection of a heap that holds no
// pointers in bulk takes milliseconds, against seconds for the pass.
func returnFreeHeap(m *nn.Model, rows int) {
	w := 0
	for _, l := range m.Layers {
		in, out := l.Dims()
		w = max(w, in, out)
	}
	if 2*int64(rows)*int64(w)*4 >= minReturnBytes {
		debug.FreeOSMemory()
	}
}

// minReturnBytes is the least size of a pass's matrices for which
// returnFreeHeap forces a collection.
const minReturnBytes = 1 << 30
