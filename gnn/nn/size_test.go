package nn

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestParamCountMatchesModel checks the estimate against the parameters
// New really allocates, for every kind at small sizes.
func TestParamCountMatchesModel(t *testing.T) {
	dev := cpu.New(1, 0)
	for _, kind := range Kinds {
		for _, sz := range []struct{ in, hidden, out, layers, heads int }{
			{5, 4, 3, 1, 0}, {5, 4, 3, 2, 0}, {7, 6, 2, 3, 3}, {3, 9, 4, 4, 1}, {11, 2, 5, 2, 8},
		} {
			spec := Spec{Kind: kind, In: sz.in, Hidden: sz.hidden, Out: sz.out, Layers: sz.layers, Heads: sz.heads, Seed: 1}
			name := fmt.Sprintf("%s/%+v", kind, sz)
			m, err := New(dev, spec)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var real, realBytes int64
			for _, p := range m.Params() {
				real += int64(p.W.Len())
				for _, x := range []int64{p.W.Bytes(), p.G.Bytes(), p.M.Bytes(), p.V.Bytes()} {
					realBytes += x
				}
			}
			m.Free(dev)
			n, err := spec.ParamCount()
			if err != nil || n != real {
				t.Errorf("%s: ParamCount %d, %v; the model has %d", name, n, err, real)
			}
			b, err := spec.ParamBytes()
			if err != nil || b != realBytes {
				t.Errorf("%s: ParamBytes %d, %v; the model holds %d", name, b, err, realBytes)
			}
		}
	}
}

// TestParamCountOverflow checks that absurd widths give an error, not a
// wrapped count, and that New refuses them before allocating.
func TestParamCountOverflow(t *testing.T) {
	for _, kind := range Kinds {
		for _, spec := range []Spec{
			{Kind: kind, In: 1433, Hidden: 1 << 40, Out: 7, Layers: 3, Heads: 8},
			{Kind: kind, In: 1 << 62, Hidden: 1 << 62, Out: 1 << 62, Layers: 2},
			{Kind: kind, In: 1 << 31, Hidden: 1 << 31, Out: 1 << 31, Layers: 1 << 20, Heads: 1 << 20},
		} {
			n, err := spec.ParamBytes()
			if err == nil || !strings.Contains(err.Error(), "too large") {
				t.Errorf("%s hidden %d: ParamBytes %d, %v; want a too-large error", kind, spec.Hidden, n, err)
			}
			if _, err := New(cpu.New(1, 0), spec); err == nil {
				t.Errorf("%s hidden %d: New accepted it", kind, spec.Hidden)
			}
		}
	}
	// Large but representable: the exact count, no error.
	spec := Spec{Kind: KindGCN, In: 100, Hidden: 100000000, Out: 7, Layers: 2}
	if n, err := spec.ParamCount(); err != nil || n != 100*100000000+100000000+100000000*7+7 {
		t.Errorf("gcn hidden 1e8: ParamCount %d, %v", n, err)
	}
}
