package gemm

import "unsafe"

// workspace holds one part's packing buffers. Buffers only grow, so after
// the first call of a given shape a call allocates nothing.
type workspace struct {
	ap, bp []float32 // packed block of op(A) (mc×kc) and of op(B) (kc×nc)
	tile   []float32 // mr×nr scratch tile for the ragged edges of C
	rowPad []int     // mr row offsets: a ragged panel of gathered A rows
}

// run computes the rectangle [m0,m1)×[n0,n1) of C with the loop nest of
// Goto & van de Geijn, "Anatomy of high-performance matrix multiplication"
// (ACM TOMS 34(3), 2008), §4: columns of B in blocks of nc (packed once,
// reused by every row block), k in blocks of kc, rows of A in blocks of mc
// (packed into a buffer that stays in L2), then register tiles, with the B
// micro-panel reused from L1 across all A micro-panels of the block.
func (w *workspace) run(kern *kernel, p *problem, m0, m1, n0, n1 int) {
	mr, nr := kern.mr, kern.nr
	_, kcb := kBlocks(p.k)
	mcb := min(kern.mc, roundUp(m1-m0, mr))
	ncb := min(kern.nc, roundUp(n1-n0, nr))
	// For a short block of rows, a B micro-panel is read by only a few A
	// micro-panels, and packing B (one more pass over all of B, the large
	// operand when m is a batch of 32) costs more than reading it in place
	// at stride ldb. That needs B not transposed; a ragged last panel is
	// still packed, to pad it, and then is the only packed panel. Rows 4
	// KiB or more apart are packed too (directMaxStride): a multiple of 4
	// KiB maps every k-row of a micro-panel to the same few cache sets, and
	// any stride that wide defeats the prefetcher; both measured slower
	// than packing.
	direct := !p.transB && m1-m0 <= directMaxRows*mr && p.ldb < directMaxStride
	if p.brows != nil {
		// Gathered rows are read in place by the kernel's microG (they are
		// runs of a small input that stays in cache), or all copied.
		direct = kern.microG != nil
	}
	if p.packedA == nil && (p.arows == nil || kern.microAG == nil) {
		w.ap = growAligned(w.ap, mcb*kcb)
	}
	if direct {
		w.bp = growAligned(w.bp, kcb*nr)
	} else {
		w.bp = growAligned(w.bp, kcb*ncb)
	}
	w.tile = growAligned(w.tile, mr*nr)
	if len(w.rowPad) < mr {
		w.rowPad = make([]int, mr)
	}
	for jc := n0; jc < n1; jc += ncb {
		nc := min(ncb, n1-jc)
		for pc := 0; pc < p.k; pc += kcb {
			kc := min(kcb, p.k-pc)
			// Only the first k block applies the caller's beta; later
			// blocks add onto what the earlier ones wrote.
			beta := p.beta
			if pc > 0 {
				beta = 1
			}
			packB(w.bp, p.b, p.ldb, p.transB, p.brows, pc, kc, jc, nc, kern, direct)
			for ic := m0; ic < m1; ic += mcb {
				mc := min(mcb, m1-ic)
				ap := w.ap
				switch {
				case p.packedA != nil:
					// Panel ic/mr of the block at pc (see PackedA).
					ap = p.packedA[roundUp(p.m, mr)*pc+ic*kc:]
				case p.arows != nil:
					// Gathered rows are read in place by microAG, a ragged
					// last panel too (microInPlace); without microAG, all
					// are packed.
					if kern.microAG == nil {
						packAGathered(w.ap, p.a, p.arows, ic, 0, mc, pc, kc, mr)
					}
				case !p.directA:
					packA(w.ap, p.a, p.lda, p.transA, ic, mc, pc, kc, kern)
				default:
					if full := mc / mr * mr; full < mc {
						// A is read in place but for a ragged last panel,
						// packed alone (zero-padded) at the start of ap.
						packA(w.ap, p.a, p.lda, false, ic+full, mc-full, pc, kc, kern)
					}
				}
				w.macro(kern, p, ap, ic, mc, pc, kc, jc, nc, beta, direct)
			}
		}
	}
}

