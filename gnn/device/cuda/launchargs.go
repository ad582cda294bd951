package cuda

// Argument lists of the kernels added for the feature cache and the GPU
// sampler, built here (without the cuda tag) so that a test checks them
// against the parameters the committed PTX declares.

// gatherRowsAtArgs are gather_rows_at's arguments: dst row pos[i] = src
// row idx[i] for i < n, rows of cols values.
func gatherRowsAtArgs(dst, pos, src, idx uintptr, n, cols int) *kargs {
	var a kargs
	a.ptr(dst).ptr(pos).ptr(src).ptr(idx).i32(n).i32(cols)
	return &a
}

// scatterRowsArgs are scatter_rows' arguments: dst row idx[i] = src row i
// for i < n.
func scatterRowsArgs(dst, src, idx uintptr, n, cols int) *kargs {
	var a kargs
	a.ptr(dst).ptr(src).ptr(idx).i32(n).i32(cols)
	return &a
}

// sampleArgs are sample_neighbors' arguments: n frontier nodes at nodes,
// fanout k, the random stream (key, hop), the draws to out (n × k) and
// their counts to count, over the CSR at indptr and indices.
func sampleArgs(out, count, indptr, indices, nodes uintptr, n, k int, key uint64, hop int) *kargs {
	var a kargs
	a.ptr(out).ptr(count).ptr(indptr).ptr(indices).ptr(nodes).i32(n).i32(k).
		u32(uint32(key)).u32(uint32(key >> 32)).u32(uint32(hop))
	return &a
}
