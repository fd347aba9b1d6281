//go:build amd64 && !purego

package nn

//go:noescape
func winoInputAVX2(dst *float32, stride int, src *float32, pitch int)

//go:noescape
func winoInputGradAVX2(dst *float32, pitch int, dv *float32, stride int)

//go:noescape
func winoOutputAVX2(y *float32, pitch int, m *float32, stride int, b float32)

//go:noescape
func winoOutputGradAVX2(dst *float32, stride int, dy *float32, pitch int)

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
