package philox

import (
	"fmt"
	"testing"
)

// TestKnownAnswers checks the Random123 known-answer vectors of
// Philox4x32-10 (kat_vectors: counter, key, expected output).
func TestKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0},
			[4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff},
			[4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0},
			[4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	} {
		if got := Block(c.ctr, c.key); got != c.want {
			t.Errorf("Block(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// TestStream checks the stream layout: word i is word i%4 of the block
// whose counter is i/4 split into its low and high words, keyed by the
// seed's low and high words.
func TestStream(t *testing.T) {
	seed := uint64(0x0123456789abcdef)
	for _, i := range []uint64{0, 1, 3, 4, 7, 1 << 34, 1<<34 + 5, 1<<63 + 2} {
		b := i / 4
		want := Block([4]uint32{uint32(b), uint32(b >> 32), 0, 0}, [2]uint32{0x89abcdef, 0x01234567})[i%4]
		if got := At(seed, i); got != want {
			t.Errorf("At(%#x, %d) = %08x, want %08x", seed, i, got, want)
		}
	}
	if At(seed, 5) == At(seed+1, 5) || At(seed, 5) == At(seed, 6) || At(seed, 4) == At(seed, 1<<34+4) {
		t.Error("neighbouring seeds, words or high counter words collide")
	}
}

// TestUniform checks the bits of a stream for gross bias: every bit of
// 1<<16 words is set close to half the time.
func TestUniform(t *testing.T) {
	const n = 1 << 16
	var ones [32]int
	for i := uint64(0); i < n; i++ {
		w := At(7, i)
		for b := range ones {
			ones[b] += int(w >> b & 1)
		}
	}
	for b, c := range ones {
		// 5 standard deviations of a binomial(n, 1/2).
		if d := c - n/2; d > 640 || d < -640 {
			t.Errorf("bit %d set %d times of %d", b, c, n)
		}
	}
}

func ExampleBlock() {
	fmt.Printf("%08x\n", Block(Counter(0), Key(0)))
	// Output: [6627e8d5 e169c58d bc57ac4c 9b00dbd8]
}

// TestBlock2 checks that Block2 computes two blocks as Block does.
func TestBlock2(t *testing.T) {
	key := Key(0xfeedface12345678)
	for _, c := range [][2]uint64{{0, 1}, {7, 1 << 40}, {1<<64 - 1, 3}} {
		a, b := Block2(Counter(c[0]), Counter(c[1]), key)
		if a != Block(Counter(c[0]), key) || b != Block(Counter(c[1]), key) {
			t.Errorf("Block2 of counters %d, %d differs from Block", c[0], c[1])
		}
	}
}

func BenchmarkBlock(b *testing.B) {
	key := Key(1)
	var s uint32
	for i := 0; i < b.N; i++ {
		s += Block(Counter(uint64(i)), key)[0]
	}
	sink = s
}

func BenchmarkBlock2(b *testing.B) {
	key := Key(1)
	var s uint32
	for i := 0; i < b.N; i += 2 {
		x, y := Block2(Counter(uint64(i)), Counter(uint64(i+1)), key)
		s += x[0] + y[0]
	}
	sink = s
}

var sink uint32
