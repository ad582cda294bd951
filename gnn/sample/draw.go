package sample

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/rng/philox"
)

// A HopDrawer draws the sampled neighbors of one hop somewhere other than
// the sampling goroutine, e.g. with a kernel on a GPU that holds the graph
// (gnn/device/cuda's Sampler). The Neighbor sampler then maps the drawn
// global ids to local ones and builds the block on the host, so a drawn
// batch has the same format as a CPU-sampled one (targets first, every
// hop's node list a prefix of the next), though not the same draws.
type HopDrawer interface {
	// DrawHop draws the neighbors of nodes[i], for every i, with fanout
	// k > 0, as DrawHop (the function) does: it sets count[i] to
	// min(deg, k) and out[i*k : i*k+count[i]] to the graph entries
	// drawn. key and hop select the random stream. len(out) is
	// len(nodes)*k and len(count) len(nodes).
	DrawHop(nodes []int32, k int, key uint64, hop int, out, count []int32) error
}

// sampleTag is the fourth counter word of the drawn sampler's Philox
// stream (SAMPLE_TAG in kernels/sample.cu).
const sampleTag = 0x53414d50

// DrawHop is the reference of the device sampler's kernel
// (sample_neighbors in gnn/device/cuda/kernels/sample.cu), which must
// compute exactly the same: for every frontier node nodes[i] of degree d,
// it draws min(d, k) distinct positions of its graph row, uniformly
// without replacement, and writes the row's entries at those positions to
// out[i*k:] and their number to count[i]. With d <= k it takes the whole
// row in order; otherwise Floyd's algorithm, whose draw m (m < k) is a
// uniform integer in [0, d-k+m] from word m%4 of the Philox4x32-10 block
// with counter (i, m/4, hop, sampleTag) and key (key's low word, high
// word), scaled by Lemire's multiply-shift (bias below d/2^32).
func DrawHop(g *graph.CSR, nodes []int32, k int, key uint64, hop int, out, count []int32) error {
	if k <= 0 {
		return fmt.Errorf("draw hop: fanout %d must be positive", k)
	}
	if len(out) != len(nodes)*k || len(count) != len(nodes) {
		return fmt.Errorf("draw hop: %d nodes, fanout %d, but %d output slots and %d counts", len(nodes), k, len(out), len(count))
	}
	pk := philox.Key(key)
	for i, v := range nodes {
		if v < 0 || int(v) >= g.N {
			return fmt.Errorf("draw hop: node %d out of range [0, %d)", v, g.N)
		}
		a := g.Indptr[v]
		d := g.Indptr[v+1] - a
		o := out[i*k : (i+1)*k]
		if d <= int64(k) {
			for j := range d {
				o[j] = g.Indices[a+j]
			}
			count[i] = int32(d)
			continue
		}
		var w [4]uint32
		for m := 0; m < k; m++ {
			if m%4 == 0 {
				w = philox.Block([4]uint32{uint32(i), uint32(m / 4), uint32(hop), sampleTag}, pk)
			}
			j := uint32(d - int64(k) + int64(m))
			t := int32(uint64(w[m%4]) * uint64(j+1) >> 32)
			for _, p := range o[:m] {
				if p == t { // already chosen: take j, which cannot be
					t = int32(j)
					break
				}
			}
			o[m] = t
		}
		for m := range o {
			o[m] = g.Indices[a+int64(o[m])]
		}
		count[i] = int32(k)
	}
	return nil
}

// CPUDrawer is a HopDrawer that runs DrawHop on the calling goroutine: the
// device sampler's draws without a device (tests, and a reference to
// compare a device's draws with).
type CPUDrawer struct{ G *graph.CSR }

// DrawHop implements HopDrawer.
func (c CPUDrawer) DrawHop(nodes []int32, k int, key uint64, hop int, out, count []int32) error {
	return DrawHop(c.G, nodes, k, key, hop, out, count)
}
