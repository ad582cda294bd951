package train

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
)

// runHuge runs cfg on a small graph and returns the error, failing when
// the run allocated anything large on the device or the Go heap.
func runHuge(t *testing.T, cfg Config) error {
	t.Helper()
	ds := plantedPartition(t, 200, 4, 1)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 10, 40, 80, 0)
	if err != nil {
		t.Fatal(err)
	}
	dev := cpu.New(1, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Run(context.Background(), cfg, ds, split, dev, Options{})
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("the refused run allocated %d bytes on the heap", grew)
	}
	if peak := dev.Mem().Stats().Peak; peak != 0 {
		t.Errorf("the refused run allocated %d bytes on the device", peak)
	}
	if err == nil {
		t.Fatal("a model far larger than memory was accepted")
	}
	return err
}

// TestHugeHiddenRefusedByBudget checks that hidden 1e8 under a memory
// budget fails before allocating, with the estimate in the error.
func TestHugeHiddenRefusedByBudget(t *testing.T) {
	cfg := Defaults(nn.KindSAGE)
	cfg.Hidden, cfg.MemBudget = 100000000, memory.Size(64<<20)
	err := runHuge(t, cfg)
	// 2·8·1e8 + 1e8 + 2·1e8·4 + 4 values, 16 bytes each.
	want := "model: sage with hidden 100000000 needs about 37.3 GiB for its parameters and Adam state (2 layers, 8 inputs), more than the memory budget of 64.0 MiB"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
}

// TestHugeHiddenRefusedByHostMemory checks the same without a budget,
// against the memory the host has left.
func TestHugeHiddenRefusedByHostMemory(t *testing.T) {
	cfg := Defaults(nn.KindGCN)
	cfg.Hidden = 1000000000
	spec := nn.Spec{Kind: nn.KindGCN, In: 8, Hidden: cfg.Hidden, Out: 4, Layers: 2}
	need, err := spec.ParamBytes()
	if err != nil {
		t.Fatal(err)
	}
	if avail := data.AvailableMemory(); avail == 0 || avail >= need {
		t.Skipf("the host's available memory (%d) does not bound a %d-byte model", avail, need)
	}
	err = runHuge(t, cfg)
	if !strings.HasPrefix(err.Error(), "model: gcn with hidden 1000000000 needs about 193.7 GiB for its parameters and Adam state (2 layers, 8 inputs), more than the ") ||
		!strings.HasSuffix(err.Error(), " of memory available") {
		t.Errorf("error %q", err)
	}
}

// TestOverflowingHiddenRefused checks that hidden 1<<40 gives a clear
// error, not a wrapped estimate: past 256 TiB the model is too large
// (hidden×hidden overflows int64 with 3 layers); APPNP, whose only hidden
// layer sits between the input and the classes, gets its estimate.
func TestOverflowingHiddenRefused(t *testing.T) {
	for _, kind := range nn.Kinds {
		cfg := Defaults(kind)
		cfg.Hidden, cfg.Layers, cfg.MemBudget = 1<<40, 3, memory.Size(1<<30)
		cfg.Fanouts = []int{5, 5, 5}
		err := runHuge(t, cfg)
		want := "model: " + string(kind) + " with hidden 1099511627776, 3 layers and 8 inputs is too large: its parameters and Adam state would exceed 256 TiB"
		if kind == nn.KindAPPNP {
			want = "model: appnp with hidden 1099511627776 needs about 208.0 TiB for its parameters and Adam state (3 layers, 8 inputs), more than the memory budget of 1.0 GiB"
		}
		if err.Error() != want {
			t.Errorf("%s: error %q\nwant %q", kind, err, want)
		}
	}
}

// TestCheckModelSize checks the limits the estimate is held against.
func TestCheckModelSize(t *testing.T) {
	spec := nn.Spec{Kind: nn.KindGAT, In: 100, Hidden: 1 << 20, Out: 7, Layers: 2, Heads: 8}
	host := func(n int64) func() int64 { return func() int64 { return n } }
	// 100·8Mi + 3·8Mi + 8Mi·7 + 3·7 values, 16 bytes each: 13.8 GiB.
	for _, tc := range []struct {
		budget, avail int64
		want          string
	}{
		{0, 0, ""},        // host memory unknown: no check
		{0, 64 << 30, ""}, // fits the host
		{32 << 30, 1, ""}, // the budget, not the host, applies
		{0, 22 << 30, ""}, // just fits
		{0, 1 << 30, "model: gat with hidden 1048576 needs about 13.8 GiB for its parameters and Adam state (2 layers, 8 heads, 100 inputs), more than the 1.0 GiB of memory available"},
		{1 << 30, 64 << 30, "model: gat with hidden 1048576 needs about 13.8 GiB for its parameters and Adam state (2 layers, 8 heads, 100 inputs), more than the memory budget of 1.0 GiB"},
	} {
		err := checkModelSize(spec, tc.budget, host(tc.avail))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("budget %d, available %d: error %q, want %q", tc.budget, tc.avail, got, tc.want)
		}
	}
}
