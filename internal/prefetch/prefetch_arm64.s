#include "textflag.h"

// func head(p unsafe.Pointer)
TEXT ·head(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	PRFM 64(R0), PLDL1KEEP
	ADD $127, R0, R1 // PRFM's offset is a multiple of 8: 127(R0) would assemble as 120(R0)
	PRFM (R1), PLDL1KEEP
	RET
