//go:build amd64 && !purego

package nn

import "github.com/trellis-fl/trellis/internal/cpu"

//go:noescape
func winoInputAVX2(dst *float32, stride int, src *float32, pitch int)

//go:noescape
func winoInputGradAVX2(dst *float32, pitch int, dv *float32, stride int)

//go:noescape
func winoOutputAVX2(y *float32, pitch int, m *float32, stride int, b float32)

//go:noescape
func winoOutputGradAVX2(dst *float32, stride int, dy *float32, pitch int)

//go:noescape
func winoFilterAVX2(dst *float32, stride int, filt *float32)

//go:noescape
func winoFilterGradAVX2(dg *float32, du *float32, stride int)

func winoFilterVec(dst []float32, stride int, filt []float32) {
	_ = dst[(winoXi-1)*stride+winoLanes-1]
	_ = filt[winoR*winoR*winoLanes-1]
	winoFilterAVX2(&dst[0], stride, &filt[0])
}

func winoFilterGradVec(dg []float32, du []float32, stride int) {
	_ = du[(winoXi-1)*stride+winoLanes-1]
	_ = dg[winoR*winoR*winoLanes-1]
	winoFilterGradAVX2(&dg[0], &du[0], stride)
}

// winoVector reports whether the lane transforms run in AVX2.
func winoVector() bool { return haveAVX2 }

func winoInputVec(dst []float32, stride int, src []float32, pitch int) {
	winoInputAVX2(&dst[0], stride, &src[0], pitch)
}

func winoInputGradVec(dst []float32, pitch int, dv []float32, stride int) {
	winoInputGradAVX2(&dst[0], pitch, &dv[0], stride)
}

func winoOutputVec(y []float32, pitch int, m []float32, stride int, b float32) {
	winoOutputAVX2(&y[0], pitch, &m[0], stride, b)
}

func winoOutputGradVec(dst []float32, stride int, dy []float32, pitch int) {
	winoOutputGradAVX2(&dst[0], stride, &dy[0], pitch)
}

//go:noescape
func winoInputAVX512(dst *float32, stride int, src *float32, delta int, pitch int)

//go:noescape
func winoOutputAVX512(y *float32, delta int, pitch int, m *float32, stride int, b float32)

//go:noescape
func winoOutputGradAVX512(dst *float32, stride int, dy *float32, delta int, pitch int)

// winoPairs reports whether the lane transforms take two tiles at a time
// in AVX-512 (winotransform_avx512_amd64.s); tests turn winoPairsOn off to
// compare with the AVX2 kernels.
func winoPairs() bool { return winoPairsOn && cpu.AVX512 }

func winoInputPairVec(dst []float32, stride int, src []float32, delta, pitch int) {
	winoInputAVX512(&dst[0], stride, &src[0], delta, pitch)
}

func winoOutputPairVec(y []float32, delta, pitch int, m []float32, stride int, b float32) {
	winoOutputAVX512(&y[0], delta, pitch, &m[0], stride, b)
}

func winoOutputGradPairVec(dst []float32, stride int, dy []float32, delta, pitch int) {
	winoOutputGradAVX512(&dst[0], stride, &dy[0], delta, pitch)
}
