package cpu

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// Cache blocking of the packed gemm (Goto/BLIS loop order): a kc×nc panel
// of op(B) is packed once and reused by every mc×kc block of op(A), which
// is packed to stay in L2 while the micro-kernel streams kc×nr slivers of B
// from L1.
const (
	gemmKC = 256
	gemmMC = 96
	gemmNC = 1024
)

// microKernel computes C[0:mr, 0:nr] += Apanel·Bpanel (or, with set,
// C[0:mr, 0:nr] = Apanel·Bpanel without reading C) where a holds kc
// columns of mr packed values, b holds kc rows of nr packed values and C's
// rows are ldc apart. The sum over kc starts from zero and is added to C
// at the end, so the result does not depend on how C was partitioned.
type microKernel struct {
	name   string
	mr, nr int
	fn     func(kc int, a, b, c []float32, ldc int, set bool)
	// direct, where not nil, is fn reading an mr×kc block of A in place,
	// its rows lda apart (see gemmBlockDirect); pf, where not nil, is the
	// next such block, which a kernel with directPrefetches loads into L2
	// as it runs.
	direct           func(kc int, a []float32, lda int, b, c []float32, ldc int, set bool, pf []float32)
	directPrefetches bool
}

// clearTile zeroes rows×cols values of C, whose rows are ldc apart.
func clearTile(c []float32, ldc, rows, cols int) {
	for r := range rows {
		clear(c[r*ldc : r*ldc+cols])
	}
}

// goKernel is the portable register-tiled micro-kernel.
var goKernel = microKernel{name: "go2x4", mr: 2, nr: 4, fn: kernelGo2x4}

// availableKernels lists the micro-kernels this CPU runs, fastest first;
// assembly kernels are prepended at init where the CPU supports them.
var availableKernels = []microKernel{goKernel}

// activeKernel is the micro-kernel Gemm uses, chosen on first use.
var activeKernel microKernel

var chooseKernel sync.Once

// kernel returns the micro-kernel Gemm uses: the fastest available, or the
// first whose name starts with $GNNSCOPE_GEMM_KERNEL (e.g. "go", "avx2").
func kernel() microKernel {
	chooseKernel.Do(func() {
		activeKernel = availableKernels[0]
		if want := os.Getenv("GNNSCOPE_GEMM_KERNEL"); want != "" {
			for _, k := range availableKernels {
				if strings.HasPrefix(k.name, want) {
					activeKernel = k
					break
				}
			}
		}
	})
	return activeKernel
}

// GemmKernel names the micro-kernel Gemm uses on this machine.
func GemmKernel() string { return kernel().name }

// GemmKernels names every micro-kernel this machine can run, fastest first
// (GNNSCOPE_GEMM_KERNEL selects one by name prefix).
func GemmKernels() []string {
	names := make([]string, len(availableKernels))
	for i, k := range availableKernels {
		names[i] = k.name
	}
	return names
}

// gemmOp describes C = alpha*op(A)*op(B) + C over row-major storage.
type gemmOp struct {
	transA, transB bool
	m, n, k        int
	alpha          float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	c              []float32
	ldc            int
	// overwrite makes the first pass over k store into C instead of adding
	// to it: C's old values (NaNs included) are neither read nor kept.
	overwrite bool
}

// Gemm computes C = alpha*op(A)*op(B) + beta*C, where op transposes when the
// flag is set. With beta == 0 the old C is ignored (NaNs included); with
// alpha == 0 or an empty inner dimension only the beta scaling happens.
// C must not share storage with A or B.
// Work is split over output tiles (or fixed chunks of a long inner
// dimension, see kSplitChunks), so every element of C is summed in the same
// order whatever the thread count.
func (d *Device) Gemm(transA, transB bool, alpha float32, a, b *tensor.Tensor, beta float32, c *tensor.Tensor) {
	m, n, k := device.GemmDims(device.KindCPU, transA, transB, a, b, c)
	op := gemmOp{
		transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha,
		a: a.Data[:a.Len()], lda: a.Cols,
		b: b.Data[:b.Len()], ldb: b.Cols,
		c: c.Data[:c.Len()], ldc: c.Cols,
	}
	d.gemm(&op, beta, kernel())
}