// macro runs the micro-kernel over one mc×nc block of C, with the A block
// packed at ap (or read in place, p.directA) and the B block packed or, if
// direct, used in place.
func (w *workspace) macro(kern *kernel, p *problem, ap []float32, ic, mc, pc, kc, jc, nc int, beta float32, direct bool) {
	mr, nr := kern.mr, kern.nr
	// A read in place by the kernel (but for a ragged last panel, packed).
	inPlace := p.directA || (p.arows != nil && kern.microAG != nil)
	for jr := 0; jr < nc; jr += nr {
		cols := min(nr, nc-jr)
		var bpan *float32
		ldb := nr
		switch {
		case !direct:
			bpan = &w.bp[jr*kc]
		case cols == nr:
			bpan, ldb = &p.b[pc*p.ldb+jc+jr], p.ldb
		default: // the ragged panel, packed alone
			bpan = &w.bp[0]
		}
		gather := direct && p.brows != nil && cols == nr
		for ir := 0; ir < mc; ir += mr {
			rows := min(mr, mc-ir)
			ci := (ic+ir)*p.ldc + jc + jr
			if gather {
				w.microGathered(kern, p, &ap[ir*kc], kc, pc, jc+jr, ci, rows, beta)
				continue
			}
			if inPlace && (rows == mr || p.arows != nil) {
				w.microInPlace(kern, p, ic+ir, rows, pc, kc, bpan, ldb, ci, cols, beta)
				continue
			}
			apan := &ap[ir*kc]
			if inPlace {
				apan = &w.ap[0] // the ragged panel of a directA, packed alone
			}
			micro, width := kern.micro, nr
			if kern.half != nil && cols <= nr/2 {
				micro, width = kern.half, nr/2
			}
			if rows == mr && cols == width {
				micro(kc, apan, bpan, &p.c[ci], ldb, p.ldc, p.alpha, beta)
				continue
			}
			if cols == nr && width == nr && kern.microRows != nil {
				// A ragged last row panel, full width: its rows only.
				kern.microRows(kc, apan, bpan, &p.c[ci], ldb, p.ldc, p.alpha, beta, rows)
				continue
			}
			// A ragged tile goes through the same kernel on a scratch
			// copy, so every element of C sees the same arithmetic.
			t := w.tile
			if beta != 0 {
				for i := 0; i < rows; i++ {
					copy(t[i*nr:i*nr+cols], p.c[ci+i*p.ldc:])
				}
			}
			micro(kc, apan, bpan, &t[0], ldb, nr, p.alpha, beta)
			for i := 0; i < rows; i++ {
				copy(p.c[ci+i*p.ldc:ci+i*p.ldc+cols], t[i*nr:])
			}
		}
	}
}

