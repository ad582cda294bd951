package sample

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/rng"
)

// shuffleTag separates the epoch shuffle's random stream from the batches'.
const shuffleTag = 0x5348_5546_464c_4521

// Batches splits nodes into consecutive batches of batchSize (the last one
// may be smaller). With shuffle the nodes are first permuted by a random
// stream derived from (seed, epoch), so every epoch has its own order and
// the same (seed, epoch) always gives the same batches. nodes is not
// modified; the batches are views of one new slice, each with its capacity
// clipped to its length.
func Batches(nodes []int32, batchSize int, seed uint64, epoch int, shuffle bool) ([][]int32, error) {
	if batchSize <= 0 {
		return nil, fmt.Errorf("batches: batch size %d must be positive", batchSize)
	}
	order := append([]int32(nil), nodes...)
	if shuffle {
		rng.New(shuffleTag, seed, uint64(epoch)).Shuffle(order)
	}
	return split(order, batchSize), nil
}

// LayerwiseChunks splits the node ids [0, n) into consecutive chunks of up
// to chunk nodes, the destinations of the FullBlock calls of one layer of
// layer-wise inference.
func LayerwiseChunks(n, chunk int) ([][]int32, error) {
	if n < 0 {
		return nil, fmt.Errorf("layer-wise chunks: negative node count %d", n)
	}
	if chunk <= 0 {
		return nil, fmt.Errorf("layer-wise chunks: chunk size %d must be positive", chunk)
	}
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	return split(ids, chunk), nil
}

// split cuts s into consecutive pieces of up to size elements.
func split(s []int32, size int) [][]int32 {
	out := make([][]int32, 0, (len(s)+size-1)/size)
	for lo := 0; lo < len(s); lo += size {
		hi := min(lo+size, len(s))
		out = append(out, s[lo:hi:hi])
	}
	return out
}
