package memory

import (
	"math"
	"slices"
	"sync"
)

// Shape is what the predictor knows of a batch: the node counts of every
// layer's node list, outermost (input) first and the targets last, and the
// edges of every block, outermost first.
type Shape struct {
	Nodes []int
	Edges []int64
}

// features returns the regression inputs: an intercept, then node counts,
// then edge counts.
func (s Shape) features() []float64 {
	f := make([]float64, 0, 1+len(s.Nodes)+len(s.Edges))
	f = append(f, 1)
	for _, n := range s.Nodes {
		f = append(f, float64(n))
	}
	for _, e := range s.Edges {
		f = append(f, float64(e))
	}
	return f
}

// Predictor predicts a batch's peak bytes from its Shape with a linear model
// fitted by least squares over the most recent Window observations (ridge
// regularized very lightly, on scaled features, so that collinear counts do
// not make the fit singular). It tracks its own error: every observation
// made when a prediction was available is scored, giving the mean absolute
// percentage error and a safety margin. It is safe for concurrent use.
type Predictor struct {
	mu     sync.Mutex
	window int
	minObs int
	xs     [][]float64
	ys     []float64
	coef   []float64
	// error tracking: relative errors (actual-predicted)/actual
	absErrSum float64
	scored    int
	recent    []float64 // recent signed relative under-predictions
}

// NewPredictor returns a predictor fitted over the last window observations
// (at least 8), predicting once it has seen minObs of them (at least 2).
func NewPredictor(window, minObs int) *Predictor {
	return &Predictor{window: max(window, 8), minObs: max(minObs, 2)}
}

// Ready reports whether the predictor has seen enough observations to
// predict.
func (p *Predictor) Ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.coef != nil
}

// Predict returns the predicted peak bytes of a batch of shape s, or false
// before calibration.
func (p *Predictor) Predict(s Shape) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.predictLocked(s.features())
}

func (p *Predictor) predictLocked(x []float64) (int64, bool) {
	if p.coef == nil || len(x) != len(p.coef) {
		return 0, false
	}
	var y float64
	for i, v := range x {
		y += p.coef[i] * v
	}
	return int64(math.Ceil(max(y, 0))), true
}

// Observe adds a measured peak for shape s and refits. When the predictor
// could predict s beforehand, the prediction's error is scored (MAPE and
// margin); predicted is that prediction (0 = none made).
func (p *Predictor) Observe(s Shape, peak int64) (predicted int64) {
	x := s.features()
	p.mu.Lock()
	defer p.mu.Unlock()
	if pred, ok := p.predictLocked(x); ok && peak > 0 {
		predicted = pred
		rel := float64(peak-pred) / float64(peak)
		p.absErrSum += math.Abs(rel)
		p.scored++
		p.recent = append(p.recent, rel)
		if len(p.recent) > p.window {
			p.recent = p.recent[1:]
		}
	}
	if len(p.xs) > 0 && len(p.xs[0]) != len(x) {
		p.xs, p.ys = nil, nil
	}
	p.xs = append(p.xs, x)
	p.ys = append(p.ys, float64(peak))
	if len(p.xs) > p.window {
		p.xs, p.ys = p.xs[1:], p.ys[1:]
	}
	if len(p.xs) >= p.minObs {
		p.coef = fit(p.xs, p.ys)
	}
	return predicted
}

// MAPE returns the mean absolute percentage error (as a fraction) of the
// predictions scored so far, or NaN when none was.
func (p *Predictor) MAPE() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scored == 0 {
		return math.NaN()
	}
	return p.absErrSum / float64(p.scored)
}

// ResetMAPE forgets the errors MAPE and Scored count, keeping the recent
// errors the margin is taken from, so that MAPE covers what follows (e.g.
// the batches trained after a calibration whose probes were scored).
func (p *Predictor) ResetMAPE() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.absErrSum, p.scored = 0, 0
}

// Scored returns the number of predictions scored against measurements.
func (p *Predictor) Scored() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scored
}

// MinMargin is the smallest safety margin the guard applies.
const MinMargin = 0.001

// WarmMargin is the safety margin while fewer than WarmScored predictions
// have been scored: too few errors seen to trust a smaller one.
const (
	WarmMargin = 0.05
	WarmScored = 8
)

// Margin returns the safety margin to apply to a prediction, as a fraction:
// MinMargin plus twice the largest recent under-prediction (relative to the
// prediction), so a guard keeping predicted*(1+Margin) under its budget
// covers the errors it has seen; at least WarmMargin until WarmScored
// predictions have been scored.
func (p *Predictor) Margin() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.marginLocked()
}

