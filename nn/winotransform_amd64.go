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
