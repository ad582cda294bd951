package history

import (
	"fmt"
	"math"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Never is the last-push step of a row that was never pushed nor refreshed.
const Never int64 = -1

// maxElems bounds numNodes*dim so that offsets fit an int on every platform.
const maxElems = math.MaxInt32

// History is one layer's table of historical embeddings: NumNodes rows of Dim
// float32 values in host memory, plus the optimizer step at which each row
// was last written (Never until the first push or refresh). A fresh History
// holds zeros, as GAS's does.
//
// Rows are addressed by node id (int32, 0 <= id < NumNodes). Every method
// that moves rows uses the first k rows of the device tensor it is given,
// where k is the count or the number of node ids, so callers can push x[:b]
// without slicing; the tensor must have at least k rows and exactly Dim
// columns. A tensor of the wrong shape is a programming error and panics
// with a message naming the method and the shapes; bad node ids, offsets,
// counts and steps are returned as errors and leave the history unchanged.
//
// Concurrency: all methods are safe for concurrent use. Pulls, PullRange,
// Staleness and LastPush take a read lock and run in parallel with each
// other; pushes and refreshes take the write lock and exclude everything
// else. Pulled values are those of some complete push (no torn rows on a
// synchronous backend). With an asynchronous backend the lock only covers
// enqueueing the copy: the caller must Sync the device before a push may
// overwrite rows that a pending pull still reads, and before reading a
// pushed tensor's rows again — except for a history in a device's pinned
// memory (NewOn): the CUDA backend queues all its pulls and pushes in
// order on one history stream and orders them against compute with
// events, and host-side access (refresh, reset, close) waits for them.
type History struct {
	n, dim int

	mu      sync.RWMutex
	data    []float32 // n*dim, row-major
	last    []int64   // step of the last push or refresh per row
	scratch []float32 // staging of index pushes and refreshes (write lock)

	// ph is the device whose page-locked memory holds data (NewOn), or
	// nil: pushes and pulls are then queued on its history stream, and
	// host code touching data waits for them first (hostLocked).
	ph     device.PinnedHost
	stamp  []int64 // per row, the last index push that wrote it (duplicate check)
	pushes int64
}

// New returns a zero-filled history of numNodes rows of dim values, every
// row never pushed. Sizes come from the dataset and the model configuration,
// so bad ones are errors.
func New(numNodes, dim int) (*History, error) {
	if numNodes <= 0 || dim <= 0 {
		return nil, fmt.Errorf("history: new %d nodes x %d dims: sizes must be positive", numNodes, dim)
	}
	if numNodes > maxElems/dim {
		return nil, fmt.Errorf("history: new %d nodes x %d dims: more than %d values", numNodes, dim, maxElems)
	}
	h := &History{
		n:    numNodes,
		dim:  dim,
		data: make([]float32, numNodes*dim),
		last: make([]int64, numNodes),
	}
	for i := range h.last {
		h.last[i] = Never
	}
	return h, nil
}

// NewOn is New with the table in page-locked host memory of dev when dev
// can allocate it (device.PinnedHost, the CUDA backend): pulls and pushes
// then move rows asynchronously on the device's history stream, ordered
// after the work queued before them, and the GPU reads and writes the rows
// directly over the bus. Close releases that memory. On other devices it is
// New.
func NewOn(dev device.Device, numNodes, dim int) (*History, error) {
	ph, ok := device.AsPinnedHost(dev)
	if !ok {
		return New(numNodes, dim)
	}
	if numNodes <= 0 || dim <= 0 || numNodes > maxElems/dim {
		return New(numNodes, dim) // the same size errors
	}
	data, err := ph.AllocPinned(numNodes * dim)
	if err != nil {
		return nil, fmt.Errorf("history: %d nodes x %d dims in pinned memory: %w", numNodes, dim, err)
	}
	h := &History{n: numNodes, dim: dim, data: data, last: make([]int64, numNodes), ph: ph}
	for i := range h.last {
		h.last[i] = Never
	}
	return h, nil
}

// Pinned reports whether the table is in a device's page-locked memory.
func (h *History) Pinned() bool { return h.ph != nil }

// Close releases the table's pinned memory (NewOn), after waiting for
// pending pulls and pushes; the history must not be used afterwards. It
// does nothing for a history in ordinary memory.
func (h *History) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ph == nil || h.data == nil {
		return
	}
	h.ph.SyncPinned()
	h.ph.FreePinned(h.data)
	h.data = nil
}

// hostLocked waits for the pulls and pushes queued on a device before host
// code reads or writes the table (a lock must be held).
func (h *History) hostLocked() {
	if h.ph != nil {
		h.ph.SyncPinned() // the pulls and pushes only: compute runs on
	}
}

// NumNodes returns the number of rows.
func (h *History) NumNodes() int { return h.n }

// Dim returns the number of values per row.
func (h *History) Dim() int { return h.dim }

