package gemm

import (
	"math/rand/v2"
	"testing"
)

// TestPackHelpers checks the transposing and copying strips, with and
// without the assembly helpers, at ragged sizes: every output element must
// come from the right input, and nothing outside the strip may be written.
func TestPackHelpers(t *testing.T) {
	var cps []copyFunc
	for _, k := range available() {
		cps = append(cps, k.copyRows)
	}
	const sentinel = -1
	for _, rows := range []int{1, 5, 8, 9, 16, 17, 31, 32, 40} {
		for _, kc := range []int{1, 7, 8, 9, 15, 16, 17, 24, 64, 129} {
			lds := kc + 3
			src := make([]float32, rows*lds)
			for i := range src {
				src[i] = float32(i)
			}
			for _, k := range available() {
				ldd := rows + 2
				dst := make([]float32, kc*ldd)
				for i := range dst {
					dst[i] = sentinel
				}
				transposeStrip(k, dst, ldd, src, lds, rows, kc)
				for p := 0; p < kc; p++ {
					for r := 0; r < ldd; r++ {
						want := float32(sentinel)
						if r < rows {
							want = src[r*lds+p]
						}
						if got := dst[p*ldd+r]; got != want {
							t.Fatalf("transpose %s rows=%d kc=%d: dst[%d][%d] = %v, want %v", k.name, rows, kc, p, r, got, want)
						}
					}
				}
			}
			for _, cp := range cps {
				width := min(kc, 32)
				ldd := width + 5
				dst := make([]float32, rows*ldd)
				for i := range dst {
					dst[i] = sentinel
				}
				copyStrip(cp, dst, ldd, src, lds, rows, width)
				for r := 0; r < rows; r++ {
					for j := 0; j < ldd; j++ {
						want := float32(sentinel)
						if j < width {
							want = src[r*lds+j]
						}
						if got := dst[r*ldd+j]; got != want {
							t.Fatalf("copy rows=%d width=%d asm=%v: dst[%d][%d] = %v, want %v", rows, width, cp != nil, r, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestPortableTiles runs both pure-Go tiles (2×4 is the amd64 choice, 4×4
// the one for targets with 32 float registers) through the blocked driver.
func TestPortableTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, k := range []*kernel{portable2x4, portable4x4} {
		e := newEngine(1, k)
		for _, s := range [][3]int{{1, 1, 1}, {5, 7, 3}, {33, 17, 300}, {64, 64, 64}} {
			for _, tr := range transCombos {
				o := newOperands(r, tr[0], tr[1], s[0], s[1], s[2], 1, -2, 0.3)
				got := o.cloneC()
				o.run(e, got)
				o.check(t, "portable", got)
			}
		}
	}
}

// TestDirectBKeepsBufferSmall: when B is read in place, the B buffer holds
// at most the one ragged panel, not the whole block (an Engine per model in
// a simulation of many nodes makes buffer sizes add up).
func TestDirectBKeepsBufferSmall(t *testing.T) {
	for _, k := range available() {
		e := newEngine(1, k)
		m, n, kk := 2*k.mr, 784, 256 // the shape of a batch's input gradient
		a := make([]float32, m*kk)
		b := make([]float32, kk*n)
		c := make([]float32, m*n)
		e.Sgemm(false, false, m, n, kk, 1, a, kk, b, n, 0, c, n)
		if got, limit := cap(e.ws[0].bp), kk*k.nr; got > limit {
			t.Errorf("%s: B buffer holds %d floats, want at most %d", k.name, got, limit)
		}
	}
}

// TestTranspose8: dst[p·ldd + i] = src[i·lds + p] for every width from 1
// to 37 (whole 8×8 blocks and ragged rests), padded strides, and nothing
// outside the block is written.
func TestTranspose8(t *testing.T) {
	for n := 1; n <= 37; n++ {
		for _, pad := range []int{0, 3} {
			lds, ldd := n+pad, 8+pad
			src := make([]float32, 8*lds)
			for i := range src {
				src[i] = float32(i) + 0.5
			}
			dst := make([]float32, n*ldd)
			for i := range dst {
				dst[i] = -1
			}
			Transpose8(dst, ldd, src, lds, n)
			for p := 0; p < n; p++ {
				for i := 0; i < ldd; i++ {
					want := float32(-1)
					if i < 8 {
						want = src[i*lds+p]
					}
					if dst[p*ldd+i] != want {
						t.Fatalf("n %d pad %d: dst[%d][%d] = %v, want %v", n, pad, p, i, dst[p*ldd+i], want)
					}
				}
			}
		}
	}
}

// TestTranspose8Down: dst[i·ldd + p] = src[p·8 + i] for every height from
// 1 to 37 and padded strides, on the AVX2 path and the loop, and nothing
// outside the block is written.
func TestTranspose8Down(t *testing.T) {
	defer func(v bool) { hasAVX2 = v }(hasAVX2)
	for _, vector := range []bool{hasAVX2, false} {
		hasAVX2 = vector
		for n := 1; n <= 37; n++ {
			for _, pad := range []int{0, 5} {
				ldd := n + pad
				src := make([]float32, 8*n)
				for i := range src {
					src[i] = float32(i) + 0.25
				}
				dst := make([]float32, 8*ldd)
				for i := range dst {
					dst[i] = -1
				}
				Transpose8Down(dst, ldd, src, n)
				for i := 0; i < 8; i++ {
					for p := 0; p < ldd; p++ {
						want := float32(-1)
						if p < n {
							want = src[p*8+i]
						}
						if dst[i*ldd+p] != want {
							t.Fatalf("vector %v n %d pad %d: dst[%d][%d] = %v, want %v", vector, n, pad, i, p, dst[i*ldd+p], want)
						}
					}
				}
			}
		}
	}
}
