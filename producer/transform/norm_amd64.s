#include "textflag.h"

// func subDivAVX2(x []float64, mean, std float64)
// x[k] = (x[k] - mean) / std, 4 values per instruction: each lane rounds exactly as the
// scalar SUBSD and DIVSD do, so the bits are those of the Go loop in ops.go.
TEXT ·subDivAVX2(SB), NOSPLIT, $0-40
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	VBROADCASTSD mean+24(FP), Y1
	VBROADCASTSD std+32(FP), Y2
loop8:
	CMPQ CX, $8
	JL loop1
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y3
	VSUBPD Y1, Y0, Y0
	VSUBPD Y1, Y3, Y3
	VDIVPD Y2, Y0, Y0
	VDIVPD Y2, Y3, Y3
	VMOVUPD Y0, (SI)
	VMOVUPD Y3, 32(SI)
	ADDQ $64, SI
	SUBQ $8, CX
	JMP loop8
loop1:
	TESTQ CX, CX
	JE done
	VMOVSD (SI), X0
	VSUBSD X1, X0, X0
	VDIVSD X2, X0, X0
	VMOVSD X0, (SI)
	ADDQ $8, SI
	DECQ CX
	JMP loop1
done:
	VZEROUPPER
	RET
