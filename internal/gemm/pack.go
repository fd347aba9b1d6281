package gemm

// Packing copies a block of op(A) or op(B) into the layout the micro-kernel
// streams through: micro-panels of mr rows (nr columns) stored k-major, so the
// kernel reads both operands with unit stride whatever the transposition and
// leading dimension of the caller's matrices. Panels are zero-padded to a full
// mr (nr) so the kernel never needs a partial-tile variant; the padded rows
// and columns are computed and thrown away.
//
// An operand stored with k contiguous (A not transposed, B transposed) is
// transposed while packing; a kernel may supply assembly 16×16 and 8×8
// transposes for that, and a strided copy for the other case, since scalar
// Go (or memmove per short row) made packing as slow as the multiplication
// for a batch of 32.

// transposeFunc sets dst[p*ldd+r] = src[r*lds+p] for r < s, p < s*blocks,
// where s is its block size (16 or 8).
type transposeFunc func(dst *float32, ldd int, src *float32, lds int, blocks int)

// packA packs rows [i0, i0+mc) and columns [p0, p0+kc) of op(A) into dst as
// ceil(mc/mr) panels of kc×mr, panel q starting at q*kc*mr.
func packA(dst []float32, a []float32, lda int, trans bool, i0, mc, p0, kc int, kern *kernel) {
	mr := kern.mr
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		panel := dst[ir*kc : ir*kc+kc*mr]
		if rows < mr {
			clear(panel)
		}
		if !trans {
			// op(A)[i][p] = a[i*lda+p].
			src := a[(i0+ir)*lda+p0:]
			if t6 := kern.transpose6; t6 != nil && rows == 6 && kc >= 8 {
				// The assembly does not bounds-check: prove both ends.
				blocks := kc / 8
				_ = src[5*lda+8*blocks-1]
				_ = panel[(8*blocks-1)*mr+5]
				t6(&panel[0], mr, &src[0], lda, blocks)
				if done := 8 * blocks; done < kc {
					transposeStrip(kern, panel[done*mr:], mr, src[done:], lda, rows, kc-done)
				}
				continue
			}
			transposeStrip(kern, panel, mr, src, lda, rows, kc)
			continue
		}
		// op(A)[i][p] = a[p*lda+i]: each k step is a contiguous run of rows.
		copyStrip(kern.copyRows, panel, mr, a[p0*lda+i0+ir:], lda, kc, rows)
	}
}

// packB packs rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into dst as
// ceil(nc/nr) panels of kc×nr, panel q starting at q*kc*nr. With onlyRagged
// it packs just a last, partial panel, at the start of dst (the others are
// used in place). With rows (gathered B, SgemmGathered), op(B)[p][j] =
// b[rows[p]+j] and ldb and trans are unused.
func packB(dst []float32, b []float32, ldb int, trans bool, rows []int, p0, kc, j0, nc int, kern *kernel, onlyRagged bool) {
	nr := kern.nr
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		at := jr * kc
		if onlyRagged {
			if cols == nr {
				continue
			}
			at = 0
		}
		panel := dst[at : at+kc*nr]
		if cols < nr {
			clear(panel)
		}
		switch {
		case rows != nil:
			for p := range kc {
				o := rows[p0+p] + j0 + jr
				copy(panel[p*nr:p*nr+cols], b[o:o+cols])
			}
			continue
		case trans:
			// op(B)[p][j] = b[j*ldb+p].
			transposeStrip(kern, panel, nr, b[(j0+jr)*ldb+p0:], ldb, cols, kc)
			continue
		}
		// op(B)[p][j] = b[p*ldb+j]: each k step is a contiguous run.
		copyStrip(kern.copyRows, panel, nr, b[p0*ldb+j0+jr:], ldb, kc, cols)
	}
}

// copyFunc sets dst[r*ldd+j] = src[r*lds+j] for r < rows, j < width, where
// width is a multiple of 8.
type copyFunc func(dst *float32, ldd int, src *float32, lds int, rows int, width int)

// copyStrip sets dst[r*ldd+j] = src[r*lds+j] for r < rows, j < width, with
// cp (when not nil) if width is a multiple of 8.
func copyStrip(cp copyFunc, dst []float32, ldd int, src []float32, lds int, rows, width int) {
	if rows == 0 || width == 0 {
		return
	}
	// The assembly does not bounds-check: prove both ends here.
	_ = src[(rows-1)*lds+width-1]
	_ = dst[(rows-1)*ldd+width-1]
	if cp != nil && width%8 == 0 {
		cp(&dst[0], ldd, &src[0], lds, rows, width)
		return
	}
	for r := 0; r < rows; r++ {
		copy(dst[r*ldd:r*ldd+width], src[r*lds:])
	}
}

