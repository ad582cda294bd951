package history

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

func newDev() *cpu.Device { return cpu.New(1, 0) }

func mustNew(t *testing.T, n, dim int) *History {
	t.Helper()
	h, err := New(n, dim)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// devTensor returns a rows×cols device tensor holding vals.
func devTensor(t *testing.T, dev *cpu.Device, rows, cols int, vals []float32) *tensor.Tensor {
	t.Helper()
	x, err := dev.Alloc(rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	if vals != nil {
		dev.CopyFromHost(x, vals)
	}
	return x
}

func randVals(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

func pullAll(t *testing.T, dev *cpu.Device, h *History) []float32 {
	t.Helper()
	dst := devTensor(t, dev, h.NumNodes(), h.Dim(), nil)
	if err := h.PullRange(dev, dst, 0, h.NumNodes()); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(dst.Data)
}

func TestPushPullRoundTrip(t *testing.T) {
	dev := newDev()
	r := rand.New(rand.NewPCG(1, 2))
	const n, dim = 50, 7
	h := mustNew(t, n, dim)
	vals := randVals(r, 5*dim)
	src := devTensor(t, dev, 5, dim, vals)
	nodes := []int32{42, 3, 17, 0, 49}
	if err := h.Push(dev, src, nodes, 4); err != nil {
		t.Fatal(err)
	}
	// Pull in another order, with a repeat.
	order := []int{4, 0, 2, 2, 1, 3}
	pn := make([]int32, len(order))
	for i, j := range order {
		pn[i] = nodes[j]
	}
	dst := devTensor(t, dev, len(pn), dim, nil)
	if err := h.Pull(dev, dst, pn); err != nil {
		t.Fatal(err)
	}
	for i, j := range order {
		if !slices.Equal(dst.Row(i), vals[j*dim:(j+1)*dim]) {
			t.Fatalf("pulled row %d (node %d) = %v, want %v", i, pn[i], dst.Row(i), vals[j*dim:(j+1)*dim])
		}
	}
	// Untouched rows stay zero and never pushed.
	if got := h.LastPush(1); got != Never {
		t.Fatalf("LastPush(1) = %d, want Never", got)
	}
	if got := h.LastPush(17); got != 4 {
		t.Fatalf("LastPush(17) = %d, want 4", got)
	}
	all := pullAll(t, dev, h)
	for _, v := range all[1*dim : 2*dim] {
		if v != 0 {
			t.Fatalf("row 1 = %v, want zeros", all[dim:2*dim])
		}
	}
	// Range round trip, pushing the first 3 rows of a larger tensor.
	big := devTensor(t, dev, 6, dim, randVals(r, 6*dim))
	if err := h.PushRange(dev, big, 10, 3, 5); err != nil {
		t.Fatal(err)
	}
	out := devTensor(t, dev, 3, dim, nil)
	if err := h.PullRange(dev, out, 10, 3); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Data, big.Data[:3*dim]) {
		t.Fatalf("range round trip: %v, want %v", out.Data, big.Data[:3*dim])
	}
	if h.LastPush(12) != 5 || h.LastPush(13) != Never {
		t.Fatalf("LastPush after range push: 12 -> %d, 13 -> %d", h.LastPush(12), h.LastPush(13))
	}
}

func TestRangeAndIndexAgree(t *testing.T) {
	dev := newDev()
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 40, 5
	a, b := mustNew(t, n, dim), mustNew(t, n, dim)
	for step, c := range []struct{ off, count int }{{0, 10}, {10, 7}, {35, 5}, {5, 20}, {39, 1}, {12, 0}} {
		src := devTensor(t, dev, c.count+2, dim, randVals(r, (c.count+2)*dim))
		nodes := make([]int32, c.count)
		for i := range nodes {
			nodes[i] = int32(c.off + i)
		}
		if err := a.PushRange(dev, src, c.off, c.count, int64(step)); err != nil {
			t.Fatal(err)
		}
		if err := b.Push(dev, src, nodes, int64(step)); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.data, b.data) || !slices.Equal(a.last, b.last) {
			t.Fatalf("push %d [%d,+%d): range and index paths differ", step, c.off, c.count)
		}
		// Pull paths agree too.
		d1 := devTensor(t, dev, c.count, dim, nil)
		d2 := devTensor(t, dev, c.count, dim, nil)
		if err := a.PullRange(dev, d1, c.off, c.count); err != nil {
			t.Fatal(err)
		}
		if err := a.Pull(dev, d2, nodes); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d1.Data, d2.Data) {
			t.Fatalf("pull %d: range and index paths differ", step)
		}
	}
}

