package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// refCE returns the mean cross-entropy over labelled rows in float64.
func refCE(logits []float64, labels []int32, cols int) (loss float64, correct int) {
	n := 0
	for i, l := range labels {
		if l < 0 {
			continue
		}
		x := logits[i*cols : (i+1)*cols]
		m := math.Inf(-1)
		arg := 0
		for j, v := range x {
			if v > m {
				m, arg = v, j
			}
		}
		var s float64
		for _, v := range x {
			s += math.Exp(v - m)
		}
		loss += m + math.Log(s) - x[l]
		if arg == int(l) {
			correct++
		}
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return loss / float64(n), correct
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	r := rng.New(10)
	for _, sh := range [][2]int{{0, 3}, {1, 1}, {1, 5}, {7, 3}, {40, 13}, {700, 47}} {
		rows, cols := sh[0], sh[1]
		for _, ignore := range []bool{false, true} {
			name := fmt.Sprintf("%v/ignore=%v", sh, ignore)
			h := New(1, 0)
			logits := randTensor(t, h, r, rows, cols)
			for i := range logits.Data {
				logits.Data[i] *= 4
			}
			if rows > 0 {
				logits.Data[0] = 80 // large values must not overflow
			}
			labels := make([]int32, rows)
			for i := range labels {
				labels[i] = int32(r.Intn(cols))
				if ignore && r.Intn(3) == 0 {
					labels[i] = -1
				}
			}
			l64 := make([]float64, len(logits.Data))
			for i, v := range logits.Data {
				l64[i] = float64(v)
			}
			wantLoss, wantCorrect := refCE(l64, labels, cols)
			// Finite differences of the float64 loss give the gradient.
			wantGrad := make([]float64, len(l64))
			if rows*cols <= 600 {
				const eps = 1e-6
				for i := range l64 {
					old := l64[i]
					l64[i] = old + eps
					lp, _ := refCE(l64, labels, cols)
					l64[i] = old - eps
					lm, _ := refCE(l64, labels, cols)
					l64[i] = old
					wantGrad[i] = (lp - lm) / (2 * eps)
				}
			}
			var firstLoss float64
			forThreads(t, name, func(d *Device) []float32 {
				grad := randTensor(t, d, r, rows, cols)
				loss, correct := d.SoftmaxCrossEntropy(logits, labels, grad)
				if math.Abs(loss-wantLoss) > 1e-6*(1+math.Abs(wantLoss)) || correct != wantCorrect {
					t.Fatalf("%s: loss %v correct %d, want %v %d", name, loss, correct, wantLoss, wantCorrect)
				}
				if firstLoss == 0 {
					firstLoss = loss
				} else if loss != firstLoss {
					t.Fatalf("%s: loss depends on threads", name)
				}
				if rows*cols <= 600 {
					for i, g := range grad.Data {
						if math.Abs(float64(g)-wantGrad[i]) > 1e-5 {
							t.Fatalf("%s: grad[%d] = %v, finite difference %v", name, i, g, wantGrad[i])
						}
					}
				}
				for i, l := range labels {
					if l < 0 {
						for _, g := range grad.Data[i*cols : (i+1)*cols] {
							if g != 0 {
								t.Fatalf("%s: ignored row %d has gradient", name, i)
							}
						}
					}
				}
				// grad may be nil.
				if l2, c2 := d.SoftmaxCrossEntropy(logits, labels, nil); l2 != loss || c2 != correct {
					t.Fatalf("%s: nil grad changed the result", name)
				}
				return grad.Data
			})
		}
	}
}

func TestArgmax(t *testing.T) {
	r := rng.New(11)
	for _, sh := range [][2]int{{0, 2}, {1, 1}, {9, 4}, {5000, 13}} {
		x := randTensor(t, New(1, 0), r, sh[0], sh[1])
		if sh[0] > 0 && sh[1] > 1 {
			x.Data[0], x.Data[1] = 5, 5 // tie: first wins
		}
		for _, th := range testThreads {
			got := make([]int32, sh[0])
			New(th, 0).Argmax(got, x)
			for i := range got {
				best := 0
				for j := 1; j < sh[1]; j++ {
					if x.Data[i*sh[1]+j] > x.Data[i*sh[1]+best] {
						best = j
					}
				}
				if int(got[i]) != best {
					t.Fatalf("%v threads=%d row %d: %d, want %d", sh, th, i, got[i], best)
				}
			}
		}
	}
}

func TestAdam(t *testing.T) {
	r := rng.New(12)
	const rows, cols = 300, 117
	const lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 5e-4
	h := New(1, 0)
	param0 := randTensor(t, h, r, rows, cols)
	grads := make([][]float32, 5)
	for s := range grads {
		grads[s] = randTensor(t, h, r, rows, cols).Data
	}
	// float64 reference of torch.optim.Adam.
	n := rows * cols
	p := make([]float64, n)
	m := make([]float64, n)
	v := make([]float64, n)
	for i := range p {
		p[i] = float64(param0.Data[i])
	}
	want := make([][]float64, len(grads))
	for s, g := range grads {
		step := s + 1
		for i := range p {
			gi := float64(g[i]) + wd*p[i]
			m[i] = b1*m[i] + (1-b1)*gi
			v[i] = b2*v[i] + (1-b2)*gi*gi
			mh := m[i] / (1 - math.Pow(b1, float64(step)))
			vh := v[i] / (1 - math.Pow(b2, float64(step)))
			p[i] -= lr * mh / (math.Sqrt(vh) + eps)
		}
		want[s] = append([]float64(nil), p...)
	}
	forThreads(t, "Adam", func(d *Device) []float32 {
		param := clone(t, d, param0)
		mt := mustAlloc(t, d, rows, cols)
		vt := mustAlloc(t, d, rows, cols)
		g := mustAlloc(t, d, rows, cols)
		for s := range grads {
			copy(g.Data, grads[s])
			d.Adam(param, g, mt, vt, s+1, lr, b1, b2, eps, wd)
			for i, got := range param.Data {
				if math.Abs(float64(got)-want[s][i]) > 1e-5 {
					t.Fatalf("step %d element %d: %v, want %v", s+1, i, got, want[s][i])
				}
			}
			if !sameBits(g.Data, grads[s]) {
				t.Fatal("Adam changed the gradient")
			}
		}
		return param.Data
	})
}
