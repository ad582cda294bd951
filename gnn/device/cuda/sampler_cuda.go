//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cuda/cudrv"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

var _ device.GraphSampler = (*Device)(nil)

// Sampler draws neighbor sampling hops with the sample_neighbors kernel
// over a graph's CSR held in device memory, or in mapped pinned host
// memory (UVA) when it does not fit in half the device's room. Its hops
// run one at a time on a stream of its own, so sampling overlaps the
// training step's kernels; the drawn ids come back to the host, which
// maps them to local ids and builds the block (sample.Neighbor.SetDrawer).
type Sampler struct {
	d     *Device
	where device.Place
	ip    uintptr // device address of the row pointers (int64)
	ix    uintptr // device address of the indices (int32)

	graphT []*tensor.Tensor // the CSR in device memory (PlaceDevice)
	graphP []float32        // the CSR in pinned host memory (PlaceUVA)

	mu   sync.Mutex
	s    cudrv.Stream
	buf  *tensor.Tensor // frontier, counts, draws (int32), grown
	host []float32      // their pinned host copy, grown
	done bool
}

// NeighborDrawer implements device.GraphSampler.
func (d *Device) NeighborDrawer(g *graph.CSR) (device.NeighborDrawer, error) {
	return d.newSampler(g, "")
}

