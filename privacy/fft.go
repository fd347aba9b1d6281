package privacy

import (
	"math"
	"math/bits"
)

// fft is an in-place iterative radix-2 complex FFT of x (len a power of
// two): X[k] = Σ_j x[j] e^{−2πi jk/N}, or with inverse the unnormalized
// inverse transform (e^{+2πi jk/N}, no 1/N). The twiddle factors are
// computed directly from sin and cos for each index rather than by a
// recurrence, so their error does not grow with N. It serves the PLD
// accountant's composition (pld.go), which needs nothing more.
func fft(x []complex128, inverse bool) {
	n := len(x)
	if n <= 1 {
		return
	}
	shift := 64 - bits.TrailingZeros(uint(n))
	for i := range x {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	tw := twiddles(n, inverse)
	for size := 2; size <= n; size <<= 1 {
		half, step := size>>1, n/size
		for start := 0; start < n; start += size {
			for k := range half {
				w := tw[k*step]
				a, b := x[start+k], w*x[start+k+half]
				x[start+k], x[start+k+half] = a+b, a-b
			}
		}
	}
}

// twiddles is e^{∓2πi k/n} for k < n/2.
func twiddles(n int, inverse bool) []complex128 {
	sign := -1.0
	if inverse {
		sign = 1
	}
	tw := make([]complex128, n/2)
	for k := range tw {
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(n))
		tw[k] = complex(c, sign*s)
	}
	return tw
}
