package device

import "github.com/gnnscope/gnnscope/gnn/graph"

// Place names where the graph of a NeighborDrawer, or a feature matrix,
// lives (train.Config.FeatureStore).
type Place string

// The places.
const (
	PlaceDevice Place = "device" // device memory
	PlaceUVA    Place = "uva"    // mapped page-locked host memory the device reads over the bus
	PlaceHost   Place = "host"   // ordinary host memory, gathered on the host and copied
)

// Places lists the places.
func Places() []Place { return []Place{PlaceDevice, PlaceUVA, PlaceHost} }

// NeighborDrawer draws the neighbors of one hop of neighbor sampling on a
// device, with a kernel over a graph the device holds; it satisfies
// sample.HopDrawer (see sample.DrawHop for what DrawHop computes).
type NeighborDrawer interface {
	DrawHop(nodes []int32, k int, key uint64, hop int, out, count []int32) error
	// Where says where the graph is kept: PlaceDevice or PlaceUVA.
	Where() Place
	// Close releases the graph's memory; the drawer must not be used
	// after.
	Close() error
}

// GraphSampler is implemented by devices that sample neighbors with a
// kernel (--sampler-device cuda).
type GraphSampler interface {
	// NeighborDrawer copies g's CSR to the device, or to mapped pinned
	// host memory when it does not fit (see Room), and returns a drawer
	// over it.
	NeighborDrawer(g *graph.CSR) (NeighborDrawer, error)
}

// memInfoer is implemented by devices that report their free memory.
type memInfoer interface {
	MemInfo() (free, total int64, err error)
}

// Room returns the bytes a long-lived buffer may still take on dev: under
// a budget, the budget less the live tensors; without one, the device's
// free memory as its driver reports it, or its memory less the live
// tensors. It is -1 when the device says nothing about its memory (the
// CPU without a budget).
func Room(dev Device) int64 {
	s := dev.Mem().Stats()
	if s.Budget > 0 {
		return max(s.Budget-s.Live, 0)
	}
	if m, ok := Unwrap(dev).(memInfoer); ok {
		if free, _, err := m.MemInfo(); err == nil {
			return free
		}
	}
	if d, ok := Unwrap(dev).(Describer); ok && d.Info().Memory > 0 {
		return max(d.Info().Memory-s.Live, 0)
	}
	return -1
}

// FitsHalf reports whether a buffer of n bytes should live in device
// memory: it takes at most half the Room, leaving the rest to training.
func FitsHalf(dev Device, n int64) bool {
	r := Room(dev)
	return r >= 0 && n <= r/2
}
