#include "textflag.h"

// The kernel's constants, each in four copies (one ymm register's
// worth).

#define LOW56     fusedConst<>+0(SB) // the amount mask of a record's alloc words
#define THREE     fusedConst<>+32(SB) // the presence bits of a node with cpu and memory
#define MAGIC     fusedConst<>+64(SB) // float64 2^52; ORed into x < 2^52, 2^52 + x
#define HALF      fusedConst<>+96(SB) // float64 0.5
#define ABS_MASK  fusedConst<>+128(SB) // float64 sign bit's complement
#define ONE_F     fusedConst<>+160(SB) // float64 1.0
#define HUNDRED_F fusedConst<>+192(SB) // float64 100.0
#define FIFTY     fusedConst<>+224(SB) // MaxScore/2
#define NO_SPREAD fusedConst<>+256(SB) // noSpread

DATA fusedConst<>+0(SB)/8, $0x00ffffffffffffff
DATA fusedConst<>+8(SB)/8, $0x00ffffffffffffff
DATA fusedConst<>+16(SB)/8, $0x00ffffffffffffff
DATA fusedConst<>+24(SB)/8, $0x00ffffffffffffff
DATA fusedConst<>+32(SB)/8, $3
DATA fusedConst<>+40(SB)/8, $3
DATA fusedConst<>+48(SB)/8, $3
DATA fusedConst<>+56(SB)/8, $3
DATA fusedConst<>+64(SB)/8, $0x4330000000000000
DATA fusedConst<>+72(SB)/8, $0x4330000000000000
DATA fusedConst<>+80(SB)/8, $0x4330000000000000
DATA fusedConst<>+88(SB)/8, $0x4330000000000000
DATA fusedConst<>+96(SB)/8, $0x3fe0000000000000
DATA fusedConst<>+104(SB)/8, $0x3fe0000000000000
DATA fusedConst<>+112(SB)/8, $0x3fe0000000000000
DATA fusedConst<>+120(SB)/8, $0x3fe0000000000000
DATA fusedConst<>+128(SB)/8, $0x7fffffffffffffff
DATA fusedConst<>+136(SB)/8, $0x7fffffffffffffff
DATA fusedConst<>+144(SB)/8, $0x7fffffffffffffff
DATA fusedConst<>+152(SB)/8, $0x7fffffffffffffff
DATA fusedConst<>+160(SB)/8, $0x3ff0000000000000
DATA fusedConst<>+168(SB)/8, $0x3ff0000000000000
DATA fusedConst<>+176(SB)/8, $0x3ff0000000000000
DATA fusedConst<>+184(SB)/8, $0x3ff0000000000000
DATA fusedConst<>+192(SB)/8, $0x4059000000000000
DATA fusedConst<>+200(SB)/8, $0x4059000000000000
DATA fusedConst<>+208(SB)/8, $0x4059000000000000
DATA fusedConst<>+216(SB)/8, $0x4059000000000000
DATA fusedConst<>+224(SB)/8, $50
DATA fusedConst<>+232(SB)/8, $50
DATA fusedConst<>+240(SB)/8, $50
DATA fusedConst<>+248(SB)/8, $50
DATA fusedConst<>+256(SB)/8, $75
DATA fusedConst<>+264(SB)/8, $75
DATA fusedConst<>+272(SB)/8, $75
DATA fusedConst<>+280(SB)/8, $75
GLOBL fusedConst<>(SB), RODATA|NOPTR, $288

// hasAVX2 reports whether AVX2 instructions can run: the maximum CPUID
// leaf is at least 7, leaf 1 has OSXSAVE (ECX bit 27) and AVX (bit 28),
// XCR0 has the SSE and AVX state bits (1 and 2: the operating system
// saves the ymm registers), and leaf 7 has AVX2 (EBX bit 5).
//
// func hasAVX2() bool
TEXT ·hasAVX2(SB), NOSPLIT, $0-1
	MOVL $0, AX
	XORL CX, CX
	CPUID
	CMPL AX, $7
	JLT  no
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0x20, BX
	JZ   no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET

// LANES loads the word pair at offset off of four 64-byte records at SI
// into lanes: lo gets the first word of each, hi the second. Clobbers
// Y0 and Y1.
#define LANES(off, lo, hi) \
	VMOVDQU     (off)(SI), X0; \
	VINSERTI128 $1, (off+128)(SI), Y0, Y0; \
	VMOVDQU     (off+64)(SI), X1; \
	VINSERTI128 $1, (off+192)(SI), Y1, Y1; \
	VPUNPCKLQDQ Y1, Y0, lo; \
	VPUNPCKHQDQ Y1, Y0, hi

