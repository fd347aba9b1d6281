//go:build amd64 && !purego

package nn

import "github.com/trellis-fl/trellis/internal/cpu"

// The SGD update is memory- and instruction-bound (it touches every
// parameter, gradient and momentum once per step); 8-wide FMA kernels do it
// in a fraction of the scalar loop's time. They handle whole blocks of 8,
// the Go loop the tail.

//go:noescape
func sgdAVX2(w, grad *float32, n int, lr, wd float32)

//go:noescape
func momentumAVX2(w, grad, v *float32, n int, lr, mu, wd float32)

//go:noescape
func nesterovAVX2(w, grad, v *float32, n int, lr, mu, wd float32)

var haveAVX2 = cpu.AVX2FMA

// sgdFuses reports whether SGD's vector kernel (sgdFast) runs, rounding
// w − lr·g once (Model.fusesSGD).
func sgdFuses() bool { return haveAVX2 }

// sgdFast updates the longest prefix of w it can with vector code and
// returns its length.
func sgdFast(w, g, v []float32, lr, mu, wd float32, nesterov bool) int {
	n := len(w) &^ 7
	if !haveAVX2 || n == 0 {
		return 0
	}
	switch {
	case v == nil:
		sgdAVX2(&w[0], &g[0], n, lr, wd)
	case nesterov:
		nesterovAVX2(&w[0], &g[0], &v[0], n, lr, mu, wd)
	default:
		momentumAVX2(&w[0], &g[0], &v[0], n, lr, mu, wd)
	}
	return n
}