// Bytes returns the host memory the history holds: the embeddings (4 bytes
// per value) and the per-row last-push steps (8 bytes per row). The staging
// buffer of index pushes and refreshes (at most the largest pushed batch) is
// transient and not counted. This is host memory: no device allocator
// accounts it.
func (h *History) Bytes() int64 {
	return int64(h.n)*int64(h.dim)*4 + int64(h.n)*8
}

// LastPush returns the step at which node's row was last pushed or
// refreshed, or Never. It returns Never for a node id out of range.
func (h *History) LastPush(node int32) int64 {
	if node < 0 || int(node) >= h.n {
		return Never
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.last[node]
}

// Reset zeroes every row and marks it never pushed.
func (h *History) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hostLocked()
	clear(h.data)
	for i := range h.last {
		h.last[i] = Never
	}
}

// PushRange writes the first count rows of src into rows [offset,
// offset+count) and stamps them with step: GAS's fast path, where a batch's
// nodes are a contiguous range after the partition permutation. It copies
// straight from the device into the history with no staging.
func (h *History) PushRange(dev device.Device, src *tensor.Tensor, offset, count int, step int64) error {
	if err := h.checkRange("push range", offset, count); err != nil {
		return err
	}
	if step < 0 {
		return fmt.Errorf("history: push range at step %d: step must be >= 0", step)
	}
	h.mustShape("PushRange", src, count)
	if count == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dev.CopyToHost(h.data[offset*h.dim:(offset+count)*h.dim], src.RowSlice(0, count))
	for i := offset; i < offset+count; i++ {
		h.last[i] = step
	}
	return nil
}

