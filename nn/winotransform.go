package nn

import "github.com/trellis-fl/trellis/internal/gemm"

// The transforms of F(2×2, 5×5) (convwino.go has the matrices). Each 2-D
// transform X ↦ P X Qᵀ is two passes of the 1-D one, over the columns and
// then over the rows. The 1-D transforms with Bᵀ and Aᵀ are written out
// with their common subexpressions: every tile of every channel goes
// through them, while the filter transforms run once per pass in float64
// from the matrices themselves.

// winoG is G, in float64 so that the filter transform rounds once.
var winoG = [winoAlpha][winoR]float64{
	{1.0 / 4, 0, 0, 0, 0},
	{-1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6},
	{-1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6},
	{1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 3, 2.0 / 3},
	{1.0 / 24, -1.0 / 12, 1.0 / 6, -1.0 / 3, 2.0 / 3},
	{0, 0, 0, 0, 1},
}

// bt6 is the 1-D input transform v = Bᵀ d.
func bt6(d0, d1, d2, d3, d4, d5 float32) (v0, v1, v2, v3, v4, v5 float32) {
	s12, d12 := d1+d2, d1-d2
	e34, e42 := d4-d3, d4-d2
	f31 := d3 - d1
	v0 = 4*d0 - 5*d2 + d4
	v1 = d3 + d4 - 4*s12
	v2 = e34 + 4*d12
	v3 = e42 + 2*f31
	v4 = e42 - 2*f31
	v5 = 4*d1 - 5*d3 + d5
	return
}

// b6 is the adjoint of bt6, d = B v.
func b6(v0, v1, v2, v3, v4, v5 float32) (d0, d1, d2, d3, d4, d5 float32) {
	s12, d21 := v1+v2, v2-v1
	s34, d43 := v3+v4, v4-v3
	d0 = 4 * v0
	d1 = 4*(d21+v5) + 2*d43
	d2 = -5*v0 - 4*s12 - s34
	d3 = -d21 - 2*d43 - 5*v5
	d4 = v0 + s12 + s34
	d5 = v5
	return
}

// inputTransform writes V = Bᵀ d B of the 6×6 patch d, d[i][j] =
// src[i·pitch + j·lx], to dst[ξ·stride], ξ = 6a + b.
func inputTransform(dst []float32, stride int, src []float32, pitch, lx int) {
	var t [winoXi]float32
	_ = src[5*pitch+5*lx]
	for j := 0; j < winoAlpha; j++ {
		o := j * lx
		t[j], t[6+j], t[12+j], t[18+j], t[24+j], t[30+j] = bt6(
			src[o], src[pitch+o], src[2*pitch+o], src[3*pitch+o], src[4*pitch+o], src[5*pitch+o])
	}
	_ = dst[35*stride]
	for a := 0; a < winoAlpha; a++ {
		r := t[6*a : 6*a+6 : 6*a+6]
		v0, v1, v2, v3, v4, v5 := bt6(r[0], r[1], r[2], r[3], r[4], r[5])
		o := 6 * a * stride
		dst[o] = v0
		dst[o+stride] = v1
		dst[o+2*stride] = v2
		dst[o+3*stride] = v3
		dst[o+4*stride] = v4
		dst[o+5*stride] = v5
	}
}

// inputGradTransform adds B dV Bᵀ (dV[ξ] at dv[ξ·stride]) onto the 6×6
// patch of dst whose element (i, j) is dst[i·pitch + j·lx].
func inputGradTransform(dst []float32, pitch, lx int, dv []float32, stride int) {
	var t [winoXi]float32
	_ = dv[35*stride]
	for a := 0; a < winoAlpha; a++ {
		o := 6 * a * stride
		t[6*a], t[6*a+1], t[6*a+2], t[6*a+3], t[6*a+4], t[6*a+5] = b6(
			dv[o], dv[o+stride], dv[o+2*stride], dv[o+3*stride], dv[o+4*stride], dv[o+5*stride])
	}
	_ = dst[5*pitch+5*lx]
	for j := 0; j < winoAlpha; j++ {
		d0, d1, d2, d3, d4, d5 := b6(t[j], t[6+j], t[12+j], t[18+j], t[24+j], t[30+j])
		o := j * lx
		dst[o] += d0
		dst[pitch+o] += d1
		dst[2*pitch+o] += d2
		dst[3*pitch+o] += d3
		dst[4*pitch+o] += d4
		dst[5*pitch+o] += d5
	}
}

