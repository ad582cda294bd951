package rng

import "math"

// Mix hashes a sequence of words into one well-mixed 64-bit seed
// (splitmix64 finalizer applied after each word).
func Mix(words ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, w := range words {
		h ^= w + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h = splitmix(h)
	}
	return h
}

func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Rand is a xoshiro256** generator. The zero value is not usable; use New.
type Rand struct{ s0, s1, s2, s3 uint64 }

// New returns a generator seeded from the given words (see Mix).
func New(words ...uint64) *Rand {
	r := &Rand{}
	r.Seed(Mix(words...))
	return r
}

// Seed resets the generator state from one 64-bit seed.
func (r *Rand) Seed(seed uint64) {
	r.s0 = splitmix(seed)
	r.s1 = splitmix(r.s0 ^ 0x6a09e667f3bcc909)
	r.s2 = splitmix(r.s1 ^ 0xbb67ae8584caa73b)
	r.s3 = splitmix(r.s2 ^ 0x3c6ef372fe94f82b)
}

// Uint64 returns the next 64 random bits.
func (r *Rand) Uint64() uint64 {
	result := rotl(r.s1*5, 7) * 9
	t := r.s1 << 17
	r.s2 ^= r.s0
	r.s3 ^= r.s1
	r.s1 ^= r.s2
	r.s0 ^= r.s3
	r.s2 ^= t
	r.s3 = rotl(r.s3, 45)
	return result
}

func rotl(x uint64, k uint) uint64 { return (x << k) | (x >> (64 - k)) }

// Uint32n returns a uniform integer in [0, n) (Lemire's multiply-shift; the
// bias is below 2^-32 for the sizes the engine uses). n must be > 0.
func (r *Rand) Uint32n(n uint32) uint32 {
	return uint32((uint64(uint32(r.Uint64()>>32)) * uint64(n)) >> 32)
}

// Intn returns a uniform integer in [0, n). n must be > 0.
func (r *Rand) Intn(n int) int {
	if n <= math.MaxUint32 {
		return int(r.Uint32n(uint32(n)))
	}
	return int(r.Uint64() % uint64(n))
}

// Float64 returns a uniform float64 in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Float32 returns a uniform float32 in [0, 1).
func (r *Rand) Float32() float32 { return float32(r.Uint64()>>40) / (1 << 24) }

// NormFloat64 returns a standard normal variate (Box-Muller).
func (r *Rand) NormFloat64() float64 {
	u1 := r.Float64()
	for u1 == 0 {
		u1 = r.Float64()
	}
	u2 := r.Float64()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// Perm returns a random permutation of [0, n) as int32.
func (r *Rand) Perm(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	r.Shuffle(p)
	return p
}

// Shuffle permutes s in place (Fisher-Yates).
func (r *Rand) Shuffle(s []int32) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.Intn(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}
