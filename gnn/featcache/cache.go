package featcache

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Cache holds feature rows resident on a device: Data's row s is the
// feature row of node Nodes[s]. It is read-only once built and safe for
// concurrent Split calls.
type Cache struct {
	Data  *tensor.Tensor // len(Nodes)×f, from the device's allocator
	Nodes []int32        // slot -> node
	slot  []int32        // node -> slot, -1 when not cached
}

// New allocates a cache of the given rows of the host matrix x (f wide,
// n = len(x)/f nodes) on dev and fills it. The rows count against the
// device's budget for as long as the cache lives; an allocation past it
// is the device's OOM error.
func New(dev device.Device, x []float32, f int, rows []int32) (*Cache, error) {
	if f <= 0 || len(x)%f != 0 {
		return nil, fmt.Errorf("feature cache: %d values are not rows of %d", len(x), f)
	}
	n := len(x) / f
	slot := make([]int32, n)
	for i := range slot {
		slot[i] = -1
	}
	for s, v := range rows {
		if v < 0 || int(v) >= n {
			return nil, fmt.Errorf("feature cache: node %d out of range (%d nodes)", v, n)
		}
		if slot[v] >= 0 {
			return nil, fmt.Errorf("feature cache: node %d listed twice", v)
		}
		slot[v] = int32(s)
	}
	c := &Cache{Nodes: rows, slot: slot}
	if len(rows) == 0 {
		return c, nil
	}
	data, err := dev.Alloc(len(rows), f)
	if err != nil {
		return nil, fmt.Errorf("feature cache of %d rows: %w", len(rows), err)
	}
	dev.GatherHost(data, x, rows)
	c.Data = data
	return c, nil
}

// Bytes is the device memory the cache holds.
func (c *Cache) Bytes() int64 {
	if c == nil || c.Data == nil {
		return 0
	}
	return c.Data.Bytes()
}

// Free gives the cache's rows back to dev.
func (c *Cache) Free(dev device.Device) {
	if c != nil && c.Data != nil {
		dev.Free(c.Data)
		c.Data = nil
	}
}

// Cached reports whether node v is resident.
func (c *Cache) Cached(v int32) bool { return c.slot[v] >= 0 }

// Split sorts a batch's input rows into hits and misses: row i of the
// batch (node nodes[i]) is a hit at cache slot s, or a miss to gather
// from host. It appends to the given slices (pass them truncated to
// reuse them) and returns them.
func (c *Cache) Split(nodes []int32, s Split) Split {
	for i, v := range nodes {
		if sl := c.slot[v]; sl >= 0 {
			s.HitPos = append(s.HitPos, int32(i))
			s.HitSlot = append(s.HitSlot, sl)
		} else {
			s.MissPos = append(s.MissPos, int32(i))
			s.MissNode = append(s.MissNode, v)
		}
	}
	return s
}

// Split is a batch's input rows sorted by Cache.Split: HitPos[i] is the
// batch row that cache slot HitSlot[i] fills, MissPos[i] the batch row
// that host row MissNode[i] fills.
type Split struct {
	HitPos, HitSlot   []int32
	MissPos, MissNode []int32
}

// Sized returns s with its slices emptied and room for a batch of n rows
// in each, so that Split appends without growing them: s's own when they
// have it, else one new allocation shared by the four.
func (s Split) Sized(n int) Split {
	if min(cap(s.HitPos), cap(s.HitSlot), cap(s.MissPos), cap(s.MissNode)) >= n {
		return Split{s.HitPos[:0], s.HitSlot[:0], s.MissPos[:0], s.MissNode[:0]}
	}
	b := make([]int32, 4*n)
	return Split{b[:0:n], b[n : n : 2*n], b[2*n : 2*n : 3*n], b[3*n : 3*n : 4*n]}
}
