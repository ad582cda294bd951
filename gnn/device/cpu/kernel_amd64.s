#include "textflag.h"

// func kernelAVX2(kc int, a, b, c *float32, ldc int, set int)
//
// C[0:6, 0:16] += A·B (set == 0) or C[0:6, 0:16] = A·B (set != 0, C is
// not read) where a holds kc groups of 6 packed values (a column of A), b
// holds kc groups of 16 (a row of B) and C's rows are ldc floats apart.
// Accumulators start at zero and are added to (or stored in) C at the end;
// the C tile's cache lines are prefetched first, so that a tile of a
// large C arrives from memory while the loop runs.
TEXT ·kernelAVX2(SB), NOSPLIT, $0-48
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R8
	SHLQ $2, R8

	MOVQ       DX, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	CMPQ CX, $2
	JLT  tail

loop2:
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS 4(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 8(SI), Y2
	VBROADCASTSS 12(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 16(SI), Y2
	VBROADCASTSS 20(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

	VMOVUPS      64(DI), Y0
	VMOVUPS      96(DI), Y1
	VBROADCASTSS 24(SI), Y2
	VBROADCASTSS 28(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 32(SI), Y2
	VBROADCASTSS 36(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 40(SI), Y2
	VBROADCASTSS 44(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

	ADDQ $48, SI
	ADDQ $128, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  loop2

tail:
	TESTQ CX, CX
	JE    store
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS 4(SI), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 8(SI), Y2
	VBROADCASTSS 12(SI), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 16(SI), Y2
	VBROADCASTSS 20(SI), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

store:
	MOVQ set+40(FP), AX
	TESTQ AX, AX
	JNE   storeset
	VADDPS  (DX), Y4, Y4
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y6, Y6
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y8, Y8
	VADDPS  32(DX), Y9, Y9
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y10, Y10
	VADDPS  32(DX), Y11, Y11
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y12, Y12
	VADDPS  32(DX), Y13, Y13
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y14, Y14
	VADDPS  32(DX), Y15, Y15
	VMOVUPS Y14, (DX)
	VMOVUPS Y15, 32(DX)
	VZEROUPPER
	RET

storeset:
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y14, (DX)
	VMOVUPS Y15, 32(DX)
	VZEROUPPER
	RET

// func prefetchLines(p *float32, n int)
//
// Issues PREFETCHT0 for every 64-byte line of the n floats at p.
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*4), CX
	ANDQ $-64, AX

pfloop:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JLT        pfloop
	RET

// func prefetchLinesL2(p *float32, n int)
//
// Issues PREFETCHT1 for every 64-byte line of the n floats at p.
TEXT ·prefetchLinesL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ (AX)(CX*4), CX
	ANDQ $-64, AX

pfloopl2:
	PREFETCHT1 (AX)
	ADDQ       $64, AX
	CMPQ       AX, CX
	JLT        pfloopl2
	RET

// func axpyNextAVX2(alpha float32, x, y, next *float32, n int)
//
// y[0:n] += alpha*x[0:n] with fused multiply-adds, after issuing PREFETCHT0
// for the n floats at next (the row a later call will read). With alpha = 1
// the result equals y + x exactly.
TEXT ·axpyNextAVX2(SB), NOSPLIT, $0-40
	MOVQ next+24(FP), AX
	MOVQ n+32(FP), CX
	LEAQ (AX)(CX*4), DX
	ANDQ $-64, AX

axpf:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	CMPQ       AX, DX
	JLT        axpf

	VBROADCASTSS alpha+0(FP), Y0
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI

ax16:
	CMPQ        CX, $16
	JLT         ax8
	VMOVUPS     (SI), Y1
	VMOVUPS     32(SI), Y2
	VFMADD213PS (DI), Y0, Y1
	VFMADD213PS 32(DI), Y0, Y2
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         ax16

ax8:
	CMPQ        CX, $8
	JLT         ax1
	VMOVUPS     (SI), Y1
	VFMADD213PS (DI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX

ax1:
	TESTQ       CX, CX
	JE          axdone
	VMOVSS      (SI), X1
	VFMADD213SS (DI), X0, X1
	VMOVSS      X1, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         ax1

axdone:
	VZEROUPPER
	RET

// func kernelAVX2Direct(kc int, a *float32, lda int, b, c *float32, ldc int, set int)
//
// As kernelAVX2, but A is read where it lies instead of from a packed
// panel: row r of the 6×kc block starts at a + r*lda floats. The 6 rows
// stay in L1 while the caller runs the kernel over every sliver of B.
TEXT ·kernelAVX2Direct(SB), NOSPLIT, $0-56
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R9*2), R10
	ADDQ R9, R10

	MOVQ       DX, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)
	ADDQ       R8, AX
	PREFETCHT0 (AX)
	PREFETCHT0 60(AX)

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	CMPQ CX, $2
	JLT  dtail

dloop2:
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS (SI)(R9*1), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS (SI)(R9*2), Y2
	VBROADCASTSS (R10), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS (R10)(R9*1), Y2
	VBROADCASTSS (R10)(R9*2), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

	VMOVUPS      64(DI), Y0
	VMOVUPS      96(DI), Y1
	VBROADCASTSS 4(SI), Y2
	VBROADCASTSS 4(SI)(R9*1), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS 4(SI)(R9*2), Y2
	VBROADCASTSS 4(R10), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS 4(R10)(R9*1), Y2
	VBROADCASTSS 4(R10)(R9*2), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

	ADDQ $8, SI
	ADDQ $8, R10
	ADDQ $128, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JGE  dloop2

dtail:
	TESTQ CX, CX
	JE    dstore
	VMOVUPS      (DI), Y0
	VMOVUPS      32(DI), Y1
	VBROADCASTSS (SI), Y2
	VBROADCASTSS (SI)(R9*1), Y3
	VFMADD231PS  Y0, Y2, Y4
	VFMADD231PS  Y1, Y2, Y5
	VFMADD231PS  Y0, Y3, Y6
	VFMADD231PS  Y1, Y3, Y7
	VBROADCASTSS (SI)(R9*2), Y2
	VBROADCASTSS (R10), Y3
	VFMADD231PS  Y0, Y2, Y8
	VFMADD231PS  Y1, Y2, Y9
	VFMADD231PS  Y0, Y3, Y10
	VFMADD231PS  Y1, Y3, Y11
	VBROADCASTSS (R10)(R9*1), Y2
	VBROADCASTSS (R10)(R9*2), Y3
	VFMADD231PS  Y0, Y2, Y12
	VFMADD231PS  Y1, Y2, Y13
	VFMADD231PS  Y0, Y3, Y14
	VFMADD231PS  Y1, Y3, Y15

dstore:
	MOVQ  set+48(FP), AX
	TESTQ AX, AX
	JNE   dstoreset
	VADDPS  (DX), Y4, Y4
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y6, Y6
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y8, Y8
	VADDPS  32(DX), Y9, Y9
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y10, Y10
	VADDPS  32(DX), Y11, Y11
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y12, Y12
	VADDPS  32(DX), Y13, Y13
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, 32(DX)
	ADDQ    R8, DX
	VADDPS  (DX), Y14, Y14
	VADDPS  32(DX), Y15, Y15
	VMOVUPS Y14, (DX)
	VMOVUPS Y15, 32(DX)
	VZEROUPPER
	RET

dstoreset:
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y10, (DX)
	VMOVUPS Y11, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, 32(DX)
	ADDQ    R8, DX
	VMOVUPS Y14, (DX)
	VMOVUPS Y15, 32(DX)
	VZEROUPPER
	RET

// func gatherRowsAVX2(dst, src *float32, idx *int32, n, cols, ahead int)
//
// For i in [0, n): copies the cols floats of row idx[i] of src to row i of
// dst (rows packed one after the other), first issuing PREFETCHT0 for the
// first and the last line of row idx[i+ahead] where i+ahead < n (the
// hardware fetches the lines between; prefetching every line of 400-byte
// rows measured about 15% slower). The indices must be valid.
TEXT ·gatherRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ idx+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ cols+32(FP), R8
	MOVQ ahead+40(FP), R10
	MOVQ R8, R9
	SHLQ $2, R9
	XORQ R11, R11

grow:
	CMPQ R11, CX
	JGE  gdone
	LEAQ (R11)(R10*1), AX
	CMPQ AX, CX
	JGE  gcopy
	MOVLQSX    (BX)(AX*4), AX
	IMULQ      R9, AX
	ADDQ       SI, AX
	PREFETCHT0 (AX)
	PREFETCHT0 -4(AX)(R9*1)

gcopy:
	MOVLQSX (BX)(R11*4), AX
	IMULQ   R9, AX
	ADDQ    SI, AX
	MOVQ    R8, DX

gc16:
	CMPQ    DX, $16
	JLT     gc8
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    $64, AX
	ADDQ    $64, DI
	SUBQ    $16, DX
	JMP     gc16

gc8:
	CMPQ    DX, $8
	JLT     gc1
	VMOVUPS (AX), Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, AX
	ADDQ    $32, DI
	SUBQ    $8, DX

gc1:
	TESTQ DX, DX
	JE    gnext
	MOVL  (AX), R12
	MOVL  R12, (DI)
	ADDQ  $4, AX
	ADDQ  $4, DI
	DECQ  DX
	JMP   gc1

gnext:
	INCQ R11
	JMP  grow

gdone:
	VZEROUPPER
	RET

// func packRowsAVX2(dst, src *float32, lds, rows, width int)
//
// Copies rows runs of width floats (6, 12, 16 or 32), the runs lds floats
// apart at src, to dst one after the other: the packing of a transposed
// A's panels (width mr) and of B's (width nr), one or two vector moves a
// run instead of a call to memmove or a move per float.
TEXT ·packRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  lds+16(FP), R8
	SHLQ  $2, R8
	MOVQ  rows+24(FP), CX
	MOVQ  width+32(FP), AX
	TESTQ CX, CX
	JLE   prdone
	CMPQ  AX, $32
	JEQ   pr32
	CMPQ  AX, $16
	JEQ   pr16
	CMPQ  AX, $12
	JEQ   pr12

pr6:
	VMOVUPS (SI), X0
	MOVQ    16(SI), BX
	VMOVUPS X0, (DI)
	MOVQ    BX, 16(DI)
	ADDQ    R8, SI
	ADDQ    $24, DI
	DECQ    CX
	JNZ     pr6
	JMP     prdone

pr12:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), X1
	VMOVUPS Y0, (DI)
	VMOVUPS X1, 32(DI)
	ADDQ    R8, SI
	ADDQ    $48, DI
	DECQ    CX
	JNZ     pr12
	JMP     prdone

pr16:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    R8, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     pr16
	JMP     prdone

pr32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    R8, SI
	ADDQ    $128, DI
	DECQ    CX
	JNZ     pr32

prdone:
	VZEROUPPER
	RET
