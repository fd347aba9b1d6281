package nn

import "github.com/trellis-fl/trellis/internal/gemm"

// The transforms of F(4×4, 5×5) (convwino.go has the matrices). Each 2-D
// transform X ↦ P X Qᵀ is two passes of the 1-D one, over the columns and
// then over the rows. The 1-D transforms with Bᵀ and Aᵀ are written out
// with their common subexpressions: every tile of every channel goes
// through them. The filter transforms run once per pass for every
// (output, input) channel pair: here in float64 with G's structure, with
// AVX2 in float32 for eight input channels a vector (winoFilterAVX2).

// bt8 is the 1-D input transform v = Bᵀ d.
func bt8(d *[winoAlpha]float32) (v [winoAlpha]float32) {
	p1 := d[2] + d[6] - 4.25*d[4]
	q1 := d[1] + d[5] - 4.25*d[3]
	p2 := d[6] + 0.25*d[2] - 1.25*d[4]
	q2 := 0.5*d[1] - 2.5*d[3] + 2*d[5]
	p3 := d[6] + 4*d[2] - 5*d[4]
	q3 := 2*d[1] - 2.5*d[3] + 0.5*d[5]
	v[0] = d[0] - d[6] + 5.25*(d[4]-d[2])
	v[1], v[2] = p1+q1, p1-q1
	v[3], v[4] = p2+q2, p2-q2
	v[5], v[6] = p3+q3, p3-q3
	v[7] = d[7] - d[1] + 5.25*(d[3]-d[5])
	return
}

// b8 is the adjoint of bt8, d = B v.
func b8(v *[winoAlpha]float32) (d [winoAlpha]float32) {
	s12, s34, s56 := v[1]+v[2], v[3]+v[4], v[5]+v[6]
	a, b, c := v[1]-v[2], v[3]-v[4], v[5]-v[6]
	d[0] = v[0]
	d[1] = a + 0.5*b + 2*c - v[7]
	d[2] = s12 + 0.25*s34 + 4*s56 - 5.25*v[0]
	d[3] = 5.25*v[7] - 4.25*a - 2.5*b - 2.5*c
	d[4] = 5.25*v[0] - 4.25*s12 - 1.25*s34 - 5*s56
	d[5] = a + 2*b + 0.5*c - 5.25*v[7]
	d[6] = s12 - v[0] + s34 + s56
	d[7] = v[7]
	return
}

// at8 is the 1-D output transform y = Aᵀ m.
func at8(m *[winoAlpha]float32) (y [winoM]float32) {
	s12, d12 := m[1]+m[2], m[1]-m[2]
	s34, d34 := m[3]+m[4], m[3]-m[4]
	s56, d56 := m[5]+m[6], m[5]-m[6]
	y[0] = m[0] + s12 + s34 + s56
	y[1] = d12 + 2*d34 + 0.5*d56
	y[2] = s12 + 4*s34 + 0.25*s56
	y[3] = d12 + m[7] + 8*d34 + 0.125*d56
	return
}

// a8 is its adjoint, m = A y.
func a8(y *[winoM]float32) (m [winoAlpha]float32) {
	e1, o1 := y[0]+y[2], y[1]+y[3]
	e2, o2 := y[0]+4*y[2], 2*y[1]+8*y[3]
	e3, o3 := y[0]+0.25*y[2], 0.5*y[1]+0.125*y[3]
	return [winoAlpha]float32{y[0], e1 + o1, e1 - o1, e2 + o2, e2 - o2, e3 + o3, e3 - o3, y[3]}
}

// inputTransform writes V = Bᵀ d B of the 8×8 patch d, d[i][j] =
// src[i·pitch + j·lx], to dst[ξ·stride], ξ = 8a + b.
func inputTransform(dst []float32, stride int, src []float32, pitch, lx int) {
	const A = winoAlpha
	var t [A][A]float32 // t[j] = Bᵀ · column j of d
	_ = src[(A-1)*pitch+(A-1)*lx]
	for j := 0; j < A; j++ {
		var col [A]float32
		for i := range col {
			col[i] = src[i*pitch+j*lx]
		}
		t[j] = bt8(&col)
	}
	_ = dst[(winoXi-1)*stride]
	for a := 0; a < A; a++ {
		var row [A]float32
		for j := range row {
			row[j] = t[j][a]
		}
		v := bt8(&row)
		for b, x := range v {
			dst[(A*a+b)*stride] = x
		}
	}
}

