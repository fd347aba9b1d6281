package gemm

// Packing copies a block of op(A) or op(B) into the layout the micro-kernel
// streams through: micro-panels of mr rows (nr columns) stored k-major, so the
// kernel reads both operands with unit stride whatever the transposition and
// leading dimension of the caller's matrices. Panels are zero-padded to a full
// mr (nr) so the kernel never needs a partial-tile variant; the padded rows
// and columns are computed and thrown away.

// packA packs rows [i0, i0+mc) and columns [p0, p0+kc) of op(A) into dst as
// ceil(mc/mr) panels of kc×mr, panel q starting at q*kc*mr.
func packA(dst []float32, a []float32, lda int, trans bool, i0, mc, p0, kc, mr int) {
	for ir := 0; ir < mc; ir += mr {
		rows := min(mr, mc-ir)
		panel := dst[ir*kc : ir*kc+kc*mr]
		if rows < mr {
			clear(panel)
		}
		if trans {
			// op(A)[i][p] = a[p*lda+i]: each k step is a contiguous run of rows.
			src := a[p0*lda+i0+ir:]
			for p := 0; p < kc; p++ {
				copy(panel[p*mr:p*mr+rows], src[p*lda:p*lda+rows])
			}
			continue
		}
		// op(A)[i][p] = a[i*lda+p]: read each row contiguously, write it
		// with stride mr (a transpose of an mr×kc strip).
		for i := 0; i < rows; i++ {
			src := a[(i0+ir+i)*lda+p0:]
			src = src[:kc]
			d := panel[i:]
			for p, v := range src {
				d[p*mr] = v
			}
		}
	}
}

// packB packs rows [p0, p0+kc) and columns [j0, j0+nc) of op(B) into dst as
// ceil(nc/nr) panels of kc×nr, panel q starting at q*kc*nr.
func packB(dst []float32, b []float32, ldb int, trans bool, p0, kc, j0, nc, nr int) {
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		panel := dst[jr*kc : jr*kc+kc*nr]
		if cols < nr {
			clear(panel)
		}
		if trans {
			// op(B)[p][j] = b[j*ldb+p]: read each row of b contiguously and
			// write it with stride nr.
			for j := 0; j < cols; j++ {
				src := b[(j0+jr+j)*ldb+p0:]
				src = src[:kc]
				d := panel[j:]
				for p, v := range src {
					d[p*nr] = v
				}
			}
			continue
		}
		// op(B)[p][j] = b[p*ldb+j]: each k step is a contiguous run.
		src := b[p0*ldb+j0+jr:]
		if cols == 16 && nr == 16 {
			for p := 0; p < kc; p++ {
				*(*[16]float32)(panel[p*16:]) = *(*[16]float32)(src[p*ldb:])
			}
			continue
		}
		if cols == 32 && nr == 32 {
			for p := 0; p < kc; p++ {
				*(*[32]float32)(panel[p*32:]) = *(*[32]float32)(src[p*ldb:])
			}
			continue
		}
		for p := 0; p < kc; p++ {
			copy(panel[p*nr:p*nr+cols], src[p*ldb:p*ldb+cols])
		}
	}
}