// microInPlace runs the kernel that reads A in place (microA, or for
// gathered rows microAG or its half) on the tile of rows [i, i+rows) at C
// offset ci, through the scratch tile when cols is short of the kernel's
// width or rows of mr. Only gathered rows come short (rows < mr): the
// panel's offsets are padded by repeating its last row, whose extra
// results stay in the scratch tile. That costs the kernel's work on the
// padding rows, as packing the panel zero-padded did, without packing it
// (for a convolution's weight gradient, 75 = 12·6 + 3 rows with AVX2,
// that was a transposing copy of 3 rows on every call), and each row's
// arithmetic is the full panels' (microAG's bits, the tests' reference).
func (w *workspace) microInPlace(kern *kernel, p *problem, i, rows, pc, kc int, bpan *float32, ldb, ci, cols int, beta float32) {
	mr, nr := kern.mr, kern.nr
	width := nr
	if p.arows != nil && cols <= nr/2 {
		width = nr / 2
	}
	dst, ldc := &p.c[ci], p.ldc
	t := w.tile
	if cols != width || rows != mr {
		dst, ldc = &t[0], nr
		if beta != 0 {
			for r := 0; r < rows; r++ {
				copy(t[r*nr:r*nr+cols], p.c[ci+r*p.ldc:])
			}
		}
	}
	var rowsAt *int
	if p.arows != nil {
		rowsAt = &p.arows[i]
		if rows < mr {
			pad := w.rowPad
			copy(pad, p.arows[i:i+rows])
			for r := rows; r < mr; r++ {
				pad[r] = pad[rows-1]
			}
			rowsAt = &pad[0]
		}
	}
	if p.arows != nil && ldb != nr {
		panic("gemm: gathered A rows need a packed B") // the AVX-512 kernels assume it
	}
	switch {
	case p.arows == nil:
		kern.microA(kc, &p.a[i*p.lda+pc], p.lda, bpan, dst, ldb, ldc, p.alpha, beta)
	case width < nr:
		kern.microAGHalf(kc, &p.a[pc], rowsAt, bpan, dst, ldb, ldc, p.alpha, beta)
	default:
		kern.microAG(kc, &p.a[pc], rowsAt, bpan, dst, ldb, ldc, p.alpha, beta)
	}
	if cols != width || rows != mr {
		for r := 0; r < rows; r++ {
			copy(p.c[ci+r*p.ldc:ci+r*p.ldc+cols], t[r*nr:])
		}
	}
}

// microGathered runs kern.microG on the tile at C offset ci whose B panel
// is columns [j, j+nr) of the gathered rows from pc on, through the scratch
// tile when it has fewer than mr rows.
func (w *workspace) microGathered(kern *kernel, p *problem, apan *float32, kc, pc, j, ci, rows int, beta float32) {
	mr, nr := kern.mr, kern.nr
	if rows == mr {
		kern.microG(kc, apan, &p.brows[pc], &p.b[j], &p.c[ci], p.ldc, p.alpha, beta)
		return
	}
	t := w.tile
	if beta != 0 {
		for i := 0; i < rows; i++ {
			copy(t[i*nr:(i+1)*nr], p.c[ci+i*p.ldc:])
		}
	}
	kern.microG(kc, apan, &p.brows[pc], &p.b[j], &t[0], nr, p.alpha, beta)
	for i := 0; i < rows; i++ {
		copy(p.c[ci+i*p.ldc:ci+i*p.ldc+nr], t[i*nr:])
	}
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// growAligned returns a slice of length n whose first element is 64-byte
// aligned (a cache line: the kernels' vector loads then never straddle two
// lines), reusing buf when it is already large enough.
func growAligned(buf []float32, n int) []float32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	raw := make([]float32, n+16)
	off := int((-uintptr(unsafe.Pointer(&raw[0])) & 63) / 4)
	return raw[off : off+n : off+n]
}

// directMaxRows is the largest number of register-tile rows for which a
// part reads a non-transposed B in place instead of packing it. With the
// AVX-512 kernel, 8 (64 rows) beat packing at every stride measured
// (256, 512, 784: 32×784×256 went from 90 to 66 µs, 64×784×256 from 143 to
// 124 µs) except at strides of 1024 floats and more (64×1024×256: 187 to
// 237 µs; see directMaxStride).
const directMaxRows = 8

// directMaxStride is the widest row stride, in floats, at which B is read
// in place. A linear layer's input gradient with 3136 inputs (64×3136,
// k = 512: B is the weight matrix, rows 12.5 KiB apart) ran at 65–71
// GFLOP/s read in place and 66–78 packed on one AVX-512 thread, 116–123
// and 130–143 on two: rows that far apart defeat the prefetcher, which
// follows a stride within a 4 KiB page only.
const directMaxStride = 1024
