package featcache

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/graph"
)

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Budget
		rows int // of 1000 rows of 25 floats (100 bytes each)
	}{
		{"", Budget{}, 0}, {"0", Budget{}, 0}, {"20%", Budget{Share: 0.2}, 200},
		{"100%", Budget{Share: 1}, 1000}, {"12.5 %", Budget{Share: 0.125}, 125},
		{"1000", Budget{Bytes: 1000}, 10}, {"1KiB", Budget{Bytes: 1024}, 10},
		{"1G", Budget{Bytes: 1 << 30}, 1000},
	} {
		got, err := ParseBudget(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseBudget(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		if r := got.Rows(1000, 25); r != c.rows {
			t.Errorf("%q: %d rows, want %d", c.in, r, c.rows)
		}
		if back, err := ParseBudget(got.String()); err != nil || back.Rows(1000, 25) != c.rows {
			t.Errorf("%q: String %q reads back as %+v, %v", c.in, got.String(), back, err)
		}
	}
	for _, bad := range []string{"x", "-1", "101%", "-5%", "%", "NaN%", "1Q"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
	if CheckPolicy("lru") == nil || CheckPolicy("") != nil || CheckPolicy(PolicyFrequency) != nil {
		t.Error("CheckPolicy")
	}
}

func TestRankings(t *testing.T) {
	// node 2 has degree 3, nodes 0 and 3 degree 2, node 1 degree 1
	g, err := graph.FromEdges(4, []int32{0, 0, 1, 2, 2, 2, 3, 3}, []int32{2, 3, 2, 0, 1, 3, 0, 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := ByDegree(g); !slices.Equal(got, []int32{2, 0, 3, 1}) {
		t.Errorf("ByDegree = %v", got)
	}
	counts := make([]uint32, 5)
	Count(counts, []int32{4, 1, 4, 3, 1, 4})
	if got := ByCount(counts); !slices.Equal(got, []int32{4, 1, 3, 0, 2}) {
		t.Errorf("ByCount = %v", got)
	}
	if c := Covered(ByCount(counts), 2, counts); c != 5.0/6 {
		t.Errorf("Covered = %v, want 5/6", c)
	}
	if c := Covered(nil, 3, make([]uint32, 3)); c != 0 {
		t.Errorf("Covered without accesses = %v", c)
	}
}

// Hits from the cache and misses from the host rebuild exactly the rows a
// plain gather gives.
func TestCacheSplitGather(t *testing.T) {
	dev := cpu.New(2, 0)
	const n, f = 50, 7
	x := make([]float32, n*f)
	for i := range x {
		x[i] = float32(i)*0.37 - 3
	}
	c, err := New(dev, x, f, []int32{5, 9, 1, 40, 33})
	if err != nil {
		t.Fatal(err)
	}
	if c.Bytes() != 5*f*4 || dev.Mem().Stats().Live < c.Bytes() {
		t.Fatalf("cache bytes %d, live %d", c.Bytes(), dev.Mem().Stats().Live)
	}
	nodes := []int32{9, 2, 40, 41, 5, 0, 49, 1}
	s := c.Split(nodes, Split{}.Sized(len(nodes)))
	if !slices.Equal(s.HitPos, []int32{0, 2, 4, 7}) || !slices.Equal(s.HitSlot, []int32{1, 3, 0, 2}) ||
		!slices.Equal(s.MissPos, []int32{1, 3, 5, 6}) || !slices.Equal(s.MissNode, []int32{2, 41, 0, 49}) {
		t.Fatalf("split %+v", s)
	}
	// A split sized for the batch is reused in place for the next one.
	if again := c.Split(nodes, s.Sized(len(nodes))); &again.MissNode[0] != &s.MissNode[0] || !slices.Equal(again.HitSlot, s.HitSlot) {
		t.Errorf("split again %+v, not in place of %+v", again, s)
	}
	got, _ := dev.Alloc(len(nodes), f)
	want, _ := dev.Alloc(len(nodes), f)
	dev.GatherRows(got, s.HitPos, c.Data, s.HitSlot)
	dev.GatherHostRows(got, s.MissPos, x, s.MissNode)
	dev.GatherHost(want, x, nodes)
	if !slices.Equal(got.Data[:got.Len()], want.Data[:want.Len()]) {
		t.Error("hits and misses differ from a plain gather")
	}
	c.Free(dev)
	if _, err := New(dev, x, f, []int32{3, 3}); err == nil {
		t.Error("a node listed twice was accepted")
	}
	if _, err := New(dev, x, f, []int32{n}); err == nil {
		t.Error("a node out of range was accepted")
	}
}

// The tally sums batches per epoch from any goroutine, and the report
// adds the epochs up.
func TestTallyReport(t *testing.T) {
	var tally Tally
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				tally.Add(1+(g+i)%2, 3, 1, 40)
			}
		}()
	}
	wg.Wait()
	if o := tally.Epoch(1); o.Hits != 600 || o.Misses != 200 || o.BytesH2D != 8000 || o.HitRate != 0.75 {
		t.Fatalf("epoch 1: %+v", o)
	}
	if o := tally.Epoch(3); *o != (Outcome{}) {
		t.Errorf("an epoch without batches: %+v", o)
	}
	dev := cpu.New(1, 0)
	c, err := New(dev, make([]float32, 40), 4, []int32{2, 7})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dev)
	r := NewReport(c, PolicyDegree, 10)
	if r.Rows != 2 || r.Share != 0.2 || r.Bytes != 32 {
		t.Errorf("report %+v", r)
	}
	tally.Fill(r, 2)
	if len(r.Epochs) != 2 || r.Hits != 1200 || r.Misses != 400 || r.BytesH2D != 16000 || r.HitRate != 0.75 || r.Epochs[1].Epoch != 2 {
		t.Errorf("filled report %+v", r)
	}
	if n := r.Note(0.5); !strings.Contains(n, "degree policy, 2 rows (20.0 %") || !strings.Contains(n, "50.0 %") {
		t.Errorf("note %q", n)
	}
	var none *Tally
	none.Add(1, 1, 1, 1)
	if none.Epoch(1) != nil {
		t.Error("a nil tally counted")
	}
}
