//go:build cuda

package cuda

import (
	"reflect"
	"slices"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/rng"
	"github.com/gnnscope/gnnscope/gnn/sample"
)

// TestSamplerMatchesReference draws hops on the GPU, with the graph in
// device memory and in mapped host memory, and compares them with the
// reference draw bit for bit; then whole batches of the Neighbor sampler
// with the GPU's draws must equal those with the reference's.
func TestSamplerMatchesReference(t *testing.T) {
	d := openTest(t, Options{AsyncTransfer: true})
	g := randomCSR(3000, 12, 5)
	for _, place := range []device.Place{device.PlaceDevice, device.PlaceUVA} {
		s, err := d.newSampler(g, place)
		if err != nil {
			t.Fatal(err)
		}
		if s.Where() != place {
			t.Fatalf("sampler in %s, want %s", s.Where(), place)
		}
		for _, k := range []int{1, 5, 25} {
			nodes := rng.New(uint64(k)).Perm(g.N)[:1000+k]
			out, count := make([]int32, len(nodes)*k), make([]int32, len(nodes))
			wantOut, wantCount := make([]int32, len(nodes)*k), make([]int32, len(nodes))
			if err := s.DrawHop(nodes, k, 77, 1, out, count); err != nil {
				t.Fatal(err)
			}
			if err := sample.DrawHop(g, nodes, k, 77, 1, wantOut, wantCount); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(count, wantCount) {
				t.Fatalf("%s k=%d: counts differ from the reference", place, k)
			}
			for i, c := range count {
				if !slices.Equal(out[i*k:i*k+int(c)], wantOut[i*k:i*k+int(c)]) {
					t.Fatalf("%s k=%d: node %d's draws differ from the reference", place, k, i)
				}
			}
		}
		fan := []int{10, 5}
		gpu, _ := sample.NewNeighbor(g, fan, 3)
		gpu.SetDrawer(s)
		ref, _ := sample.NewNeighbor(g, fan, 3)
		ref.SetDrawer(sample.CPUDrawer{G: g})
		targets := rng.New(9).Perm(g.N)[:512]
		a, err := gpu.Sample(1, 2, targets)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ref.Sample(1, 2, targets)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: a GPU-drawn batch differs from the reference's", place)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
