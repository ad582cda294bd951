//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestSideStreamScratchUnderLoad stresses the ordering of side-stream
// uploads against compute-stream work that frees scratch memory without a
// fence: one goroutine gathers on the compute stream (each call uploads
// its indices into scratch and frees it at once), another pulls rows of
// pinned memory on the history stream (its indices in fresh scratch). A
// pull whose scratch were reused while a gather still read it would give
// wrong rows, there or here; every result is checked exactly.
func TestSideStreamScratchUnderLoad(t *testing.T) {
	d := openTest(t, Options{})
	const rows, dim, n, rounds = 4096, 64, 512, 200
	host, err := d.AllocPinned(rows * dim)
	if err != nil {
		t.Fatal(err)
	}
	defer d.FreePinned(host)
	for i := range host {
		host[i] = float32(i)
	}
	src, _ := d.Alloc(rows, dim)
	d.CopyFromHost(src, host)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	run := func(name string, pinned bool) {
		defer wg.Done()
		dst, _ := d.Alloc(n, dim)
		defer d.Free(dst)
		out := make([]float32, n*dim)
		idx := make([]int32, n)
		for r := 0; r < rounds; r++ {
			for i := range idx {
				idx[i] = int32((i*7919 + r*104729 + len(name)) % rows)
			}
			if pinned {
				d.GatherHost(dst, host, idx)
			} else {
				d.Gather(dst, src, idx)
			}
			d.CopyToHost(out, dst)
			for i, s := range idx {
				if !slices.Equal(out[i*dim:(i+1)*dim], host[int(s)*dim:(int(s)+1)*dim]) {
					errs <- fmt.Errorf("%s round %d: row %d is not source row %d", name, r, i, s)
					return
				}
			}
		}
	}
	wg.Add(2)
	go run("gather", false)
	go run("pull", true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
}
