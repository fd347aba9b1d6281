//go:build amd64 && !purego

package nn

//go:noescape
func pool2x2RowsAVX2(top, out *float32, idx *int32, rows, groups int, start, w, wo int32)

// pool2x2Rows pools up to rows consecutive output rows of a 2×2, stride 2
// max-pool with AVX2, 8 outputs at a time, in one call, and returns how
// many leading rows it did. Row pair r has its top row at x[top+2w·r],
// its outputs at out[wo·r:] and idx[wo·r:], and start+2w·r as its top
// row's offset for idx. A row's last group of 8 may run past the row
// (into the next row's inputs and outputs, which the next row then
// overwrites), so only the rows whose overrun stays inside x, out and idx
// (and whose offsets fit an int32) are done; the caller does the rest.
func pool2x2Rows(x []float32, top, w int, out []float32, idx []int32, wo, rows, start int) int {
	if !haveAVX2 || rows <= 0 || wo <= 0 {
		return 0
	}
	groups := (wo + 7) / 8
	// Row r reads x up to top+2w·r+w+16·groups and writes out and idx up
	// to wo·r+8·groups: the largest r for which each fits bounds rows.
	fit := func(room, at, step int) int {
		if room < at {
			return 0
		}
		return (room-at)/step + 1
	}
	rows = min(rows,
		fit(len(x), top+w+16*groups, 2*w),
		fit(len(out), 8*groups, wo),
		fit(len(idx), 8*groups, wo),
		fit(1<<31-1, start+w+16*groups, 2*w))
	if rows > 0 {
		pool2x2RowsAVX2(&x[top], &out[0], &idx[0], rows, groups, int32(start), int32(w), int32(wo))
	}
	return rows
}
