package aggregate

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// Keys must order as the float32 values do, ties broken by input index,
// and give back the value and index they hold.
func TestKeyOrder(t *testing.T) {
	vals := []float32{
		float32(math.Inf(-1)), -math.MaxFloat32, -1e30, -2, -1, -math.SmallestNonzeroFloat32,
		float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1e-40, 1.17549435e-38,
		1e-3, 1, 2, 1e30, math.MaxFloat32, float32(math.Inf(1)),
	}
	for i := 1; i < len(vals); i++ {
		a, b := key(vals[i-1], 7), key(vals[i], 3)
		if a >= b {
			t.Errorf("key(%g) = %#x not below key(%g) = %#x", vals[i-1], a, vals[i], b)
		}
	}
	for i, v := range vals {
		k := key(v, i)
		if got := keyValue(k); math.Float32bits(got) != math.Float32bits(v) {
			t.Errorf("keyValue(key(%g)) = %g", v, got)
		}
		if got := keyInput(k); got != i {
			t.Errorf("keyInput(key(%g, %d)) = %d", v, i, got)
		}
	}
	if key(1, 2) >= key(1, 3) {
		t.Error("equal values are not ordered by input index")
	}
}

// selectRank must agree with sorting for every rank, on random, sorted,
// reversed and organ-pipe inputs (the last ones push quickselect to its
// sort fallback).
func TestSelectRank(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := map[string]func(i, n int) float32{
		"random":   func(i, n int) float32 { return float32(r.IntN(7)) }, // many ties
		"sorted":   func(i, n int) float32 { return float32(i) },
		"reversed": func(i, n int) float32 { return float32(n - i) },
		"pipe":     func(i, n int) float32 { return float32(min(i, n-i)) },
	}
	for name, shape := range shapes {
		for _, n := range []int{1, 2, 3, 5, 16, 17, 18, 33, 100, 257} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = key(shape(i, n), i)
			}
			orig := slices.Clone(keys)
			sorted := slices.Sorted(slices.Values(keys))
			a, b := make([]uint64, n), make([]uint64, n)
			for k := range n {
				kth, next, ok := selectRank(keys, a, b, k)
				if kth != sorted[k] {
					t.Fatalf("%s n=%d: rank %d = %#x, want %#x", name, n, k, kth, sorted[k])
				}
				if ok != (k+1 < n) || ok && next != sorted[k+1] {
					t.Fatalf("%s n=%d: rank %d+1 = %#x (%v), want %#x", name, n, k, next, ok, sorted[min(k+1, n-1)])
				}
			}
			if !slices.Equal(keys, orig) {
				t.Fatalf("%s n=%d: selectRank modified its input", name, n)
			}
		}
	}
}

// exactWindow's promise: m float32 values whose ulp exponents span at most
// exactWindow(m) binades sum in float64 to their exact sum, in any order.
func TestExactWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{1, 2, 3, 7, 8, 63, 64, 100, 1000} {
		w := exactWindow(m)
		for trial := range 50 {
			emin := 1 + r.IntN(200)
			vals := make([]float32, m)
			for i := range vals {
				// Full 24-bit significand at the window's top, or the
				// smallest ulp at its bottom.
				e := emin + r.IntN(w+1)
				if i == 0 {
					e = emin + w
				}
				mant := uint32(r.Uint32()) & (1<<23 - 1)
				if e == emin || trial%2 == 0 {
					mant |= 1
				}
				vals[i] = math.Float32frombits(uint32(e)<<23 | mant | uint32(r.IntN(2))<<31)
			}
			exact := new(big.Float).SetPrec(2000)
			var s float64
			for _, v := range vals {
				exact.Add(exact, new(big.Float).SetFloat64(float64(v)))
				s += float64(v)
			}
			if exact.Cmp(big.NewFloat(s).SetPrec(2000)) != 0 {
				t.Fatalf("m=%d window=%d: float64 sum %v is not exact (%v)", m, w, s, exact)
			}
		}
	}
}
