package featcache

import (
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/rng"
)

// benchGather gathers a batch of 20000 rows of 64 floats from 100000
// nodes: plain (GatherHost) or through a cache of the first fifth of the
// nodes, which the batch hits about 40 % of the time (the split, the
// hits from the cache, the misses from host).
func benchGather(b *testing.B, cached bool) {
	const n, f, rows = 100000, 64, 20000
	dev := cpu.New(0, 0)
	x := make([]float32, n*f)
	r := rng.New(1)
	for i := range x {
		x[i] = float32(i % 977) // touched: untouched pages all read the one zero page
	}
	nodes := make([]int32, rows)
	for i := range nodes {
		if r.Float64() < 0.4 {
			nodes[i] = int32(r.Intn(n / 5))
		} else {
			nodes[i] = int32(n/5 + r.Intn(n-n/5))
		}
	}
	order := make([]int32, n/5)
	for i := range order {
		order[i] = int32(i)
	}
	c, err := New(dev, x, f, order)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Free(dev)
	dst, _ := dev.Alloc(rows, f)
	b.SetBytes(rows * f * 4)
	for b.Loop() {
		if !cached {
			dev.GatherHost(dst, x, nodes)
			continue
		}
		s := c.Split(nodes, Split{}.Sized(rows))
		dev.GatherRows(dst, s.HitPos, c.Data, s.HitSlot)
		dev.GatherHostRows(dst, s.MissPos, x, s.MissNode)
	}
}

func BenchmarkGatherPlain(b *testing.B)  { benchGather(b, false) }
func BenchmarkGatherCached(b *testing.B) { benchGather(b, true) }