func (d *Device) gemm(o *gemmOp, beta float32, kern microKernel) {
	op := *o
	m, n, k := op.m, op.n, op.k
	cd := op.c
	empty := m == 0 || n == 0 || k == 0 || op.alpha == 0
	nch, chunk := 1, k
	if !empty {
		nch, chunk = kSplitChunks(m, n, k)
	}
	switch {
	case beta == 0 && !empty && nch == 1:
		op.overwrite = true // the product's first pass stores into C
	case beta == 0:
		d.zero(cd)
	case beta != 1:
		d.each(len(cd), func(lo, hi int) { scaleVec(beta, cd[lo:hi]) })
	}
	if empty {
		return
	}
	if nch > 1 {
		d.gemmKSplit(&op, nch, chunk, kern)
		return
	}
	mt, nt := gemmGrid(m, n, k, d.threads, kern)
	rowsPer := roundUp((m+mt-1)/mt, kern.mr)
	colsPer := roundUp((n+nt-1)/nt, kern.nr)
	mt = (m + rowsPer - 1) / rowsPer
	nt = (n + colsPer - 1) / colsPer
	var shared []float32 // op(B) packed once for every task
	if nt == 1 && mt > 1 && useDirect(&op, kern, n) {
		wsB := getWorkspace(kern)
		defer putWorkspace(wsB)
		shared = wsB.bp
		d.packBShared(&op, shared, n, kern.nr)
	}
	task := func(t int) {
		i0, j0 := (t/nt)*rowsPer, (t%nt)*colsPer
		i1, j1 := min(i0+rowsPer, m), min(j0+colsPer, n)
		ws := getWorkspace(kern)
		switch {
		case shared != nil:
			gemmBlockDirect(&op, i0, i1, j0, j1, kern, ws, shared)
		case useDirect(&op, kern, j1-j0):
			packBAll(&op, ws.bp, j0, j1-j0, kern.nr)
			gemmBlockDirect(&op, i0, i1, j0, j1, kern, ws, ws.bp)
		default:
			gemmBlock(&op, i0, i1, j0, j1, kern, ws)
		}
		putWorkspace(ws)
	}
	d.parallelChunks(mt*nt, task)
}

// A product with a small output and a long inner dimension (the weight
// gradient Xᵀ·dY of a layer: 256×256 output, 100k inner) has too few output
// tiles to share between threads without each one streaming all of A and B
// from memory. It is split instead along k into chunks of about
// kSplitChunk; the chunks' partial products are computed in parallel and
// added up in chunk order. The chunking depends on the shape only, so the
// result is the same for any thread count.
const (
	kSplitChunk   = 8192
	kSplitMaxTemp = 32 << 20 // bytes of partial products at most
)

// kSplitChunks returns the number of k chunks for a product and their
// length (the last may be shorter), or 1 and k when it is not split. The
// count is a multiple of four, so that one, two or four threads share the
// chunks evenly (13 chunks on two threads would leave one thread a
// seventh of the work more than the other).
func kSplitChunks(m, n, k int) (nch, chunk int) {
	nch = (k + kSplitChunk - 1) / kSplitChunk
	if nch < 4 || m*n > 512*512 {
		return 1, k
	}
	nch = roundUp(nch, 4)
	chunk = (k + nch - 1) / nch // k is far above nch², so none is empty
	if int64(nch)*int64(m*n)*4 > kSplitMaxTemp {
		return 1, k
	}
	return nch, chunk
}

var kSplitTemp = sync.Pool{New: func() any { return new([]float32) }}

