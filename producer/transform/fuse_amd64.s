#include "textflag.h"

// func fuseF32AVX(dst unsafe.Pointer, stride uintptr, src *byte, null *byte, quads int, mean, std, pre, post float64, flags int)
// fuseF32.storeGo for 4 values per step: float32 → float64 (VCVTPS2PD), nulls to pre
// (flags&2) or, after normalizing (flags&1: subtract, divide, each lane rounded as the
// scalar SUBSD and DIVSD), to post; rounded to float32 as CVTSD2SS does, NaN stored as
// 0x7fc00000, and the 4 results stored stride bytes apart. null may be nil: no nulls.
TEXT ·fuseF32AVX(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ null+24(FP), R8
	MOVQ quads+32(FP), CX
	VBROADCASTSD mean+40(FP), Y10
	VBROADCASTSD std+48(FP), Y11
	VBROADCASTSD pre+56(FP), Y12
	VBROADCASTSD post+64(FP), Y13
	MOVQ flags+72(FP), R9
	MOVL $0x7fc00000, AX
	VMOVD AX, X14
	VBROADCASTSS X14, X14
	VPXOR Y15, Y15, Y15
	LEAQ (DX)(DX*2), R10 // 3 * stride
loop:
	TESTQ CX, CX
	JE done
	VCVTPS2PD (SI), Y0
	TESTQ R8, R8
	JE norm
	MOVL (R8), AX
	VMOVD AX, X3
	VPMOVZXBQ X3, Y3
	VPCMPEQQ Y15, Y3, Y3 // all ones where the row is not null
	TESTQ $2, R9
	JE norm
	VBLENDVPD Y3, Y0, Y12, Y0 // nulls take pre
norm:
	TESTQ $1, R9
	JE post
	VSUBPD Y10, Y0, Y0
	VDIVPD Y11, Y0, Y0
post:
	TESTQ R8, R8
	JE store
	TESTQ $2, R9
	JNE store
	VBLENDVPD Y3, Y0, Y13, Y0 // nulls take post
store:
	VCVTPD2PSY Y0, X0
	VCMPPS $3, X0, X0, X1 // unordered: NaN
	VBLENDVPS X1, X14, X0, X0
	VMOVSS X0, (DI)
	VEXTRACTPS $1, X0, (DI)(DX*1)
	VEXTRACTPS $2, X0, (DI)(DX*2)
	VEXTRACTPS $3, X0, (DI)(R10*1)
	LEAQ (DI)(DX*4), DI
	ADDQ $16, SI
	TESTQ R8, R8
	JE next
	ADDQ $4, R8
next:
	DECQ CX
	JMP loop
done:
	VZEROUPPER
	RET