// at6 is the 1-D output transform y = Aᵀ m.
func at6(m0, m1, m2, m3, m4, m5 float32) (y0, y1 float32) {
	s12, d12 := m1+m2, m1-m2
	s34, d34 := m3+m4, m3-m4
	return m0 + s12 + s34, d12 + 2*d34 + m5
}

// a6 is its adjoint, m = A y.
func a6(y0, y1 float32) (m0, m1, m2, m3, m4, m5 float32) {
	return y0, y0 + y1, y0 - y1, y0 + 2*y1, y0 - 2*y1, y1
}

// outputTransform sets y (2×2, row-major) to Aᵀ M A, M[ξ] at m[ξ·stride].
func outputTransform(y *[winoM * winoM]float32, m []float32, stride int) {
	var r [2 * winoAlpha]float32 // r[a] and r[6+a]: row a of M A
	_ = m[35*stride]
	for a := 0; a < winoAlpha; a++ {
		o := 6 * a * stride
		r[a], r[6+a] = at6(m[o], m[o+stride], m[o+2*stride], m[o+3*stride], m[o+4*stride], m[o+5*stride])
	}
	y[0], y[2] = at6(r[0], r[1], r[2], r[3], r[4], r[5])
	y[1], y[3] = at6(r[6], r[7], r[8], r[9], r[10], r[11])
}

// outputGradTransform writes dM = A dY Aᵀ (dY 2×2, row-major) to
// dst[ξ·stride].
func outputGradTransform(dst []float32, stride int, dy *[winoM * winoM]float32) {
	c0 := [6]float32{}
	c1 := [6]float32{}
	c0[0], c0[1], c0[2], c0[3], c0[4], c0[5] = a6(dy[0], dy[2])
	c1[0], c1[1], c1[2], c1[3], c1[4], c1[5] = a6(dy[1], dy[3])
	_ = dst[35*stride]
	for a := 0; a < winoAlpha; a++ {
		m0, m1, m2, m3, m4, m5 := a6(c0[a], c1[a])
		o := 6 * a * stride
		dst[o] = m0
		dst[o+stride] = m1
		dst[o+2*stride] = m2
		dst[o+3*stride] = m3
		dst[o+4*stride] = m4
		dst[o+5*stride] = m5
	}
}

// filterTransform writes U = G g Gᵀ of the 5×5 filter g (row-major) to
// dst[ξ·stride]. Every entry is a float64 sum taken from zero in the order
// of the matrix products (G's row, then the filter's column); gTimes and
// gtTimes spell those sums out with their terms in locals, which the
// compiler keeps in registers (loops over small arrays kept every partial
// sum in memory: 0.56 µs a filter, 4 % of a FEMNIST CNN step for both
// transforms).
func filterTransform(dst []float32, stride int, g []float32) {
	_ = g[winoR*winoR-1]
	_ = dst[(winoXi-1)*stride]
	var t [winoR][winoAlpha]float64 // (G g)ᵀ: column j of G g is G·(column j of g)
	for j := 0; j < winoR; j++ {
		t[j][0], t[j][1], t[j][2], t[j][3], t[j][4], t[j][5] = gTimes(
			float64(g[j]), float64(g[winoR+j]), float64(g[2*winoR+j]), float64(g[3*winoR+j]), float64(g[4*winoR+j]))
	}
	for a := 0; a < winoAlpha; a++ {
		// Row a of (G g) Gᵀ is G·(row a of G g).
		u0, u1, u2, u3, u4, u5 := gTimes(t[0][a], t[1][a], t[2][a], t[3][a], t[4][a])
		d := dst[winoAlpha*a*stride:]
		d[0], d[stride], d[2*stride] = float32(u0), float32(u1), float32(u2)
		d[3*stride], d[4*stride], d[5*stride] = float32(u3), float32(u4), float32(u5)
	}
}

