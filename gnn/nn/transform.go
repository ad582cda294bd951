package nn

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// NodeTransform is implemented by layers whose evaluation splits into a
// transform of each node's input row on its own (it depends on the weights,
// not on the graph) and a step over a block from the transformed rows.
// Layer-wise inference then transforms every input row once per layer and
// aggregates the transformed rows chunk by chunk, where running the layer
// on each chunk would transform a chunk's sources again in every chunk
// that reads them.
type NodeTransform interface {
	// TransformWidth returns the width of a transformed row, or 0 when the
	// layer does not transform first (it aggregates the narrower input).
	TransformWidth() int
	// Transform returns the transformed rows of x (x.Rows×TransformWidth);
	// the caller owns them. It holds at most x and the result on the device.
	Transform(c *Context, x *tensor.Tensor) (*tensor.Tensor, error)
	// UsesRoot reports whether FromTransformed reads the destinations' own
	// input rows.
	UsesRoot() bool
	// FromTransformed returns the layer's output over blk (NumDst×Out) as
	// Forward would in evaluation mode, from the transformed source rows t
	// (NumSrc×TransformWidth) and, when UsesRoot, the destinations' own
	// input rows xdst (NumDst×In; else nil). It allocates only its result.
	// The caller owns it.
	FromTransformed(c *Context, blk *graph.Block, t, xdst *tensor.Tensor) (*tensor.Tensor, error)
}

// Transformer returns layer l's NodeTransform when inference should
// transform its input first (a positive TransformWidth), else nil.
func (m *Model) Transformer(l int) NodeTransform {
	if t, ok := m.Layers[l].(NodeTransform); ok && t.TransformWidth() > 0 {
		return t
	}
	return nil
}

// FromTransformed runs layer l (see Transformer) in evaluation mode from
// its transformed source rows t and, when it uses them, the destinations'
// own input rows xdst, with the activation that follows it unless it is the
// last. It returns what ForwardLayer would, up to the order of floating-point
// sums. The caller owns the result.
func (m *Model) FromTransformed(c *Context, l int, blk *graph.Block, t, xdst *tensor.Tensor) (*tensor.Tensor, error) {
	tr := m.Transformer(l)
	if tr == nil {
		return nil, fmt.Errorf("layer %d does not transform its input first", l+1)
	}
	if t.Rows != blk.NumSrc || t.Cols != tr.TransformWidth() {
		return nil, fmt.Errorf("layer %d: transformed input %s, block has %d sources, layer expects %d columns", l+1, t.Shape(), blk.NumSrc, tr.TransformWidth())
	}
	ec := *c
	ec.Train = false
	y, err := tr.FromTransformed(&ec, blk, t, xdst)
	if err != nil {
		return nil, err
	}
	if l < len(m.Layers)-1 && !m.selfActivated() {
		m.activate(c.Dev, y)
	}
	return y, nil
}

// transformRows returns x W (x.Rows×W.Cols); the caller owns it.
func transformRows(c *Context, x *tensor.Tensor, w *Param) (*tensor.Tensor, error) {
	t, err := c.Dev.Alloc(x.Rows, w.W.Cols)
	if err != nil {
		return nil, err
	}
	c.Dev.Gemm(false, false, 1, x, w.W, 0, t)
	return t, nil
}

// Layers whose evaluation steps can write into a tensor the caller gives
// (a view of a host matrix on a device whose memory is the host's, so
// that layer-wise inference need not copy each chunk's result there).
type (
	aggregateInto interface {
		fromAggregateInto(c *Context, agg, xdst, y *tensor.Tensor)
	}
	transformInto interface {
		transformInto(c *Context, x, t *tensor.Tensor)
	}
)

// FromAggregateInto is FromAggregate writing layer l's output into y
// (agg.Rows×Out), activation included; it reports false, and does
// nothing, when the layer cannot write into a given tensor.
func (m *Model) FromAggregateInto(c *Context, l int, agg, xdst, y *tensor.Tensor) bool {
	a, ok := m.Layers[l].(aggregateInto)
	if !ok {
		return false
	}
	ec := *c
	ec.Train = false
	a.fromAggregateInto(&ec, agg, xdst, y)
	if l < len(m.Layers)-1 && !m.selfActivated() {
		m.activate(c.Dev, y)
	}
	return true
}

// TransformInto is layer l's Transform (see Transformer) writing into t
// (x.Rows×TransformWidth); it reports false, and does nothing, when the
// layer cannot write into a given tensor.
func (m *Model) TransformInto(c *Context, l int, x, t *tensor.Tensor) bool {
	tr, ok := m.Transformer(l).(transformInto)
	if !ok {
		return false
	}
	tr.transformInto(c, x, t)
	return true
}

func (l *GCNConv) transformInto(c *Context, x, t *tensor.Tensor) {
	c.Dev.Gemm(false, false, 1, x, l.W.W, 0, t)
}

func (l *SAGEConv) transformInto(c *Context, x, t *tensor.Tensor) {
	c.Dev.Gemm(false, false, 1, x, l.Wl.W, 0, t)
}