// transposeStrip sets dst[p*ldd+r] = src[r*lds+p] for r < rows, p < kc,
// using the kernel's assembly transposes, if any, for whole blocks.
func transposeStrip(kern *kernel, dst []float32, ldd int, src []float32, lds int, rows, kc int) {
	r := 0
	if t16 := kern.transpose16; t16 != nil && kc >= 16 {
		blocks := kc / 16
		p0 := 16 * blocks
		for ; r+16 <= rows; r += 16 {
			s, d := src[r*lds:], dst[r:]
			// The assembly does not bounds-check: prove both ends here.
			_ = s[15*lds+p0-1]
			_ = d[(p0-1)*ldd+15]
			t16(&d[0], ldd, &s[0], lds, blocks)
			if p0 < kc {
				transpose8Strip(kern.transpose8, dst[p0*ldd+r:], ldd, src[r*lds+p0:], lds, 16, kc-p0)
			}
		}
	}
	if r < rows {
		transpose8Strip(kern.transpose8, dst[r:], ldd, src[r*lds:], lds, rows-r, kc)
	}
}

// transpose8Strip is transposeStrip with 8×8 blocks from t8 (when not nil)
// and scalar Go for the rest.
func transpose8Strip(t8 transposeFunc, dst []float32, ldd int, src []float32, lds int, rows, kc int) {
	r, p0 := 0, 0
	if blocks := kc / 8; t8 != nil && blocks > 0 {
		for ; r+8 <= rows; r += 8 {
			s, d := src[r*lds:], dst[r:]
			_ = s[7*lds+8*blocks-1]
			_ = d[(8*blocks-1)*ldd+7]
			t8(&d[0], ldd, &s[0], lds, blocks)
		}
		p0 = 8 * blocks
	}
	// The columns past the last whole block of the rows done above.
	for i := 0; i < r; i++ {
		s := src[i*lds : i*lds+kc]
		d := dst[i:]
		for p := p0; p < kc; p++ {
			d[p*ldd] = s[p]
		}
	}
	if r == rows {
		return
	}
	// Every column of the remaining rows (fewer than 8: the AVX2 kernel's
	// 6-row A panels always come here), one k step at a time so that the
	// writes are sequential and the rows are read as parallel streams.
	left := src[r*lds:]
	d := dst[r:]
	if n := rows - r; n == 6 {
		s0, s1, s2 := left[:kc], left[lds:lds+kc], left[2*lds:2*lds+kc]
		s3, s4, s5 := left[3*lds:3*lds+kc], left[4*lds:4*lds+kc], left[5*lds:5*lds+kc]
		for p := range kc {
			o := d[p*ldd : p*ldd+6]
			o[0], o[1], o[2], o[3], o[4], o[5] = s0[p], s1[p], s2[p], s3[p], s4[p], s5[p]
		}
		return
	}
	for p := range kc {
		o := d[p*ldd : p*ldd+rows-r]
		for i := range o {
			o[i] = left[i*lds+p]
		}
	}
}

// packAGathered packs panels of gathered rows, op(A)[i][p] = a[rows[i]+p],
// for block rows [i0+from, i0+mc) and columns [p0, p0+kc) into dst from its
// start: all of the block's panels (from 0), or only a ragged last one
// (the kernel reads the others in place).
func packAGathered(dst, a []float32, rows []int, i0, from, mc, p0, kc, mr int) {
	for ir := from; ir < mc; ir += mr {
		n := min(mr, mc-ir)
		at := (ir - from) * kc
		panel := dst[at : at+kc*mr]
		if n < mr {
			clear(panel)
		}
		for i := range n {
			src := a[rows[i0+ir+i]+p0:]
			src = src[:kc]
			for p, v := range src {
				panel[p*mr+i] = v
			}
		}
	}
}

// Transpose8 sets dst[p·ldd + i] = src[i·lds + p] for rows i < 8 of src
// and columns p < n: the packing's AVX 8×8 block transpose (a loop where
// the machine has no AVX2), for callers that move data between a
// sample-major layout and one with 8 samples interleaved (nn's Winograd
// lanes). It panics if either slice is too short for the shape.
func Transpose8(dst []float32, ldd int, src []float32, lds int, n int) {
	if n <= 0 {
		return
	}
	if ldd < 8 || lds < n {
		panic("gemm: Transpose8 with overlapping rows")
	}
	_ = src[7*lds+n-1]
	_ = dst[(n-1)*ldd+7]
	transpose8Strip(defaultKernel().transpose8, dst, ldd, src, lds, 8, n)
}

// Transpose8Down is Transpose8's inverse for a source of 8 columns:
// dst[i·ldd + p] = src[p·8 + i] for i < 8 and p < n, 8×8 blocks at a time
// with AVX2 (a loop for the rest, and everywhere without AVX2). It panics
// if either slice is too short for the shape.
func Transpose8Down(dst []float32, ldd int, src []float32, n int) {
	if n <= 0 {
		return
	}
	if ldd < n {
		panic("gemm: Transpose8Down with overlapping rows")
	}
	_ = src[n*8-1]
	_ = dst[7*ldd+n-1]
	p := 0
	if blocks := n / 8; hasAVX2 && blocks > 0 {
		transpose8Down(&dst[0], ldd, &src[0], blocks)
		p = 8 * blocks
	}
	for ; p < n; p++ {
		for i := 0; i < 8; i++ {
			dst[i*ldd+p] = src[p*8+i]
		}
	}
}
