package aggregate

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
)

// fuzzInputs decodes a fuzz input into n vectors of dimension d and f, the
// number of them (the last f) treated as faulty: byte 0 gives n in [1, 16],
// byte 1 d in [1, 6], byte 2 f in [0, n); then little-endian float32
// coordinates, input after input (zeros once the bytes run out;
// non-finite values become 0, since the screening of non-finite inputs is
// tested on its own).
func fuzzInputs(data []byte) (xs [][]float32, f int) {
	if len(data) < 3 {
		return nil, 0
	}
	n, d := 1+int(data[0])%16, 1+int(data[1])%6
	f = int(data[2]) % n
	data = data[3:]
	xs = make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, d)
		for j := range xs[i] {
			if len(data) >= 4 {
				v := math.Float32frombits(binary.LittleEndian.Uint32(data))
				data = data[4:]
				if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
					xs[i][j] = v
				}
			}
		}
	}
	return xs, f
}

// FuzzRules checks each rule's documented guarantee on arbitrary inputs,
// against values computed here from the definitions:
//
//   - median (f < n/2) and trimmed mean (n > 2f): every coordinate lies in
//     the range of the honest values (the first n − f inputs);
//   - Krum and Multi-Krum (n > 2f + 2): the selected inputs' Krum scores,
//     from direct float64 distances, are the smallest, up to the 1e-4
//     relative accuracy the Gram distances promise (gram) — checked with
//     1e-3;
//   - centerpoint (d = 2): a returned point has exact Tukey depth >=
//     ceil(n/3) (big.Rat); otherwise the error is ErrNoCenterpoint.
func FuzzRules(f *testing.F) {
	f.Add([]byte{7, 1, 2, 0, 0, 128, 63, 0, 0, 0, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		xs, nf := fuzzInputs(data)
		if xs == nil {
			return
		}
		n, d := len(xs), len(xs[0])
		honest := xs[:n-nf]
		inRange := func(name string, v []float32) {
			for j := range v {
				lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
				for _, x := range honest {
					lo, hi = min(lo, x[j]), max(hi, x[j])
				}
				if !(v[j] >= lo && v[j] <= hi) {
					t.Fatalf("%s n=%d f=%d: coordinate %d = %v outside the honest range [%v, %v]", name, n, nf, j, v[j], lo, hi)
				}
			}
		}
		dst := make([]float32, d)
		if 2*nf < n {
			if err := (&Median{}).Aggregate(dst, xs); err != nil {
				t.Fatal(err)
			}
			inRange("median", dst)
			if err := (&TrimmedMean{F: nf}).Aggregate(dst, xs); err != nil {
				t.Fatal(err)
			}
			inRange("trimmed_mean", dst)
		}
		if n > 2*nf+2 {
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			sc := krumScores64(xs, all, nf)
			for _, r := range []Rule{&Krum{F: nf}, &MultiKrum{F: nf}} {
				if err := r.Aggregate(dst, xs); err != nil {
					t.Fatal(err)
				}
				w := r.(Selector).Weights()
				for i, wi := range w {
					for j, wj := range w {
						if wi > 0 && wj == 0 && sc[i] > sc[j]*(1+1e-3) {
							t.Fatalf("%s n=%d f=%d: selected input %d of float64 score %g above unselected %d's %g", r.Name(), n, nf, i, sc[i], j, sc[j])
						}
					}
				}
				if _, ok := r.(*Krum); ok && !slices.ContainsFunc(xs, func(x []float32) bool { return equalBits(x, dst) }) {
					t.Fatalf("krum: output is not an input")
				}
			}
		}
		if d == 2 && n <= 12 {
			err := (&Centerpoint{}).Aggregate(dst, xs)
			if err != nil {
				if !errors.Is(err, ErrNoCenterpoint) {
					t.Fatalf("centerpoint: %v", err)
				}
				return
			}
			if got, need := exactDepthOracle(xs, [2]float32{dst[0], dst[1]}), (n+2)/3; got < need {
				t.Fatalf("centerpoint n=%d: %v has exact depth %d < %d", n, dst, got, need)
			}
		}
	})
}
