//go:build cuda

package cuda

import "testing"

// TestGatherRowsAt fills a batch's input as the feature cache does: hits
// from resident rows on the device (GatherRows), misses from the host
// matrix, staged (ordinary memory) or pulled over the bus (pinned), with
// and without asynchronous transfers, rows narrower and wider than a
// staging buffer; every result must equal the CPU backend's bit for bit.
func TestGatherRowsAt(t *testing.T) {
	for _, async := range []bool{false, true} {
		for _, cols := range []int{33, maxStage/4 + 5} {
			e := newEnv(t, Options{AsyncTransfer: async})
			rows := 40
			if cols > 1000 {
				rows = 3 // rows of 16 MiB
			}
			resident := e.rand(rows, cols)
			host := make([]float32, 3*rows*cols)
			for i := range host {
				host[i] = e.r.Float32()
			}
			pinned, err := e.gpu.AllocPinned(len(host))
			if err != nil {
				t.Fatal(err)
			}
			copy(pinned, host)
			n := 2 * rows
			perm := e.r.Perm(n)
			hitPos, missPos := perm[:n/2], perm[n/2:]
			hitIdx := make([]int32, len(hitPos))
			missIdx := make([]int32, len(missPos))
			for i := range hitIdx {
				hitIdx[i] = int32(e.r.Intn(rows))
				missIdx[i] = int32(e.r.Intn(3 * rows))
			}
			for _, src := range []struct {
				name string
				host []float32
			}{{"staged", host}, {"pinned", pinned}} {
				dst := e.zeros(n, cols)
				e.cpu.GatherRows(dst.c, hitPos, resident.c, hitIdx)
				e.cpu.GatherHostRows(dst.c, missPos, host, missIdx)
				e.gpu.GatherRows(dst.g, hitPos, resident.g, hitIdx)
				e.gpu.GatherHostRows(dst.g, missPos, src.host, missIdx)
				e.same("rows at positions, misses "+src.name, dst)
				// Misses first, then hits: the order of the streams must not matter.
				dst2 := e.zeros(n, cols)
				e.gpu.GatherHostRows(dst2.g, missPos, src.host, missIdx)
				e.gpu.GatherRows(dst2.g, hitPos, resident.g, hitIdx)
				e.cpu.Copy(dst2.c, dst.c)
				e.same("rows at positions, misses first, "+src.name, dst2)
			}
			e.gpu.FreePinned(pinned)
		}
	}
}
