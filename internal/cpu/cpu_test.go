package cpu

import "testing"

func TestFlagsAreConsistent(t *testing.T) {
	if AVX512 && !AVX2FMA {
		t.Error("AVX-512 reported without AVX2 and FMA")
	}
	t.Logf("AVX2+FMA: %v, AVX-512: %v", AVX2FMA, AVX512)
}
