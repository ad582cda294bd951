package cuda

import "math"

// Launch geometry. Every kernel either loops grid-stride over its work or
// processes a fixed partition of it (gemm tiles, 256-row sum chunks,
// four-element Philox blocks of dropout masks), so results never depend on the grid size, and hence not
// on the GPU's number of multiprocessors; the grid only decides how much
// runs at once.

// blockThreads is the block size of every kernel (the gemm kernel's
// shared-memory tiling assumes it).
const blockThreads = 256

// warpsPerBlock is the number of warps of a block.
const warpsPerBlock = blockThreads / 32

// gemm tiling (gemm.cu): 64×64 tiles of C, 16-deep slices of K.
const (
	gemmBM = 64
	gemmBN = 64
	gemmBK = 16
)

// K splitting: a product with few tiles of C and a long K (weight gradients
// over a whole batch, e.g. 256×64 from 100,000 rows) sums fixed chunks of K
// in parallel and adds them in order. The plan depends only on the shape.
const (
	splitMinK      = 4096 // split only when K is at least this long
	splitMaxTiles  = 64   // and C has at most this many tiles
	splitChunk     = 2048 // K per split (a multiple of gemmBK)
	splitMaxSplits = 64
)

// sumChunkRows mirrors the kernels' fixed chunks of column sums (and the
// CPU backend's, whose results they reproduce).
const sumChunkRows = 256

// philoxWords is the number of mask elements one dropout_mask thread draws
// per step: the four words of one Philox4x32-10 block.
const philoxWords = 4

// ceilDiv returns ceil(a/b) for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// gridBlocks returns the blocks of a grid-stride launch over n items of
// perBlock items per block, capped at maxBlocks (at least 1).
func gridBlocks(n, perBlock int64, maxBlocks int) int {
	b := ceilDiv(n, perBlock)
	if b > int64(maxBlocks) {
		b = int64(maxBlocks)
	}
	if b < 1 {
		b = 1
	}
	return int(b)
}

// elemGrid is the grid of an elementwise kernel over n elements.
func elemGrid(n int64, maxBlocks int) int { return gridBlocks(n, blockThreads, maxBlocks) }

// warpGrid is the grid of a kernel that gives each of rows rows one warp.
func warpGrid(rows int64, maxBlocks int) int { return gridBlocks(rows, warpsPerBlock, maxBlocks) }

// gemmPlan is how Gemm launches one product.
type gemmPlan struct {
	gridX, gridY int // tiles along N and M
	splits       int // z-slices of K (1: no split, C written directly)
	kchunk       int // K per slice when split
}

// workspace returns the floats of the split partial products.
func (p gemmPlan) workspace(m, n int) int64 {
	if p.splits <= 1 {
		return 0
	}
	return int64(p.splits) * int64(m) * int64(n)
}

// planGemm chooses the tiling of an m×n×k product.
func planGemm(m, n, k int) gemmPlan {
	p := gemmPlan{gridX: int(ceilDiv(int64(n), gemmBN)), gridY: int(ceilDiv(int64(m), gemmBM)), splits: 1}
	if k >= splitMinK && p.gridX*p.gridY <= splitMaxTiles {
		chunk := splitChunk
		s := int(ceilDiv(int64(k), int64(chunk)))
		if s > splitMaxSplits {
			// Longer chunks, still a multiple of the K tile.
			chunk = int(ceilDiv(ceilDiv(int64(k), splitMaxSplits), gemmBK) * gemmBK)
			s = int(ceilDiv(int64(k), int64(chunk)))
		}
		if s > 1 {
			p.splits, p.kchunk = s, chunk
		}
	}
	return p
}

// maxGridY is the largest y (and z) dimension of a grid.
const maxGridY = 65535

// gemmStripRows is the most rows of C one gemm launch covers (gridDim.y
// tiles); taller products are launched in strips.
const gemmStripRows = maxGridY * gemmBM

// sumRowsGrid is the grid of sum_rows_partial: x over columns, y strides
// over the 256-row chunks.
func sumRowsGrid(rows, cols int) (gx, gy int) {
	return gridBlocks(int64(cols), blockThreads, 1<<16), gridBlocks(int64(rows), sumChunkRows, maxGridY)
}

// dropoutGrid is the grid of dropout_mask over a mask of n elements: one
// thread per Philox block of four elements, grid-stride.
func dropoutGrid(n int64, maxBlocks int) int { return elemGrid(ceilDiv(n, philoxWords), maxBlocks) }

// dropoutThresh returns the 24-bit threshold below which a uniform draw
// drops an element: p scaled to 2^24, rounded up so that u < thresh exactly
// when u/2^24 < p (as the CPU backend compares).
func dropoutThresh(p float32) uint32 {
	t := uint32(float64(p) * (1 << 24))
	if float32(t)/(1<<24) < p {
		t++
	}
	return t
}

// index32 mirrors index32 of kernels/common.cuh: whether add_bias, gather,
// scatter_rows and gemm_reduce run a grid-stride loop over n elements with
// grid blocks on 32-bit indices (n plus the stride below 2^32).
func index32(n int64, grid int) bool { return n+int64(grid)*blockThreads <= math.MaxUint32 }