// gTimes returns G·v, each entry summed from zero over G's row in order.
func gTimes(v0, v1, v2, v3, v4 float64) (r0, r1, r2, r3, r4, r5 float64) {
	G := &winoG
	r0 = 0 + G[0][0]*v0 + G[0][1]*v1 + G[0][2]*v2 + G[0][3]*v3 + G[0][4]*v4
	r1 = 0 + G[1][0]*v0 + G[1][1]*v1 + G[1][2]*v2 + G[1][3]*v3 + G[1][4]*v4
	r2 = 0 + G[2][0]*v0 + G[2][1]*v1 + G[2][2]*v2 + G[2][3]*v3 + G[2][4]*v4
	r3 = 0 + G[3][0]*v0 + G[3][1]*v1 + G[3][2]*v2 + G[3][3]*v3 + G[3][4]*v4
	r4 = 0 + G[4][0]*v0 + G[4][1]*v1 + G[4][2]*v2 + G[4][3]*v3 + G[4][4]*v4
	r5 = 0 + G[5][0]*v0 + G[5][1]*v1 + G[5][2]*v2 + G[5][3]*v3 + G[5][4]*v4
	return
}

// gtTimes returns Gᵀ·v, each entry summed from zero over G's column in
// order.
func gtTimes(v0, v1, v2, v3, v4, v5 float64) (r0, r1, r2, r3, r4 float64) {
	G := &winoG
	r0 = 0 + G[0][0]*v0 + G[1][0]*v1 + G[2][0]*v2 + G[3][0]*v3 + G[4][0]*v4 + G[5][0]*v5
	r1 = 0 + G[0][1]*v0 + G[1][1]*v1 + G[2][1]*v2 + G[3][1]*v3 + G[4][1]*v4 + G[5][1]*v5
	r2 = 0 + G[0][2]*v0 + G[1][2]*v1 + G[2][2]*v2 + G[3][2]*v3 + G[4][2]*v4 + G[5][2]*v5
	r3 = 0 + G[0][3]*v0 + G[1][3]*v1 + G[2][3]*v2 + G[3][3]*v3 + G[4][3]*v4 + G[5][3]*v5
	r4 = 0 + G[0][4]*v0 + G[1][4]*v1 + G[2][4]*v2 + G[3][4]*v3 + G[4][4]*v4 + G[5][4]*v5
	return
}

// filterGradTransform writes dg = Gᵀ dU G (5×5, row-major), dU[ξ] at
// du[ξ·stride], with the sums spelled out like filterTransform's.
func filterGradTransform(dg []float32, du []float32, stride int) {
	_ = dg[winoR*winoR-1]
	_ = du[(winoXi-1)*stride]
	var t [winoAlpha][winoR]float64 // (Gᵀ dU)ᵀ: column b of Gᵀ dU is Gᵀ·(column b of dU)
	for b := 0; b < winoAlpha; b++ {
		t[b][0], t[b][1], t[b][2], t[b][3], t[b][4] = gtTimes(
			float64(du[b*stride]), float64(du[(winoAlpha+b)*stride]), float64(du[(2*winoAlpha+b)*stride]),
			float64(du[(3*winoAlpha+b)*stride]), float64(du[(4*winoAlpha+b)*stride]), float64(du[(5*winoAlpha+b)*stride]))
	}
	for i := 0; i < winoR; i++ {
		// Row i of (Gᵀ dU) G is Gᵀ·(row i of Gᵀ dU).
		r0, r1, r2, r3, r4 := gtTimes(t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i])
		d := dg[i*winoR : i*winoR+winoR]
		d[0], d[1], d[2], d[3], d[4] = float32(r0), float32(r1), float32(r2), float32(r3), float32(r4)
	}
}

// The lane transforms: lane l < winoLanes of every argument belongs to
// sample l of a group (convwino.go), and a patch element (i, j) is
// src[i·pitch + j·winoLanes + l]. With AVX2 the lanes are one vector
// (winotransform_amd64.s, with fused multiply-adds, so its rounding
// differs from the Go code's); elsewhere a loop over the lanes.

// winoInput8 writes the transformed patches of 8 lanes to dst[ξ·stride + l].
func winoInput8(dst []float32, stride int, src []float32, pitch int) {
	_ = dst[35*stride+winoLanes-1]
	_ = src[5*pitch+6*winoLanes-1]
	if winoVector() {
		winoInputVec(dst, stride, src, pitch)
		return
	}
	for l := 0; l < winoLanes; l++ {
		inputTransform(dst[l:], stride, src[l:], pitch, winoLanes)
	}
}

