package devcheck

// rowGathers checks the feature cache's row gathers: hits from resident
// device rows to given positions of a batch's input (GatherRows), misses
// from a host matrix (GatherHostRows), exactly as the reference places
// them.
func (c *checker) rowGathers() {
	resident := c.rand(300, 100)
	host := make([]float32, 5000*100)
	for i := range host {
		host[i] = c.r.Float32()
	}
	const n = 2048
	pos := c.r.Perm(n)
	hitPos, missPos := pos[:n/4], pos[n/4:]
	hitIdx := make([]int32, len(hitPos))
	for i := range hitIdx {
		hitIdx[i] = int32(c.r.Intn(300))
	}
	missIdx := make([]int32, len(missPos))
	for i := range missIdx {
		missIdx[i] = int32(c.r.Intn(5000))
	}
	dst := c.zeros(n, 100)
	c.dev.GatherRows(dst.d, hitPos, resident.d, hitIdx)
	c.ref.GatherRows(dst.r, hitPos, resident.r, hitIdx)
	c.dev.GatherHostRows(dst.d, missPos, host, missIdx)
	c.ref.GatherHostRows(dst.r, missPos, host, missIdx)
	c.record("gather_rows", "512 resident and 1536 host rows of 100 into 2048", dst, 1, true)
	c.free(resident, dst)
}