// inputGradTransform adds B dV Bᵀ (dV[ξ] at dv[ξ·stride]) onto the 8×8
// patch of dst whose element (i, j) is dst[i·pitch + j·lx].
func inputGradTransform(dst []float32, pitch, lx int, dv []float32, stride int) {
	const A = winoAlpha
	var t [A][A]float32 // t[a] = B · row a of dV, as a row of dV Bᵀ
	_ = dv[(winoXi-1)*stride]
	for a := 0; a < A; a++ {
		var row [A]float32
		for b := range row {
			row[b] = dv[(A*a+b)*stride]
		}
		t[a] = b8(&row)
	}
	_ = dst[(A-1)*pitch+(A-1)*lx]
	for j := 0; j < A; j++ {
		var col [A]float32
		for a := range col {
			col[a] = t[a][j]
		}
		d := b8(&col)
		for i, x := range d {
			dst[i*pitch+j*lx] += x
		}
	}
}

// outputTransform sets y (4×4, row-major) to Aᵀ M A, M[ξ] at m[ξ·stride].
func outputTransform(y *[winoM * winoM]float32, m []float32, stride int) {
	const A = winoAlpha
	var r [A][winoM]float32 // r[a]: row a of M A
	_ = m[(winoXi-1)*stride]
	for a := 0; a < A; a++ {
		var row [A]float32
		for b := range row {
			row[b] = m[(A*a+b)*stride]
		}
		r[a] = at8(&row)
	}
	for j := 0; j < winoM; j++ {
		var col [A]float32
		for a := range col {
			col[a] = r[a][j]
		}
		out := at8(&col)
		for i, x := range out {
			y[i*winoM+j] = x
		}
	}
}

// outputGradTransform writes dM = A dY Aᵀ (dY 4×4, row-major) to
// dst[ξ·stride].
func outputGradTransform(dst []float32, stride int, dy *[winoM * winoM]float32) {
	const A = winoAlpha
	var c [winoM][A]float32 // c[j] = A · column j of dY
	for j := 0; j < winoM; j++ {
		col := [winoM]float32{dy[j], dy[winoM+j], dy[2*winoM+j], dy[3*winoM+j]}
		c[j] = a8(&col)
	}
	_ = dst[(winoXi-1)*stride]
	for a := 0; a < A; a++ {
		row := [winoM]float32{c[0][a], c[1][a], c[2][a], c[3][a]}
		m := a8(&row)
		for b, x := range m {
			dst[(A*a+b)*stride] = x
		}
	}
}

// filterTransform writes U = G g Gᵀ of the 5×5 filter g (row-major) to
// dst[ξ·stride], in float64 (rounded once, to float32, at the end) with
// G's structure: its rows come in pairs that differ only in the signs of
// the odd columns (gTimes), so each pair costs one even and one odd sum.
func filterTransform(dst []float32, stride int, g []float32) {
	_ = g[winoR*winoR-1]
	_ = dst[(winoXi-1)*stride]
	var t [winoR][winoAlpha]float64 // (G g)ᵀ: column j of G g is G·(column j of g)
	for j := 0; j < winoR; j++ {
		t[j] = gTimes(float64(g[j]), float64(g[winoR+j]), float64(g[2*winoR+j]), float64(g[3*winoR+j]), float64(g[4*winoR+j]))
	}
	for a := 0; a < winoAlpha; a++ {
		// Row a of (G g) Gᵀ is G·(row a of G g).
		u := gTimes(t[0][a], t[1][a], t[2][a], t[3][a], t[4][a])
		d := dst[winoAlpha*a*stride:]
		d[0], d[stride], d[2*stride], d[3*stride] = float32(u[0]), float32(u[1]), float32(u[2]), float32(u[3])
		d[4*stride], d[5*stride], d[6*stride], d[7*stride] = float32(u[4]), float32(u[5]), float32(u[6]), float32(u[7])
	}
}