// winoInputGrad8 adds the 8 lanes' B dV Bᵀ onto their patches of dst.
func winoInputGrad8(dst []float32, pitch int, dv []float32, stride int) {
	_ = dv[35*stride+winoLanes-1]
	_ = dst[5*pitch+6*winoLanes-1]
	if winoVector() {
		winoInputGradVec(dst, pitch, dv, stride)
		return
	}
	for l := 0; l < winoLanes; l++ {
		inputGradTransform(dst[l:], pitch, winoLanes, dv[l:], stride)
	}
}

// winoOutput8 sets y[i·pitch + 8j + l] to output (i, j) of lane l's tile
// plus b.
func winoOutput8(y []float32, pitch int, m []float32, stride int, b float32) {
	_ = m[35*stride+winoLanes-1]
	_ = y[pitch+2*winoLanes-1]
	if winoVector() {
		winoOutputVec(y, pitch, m, stride, b)
		return
	}
	var t [4]float32
	for l := 0; l < winoLanes; l++ {
		outputTransform(&t, m[l:], stride)
		y[l], y[winoLanes+l] = t[0]+b, t[1]+b
		y[pitch+l], y[pitch+winoLanes+l] = t[2]+b, t[3]+b
	}
}

// winoOutputGrad8 writes A dY Aᵀ of each lane, dY[i][j] = dy[i·pitch +
// 8j + l], to dst[ξ·stride + l].
func winoOutputGrad8(dst []float32, stride int, dy []float32, pitch int) {
	_ = dst[35*stride+winoLanes-1]
	_ = dy[pitch+2*winoLanes-1]
	if winoVector() {
		winoOutputGradVec(dst, stride, dy, pitch)
		return
	}
	var t [4]float32
	for l := 0; l < winoLanes; l++ {
		t = [4]float32{dy[l], dy[winoLanes+l], dy[pitch+l], dy[pitch+winoLanes+l]}
		outputGradTransform(dst[l:], stride, &t)
	}
}

// The pair transforms do two tiles, k = 0 and 1, at once: their lanes are
// consecutive in V, dV and M (dst[ξ·stride + 8k + l]) and anywhere in the
// padded inputs and the lanes buffers. With AVX-512 one kernel call does
// both in 16-lane vectors with the AVX2 kernels' operations, so the bits
// are the same (tested); elsewhere they are two calls of the 8-lane
// transforms.

// winoPairsOn lets the pair transforms use AVX-512; tests turn it off.
var winoPairsOn = true

// winoInputPair is winoInput8 of two tiles.
func winoInputPair(dst []float32, stride int, src0, src1 []float32, pitch int) {
	if !winoPairs() {
		winoInput8(dst, stride, src0, pitch)
		winoInput8(dst[winoLanes:], stride, src1, pitch)
		return
	}
	_ = dst[35*stride+2*winoLanes-1]
	_ = src0[5*pitch+6*winoLanes-1]
	_ = src1[5*pitch+6*winoLanes-1]
	winoInputPairVec(dst, stride, src0, src1, pitch)
}

// winoInputGradPair is winoInputGrad8 of two tiles, tile 0's sums added
// first (neighbouring patches overlap).
func winoInputGradPair(dst0, dst1 []float32, pitch int, dv []float32, stride int) {
	if !winoPairs() {
		winoInputGrad8(dst0, pitch, dv, stride)
		winoInputGrad8(dst1, pitch, dv[winoLanes:], stride)
		return
	}
	_ = dv[35*stride+2*winoLanes-1]
	_ = dst0[5*pitch+6*winoLanes-1]
	_ = dst1[5*pitch+6*winoLanes-1]
	winoInputGradPairVec(dst0, dst1, pitch, dv, stride)
}

// winoOutputPair is winoOutput8 of two tiles.
func winoOutputPair(y0, y1 []float32, pitch int, m []float32, stride int, b float32) {
	if !winoPairs() {
		winoOutput8(y0, pitch, m, stride, b)
		winoOutput8(y1, pitch, m[winoLanes:], stride, b)
		return
	}
	_ = m[35*stride+2*winoLanes-1]
	_ = y0[pitch+2*winoLanes-1]
	_ = y1[pitch+2*winoLanes-1]
	winoOutputPairVec(y0, y1, pitch, m, stride, b)
}