func TestNoAliasing(t *testing.T) {
	dev := newDev()
	h := mustNew(t, 4, 2)
	src := devTensor(t, dev, 2, 2, []float32{1, 2, 3, 4})
	if err := h.Push(dev, src, []int32{2, 0}, 0); err != nil {
		t.Fatal(err)
	}
	src.Data[0] = 99 // mutating the pushed tensor does not reach the history
	dst := devTensor(t, dev, 2, 2, nil)
	if err := h.Pull(dev, dst, []int32{2, 0}); err != nil {
		t.Fatal(err)
	}
	dst.Data[1] = -7 // nor does mutating a pulled one
	dst2 := devTensor(t, dev, 2, 2, nil)
	if err := h.PullRange(dev, dst2, 0, 2); err != nil {
		t.Fatal(err)
	}
	dst2.Data[0] = -8
	if got, want := pullAll(t, dev, h), []float32{3, 4, 0, 0, 1, 2, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("history = %v, want %v", got, want)
	}
}

func TestBytes(t *testing.T) {
	h := mustNew(t, 1000, 16)
	if got, want := h.Bytes(), int64(1000*16*4+1000*8); got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
	if int64(len(h.data))*4+int64(len(h.last))*8 != h.Bytes() {
		t.Fatal("Bytes does not match the storage")
	}
}

