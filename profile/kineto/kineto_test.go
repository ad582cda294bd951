package kineto

import (
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// convertFile scans and converts a trace file on its own clock (time 0:
// its earliest event), the stages mapped.
func convertFile(t *testing.T, path string) (*Index, []profile.Event) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Scan(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var evs []profile.Event
	_, err = Convert(r, ix, Options{Origin: ix.Abs(ix.MinTs), Stages: true, Epoch: 1}, func(e *profile.Event) error {
		evs = append(evs, *e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix, evs
}