// TOFLOAT converts x's lanes, integers in [0, 2^52), to float64 in
// place, exactly: 2^52 + x has x as its mantissa bits.
#define TOFLOAT(x) \
	VPOR   MAGIC, x, x; \
	VSUBPD MAGIC, x, x

// LEAST turns free (a record's free words) into LeastAllocated's
// quotient ⌊n/a⌋, n = free − min(podReq100, free) (podReq100: the four
// copies at req), as the truncated float64 quotient of n and af (a as
// float64; n and a exact in a float64, see addUnitVec). Clobbers Y1.
#define LEAST(free, af, req) \
	VPCMPGTQ    req, free, Y1; \
	VPSUBQ      req, free, free; \
	VPAND       Y1, free, free; \
	TOFLOAT(free); \
	VDIVPD      af, free, free; \
	VCVTTPD2DQY free, X1; \
	VPMOVSXDQ   X1, free

// FRACTION turns req (a record's req words) into BalancedAllocation's
// fraction float64(min(req + podReq, a)) / af (podReq: the four copies
// at pod). Clobbers Y0.
#define FRACTION(req, a, af, pod) \
	VPADDQ    pod, req, req; \
	VPCMPGTQ  a, req, Y0; \
	VBLENDVPD Y0, a, req, req; \
	TOFLOAT(req); \
	VDIVPD    af, req, req

// func fusedUnitAVX2(recs *cpuMemRec, tot *int64, n int, pod *vecPod)
//
// Four records (256 bytes) per iteration. Registers: Y2, Y3 the cpu and
// memory allocatable; Y10, Y11 the same as float64; Y8 all ones where
// the node has both; Y9 its balance; Y4, Y5 the LeastAllocated parts;
// Y6, Y7 the BalancedAllocation fractions; Y15 LOW56; Y0, Y1 scratch.
// The record's offsets (alloc 0, free 16, req 32; 64 bytes) and
// vecPod's (lc 0, lm 32, bc 64, bm 96) are checked by TestKernelLayout.
TEXT ·fusedUnitAVX2(SB), NOSPLIT, $0-32
	MOVQ    recs+0(FP), SI
	MOVQ    tot+8(FP), DI
	MOVQ    n+16(FP), CX
	MOVQ    pod+24(FP), DX
	VMOVDQU LOW56, Y15

loop:
	CMPQ CX, $4
	JLT  done

	LANES(0, Y2, Y3)
	VPSRLQ   $56, Y2, Y8 // presence bits
	VPSRLQ   $56, Y3, Y9 // balance
	VPAND    Y15, Y2, Y2
	VPAND    Y15, Y3, Y3
	VPCMPEQQ THREE, Y8, Y8
	VMOVDQA  Y2, Y10
	TOFLOAT(Y10)
	VMOVDQA  Y3, Y11
	TOFLOAT(Y11)

	// LeastAllocated: (qc + qm) >> both.
	LANES(16, Y4, Y5)
	LEAST(Y4, Y10, 0(DX))
	LEAST(Y5, Y11, 32(DX))
	VPADDQ  Y5, Y4, Y4
	VPSRLQ  $63, Y8, Y1
	VPSRLVQ Y1, Y4, Y4

	// BalancedAllocation: 50 + (50 + with − balance) >> 1, with =
	// int((1 − |(fc − fm) × 0.5|) × 100); noSpread for a node without
	// both.
	LANES(32, Y6, Y7)
	FRACTION(Y6, Y2, Y10, 64(DX))
	FRACTION(Y7, Y3, Y11, 96(DX))
	VSUBPD      Y7, Y6, Y6
	VMULPD      HALF, Y6, Y6
	VANDPD      ABS_MASK, Y6, Y6
	VMOVUPD     ONE_F, Y0
	VSUBPD      Y6, Y0, Y6
	VMULPD      HUNDRED_F, Y6, Y6
	VCVTTPD2DQY Y6, X6
	VPMOVSXDQ   X6, Y6
	VPADDQ      FIFTY, Y6, Y6
	VPSUBQ      Y9, Y6, Y6
	VPSRLQ      $1, Y6, Y6
	VPADDQ      FIFTY, Y6, Y6
	VMOVDQU     NO_SPREAD, Y0
	VBLENDVPD   Y8, Y6, Y0, Y6

	VPADDQ  Y6, Y4, Y4
	VPADDQ  (DI), Y4, Y4
	VMOVDQU Y4, (DI)
	ADDQ    $256, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JMP     loop

done:
	VZEROUPPER
	RET