// newSampler returns a Sampler over g kept where place says (PlaceDevice,
// PlaceUVA, or "": device memory when the CSR fits half the room and the
// allocation succeeds, else UVA).
func (d *Device) newSampler(g *graph.CSR, place device.Place) (*Sampler, error) {
	if g == nil || len(g.Indptr) != g.N+1 || int64(len(g.Indices)) != g.Indptr[g.N] {
		return nil, errors.New("cuda: sampler: malformed graph")
	}
	if len(g.Indices) > math.MaxInt32 {
		return nil, fmt.Errorf("cuda: sampler: %d graph entries, more than the kernel's 32-bit positions", len(g.Indices))
	}
	s := &Sampler{d: d}
	ptrB, idxB := int64Bytes(g.Indptr), int32Bytes(g.Indices)
	if place == "" {
		place = device.PlaceUVA
		if device.FitsHalf(d, int64(len(ptrB)+len(idxB))) {
			place = device.PlaceDevice
		}
	}
	var err error
	if place == device.PlaceDevice {
		err = s.onDevice(ptrB, idxB)
		if device.IsOOM(err) {
			s.freeGraph()
			err = s.onHost(ptrB, idxB)
		}
	} else {
		err = s.onHost(ptrB, idxB)
	}
	if err == nil {
		d.enter()
		s.s, err = cudrv.NewStream()
		d.leave()
		if err != nil {
			err = fmt.Errorf("cuda: %s: sampler stream: %w", d.name, err)
		}
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// floatsOf views whole 4-byte words of b as float32s (nil for none).
func floatsOf(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// onDevice copies the CSR into two device tensors.
func (s *Sampler) onDevice(ptrB, idxB []byte) error {
	for _, b := range [][]byte{ptrB, idxB} {
		t, err := s.d.Alloc(max(len(b)/4, 1), 1)
		if err != nil {
			return fmt.Errorf("cuda: sampler: graph in device memory: %w", err)
		}
		s.graphT = append(s.graphT, t)
		if len(b) > 0 {
			s.d.CopyFromHost(t, floatsOf(b))
		}
	}
	s.d.Sync()
	s.where = device.PlaceDevice
	s.ip, s.ix = s.d.ptr(s.graphT[0]), s.d.ptr(s.graphT[1])
	return s.d.Err()
}

// onHost copies the CSR into mapped pinned host memory.
func (s *Sampler) onHost(ptrB, idxB []byte) error {
	p, err := s.d.AllocPinned((len(ptrB) + len(idxB) + 4) / 4)
	if err != nil {
		return fmt.Errorf("cuda: sampler: graph in pinned host memory: %w", err)
	}
	s.graphP = p
	copy(floatBytes(p), ptrB)
	copy(floatBytes(p)[len(ptrB):], idxB)
	pr, ok := s.d.pinnedAt(unsafe.Pointer(&p[0]), int64(len(p))*4)
	if !ok {
		return errors.New("cuda: sampler: pinned graph not mapped")
	}
	s.where = device.PlaceUVA
	s.ip = pr.devptr + (uintptr(unsafe.Pointer(&p[0])) - pr.start)
	s.ix = s.ip + uintptr(len(ptrB))
	return nil
}

// Where implements device.NeighborDrawer.
func (s *Sampler) Where() device.Place { return s.where }

// grow makes the frontier, count and draw buffers hold n int32s and
// reports whether it allocated them anew. On an error it leaves none, so
// that the next hop tries again.
func (s *Sampler) grow(n int) (bool, error) {
	if s.buf != nil && s.buf.Len() >= n {
		return false, nil
	}
	s.freeBuffers()
	n += n / 4
	buf, err := s.d.Alloc(n, 1)
	if err != nil {
		return false, fmt.Errorf("cuda: sampler buffers: %w", err)
	}
	host, err := s.d.AllocPinned(n)
	if err != nil {
		s.d.Free(buf)
		return false, fmt.Errorf("cuda: sampler buffers: %w", err)
	}
	s.buf, s.host = buf, host
	return true, nil
}

// freeBuffers releases the frontier, count and draw buffers.
func (s *Sampler) freeBuffers() {
	if s.buf != nil {
		s.d.Free(s.buf)
		s.buf = nil
	}
	if s.host != nil {
		s.d.FreePinned(s.host)
		s.host = nil
	}
}

// DrawHop implements device.NeighborDrawer (sample.HopDrawer): it copies
// the frontier to the device, runs sample_neighbors on the sampler's
// stream and copies the counts and draws back, waiting for them.
func (s *Sampler) DrawHop(nodes []int32, k int, key uint64, hop int, out, count []int32) error {
	n := len(nodes)
	if k <= 0 || len(out) != n*k || len(count) != n {
		return fmt.Errorf("cuda: sampler: %d nodes, fanout %d, %d output slots, %d counts", n, k, len(out), len(count))
	}
	if n == 0 {
		return nil
	}
	if int64(n)*int64(k+2) > math.MaxInt32 {
		return fmt.Errorf("cuda: sampler: %d nodes of fanout %d in one hop: too many draws", n, k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return errors.New("cuda: sampler used after Close")
	}
	d := s.d
	fresh, err := s.grow(n * (k + 2))
	if err != nil {
		return err
	}
	d.enter()
	defer d.leave()
	if fresh {
		// Memory the compute stream freed carries no fence: a kernel
		// queued there before may still use the new buffer.
		d.waitFor(s.s, d.compute)
	}
	h := unsafe.Slice((*int32)(unsafe.Pointer(&s.host[0])), n*(k+2))
	copy(h, nodes)
	base := d.ptr(s.buf)
	d.must("sampler frontier copy", cudrv.MemcpyHtoDAsync(cudrv.DevicePtr(base), unsafe.Pointer(&h[0]), int64(n)*4, s.s))
	a := sampleArgs(base+uintptr(2*n)*4, base+uintptr(n)*4, s.ip, s.ix, base, n, k, key, hop)
	d.launch("sample_neighbors", elemGrid(int64(n), d.maxBlocks), 1, 1, s.s, a)
	d.must("sampler draws copy", cudrv.MemcpyDtoHAsync(unsafe.Pointer(&h[n]), cudrv.DevicePtr(base+uintptr(n)*4), int64(n)*int64(k+1)*4, s.s))
	d.must("waiting for the sampler", s.s.Synchronize())
	if err := d.Err(); err != nil {
		return err
	}
	copy(count, h[n:2*n])
	copy(out, h[2*n:])
	return nil
}

// Close implements device.NeighborDrawer.
func (s *Sampler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	d := s.d
	if !s.s.IsZero() {
		d.enter()
		d.must("waiting for the sampler", s.s.Synchronize())
		d.must("destroying the sampler stream", s.s.Destroy())
		d.leave()
	}
	s.freeGraph()
	s.freeBuffers()
	return d.Err()
}

// freeGraph releases the CSR's memory.
func (s *Sampler) freeGraph() {
	for _, t := range s.graphT {
		s.d.Free(t)
	}
	s.graphT = nil
	if s.graphP != nil {
		s.d.FreePinned(s.graphP)
		s.graphP = nil
	}
}
