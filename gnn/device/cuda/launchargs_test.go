package cuda

import "testing"

// TestLaunchArgs checks the argument lists of gather_rows_at,
// scatter_rows and sample_neighbors against the parameters their PTX
// declares, as launch does before every launch on a GPU.
func TestLaunchArgs(t *testing.T) {
	mods, err := Modules()
	if err != nil {
		t.Fatal(err)
	}
	params := map[string][]string{}
	for _, m := range mods {
		for k, p := range m.Params {
			params[k] = p
		}
	}
	for name, a := range map[string]*kargs{
		"gather_rows_at":   gatherRowsAtArgs(1, 2, 3, 4, 5, 6),
		"scatter_rows":     scatterRowsArgs(1, 2, 3, 4, 5),
		"sample_neighbors": sampleArgs(1, 2, 3, 4, 5, 6, 7, 1<<40|9, 2),
	} {
		if err := a.check(name, params[name]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	a := sampleArgs(0, 0, 0, 0, 0, 1, 1, 0xaaaabbbbccccdddd, 3)
	if v := a.values(); v[7] != 0xccccdddd || v[8] != 0xaaaabbbb || v[9] != 3 {
		t.Fatalf("sample_neighbors key and hop words: %x", v[7:])
	}
}
