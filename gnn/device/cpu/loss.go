package cpu

import (
	"fmt"
	"math"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// SoftmaxCrossEntropy computes the mean over rows of -log softmax(logits)[label]
// with a numerically stable log-sum-exp, writes the gradient of that mean,
// (softmax - onehot(label)) / rows, into grad when grad is not nil, and
// returns the loss and the number of rows whose argmax (first maximum) equals
// the label.
//
// A label of -1 marks a row to ignore: it contributes nothing to the loss or
// to correct, is not counted in the mean, and its gradient row is zero. With
// no labelled rows the loss is 0. Any other label outside [0, C) panics.
// Per-row losses are summed in float64 over fixed chunks of rows combined in
// chunk order, so the result does not depend on the thread count.
func (d *Device) SoftmaxCrossEntropy(logits *tensor.Tensor, labels []int32, grad *tensor.Tensor) (loss float64, correct int) {
	rows, cols := logits.Rows, logits.Cols
	counted := device.CountLabels(string(device.KindCPU), labels, rows, cols)
	if grad != nil {
		mustSame("SoftmaxCrossEntropy", grad, logits)
	}
	var inv float64
	if counted > 0 {
		inv = 1 / float64(counted)
	}
	ld := logits.Data[:logits.Len()]
	var gd []float32
	if grad != nil {
		gd = grad.Data[:grad.Len()]
	}
	nch := (rows + reduceChunkRows - 1) / reduceChunkRows
	lossPart := make([]float64, nch)
	corrPart := make([]int, nch)
	chunk := func(c int) {
		var ls float64
		var ok int
		for i := c * reduceChunkRows; i < min((c+1)*reduceChunkRows, rows); i++ {
			x := ld[i*cols : (i+1)*cols]
			lab := int(labels[i])
			if lab < 0 {
				if gd != nil {
					clear(gd[i*cols : (i+1)*cols])
				}
				continue
			}
			mx, arg := float32(math.Inf(-1)), 0
			for j, v := range x {
				if v > mx {
					mx, arg = v, j
				}
			}
			if arg == lab {
				ok++
			}
			m := float64(mx)
			var s float64
			for _, v := range x {
				s += math.Exp(float64(v) - m)
			}
			lse := m + math.Log(s)
			ls += lse - float64(x[lab])
			if gd != nil {
				g := gd[i*cols : (i+1)*cols]
				g = g[:len(x)]
				for j, v := range x {
					g[j] = float32(math.Exp(float64(v)-lse) * inv)
				}
				g[lab] = float32((math.Exp(float64(x[lab])-lse) - 1) * inv)
			}
		}
		lossPart[c], corrPart[c] = ls, ok
	}
	if rows*cols < minWork/8 {
		for c := 0; c < nch; c++ {
			chunk(c)
		}
	} else {
		d.parallelChunks(nch, chunk)
	}
	for c := 0; c < nch; c++ {
		loss += lossPart[c]
		correct += corrPart[c]
	}
	return loss * inv, correct
}

// Argmax writes each row's index of its largest value (the first one on
// ties) into dst.
func (d *Device) Argmax(dst []int32, x *tensor.Tensor) {
	if len(dst) != x.Rows {
		panic(fmt.Sprintf("cpu: Argmax: %d outputs for %s", len(dst), x.Shape()))
	}
	cols := x.Cols
	xd := x.Data[:x.Len()]
	d.parallelFor(x.Rows, grainRows(cols), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			mx, arg := float32(math.Inf(-1)), 0
			for j, v := range xd[i*cols : (i+1)*cols] {
				if v > mx {
					mx, arg = v, j
				}
			}
			dst[i] = int32(arg)
		}
	})
}

// Adam applies one step of torch.optim.Adam (step counts from 1):
//
//	g = grad + weightDecay*param
//	m = beta1*m + (1-beta1)*g
//	v = beta2*v + (1-beta2)*g*g
//	param -= lr/(1-beta1^step) * m / (sqrt(v)/sqrt(1-beta2^step) + eps)
//
// grad is left unchanged.
func (d *Device) Adam(param, grad, m, v *tensor.Tensor, step int, lr, beta1, beta2, eps, weightDecay float32) {
	device.CheckAdam(device.KindCPU, param, grad, m, v, step)
	bc1 := 1 - math.Pow(float64(beta1), float64(step))
	bc2 := 1 - math.Pow(float64(beta2), float64(step))
	stepSize := float32(float64(lr) / bc1)
	invSqrtBC2 := float32(1 / math.Sqrt(bc2))
	pd, gd, md, vd := param.Data[:param.Len()], grad.Data[:grad.Len()], m.Data[:m.Len()], v.Data[:v.Len()]
	d.each(len(pd), func(lo, hi int) {
		ps, gs, ms, vs := pd[lo:hi], gd[lo:hi], md[lo:hi], vd[lo:hi]
		gs, ms, vs = gs[:len(ps)], ms[:len(ps)], vs[:len(ps)]
		for i := range ps {
			g := gs[i] + weightDecay*ps[i]
			mi := beta1*ms[i] + (1-beta1)*g
			vi := beta2*vs[i] + (1-beta2)*g*g
			ms[i], vs[i] = mi, vi
			denom := float32(math.Sqrt(float64(vi)))*invSqrtBC2 + eps
			ps[i] -= stepSize * mi / denom
		}
	})
}
