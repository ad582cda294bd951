package philox

import "math/bits"

// The round multipliers and the Weyl constants of the key schedule.
const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9 // golden ratio
	w1 = 0xBB67AE85 // sqrt(3) - 1
)

// Rounds is the number of rounds of Philox4x32-10.
const Rounds = 10

// Block returns the Philox4x32-10 output for counter ctr and key key.
func Block(ctr [4]uint32, key [2]uint32) [4]uint32 {
	x0, x1, x2, x3 := ctr[0], ctr[1], ctr[2], ctr[3]
	k0, k1 := key[0], key[1]
	for r := 0; r < Rounds; r++ {
		x0, x1, x2, x3 = round(x0, x1, x2, x3, k0, k1)
		k0 += w0
		k1 += w1
	}
	return [4]uint32{x0, x1, x2, x3}
}

// Block2 returns the blocks of counters a and b under one key, as two
// calls of Block would; the two independent chains of multiplications
// interleave, which nearly doubles the throughput of a superscalar core.
func Block2(a, b [4]uint32, key [2]uint32) ([4]uint32, [4]uint32) {
	a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
	b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
	k0, k1 := key[0], key[1]
	for r := 0; r < Rounds; r++ {
		a0, a1, a2, a3 = round(a0, a1, a2, a3, k0, k1)
		b0, b1, b2, b3 = round(b0, b1, b2, b3, k0, k1)
		k0 += w0
		k1 += w1
	}
	return [4]uint32{a0, a1, a2, a3}, [4]uint32{b0, b1, b2, b3}
}

// round is one Philox round with round key (k0, k1).
func round(x0, x1, x2, x3, k0, k1 uint32) (uint32, uint32, uint32, uint32) {
	hi0, lo0 := bits.Mul32(m0, x0)
	hi1, lo1 := bits.Mul32(m1, x2)
	return hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
}

// Key splits a 64-bit seed into the two key words (low word first).
func Key(seed uint64) [2]uint32 { return [2]uint32{uint32(seed), uint32(seed >> 32)} }

// Counter returns the counter of block b of a stream: b's low and high
// words in the first two counter words, zeros in the others.
func Counter(b uint64) [4]uint32 { return [4]uint32{uint32(b), uint32(b >> 32), 0, 0} }

// StreamBlock returns block b of the stream of seed: words 4b to 4b+3.
func StreamBlock(seed, b uint64) [4]uint32 { return Block(Counter(b), Key(seed)) }

// At returns word i of the stream of seed: word i%4 of block i/4.
func At(seed, i uint64) uint32 { return StreamBlock(seed, i/4)[i%4] }