// TransformWidth is Out when the layer multiplies by W before it
// aggregates (In > Out), else 0.
func (l *GCNConv) TransformWidth() int {
	if l.transformFirst() {
		return l.Out
	}
	return 0
}

// Transform returns x W.
func (l *GCNConv) Transform(c *Context, x *tensor.Tensor) (*tensor.Tensor, error) {
	return transformRows(c, x, l.W)
}

// UsesRoot is false: GCN's self-loop is an edge of the block.
func (l *GCNConv) UsesRoot() bool { return false }

// FromTransformed returns Â t + b, with t = X W.
func (l *GCNConv) FromTransformed(c *Context, blk *graph.Block, t, _ *tensor.Tensor) (*tensor.Tensor, error) {
	y, err := aggregateBlock(c, blk, t, device.AggWeighted)
	if err != nil {
		return nil, err
	}
	c.Dev.AddBias(y, l.B.W)
	return y, nil
}

// TransformWidth is Out when the layer multiplies the neighbors' rows by
// Wl before it averages them (In > Out), else 0.
func (l *SAGEConv) TransformWidth() int {
	if l.transformFirst() {
		return l.Out
	}
	return 0
}

// Transform returns x Wl.
func (l *SAGEConv) Transform(c *Context, x *tensor.Tensor) (*tensor.Tensor, error) {
	return transformRows(c, x, l.Wl)
}

// UsesRoot is true: the root weight reads the destinations' own rows.
func (l *SAGEConv) UsesRoot() bool { return true }

// FromTransformed returns mean(t_N(i)) + x_i Wr + b, with t = X Wl.
func (l *SAGEConv) FromTransformed(c *Context, blk *graph.Block, t, xdst *tensor.Tensor) (*tensor.Tensor, error) {
	if xdst == nil || xdst.Rows != blk.NumDst || xdst.Cols != l.In {
		return nil, fmt.Errorf("sage: destination rows missing or not %d×%d", blk.NumDst, l.In)
	}
	y, err := aggregateBlock(c, blk, t, device.AggMean)
	if err != nil {
		return nil, err
	}
	c.Dev.Gemm(false, false, 1, xdst, l.Wr.W, 1, y)
	c.Dev.AddBias(y, l.B.W)
	return y, nil
}

// TransformWidth is H·C + 2H: each node's projection followed by its
// per-head source and destination attention scores.
func (l *GATConv) TransformWidth() int { return l.Heads*l.Ch + 2*l.Heads }

// Transform returns each row's projection x W and its attention scores
// against AttSrc and AttDst, side by side.
func (l *GATConv) Transform(c *Context, x *tensor.Tensor) (*tensor.Tensor, error) {
	if x.Cols != l.In {
		return nil, fmt.Errorf("gat: input %s, layer expects %d columns", x.Shape(), l.In)
	}
	dev := c.Dev
	H, hc, w := l.Heads, l.Heads*l.Ch, l.TransformWidth()
	xwT, err := transformRows(c, x, l.W)
	if err != nil {
		return nil, err
	}
	xw := hostOf(dev, xwT)
	dev.Free(xwT)
	as := l.headScores(xw, hc, hostOf(dev, l.AttSrc.W), x.Rows)
	ad := l.headScores(xw, hc, hostOf(dev, l.AttDst.W), x.Rows)
	host := make([]float32, x.Rows*w)
	for j := 0; j < x.Rows; j++ {
		row := host[j*w : (j+1)*w]
		copy(row, xw[j*hc:(j+1)*hc])
		copy(row[hc:], as[j*H:(j+1)*H])
		copy(row[hc+H:], ad[j*H:(j+1)*H])
	}
	t, err := dev.Alloc(x.Rows, w)
	if err != nil {
		return nil, err
	}
	dev.CopyFromHost(t, host)
	return t, nil
}

// UsesRoot is false: GAT's self-loop is an edge of the block.
func (l *GATConv) UsesRoot() bool { return false }

// FromTransformed runs the attention and the aggregation from the
// transformed source rows (see Transform); the destinations' scores are
// those of the sources' prefix.
func (l *GATConv) FromTransformed(c *Context, blk *graph.Block, t, _ *tensor.Tensor) (*tensor.Tensor, error) {
	dev := c.Dev
	H, hc, w := l.Heads, l.Heads*l.Ch, l.TransformWidth()
	th := hostOf(dev, t)
	as := make([]float32, blk.NumSrc*H)
	ad := make([]float32, blk.NumDst*H)
	for j := 0; j < blk.NumSrc; j++ {
		copy(as[j*H:(j+1)*H], th[j*w+hc:])
		if j < blk.NumDst {
			copy(ad[j*H:(j+1)*H], th[j*w+hc+H:])
		}
	}
	_, alpha := l.attention(blk, as, ad)
	out := l.aggregate(blk, th, w, alpha, nil)
	y, err := dev.Alloc(blk.NumDst, l.Out)
	if err != nil {
		return nil, err
	}
	dev.CopyFromHost(y, out)
	dev.AddBias(y, l.B.W)
	return y, nil
}