func (d *Device) gemmKSplit(op *gemmOp, nch, chunk int, kern microKernel) {
	m, n := op.m, op.n
	bufp := kSplitTemp.Get().(*[]float32)
	defer kSplitTemp.Put(bufp)
	if cap(*bufp) < nch*m*n {
		*bufp = make([]float32, nch*m*n)
	}
	parts := (*bufp)[:nch*m*n]
	d.parallelChunks(nch, func(c int) {
		k0, k1 := c*chunk, min((c+1)*chunk, op.k)
		sub := *op
		sub.k = k1 - k0
		if op.transA { // op(A)(i, p) = a[p*lda + i]
			sub.a = op.a[k0*op.lda:]
		} else {
			sub.a = op.a[k0:]
		}
		if op.transB { // op(B)(p, j) = b[j*ldb + p]
			sub.b = op.b[k0:]
		} else {
			sub.b = op.b[k0*op.ldb:]
		}
		sub.c, sub.ldc = parts[c*m*n:(c+1)*m*n], n
		sub.overwrite = true
		ws := getWorkspace(kern)
		gemmBlock(&sub, 0, m, 0, n, kern, ws)
		putWorkspace(ws)
	})
	// C += ((part0 + part1) + part2) + ..., element by element.
	d.parallelFor(m, grainRows(nch*n), func(lo, hi int) {
		tmp := make([]float32, n)
		for i := lo; i < hi; i++ {
			row := op.c[i*op.ldc : i*op.ldc+n]
			copy(tmp, parts[i*n:(i+1)*n])
			for c := 1; c < nch; c++ {
				addVec(parts[c*m*n+i*n:c*m*n+(i+1)*n], tmp)
			}
			addVec(tmp, row)
		}
	})
}

// gemmGrid chooses an mt×nt grid of output tiles: about four per thread for
// load balancing, none under a few MFLOP, shaped to minimize packing (each
// tile packs k×(its rows + its columns)).
func gemmGrid(m, n, k, threads int, kern microKernel) (mt, nt int) {
	flops := 2 * float64(m) * float64(n) * float64(k)
	tasks := 4 * threads
	if threads <= 1 {
		tasks = 1
	}
	if lim := int(flops / gemmTaskFlops); lim < tasks {
		tasks = max(lim, 1)
	}
	maxM := (m + kern.mr - 1) / kern.mr
	maxN := (n + kern.nr - 1) / kern.nr
	mt = int(math.Round(math.Sqrt(float64(tasks) * float64(m) / float64(n))))
	mt = min(max(mt, 1), tasks, maxM)
	nt = min(max(tasks/mt, 1), maxN)
	return mt, nt
}

// gemmTaskFlops is the least work worth a task of its own (a variable so
// tests can split small products).
var gemmTaskFlops float64 = 4 << 20

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// workspace holds one worker's packing buffers.
type workspace struct {
	ap, bp, tmp []float32
	pool        *sync.Pool
}

var workspaces = map[string]*sync.Pool{}
var workspacesMu sync.Mutex

func getWorkspace(kern microKernel) *workspace {
	workspacesMu.Lock()
	p := workspaces[kern.name]
	if p == nil {
		mr, nr := kern.mr, kern.nr
		p = &sync.Pool{New: func() any {
			return &workspace{
				ap:  make([]float32, roundUp(gemmMC, mr)*gemmKC),
				bp:  make([]float32, roundUp(gemmNC, nr)*gemmKC),
				tmp: make([]float32, mr*nr),
			}
		}}
		workspaces[kern.name] = p
	}
	workspacesMu.Unlock()
	ws := p.Get().(*workspace)
	ws.pool = p
	return ws
}

func putWorkspace(ws *workspace) { ws.pool.Put(ws) }

