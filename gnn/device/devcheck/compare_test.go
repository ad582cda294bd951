package devcheck

import (
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestCompareCPU checks the CPU backend against itself with another thread
// count: every operation must pass, and the exact ones bit for bit.
func TestCompareCPU(t *testing.T) {
	res, err := Compare(cpu.New(3, 0), cpu.New(1, 0), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 40 {
		t.Fatalf("only %d results", len(res))
	}
	for _, r := range res {
		if !r.OK {
			t.Errorf("%s %s: max relative error %g, %d mismatches", r.Op, r.Shape, r.MaxRelErr, r.Mismatches)
		}
	}
}

func TestBenchCPU(t *testing.T) {
	res, err := Bench(cpu.New(2, 0), 0.01, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 7 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Iters < 1 || r.Seconds <= 0 || r.Rate <= 0 {
			t.Fatalf("%+v", r)
		}
	}
}

func TestMemoryCPU(t *testing.T) {
	dev := cpu.New(1, 0)
	rep, err := Memory(dev, 64<<20, func() (int64, error) { return 123, nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.AllocatorPeak < 32<<20 || rep.AllocatorPeak > 64<<20 || rep.ProcessBefore != 123 || rep.PoolReserved != -1 {
		t.Fatalf("%+v", rep)
	}
	if st := dev.Mem().Stats(); st.Live != 0 {
		t.Fatalf("%d bytes left live", st.Live)
	}
}