// gTimes returns G·v: rows 1–2, 3–4 and 5–6 of G are ±-pairs,
// −2/9·(1, ±1, 1, ±1, 1), 1/90·(1, ±2, 4, ±8, 16) and 2/45·(16, ±8, 4, ±2, 1).
func gTimes(v0, v1, v2, v3, v4 float64) (r [winoAlpha]float64) {
	e, o := v0+v2+v4, v1+v3
	e1, o1 := v0+4*v2+16*v4, 2*v1+8*v3
	e2, o2 := 16*v0+4*v2+v4, 8*v1+2*v3
	r[0] = v0
	r[1], r[2] = -2.0/9*(e+o), -2.0/9*(e-o)
	r[3], r[4] = (e1+o1)/90, (e1-o1)/90
	r[5], r[6] = 2.0/45*(e2+o2), 2.0/45*(e2-o2)
	r[7] = v4
	return
}

// gtTimes returns Gᵀ·v with the same pairs: each is a sum and a difference
// of the pair's two entries.
func gtTimes(v *[winoAlpha]float64) (r [winoR]float64) {
	s12, d12 := v[1]+v[2], v[1]-v[2]
	s34, d34 := v[3]+v[4], v[3]-v[4]
	s56, d56 := v[5]+v[6], v[5]-v[6]
	r[0] = v[0] - 2.0/9*s12 + s34/90 + 32.0/45*s56
	r[1] = -2.0/9*d12 + d34/45 + 16.0/45*d56
	r[2] = -2.0/9*s12 + 2.0/45*s34 + 8.0/45*s56
	r[3] = -2.0/9*d12 + 4.0/45*d34 + 4.0/45*d56
	r[4] = -2.0/9*s12 + 8.0/45*s34 + 2.0/45*s56 + v[7]
	return
}

// filterGradTransform writes dg = Gᵀ dU G (5×5, row-major), dU[ξ] at
// du[ξ·stride], in float64 like filterTransform.
func filterGradTransform(dg []float32, du []float32, stride int) {
	_ = dg[winoR*winoR-1]
	_ = du[(winoXi-1)*stride]
	var t [winoR][winoAlpha]float64 // (Gᵀ dU)ᵀ: t[i][b] = (Gᵀ · column b of dU)[i]
	for b := 0; b < winoAlpha; b++ {
		var col [winoAlpha]float64
		for a := range col {
			col[a] = float64(du[(winoAlpha*a+b)*stride])
		}
		r := gtTimes(&col)
		for i, x := range r {
			t[i][b] = x
		}
	}
	for i := 0; i < winoR; i++ {
		// Row i of (Gᵀ dU) G is Gᵀ·(row i of Gᵀ dU).
		r := gtTimes(&t[i])
		d := dg[i*winoR : i*winoR+winoR]
		for j, x := range r {
			d[j] = float32(x)
		}
	}
}

// The lane transforms: lane l < winoLanes of every argument belongs to
// sample l of a group (convwino.go), and a patch element (i, j) is
// src[i·pitch + j·winoLanes + l]. With AVX2 the lanes are one vector
// (winotransform_amd64.s, with fused multiply-adds, so its rounding
// differs from the Go code's); elsewhere a loop over the lanes.

// winoInput8 writes the transformed patches of 8 lanes to dst[ξ·stride + l].
func winoInput8(dst []float32, stride int, src []float32, pitch int) {
	_ = dst[(winoXi-1)*stride+winoLanes-1]
	_ = src[(winoAlpha-1)*pitch+winoAlpha*winoLanes-1]
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
	_ = dv[(winoXi-1)*stride+winoLanes-1]
	_ = dst[(winoAlpha-1)*pitch+winoAlpha*winoLanes-1]
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
	_ = m[(winoXi-1)*stride+winoLanes-1]
	_ = y[(winoM-1)*pitch+winoM*winoLanes-1]
	if winoVector() {
		winoOutputVec(y, pitch, m, stride, b)
		return
	}
	var t [winoM * winoM]float32
	for l := 0; l < winoLanes; l++ {
		outputTransform(&t, m[l:], stride)
		for i := 0; i < winoM; i++ {
			for j := 0; j < winoM; j++ {
				y[i*pitch+j*winoLanes+l] = t[i*winoM+j] + b
			}
		}
	}
}

