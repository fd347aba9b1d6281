package cpu

import (
	"fmt"
	"os"
)

// AVX2FMA is true when the CPU has AVX2 and FMA and the OS saves the YMM
// registers.
var AVX2FMA bool

// AVX512 is true when, in addition, the CPU has AVX-512F and the OS saves
// the ZMM and opmask registers.
var AVX512 bool

// EnvVar caps the instruction sets the kernels may use, so that one
// machine can measure every path (an AVX2-only laptop's kernels on an
// AVX-512 server): "avx2" turns AVX-512 off, "portable" every assembly
// path; "" or "auto" uses what the CPU has. It cannot turn on what the CPU
// lacks.
const EnvVar = "TRELLIS_CPU"

// Level names the instruction sets in use: "avx512", "avx2" or "portable".
func Level() string {
	switch {
	case AVX512:
		return "avx512"
	case AVX2FMA:
		return "avx2"
	}
	return "portable"
}

func init() {
	AVX2FMA, AVX512 = features()
	var err error
	if AVX2FMA, AVX512, err = capped(os.Getenv(EnvVar), AVX2FMA, AVX512); err != nil {
		// init cannot return an error; say it loudly and keep the CPU's own
		// flags (a typo must not silently measure another path: the line
		// names the path that does run).
		fmt.Fprintf(os.Stderr, "trellis: %v; using %s\n", err, Level())
	}
}

// capped applies an EnvVar value to the detected flags.
func capped(v string, avx2, avx512 bool) (bool, bool, error) {
	switch v {
	case "", "auto":
		return avx2, avx512, nil
	case "avx2":
		return avx2, false, nil
	case "portable":
		return false, false, nil
	}
	return avx2, avx512, fmt.Errorf("%s=%q: want auto, avx2 or portable", EnvVar, v)
}