// TestStalenessSchedule runs a hand-made schedule of pushes and pulls; every
// figure below was computed by hand.
func TestStalenessSchedule(t *testing.T) {
	dev := newDev()
	const n, dim = 10, 2
	h := mustNew(t, n, dim)
	ones := devTensor(t, dev, n, dim, slices.Repeat([]float32{1}, n*dim))
	push := func(step int64, nodes ...int32) {
		t.Helper()
		if err := h.Push(dev, ones, nodes, step); err != nil {
			t.Fatal(err)
		}
	}
	pushRange := func(step int64, off, count int) {
		t.Helper()
		if err := h.PushRange(dev, ones, off, count, step); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, got, want Stats) {
		t.Helper()
		if got.Rows != want.Rows || got.Unset != want.Unset || got.Mean != want.Mean || got.Max != want.Max || !slices.Equal(got.Hist, want.Hist) {
			t.Fatalf("%s: got %+v, want %+v", what, got, want)
		}
	}

	pushRange(0, 0, 4) // rows 0-3 at step 0
	check("pull 1 at step 0", h.Staleness([]int32{1}, 0), Stats{Rows: 1, Mean: 0, Max: 0, Hist: []int64{1}})
	push(1, 4, 5)      // rows 4, 5 at step 1
	pushRange(2, 6, 2) // rows 6, 7 at step 2; rows 8, 9 never pushed

	// Step 3: ages 0->3, 4->2, 6->1; 8 never pushed.
	// Buckets: 1 -> b1, 2 -> b2, 3 -> b2. Mean 6/3.
	check("pull at step 3", h.Staleness([]int32{0, 4, 6, 8}, 3),
		Stats{Rows: 3, Unset: 1, Mean: 2, Max: 3, Hist: []int64{0, 1, 2}})

	push(3, 0) // row 0 at step 3

	// Step 10: ages 0->7, 1->10, 2->10, 5->9, 7->8, 9 unset twice, 0->7
	// again. Sum 51 over 6 rows. Buckets: 7 -> b3 (4-7), 8, 9, 10 -> b4
	// (8-15).
	st := h.Staleness([]int32{0, 1, 2, 5, 7, 9, 9, 0}, 10)
	check("pull at step 10", st, Stats{Rows: 6, Unset: 2, Mean: 8.5, Max: 10, Hist: []int64{0, 0, 0, 2, 4}})

	// A refresh at step 11 stamps every row, the never-pushed ones too.
	exact := devTensor(t, dev, n, dim, nil)
	if _, err := h.Refresh(dev, exact, 11); err != nil {
		t.Fatal(err)
	}
	pushRange(12, 2, 1) // row 2 at step 12
	// Step 12: 8 -> 1, 3 -> 1, 2 -> 0. Age 16 at step 27 -> b5 (16-31).
	check("pull at step 12", h.Staleness([]int32{8, 3, 2}, 12), Stats{Rows: 3, Mean: 2.0 / 3, Max: 1, Hist: []int64{1, 2}})
	check("pull at step 27", h.Staleness([]int32{9}, 27), Stats{Rows: 1, Mean: 16, Max: 16, Hist: []int64{0, 0, 0, 0, 0, 1}})

	// Pulling at a step before the last push counts as age 0; bad ids and an
	// empty pull count nothing.
	check("pull before push", h.Staleness([]int32{2}, 11), Stats{Rows: 1, Hist: []int64{1}})
	check("bad ids", h.Staleness([]int32{-1, 10}, 12), Stats{Unset: 2})
	check("empty", h.Staleness(nil, 12), Stats{})

	// The histogram agrees with profile.StaleBucket for every age.
	for age := int64(0); age < 300; age++ {
		g := mustNew(t, 1, 1)
		if err := g.PushRange(dev, devTensor(t, dev, 1, 1, nil), 0, 1, 1000); err != nil {
			t.Fatal(err)
		}
		s := g.Staleness([]int32{0}, 1000+age)
		b := profile.StaleBucket(age)
		if len(s.Hist) != b+1 || s.Hist[b] != 1 || s.Max != age {
			t.Fatalf("age %d: %+v, want bucket %d", age, s, b)
		}
	}
}