// winoOutputGrad8 writes A dY Aᵀ of each lane, dY[i][j] = dy[i·pitch +
// 8j + l], to dst[ξ·stride + l].
func winoOutputGrad8(dst []float32, stride int, dy []float32, pitch int) {
	_ = dst[(winoXi-1)*stride+winoLanes-1]
	_ = dy[(winoM-1)*pitch+winoM*winoLanes-1]
	if winoVector() {
		winoOutputGradVec(dst, stride, dy, pitch)
		return
	}
	var t [winoM * winoM]float32
	for l := 0; l < winoLanes; l++ {
		for i := 0; i < winoM; i++ {
			for j := 0; j < winoM; j++ {
				t[i*winoM+j] = dy[i*pitch+j*winoLanes+l]
			}
		}
		outputGradTransform(dst[l:], stride, &t)
	}
}

// The pair transforms do two tiles, k = 0 and 1, at once: their lanes are
// consecutive in V and M (dst[ξ·stride + 8k + l]) and anywhere in the
// padded input or the lanes buffer (at offsets o0 and o1 of buf). With
// AVX-512 one kernel call does both in 16-lane vectors with the AVX2
// kernels' operations, so the bits are the same (tested); elsewhere they
// are two calls of the 8-lane transforms. The input gradient has none: neighbouring
// patches overlap, and tile 0's sums must go in before tile 1's.

// winoPairsOn lets the pair transforms run; tests turn it off.
var winoPairsOn = true

// winoInputPair is winoInput8 of the two tiles at buf[o0:] and buf[o1:].
func winoInputPair(dst []float32, stride int, buf []float32, o0, o1, pitch int) {
	if !winoPairs() {
		winoInput8(dst, stride, buf[o0:], pitch)
		winoInput8(dst[winoLanes:], stride, buf[o1:], pitch)
		return
	}
	_ = dst[(winoXi-1)*stride+2*winoLanes-1]
	_ = buf[o0+(winoAlpha-1)*pitch+winoAlpha*winoLanes-1]
	_ = buf[o1+(winoAlpha-1)*pitch+winoAlpha*winoLanes-1]
	winoInputPairVec(dst, stride, buf[o0:], o1-o0, pitch)
}

// winoOutputPair is winoOutput8 of two tiles, into buf[o0:] and buf[o1:].
func winoOutputPair(buf []float32, o0, o1, pitch int, m []float32, stride int, b float32) {
	if !winoPairs() {
		winoOutput8(buf[o0:], pitch, m, stride, b)
		winoOutput8(buf[o1:], pitch, m[winoLanes:], stride, b)
		return
	}
	_ = m[(winoXi-1)*stride+2*winoLanes-1]
	_ = buf[o0+(winoM-1)*pitch+winoM*winoLanes-1]
	_ = buf[o1+(winoM-1)*pitch+winoM*winoLanes-1]
	winoOutputPairVec(buf[o0:], o1-o0, pitch, m, stride, b)
}

// winoOutputGradPair is winoOutputGrad8 of two tiles, from buf[o0:] and
// buf[o1:].
func winoOutputGradPair(dst []float32, stride int, buf []float32, o0, o1, pitch int) {
	if !winoPairs() {
		winoOutputGrad8(dst, stride, buf[o0:], pitch)
		winoOutputGrad8(dst[winoLanes:], stride, buf[o1:], pitch)
		return
	}
	_ = dst[(winoXi-1)*stride+2*winoLanes-1]
	_ = buf[o0+(winoM-1)*pitch+winoM*winoLanes-1]
	_ = buf[o1+(winoM-1)*pitch+winoM*winoLanes-1]
	winoOutputGradPairVec(dst, stride, buf[o0:], o1-o0, pitch)
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
