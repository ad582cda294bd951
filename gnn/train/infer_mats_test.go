package train

import (
	"math"
	"testing"
)

// TestHostMatsReuse: get hands back the smallest free matrix that is large
// enough, poisoned when asked, and a new one when none is; put ignores
// what get did not hand out; release frees everything.
func TestHostMatsReuse(t *testing.T) {
	h := &hostMats{poison: true}
	big, small := h.get(1<<20), h.get(40)
	if len(big) != 1<<20 || len(small) != 40 {
		t.Fatalf("lengths %d, %d", len(big), len(small))
	}
	h.put(big)
	h.put(small)
	h.put(nil)
	h.put(make([]float32, 50)) // not from get
	got := h.get(30)
	if len(got) != 30 || &got[0] != &small[0] {
		t.Fatal("30 values did not reuse the 40-value matrix")
	}
	if !math.IsNaN(float64(got[29])) {
		t.Fatal("reused matrix not poisoned")
	}
	if got := h.get(1000); &got[0] != &big[0] {
		t.Fatal("1000 values did not reuse the large matrix")
	}
	if fresh := h.get(10); fresh[0] != 0 || len(h.free) != 0 || len(h.all) != 3 {
		t.Fatalf("fresh matrix %v, %d free, %d in all", fresh[0], len(h.free), len(h.all))
	}
	h.release()
	if len(h.all) != 0 || len(h.free) != 0 {
		t.Fatal("release kept matrices")
	}
	var none *hostMats
	if m := none.get(5); len(m) != 5 {
		t.Fatal("nil hostMats")
	}
	none.put(big)
}