// Push writes row i of src into row nodes[i] for every i and stamps those
// rows with step. If a node id repeats, its last row wins.
func (h *History) Push(dev device.Device, src *tensor.Tensor, nodes []int32, step int64) error {
	if err := h.checkNodes("push", nodes); err != nil {
		return err
	}
	if step < 0 {
		return fmt.Errorf("history: push at step %d: step must be >= 0", step)
	}
	k := len(nodes)
	h.mustShape("Push", src, k)
	if k == 0 {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ph != nil && h.distinctLocked(nodes) {
		// Asynchronous: the device writes the rows into the pinned table.
		h.ph.ScatterToHost(h.data, src.RowSlice(0, k), nodes)
		for _, v := range nodes {
			h.last[v] = step
		}
		return nil
	}
	buf := h.stage(k)
	dev.CopyToHost(buf, src.RowSlice(0, k))
	h.hostLocked()
	d := h.dim
	for i, v := range nodes {
		copy(h.data[int(v)*d:(int(v)+1)*d], buf[i*d:(i+1)*d])
		h.last[v] = step
	}
	return nil
}

// Pull sets row i of dst to row nodes[i] of the history for every i. The
// values are copied: dst never aliases the history, and later pushes do not
// change it. Pulled rows are constants of the batch's computation graph: the
// caller must not propagate gradients into them (GAS detaches them), and
// nothing flows back into the history.
func (h *History) Pull(dev device.Device, dst *tensor.Tensor, nodes []int32) error {
	if err := h.checkNodes("pull", nodes); err != nil {
		return err
	}
	k := len(nodes)
	h.mustShape("Pull", dst, k)
	if k == 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	dev.GatherHost(dst.RowSlice(0, k), h.data, nodes)
	return nil
}

// PullRange sets the first count rows of dst to rows [offset, offset+count)
// of the history, a contiguous copy. As with Pull, the values are copied and
// carry no gradient.
func (h *History) PullRange(dev device.Device, dst *tensor.Tensor, offset, count int) error {
	if err := h.checkRange("pull range", offset, count); err != nil {
		return err
	}
	h.mustShape("PullRange", dst, count)
	if count == 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	dev.CopyFromHost(dst.RowSlice(0, count), h.data[offset*h.dim:(offset+count)*h.dim])
	return nil
}

// ErrSum accumulates the error of histories against exact embeddings over
// the rows a refresh replaces, so that a refresh done in chunks (RefreshRange
// per batch of layer-wise inference) adds up to the figure of a whole one.
// Only rows pushed or refreshed before count: a row never written holds
// GAS's zero initialization, not a stale embedding, and would only measure
// the norm of the exact embedding.
type ErrSum struct {
	Diff2  float64 // sum of squared differences old - exact over compared rows
	Exact2 float64 // sum of squared exact values over compared rows
	Rows   int     // rows compared
	Unset  int     // rows replaced that had never been written (not compared)
}

// Add returns the sum of two partial figures.
func (e ErrSum) Add(o ErrSum) ErrSum {
	return ErrSum{Diff2: e.Diff2 + o.Diff2, Exact2: e.Exact2 + o.Exact2, Rows: e.Rows + o.Rows, Unset: e.Unset + o.Unset}
}

// RelErr returns ||H_old - H_exact||_F / ||H_exact||_F over the compared
// rows: 0 when nothing differs (including when no row was compared), +Inf
// when the exact embeddings are all zero but the histories are not.
func (e ErrSum) RelErr() float64 {
	if e.Diff2 == 0 {
		return 0
	}
	if e.Exact2 == 0 {
		return math.Inf(1)
	}
	return math.Sqrt(e.Diff2 / e.Exact2)
}

// Refresh replaces every row with the exact embeddings in exact (at least
// NumNodes rows, the first NumNodes used) computed by layer-wise inference at
// optimizer step step, stamps every row with step, and returns the relative
// error the replaced histories had (see ErrSum for which rows count) — the
// hist_err figure.
func (h *History) Refresh(dev device.Device, exact *tensor.Tensor, step int64) (float64, error) {
	s, err := h.RefreshRange(dev, exact, 0, h.n, step)
	if err != nil {
		return 0, err
	}
	return s.RelErr(), nil
}

// RefreshRange is Refresh for rows [offset, offset+count) from the first
// count rows of src; sum the returned figures with ErrSum.Add over the
// chunks of an inference pass.
func (h *History) RefreshRange(dev device.Device, src *tensor.Tensor, offset, count int, step int64) (ErrSum, error) {
	if err := h.checkRange("refresh range", offset, count); err != nil {
		return ErrSum{}, err
	}
	if step < 0 {
		return ErrSum{}, fmt.Errorf("history: refresh at step %d: step must be >= 0", step)
	}
	h.mustShape("RefreshRange", src, count)
	if count == 0 {
		return ErrSum{}, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	buf := h.stage(count)
	dev.CopyToHost(buf, src.RowSlice(0, count))
	h.hostLocked()
	return h.replaceLocked(buf, offset, count, step), nil
}

// RefreshHost is Refresh from exact embeddings already in host memory:
// exact holds NumNodes*Dim values, row-major.
func (h *History) RefreshHost(exact []float32, step int64) (float64, error) {
	if len(exact) != h.n*h.dim {
		return 0, fmt.Errorf("history: refresh from host: %d values for %d nodes x %d dims", len(exact), h.n, h.dim)
	}
	if step < 0 {
		return 0, fmt.Errorf("history: refresh at step %d: step must be >= 0", step)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hostLocked()
	return h.replaceLocked(exact, 0, h.n, step).RelErr(), nil
}

// replaceLocked compares rows [offset, offset+count) with exact, overwrites
// them and stamps them with step.
func (h *History) replaceLocked(exact []float32, offset, count int, step int64) ErrSum {
	var s ErrSum
	d := h.dim
	for r := 0; r < count; r++ {
		row := offset + r
		old := h.data[row*d : (row+1)*d]
		ex := exact[r*d : (r+1)*d]
		if h.last[row] == Never {
			s.Unset++
		} else {
			s.Rows++
			for j, x := range ex {
				diff := float64(old[j]) - float64(x)
				s.Diff2 += diff * diff
				s.Exact2 += float64(x) * float64(x)
			}
		}
		copy(old, ex)
		h.last[row] = step
	}
	return s
}

// distinctLocked reports whether nodes has no repeated id (write lock
// held): an asynchronous push needs distinct rows, a repeated id (its last
// row wins) takes the staged path.
func (h *History) distinctLocked(nodes []int32) bool {
	if h.stamp == nil {
		h.stamp = make([]int64, h.n)
	}
	h.pushes++
	for _, v := range nodes {
		if h.stamp[v] == h.pushes {
			return false
		}
		h.stamp[v] = h.pushes
	}
	return true
}

// stage returns a staging buffer of k rows (write lock held).
func (h *History) stage(k int) []float32 {
	n := k * h.dim
	if cap(h.scratch) < n {
		h.scratch = make([]float32, n)
	}
	return h.scratch[:n]
}

func (h *History) checkRange(op string, offset, count int) error {
	if offset < 0 || count < 0 || offset > h.n || count > h.n-offset {
		return fmt.Errorf("history: %s [%d, %d+%d): outside %d nodes", op, offset, offset, count, h.n)
	}
	return nil
}

func (h *History) checkNodes(op string, nodes []int32) error {
	for i, v := range nodes {
		if v < 0 || int(v) >= h.n {
			return fmt.Errorf("history: %s: node %d (index %d) outside %d nodes", op, v, i, h.n)
		}
	}
	return nil
}

// mustShape panics unless t has at least k rows and Dim columns.
func (h *History) mustShape(op string, t *tensor.Tensor, k int) {
	if t == nil || t.Cols != h.dim || t.Rows < k {
		shape := "nil"
		if t != nil {
			shape = t.Shape()
		}
		panic(fmt.Sprintf("history: %s: tensor %s for %d rows of %d dims", op, shape, k, h.dim))
	}
}