// gemmBlock computes rows [i0, i1) × columns [j0, j1) of C += alpha*op(A)*op(B)
// on the calling goroutine.
func gemmBlock(op *gemmOp, i0, i1, j0, j1 int, kern microKernel, ws *workspace) {
	mr, nr := kern.mr, kern.nr
	for jc := j0; jc < j1; jc += gemmNC {
		nc := min(gemmNC, j1-jc)
		for pc := 0; pc < op.k; pc += gemmKC {
			kc := min(gemmKC, op.k-pc)
			set := op.overwrite && pc == 0
			packB(op, ws.bp, pc, kc, jc, nc, nr)
			nextK := min(gemmKC, op.k-pc-kc) // depth of the next panel of B
			nic := (i1 - i0 + gemmMC - 1) / gemmMC
			for ic := i0; ic < i1; ic += gemmMC {
				mc := min(gemmMC, i1-ic)
				if nextK > 0 && hasPrefetch {
					// Likewise a share of the next panel of B.
					prefetchB(op, pc+kc, nextK, jc, nc, (ic-i0)/gemmMC, nic)
				}
				packA(op, ws.ap, ic, mc, pc, kc, mr)
				next := min(gemmMC, i1-ic-mc) // rows of the next block of A
				nq := (nc + nr - 1) / nr
				for jr := 0; jr < nc; jr += nr {
					if next > 0 && hasPrefetch {
						// Start loading a share of the next A block from memory
						// while this one computes; packA then finds it in cache.
						q := jr / nr
						prefetchA(op, ic+mc, next, pc, kc, q, nq)
					}
					nrr := min(nr, nc-jr)
					bpan := ws.bp[jr*kc : (jr+nr)*kc]
					for ir := 0; ir < mc; ir += mr {
						mrr := min(mr, mc-ir)
						apan := ws.ap[ir*kc : (ir+mr)*kc]
						off := (ic+ir)*op.ldc + jc + jr
						if mrr == mr && nrr == nr {
							kern.fn(kc, apan, bpan, op.c[off:], op.ldc, set)
							continue
						}
						kern.fn(kc, apan, bpan, ws.tmp, nr, true)
						storeTile(op.c[off:], op.ldc, ws.tmp, nr, mrr, nrr, set)
					}
				}
			}
		}
	}
}

// prefetchA prefetches share q of nq of op(A)[i:i+rows, pc:pc+kc].
func prefetchA(op *gemmOp, i, rows, pc, kc, q, nq int) {
	if op.transA { // storage rows are p
		for p := pc + q*kc/nq; p < pc+(q+1)*kc/nq; p++ {
			prefetchLinesL2(&op.a[p*op.lda+i], rows)
		}
		return
	}
	for r := i + q*rows/nq; r < i+(q+1)*rows/nq; r++ {
		prefetchLinesL2(&op.a[r*op.lda+pc], kc)
	}
}

// prefetchB prefetches share q of nq of op(B)[pc:pc+kc, j:j+cols].
func prefetchB(op *gemmOp, pc, kc, j, cols, q, nq int) {
	if op.transB { // storage rows are j
		for c := j + q*cols/nq; c < j+(q+1)*cols/nq; c++ {
			prefetchLinesL2(&op.b[c*op.ldb+pc], kc)
		}
		return
	}
	for p := pc + q*kc/nq; p < pc+(q+1)*kc/nq; p++ {
		prefetchLinesL2(&op.b[p*op.ldb+j], cols)
	}
}

