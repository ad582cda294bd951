package train

import (
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// selector picks the reported epoch by the configured criterion and tells
// when patience has run out.
type selector struct {
	criterion Select // SelectValAcc or SelectValLoss ("" is val-acc)
	patience  int    // 0: never stop early
	best      int    // the selected epoch, -1 before any
	bestAcc   float64
	bestLoss  float64
	last      int // the last evaluated epoch
}

func newSelector(criterion Select, patience int) *selector {
	return &selector{criterion: criterion, patience: patience, best: -1}
}

// observe takes an evaluated epoch's validation accuracy and loss and
// reports whether it becomes the selected epoch: strictly better than the
// best so far (the first of equal epochs stays), NaN never.
func (s *selector) observe(epoch int, valAcc, valLoss float64) bool {
	s.last = epoch
	var better bool
	if s.criterion == SelectValLoss {
		better = !math.IsNaN(valLoss) && (s.best < 1 || valLoss < s.bestLoss)
	} else {
		better = !math.IsNaN(valAcc) && (s.best < 1 || valAcc > s.bestAcc)
	}
	if better {
		s.best, s.bestAcc, s.bestLoss = epoch, valAcc, valLoss
	}
	return better
}

// stop reports whether Patience epochs have passed since the selected
// epoch, as of the last evaluated one.
func (s *selector) stop() bool {
	return s.patience > 0 && s.best >= 1 && s.last-s.best >= s.patience
}

// valCE accumulates the mean cross-entropy of the validation nodes' logits
// over the chunks of the last inference layer.
type valCE struct {
	isVal []bool  // per node
	y     []int32 // labels
	sum   float64
	n     int
	buf   []float32 // host copy of a chunk's logits
}

// add takes the logits y of destinations [lo, hi) (on dev) and adds the
// loss of the validation nodes among them; a chunk without any is not
// copied.
func (c *valCE) add(dev device.Device, y *tensor.Tensor, lo, hi int) {
	if c == nil {
		return
	}
	has := false
	for v := lo; v < hi; v++ {
		if c.isVal[v] {
			has = true
			break
		}
	}
	if !has {
		return
	}
	if cap(c.buf) < y.Len() {
		c.buf = make([]float32, y.Len())
	}
	buf := c.buf[:y.Len()]
	dev.CopyToHost(buf, y)
	k := y.Cols
	for v := lo; v < hi; v++ {
		if !c.isVal[v] {
			continue
		}
		row := buf[(v-lo)*k : (v-lo+1)*k]
		m := math.Inf(-1)
		for _, z := range row {
			m = max(m, float64(z))
		}
		var e float64
		for _, z := range row {
			e += math.Exp(float64(z) - m)
		}
		c.sum += m + math.Log(e) - float64(row[c.y[v]])
		c.n++
	}
}

// loss returns the mean validation cross-entropy (NaN without validation
// nodes).
func (c *valCE) loss() float64 {
	if c == nil || c.n == 0 {
		return math.NaN()
	}
	return c.sum / float64(c.n)
}
