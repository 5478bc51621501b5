#include "textflag.h"

// func head(p unsafe.Pointer)
TEXT ·head(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 127(AX)
	RET