func TestRefreshRelErr(t *testing.T) {
	dev := newDev()
	h := mustNew(t, 3, 2)
	// Rows 0 and 1 pushed, row 2 never.
	if err := h.PushRange(dev, devTensor(t, dev, 2, 2, []float32{3, 0, 0, 1}), 0, 2, 5); err != nil {
		t.Fatal(err)
	}
	exactVals := []float32{3, 0, 0, 4, 100, 100}
	exact := devTensor(t, dev, 3, 2, exactVals)
	// ||H_old - H_exact|| = ||(0,0,0,-3)|| = 3 over rows 0, 1;
	// ||H_exact|| = 5 over the same rows; row 2 is excluded.
	s, err := h.RefreshRange(dev, exact, 0, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	if s.Diff2 != 9 || s.Exact2 != 25 || s.Rows != 2 || s.Unset != 1 || s.RelErr() != 0.6 {
		t.Fatalf("refresh: %+v rel %v, want diff2 9, exact2 25, rows 2, unset 1, rel 0.6", s, s.RelErr())
	}
	if got := pullAll(t, dev, h); !slices.Equal(got, exactVals) {
		t.Fatalf("after refresh: %v, want %v", got, exactVals)
	}
	for v := int32(0); v < 3; v++ {
		if h.LastPush(v) != 7 {
			t.Fatalf("LastPush(%d) = %d, want 7", v, h.LastPush(v))
		}
	}
	// Refreshing with the same embeddings again: no error.
	if rel, err := h.Refresh(dev, exact, 8); err != nil || rel != 0 {
		t.Fatalf("second refresh: %v, %v; want 0", rel, err)
	}
	// Exact all zero against non-zero histories.
	if rel, err := h.RefreshHost(make([]float32, 6), 9); err != nil || !math.IsInf(rel, 1) {
		t.Fatalf("refresh to zeros: %v, %v; want +Inf", rel, err)
	}
}

func TestRefreshChunksAddUp(t *testing.T) {
	dev := newDev()
	r := rand.New(rand.NewPCG(5, 6))
	const n, dim = 30, 4
	a, b, c := mustNew(t, n, dim), mustNew(t, n, dim), mustNew(t, n, dim)
	old := devTensor(t, dev, 20, dim, randVals(r, 20*dim))
	for _, h := range []*History{a, b, c} {
		if err := h.PushRange(dev, old, 5, 20, 1); err != nil {
			t.Fatal(err)
		}
	}
	ex := randVals(r, n*dim)
	whole, err := a.Refresh(dev, devTensor(t, dev, n, dim, ex), 2)
	if err != nil {
		t.Fatal(err)
	}
	var sum ErrSum
	for off := 0; off < n; off += 8 {
		k := min(8, n-off)
		s, err := b.RefreshRange(dev, devTensor(t, dev, k, dim, ex[off*dim:(off+k)*dim]), off, k, 2)
		if err != nil {
			t.Fatal(err)
		}
		sum = sum.Add(s)
	}
	host, err := c.RefreshHost(ex, 2)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 20 || sum.Unset != 10 {
		t.Fatalf("chunked sum %+v, want 20 rows, 10 unset", sum)
	}
	if math.Abs(sum.RelErr()-whole) > 1e-12 || host != whole || whole <= 0 {
		t.Fatalf("whole %v, chunked %v, host %v", whole, sum.RelErr(), host)
	}
	if !slices.Equal(a.data, b.data) || !slices.Equal(a.data, c.data) || !slices.Equal(a.last, b.last) {
		t.Fatal("refresh paths leave different histories")
	}
}

func TestErrors(t *testing.T) {
	dev := newDev()
	for _, c := range [][2]int{{0, 4}, {4, 0}, {-1, 4}, {math.MaxInt32, 2}} {
		if _, err := New(c[0], c[1]); err == nil {
			t.Fatalf("New(%d, %d): no error", c[0], c[1])
		}
	}
	h := mustNew(t, 4, 2)
	x := devTensor(t, dev, 4, 2, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	errs := map[string]error{
		"push node":       h.Push(dev, x, []int32{0, 4}, 0),
		"push neg node":   h.Push(dev, x, []int32{-1}, 0),
		"push step":       h.Push(dev, x, []int32{0}, -1),
		"range offset":    h.PushRange(dev, x, 3, 2, 0),
		"range neg":       h.PushRange(dev, x, -1, 1, 0),
		"range step":      h.PushRange(dev, x, 0, 1, -2),
		"pull node":       h.Pull(dev, x, []int32{7}),
		"pull range":      h.PullRange(dev, x, 2, 3),
		"refresh host":    func() error { _, err := h.RefreshHost(make([]float32, 7), 0); return err }(),
		"refresh range":   func() error { _, err := h.RefreshRange(dev, x, 1, 4, 0); return err }(),
		"refresh step":    func() error { _, err := h.Refresh(dev, x, -1); return err }(),
		"refresh h. step": func() error { _, err := h.RefreshHost(make([]float32, 8), -1); return err }(),
	}
	for name, err := range errs {
		if err == nil || !strings.HasPrefix(err.Error(), "history: ") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	// Failed calls change nothing.
	if got := pullAll(t, dev, h); !slices.Equal(got, make([]float32, 8)) {
		t.Fatalf("history after failed calls: %v", got)
	}
	for v := int32(0); v < 4; v++ {
		if h.LastPush(v) != Never {
			t.Fatalf("LastPush(%d) = %d after failed calls", v, h.LastPush(v))
		}
	}
	if h.LastPush(-1) != Never || h.LastPush(4) != Never {
		t.Fatal("LastPush out of range is not Never")
	}
}

func TestShapePanics(t *testing.T) {
	dev := newDev()
	h := mustNew(t, 4, 2)
	for name, f := range map[string]func(){
		"cols":      func() { _ = h.Push(dev, devTensor(t, dev, 2, 3, nil), []int32{0, 1}, 0) },
		"few rows":  func() { _ = h.Pull(dev, devTensor(t, dev, 1, 2, nil), []int32{0, 1}) },
		"range":     func() { _ = h.PushRange(dev, devTensor(t, dev, 1, 2, nil), 0, 2, 0) },
		"nil":       func() { _ = h.PullRange(dev, nil, 0, 1) },
		"refresh n": func() { _, _ = h.Refresh(dev, devTensor(t, dev, 3, 2, nil), 0) },
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "history: ") {
					t.Errorf("%s: recovered %v, want a history panic", name, r)
				}
			}()
			f()
		}()
	}
}