// winoOutputGradPair is winoOutputGrad8 of two tiles.
func winoOutputGradPair(dst []float32, stride int, dy0, dy1 []float32, pitch int) {
	if !winoPairs() {
		winoOutputGrad8(dst, stride, dy0, pitch)
		winoOutputGrad8(dst[winoLanes:], stride, dy1, pitch)
		return
	}
	_ = dst[35*stride+2*winoLanes-1]
	_ = dy0[pitch+2*winoLanes-1]
	_ = dy1[pitch+2*winoLanes-1]
	winoOutputGradPairVec(dst, stride, dy0, dy1, pitch)
}

// planeToLanes interleaves one channel's plane of a full group of samples:
// dst[y·dpitch + 8x + l] = src[l·per + y·w + x] for samples l < 8, rows
// y < h and columns x < w, with the AVX 8×8 transposes of gemm.Transpose8
// (toLanes, a row and a float at a time, was 4 % of a FEMNIST CNN step
// with fromLanes). Rows of dst further apart than 8w floats (a padded
// input) go through tmp, 8·h·w floats.
func planeToLanes(dst []float32, dpitch int, src []float32, per, h, w int, tmp []float32) {
	const L = winoLanes
	if dpitch == L*w {
		gemm.Transpose8(dst, L, src, per, h*w)
		return
	}
	gemm.Transpose8(tmp, L, src, per, h*w)
	for y := 0; y < h; y++ {
		copy(dst[y*dpitch:y*dpitch+L*w], tmp[y*L*w:])
	}
}

// planeFromLanes is planeToLanes' inverse: dst[l·per + y·w + x] =
// src[y·spitch + 8x + l] (gemm.Transpose8Down), through tmp when the rows
// of src are further apart than 8w floats.
func planeFromLanes(dst []float32, per int, src []float32, spitch, h, w int, tmp []float32) {
	const L = winoLanes
	if spitch != L*w {
		for y := 0; y < h; y++ {
			copy(tmp[y*L*w:(y+1)*L*w], src[y*spitch:])
		}
		src = tmp
	}
	gemm.Transpose8Down(dst, per, src, h*w)
}

// toLanes interleaves rows (one per lane, all of length n; nil rows are
// empty lanes, left as they are) into dst: dst[8x + l] = rows[l][x].
func toLanes(dst []float32, rows *[winoLanes][]float32, n int) {
	const L = winoLanes
	dst = dst[:n*L]
	if rows[L-1] != nil {
		r0, r1, r2, r3 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n]
		r4, r5, r6, r7 := rows[4][:n], rows[5][:n], rows[6][:n], rows[7][:n]
		for x := 0; x < n; x++ {
			d := dst[x*L : x*L+L : x*L+L]
			d[0], d[1], d[2], d[3] = r0[x], r1[x], r2[x], r3[x]
			d[4], d[5], d[6], d[7] = r4[x], r5[x], r6[x], r7[x]
		}
		return
	}
	for l, r := range rows {
		if r == nil {
			break
		}
		for x, v := range r[:n] {
			dst[x*L+l] = v
		}
	}
}

// fromLanes is the inverse of toLanes: rows[l][x] = src[8x + l] for the
// rows that are not nil.
func fromLanes(rows *[winoLanes][]float32, src []float32, n int) {
	const L = winoLanes
	src = src[:n*L]
	if rows[L-1] != nil {
		r0, r1, r2, r3 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n]
		r4, r5, r6, r7 := rows[4][:n], rows[5][:n], rows[6][:n], rows[7][:n]
		for x := 0; x < n; x++ {
			d := src[x*L : x*L+L : x*L+L]
			r0[x], r1[x], r2[x], r3[x] = d[0], d[1], d[2], d[3]
			r4[x], r5[x], r6[x], r7[x] = d[4], d[5], d[6], d[7]
		}
		return
	}
	for l, r := range rows {
		if r == nil {
			break
		}
		for x := range r[:n] {
			r[x] = src[x*L+l]
		}
	}
}
