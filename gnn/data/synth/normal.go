package synth

import (
	"math"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// Standard normal variates by the ziggurat method of Marsaglia and Tsang
// (2000) with 128 layers. Features need hundreds of millions of variates;
// the ziggurat needs one random word and a table look-up for about 99% of
// them, where Box-Muller needs a logarithm, a square root and a sine.
// The layer index and the candidate come from separate bits of the word
// (the original shares bits between them, a known flaw).

const zigR = 3.442619855899 // start of the tail

var (
	zigK [128]uint32  // acceptance thresholds on |candidate|
	zigW [128]float64 // candidate scale per layer
	zigF [128]float64 // density at the layer edges
)

func init() {
	const m1 = 1 << 31
	const vn = 9.91256303526217e-3 // area of each layer
	dn, tn := zigR, zigR
	q := vn / math.Exp(-0.5*dn*dn)
	zigK[0] = uint32(dn / q * m1)
	zigK[1] = 0
	zigW[0] = q / m1
	zigW[127] = dn / m1
	zigF[0] = 1
	zigF[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(vn/dn+math.Exp(-0.5*dn*dn)))
		zigK[i+1] = uint32(dn / tn * m1)
		tn = dn
		zigF[i] = math.Exp(-0.5 * dn * dn)
		zigW[i] = dn / m1
	}
}

// gauss returns a standard normal variate.
func gauss(r *rng.Rand) float64 {
	for {
		u := r.Uint64()
		i := u & 127
		j := int32(u >> 32)
		a := uint32(j)
		if j < 0 {
			a = -a
		}
		x := float64(j) * zigW[i]
		if a < zigK[i] {
			return x // inside the layer's rectangle: the common case
		}
		if i == 0 {
			// Tail beyond zigR (Marsaglia's exponential rejection).
			for {
				x = -math.Log(1-r.Float64()) / zigR
				y := -math.Log(1 - r.Float64())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zigF[i]+r.Float64()*(zigF[i-1]-zigF[i]) < math.Exp(-0.5*x*x) {
			return x
		}
	}
}