func TestReset(t *testing.T) {
	dev := newDev()
	h := mustNew(t, 2, 1)
	if err := h.PushRange(dev, devTensor(t, dev, 2, 1, []float32{1, 2}), 0, 2, 3); err != nil {
		t.Fatal(err)
	}
	h.Reset()
	if got := pullAll(t, dev, h); !slices.Equal(got, []float32{0, 0}) || h.LastPush(0) != Never {
		t.Fatalf("after Reset: %v, last %d", got, h.LastPush(0))
	}
}

type sliceSink struct {
	mu  sync.Mutex
	evs []profile.Event
}

func (s *sliceSink) WriteEvents(evs []profile.Event) error {
	s.mu.Lock()
	s.evs = append(s.evs, evs...)
	s.mu.Unlock()
	return nil
}

func (s *sliceSink) Flush() error { return nil }

func TestEmit(t *testing.T) {
	// Nil recorders record nothing and do not panic.
	EmitStale(nil, 0, 0, 0, Stats{})
	EmitHistErr(nil, 0, 0, 1)

	sink := &sliceSink{}
	rec := profile.NewRecorder(sink, profile.RecorderOptions{})
	EmitStale(rec, 2, 5, 1, Stats{Rows: 3, Mean: 2, Max: 3, Hist: []int64{0, 1, 2}})
	EmitHistErr(rec, 2, 1, 0.25)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.evs) != 2 {
		t.Fatalf("%d events, want 2", len(sink.evs))
	}
	s, e := sink.evs[0], sink.evs[1]
	if s.T != profile.TypeStale || s.Epoch != 2 || s.Batch != 5 || s.Layer != 1 || s.Mean != 2 || s.Max != 3 || !slices.Equal(s.Hist, []int64{0, 1, 2}) {
		t.Fatalf("stale event %+v", s)
	}
	if e.T != profile.TypeHistErr || e.Epoch != 2 || e.Layer != 1 || e.RelErr != 0.25 {
		t.Fatalf("hist_err event %+v", e)
	}
}

// TestConcurrentPulls runs pulls and staleness queries from several
// goroutines while pushes run (meaningful under -race).
func TestConcurrentPulls(t *testing.T) {
	dev := newDev()
	const n, dim = 64, 8
	h := mustNew(t, n, dim)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst, _ := dev.Alloc(8, dim)
			nodes := []int32{int32(g), 10, 20, 30, 40, 50, 60, 63}
			for range 200 {
				if err := h.Pull(dev, dst, nodes); err != nil {
					t.Error(err)
					return
				}
				// Every row is pushed whole: all its values are equal.
				for i := range 8 {
					row := dst.Row(i)
					for _, v := range row {
						if v != row[0] {
							t.Errorf("torn row %v", row)
							return
						}
					}
				}
				h.Staleness(nodes, 1000)
			}
		}()
	}
	src, _ := dev.Alloc(n, dim)
	for step := range 200 {
		for i := range src.Data {
			src.Data[i] = float32(step)
		}
		if err := h.PushRange(dev, src, 0, n, int64(step)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}
