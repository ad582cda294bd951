package nn

import (
	"fmt"
	"math"
)

// tensorsPerParam is what New allocates for every parameter: its value,
// its gradient and Adam's two moments.
const tensorsPerParam = 4

// MaxParamBytes bounds ParamBytes: 256 TiB, the address space of today's
// 64-bit processors. A larger model is refused as too large before any
// size is computed that could overflow or any tensor is allocated.
const MaxParamBytes = 1 << 48

// maxParamCount is the ParamCount of MaxParamBytes.
const maxParamCount = MaxParamBytes / (tensorsPerParam * 4)

// ParamCount returns the number of float32 values in the parameters New
// would allocate for s (the sum of the lengths of the model's Params'
// values), computed from the spec alone, so that a model's size can be
// checked before anything is allocated. It returns an error for an invalid
// spec and for one whose ParamBytes would exceed MaxParamBytes.
func (s Spec) ParamCount() (int64, error) {
	if err := s.Validate(); err != nil {
		return 0, err
	}
	return s.paramCount()
}

// ParamBytes returns the bytes New would allocate for s's parameters, their
// gradients and Adam's two moments: 16 bytes per value of ParamCount.
func (s Spec) ParamBytes() (int64, error) {
	n, err := s.ParamCount()
	if err != nil {
		return 0, err
	}
	return n * tensorsPerParam * 4, nil
}

// paramCount counts s's parameters for a spec whose widths are
// non-negative, following New and the layer constructors.
func (s Spec) paramCount() (int64, error) {
	var c counter
	heads := int64(max(s.Heads, 1))
	in, hid, out := int64(s.In), int64(max(s.Hidden, 0)), int64(s.Out)
	switch s.Kind {
	case KindAPPNP: // lin1 In→Hidden, lin2 Hidden→Out; propagation has none
		c.add(c.mul(in, hid), hid, c.mul(hid, out), out)
	case KindGCNII: // lin0 In→C, one C×C weight per layer, lin1 C→Out
		c.add(c.mul(in, hid), hid, c.mul(int64(s.Layers), c.mul(hid, hid)), c.mul(hid, out), out)
	default:
		for l := 0; l < s.Layers; l++ {
			li, lo := hid, hid
			if l > 0 && s.Kind == KindGAT {
				li = c.mul(hid, heads)
			}
			if l == 0 {
				li = in
			}
			last := l == s.Layers-1
			if last {
				lo = out
			}
			c.add(s.layerParams(&c, li, lo, heads, last))
			if c.over {
				break // the count is already too large
			}
		}
	}
	if c.over || c.n > maxParamCount {
		return 0, fmt.Errorf("model: %s with hidden %d, %d layers and %d inputs is too large: its parameters and Adam state would exceed %d TiB",
			s.Kind, s.Hidden, s.Layers, s.In, MaxParamBytes>>40)
	}
	return c.n, nil
}

// layerParams counts the parameters of one GCN, GraphSAGE or GAT layer
// from in to out columns (per head for GAT's hidden layers).
func (s Spec) layerParams(c *counter, in, out, heads int64, last bool) int64 {
	switch s.Kind {
	case KindSAGE: // lin_l and lin_r (in×out each) and a bias
		return c.sum(c.mul(2, c.mul(in, out)), out)
	case KindGAT: // weight in×HC, att_src and att_dst 1×HC, bias 1×width
		if last {
			heads = 1 // the output layer has one head, not concatenated
		}
		hc := c.mul(heads, out)
		return c.sum(c.mul(in, hc), c.mul(3, hc))
	}
	return c.sum(c.mul(in, out), out) // GCN: weight and bias
}

// counter sums non-negative int64 values, noting an overflow instead of
// wrapping.
type counter struct {
	n    int64
	over bool
}

// mul returns a×b, or 0 with over set when it would overflow.
func (c *counter) mul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		c.over = true
		return 0
	}
	return a * b
}

// sum returns the sum of vs, or 0 with over set when it would overflow.
func (c *counter) sum(vs ...int64) int64 {
	var t int64
	for _, v := range vs {
		if v > math.MaxInt64-t {
			c.over = true
			return 0
		}
		t += v
	}
	return t
}

// add adds vs to the running count.
func (c *counter) add(vs ...int64) {
	c.n = c.sum(append(vs, c.n)...)
}