// packA packs alpha*op(A)[ic:ic+mc, pc:pc+kc] into panels of mr rows: panel
// q holds, for each p, the mr values of column p (rows past mc are zero).
func packA(op *gemmOp, dst []float32, ic, mc, pc, kc, mr int) {
	alpha := op.alpha
	for ir := 0; ir < mc; ir += mr {
		pan := dst[ir*kc : (ir+mr)*kc]
		rows := min(mr, mc-ir)
		if rows < mr {
			clear(pan)
		}
		if op.transA {
			// op(A)(i, p) = a[p*lda + i]: rows of a are columns of op(A),
			// so each p copies a contiguous run of rows values.
			base := pc*op.lda + ic + ir
			switch {
			case alpha == 1 && rows == mr && packRows(pan, op.a[base:], op.lda, kc, mr):
				// One or two vector moves per p (a copy here calls memmove).
			case alpha == 1 && rows == 6 && mr == 6:
				// Element by element: an array copy here calls memmove.
				for p := 0; p < kc; p++ {
					s := op.a[base+p*op.lda : base+p*op.lda+6 : base+p*op.lda+6]
					o := pan[p*6 : p*6+6 : p*6+6]
					o[0], o[1], o[2], o[3], o[4], o[5] = s[0], s[1], s[2], s[3], s[4], s[5]
				}
			default:
				for p := 0; p < kc; p++ {
					src := op.a[base+p*op.lda : base+p*op.lda+rows]
					out := pan[p*mr : p*mr+rows]
					for r, v := range src {
						out[r] = alpha * v
					}
				}
			}
			continue
		}
		r := 0
		// Four rows at a time: four contiguous stores per p.
		for ; r+4 <= rows; r += 4 {
			i := ic + ir + r
			s0 := op.a[i*op.lda+pc : i*op.lda+pc+kc]
			s1 := op.a[(i+1)*op.lda+pc : (i+1)*op.lda+pc+kc]
			s2 := op.a[(i+2)*op.lda+pc : (i+2)*op.lda+pc+kc]
			s3 := op.a[(i+3)*op.lda+pc : (i+3)*op.lda+pc+kc]
			s1, s2, s3 = s1[:len(s0)], s2[:len(s0)], s3[:len(s0)]
			if alpha == 1 {
				for p, v := range s0 {
					o := pan[p*mr+r : p*mr+r+4 : p*mr+r+4]
					o[0], o[1], o[2], o[3] = v, s1[p], s2[p], s3[p]
				}
			} else {
				for p, v := range s0 {
					o := pan[p*mr+r : p*mr+r+4 : p*mr+r+4]
					o[0], o[1], o[2], o[3] = alpha*v, alpha*s1[p], alpha*s2[p], alpha*s3[p]
				}
			}
		}
		for ; r < rows; r++ {
			i := ic + ir + r
			src := op.a[i*op.lda+pc : i*op.lda+pc+kc]
			for p, v := range src {
				pan[p*mr+r] = alpha * v
			}
		}
	}
}

// packB packs op(B)[pc:pc+kc, jc:jc+nc] into panels of nr columns: panel q
// holds, for each p, the nr values of row p (columns past nc are zero).
func packB(op *gemmOp, dst []float32, pc, kc, jc, nc, nr int) {
	for jr := 0; jr < nc; jr += nr {
		pan := dst[jr*kc : (jr+nr)*kc]
		cols := min(nr, nc-jr)
		if cols < nr {
			clear(pan)
		}
		if op.transB {
			// op(B)(p, j) = b[j*ldb + p]
			for cc := 0; cc < cols; cc++ {
				j := jc + jr + cc
				src := op.b[j*op.ldb+pc : j*op.ldb+pc+kc]
				for p, v := range src {
					pan[p*nr+cc] = v
				}
			}
		} else if cols < nr || !packRows(pan, op.b[pc*op.ldb+jc+jr:], op.ldb, kc, nr) {
			for p := 0; p < kc; p++ {
				src := op.b[(pc+p)*op.ldb+jc+jr : (pc+p)*op.ldb+jc+jr+cols]
				copy(pan[p*nr:p*nr+cols], src)
			}
		}
	}
}

// kernelGo2x4 is the pure-Go micro-kernel: a 2×4 tile of accumulators
// held in locals over the packed panels. (Wider tiles make the compiler
// spill accumulators to the stack and run slower.)
func kernelGo2x4(kc int, a, b, c []float32, ldc int, set bool) {
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	a = a[:2*kc]
	b = b[:4*kc]
	for p := 0; p < kc; p++ {
		aa := a[2*p : 2*p+2 : 2*p+2]
		bb := b[4*p : 4*p+4 : 4*p+4]
		a0, a1 := aa[0], aa[1]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	if set {
		clearTile(c, ldc, 2, 4)
	}
	r := c[0:4:4]
	r[0] += c00
	r[1] += c01
	r[2] += c02
	r[3] += c03
	r = c[ldc : ldc+4 : ldc+4]
	r[0] += c10
	r[1] += c11
	r[2] += c12
	r[3] += c13
}