func (p *Predictor) marginLocked() float64 {
	floor := MinMargin
	if len(p.recent) < WarmScored {
		floor = WarmMargin
	}
	worst := 0.0
	for _, r := range p.recent {
		if r > 0 { // actual above predicted
			worst = max(worst, r/(1-r))
		}
	}
	return max(floor, MinMargin+2*worst)
}

// Linear is a snapshot of a Predictor's fitted model and of its safety
// margin. It predicts without locking or allocating, for a guard that
// weighs many candidate shapes of one batch (cut prefixes, split parts);
// the zero Linear predicts nothing.
type Linear struct {
	coef []float64
	// Margin is the Predictor's Margin when the snapshot was taken.
	Margin float64
}

// Model returns a snapshot of the fitted model and margin, or false before
// calibration.
func (p *Predictor) Model() (Linear, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.coef == nil {
		return Linear{}, false
	}
	return Linear{coef: slices.Clone(p.coef), Margin: p.marginLocked()}, true
}

// Predict returns the predicted peak bytes of shape s, as Predictor.Predict
// did when the snapshot was taken; false when s has another number of
// layers than the shapes fitted.
func (l Linear) Predict(s Shape) (int64, bool) {
	if len(l.coef) == 0 || len(l.coef) != 1+len(s.Nodes)+len(s.Edges) {
		return 0, false
	}
	y := l.coef[0]
	for i, n := range s.Nodes {
		y += l.coef[1+i] * float64(n)
	}
	off := 1 + len(s.Nodes)
	for i, e := range s.Edges {
		y += l.coef[off+i] * float64(e)
	}
	return int64(math.Ceil(max(y, 0))), true
}

// Fits reports whether a predicted peak, raised by the margin, stays within
// room bytes.
func (l Linear) Fits(pred, room int64) bool {
	return float64(pred)*(1+l.Margin) <= float64(room)
}

// Need returns the bytes a batch predicted to need pred bytes is given
// with the safety margin: the least room Fits accepts it in.
func (l Linear) Need(pred int64) int64 {
	return int64(math.Ceil(float64(pred) * (1 + l.Margin)))
}

// Slopes returns the fitted bytes per node of node list i and per edge of
// block i for shapes with the layout of s (zeros when it does not match).
func (l Linear) Slopes(s Shape, i int) (perNode, perEdge float64) {
	if len(l.coef) != 1+len(s.Nodes)+len(s.Edges) || i < 0 || i >= len(s.Nodes) {
		return 0, 0
	}
	perNode = l.coef[1+i]
	if i < len(s.Edges) {
		perEdge = l.coef[1+len(s.Nodes)+i]
	}
	return perNode, perEdge
}

// fit solves the ridge-regularized normal equations on columns scaled to
// unit mean absolute value (the intercept is not penalized).
func fit(xs [][]float64, ys []float64) []float64 {
	k := len(xs[0])
	scale := make([]float64, k)
	for _, x := range xs {
		for j, v := range x {
			scale[j] += math.Abs(v)
		}
	}
	for j := range scale {
		scale[j] /= float64(len(xs))
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	ysc := 0.0
	for _, y := range ys {
		ysc += math.Abs(y)
	}
	ysc = max(ysc/float64(len(ys)), 1)
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	for r, x := range xs {
		y := ys[r] / ysc
		for i := 0; i < k; i++ {
			xi := x[i] / scale[i]
			for j := 0; j < k; j++ {
				a[i][j] += xi * x[j] / scale[j]
			}
			a[i][k] += xi * y
		}
	}
	lambda := 1e-9 * float64(len(xs))
	for i := 1; i < k; i++ {
		a[i][i] += lambda
	}
	a[0][0] += 1e-12
	beta := solve(a)
	for j := range beta {
		beta[j] *= ysc / scale[j]
	}
	return beta
}

// solve solves the augmented system a (k×(k+1)) by Gaussian elimination
// with partial pivoting; a singular column gets a zero coefficient.
func solve(a [][]float64) []float64 {
	k := len(a)
	for c := 0; c < k; c++ {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		if math.Abs(a[c][c]) < 1e-300 {
			continue
		}
		for r := c + 1; r < k; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	x := make([]float64, k)
	for c := k - 1; c >= 0; c-- {
		if math.Abs(a[c][c]) < 1e-300 {
			continue
		}
		s := a[c][k]
		for j := c + 1; j < k; j++ {
			s -= a[c][j] * x[j]
		}
		x[c] = s / a[c][c]
	}
	return x
}
