package cpu

// AVX2FMA is true when the CPU has AVX2 and FMA and the OS saves the YMM
// registers.
var AVX2FMA bool

// AVX512 is true when, in addition, the CPU has AVX-512F and the OS saves
// the ZMM and opmask registers.
var AVX512 bool

func init() { AVX2FMA, AVX512 = features() }
