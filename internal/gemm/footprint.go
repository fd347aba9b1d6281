package gemm

import "github.com/trellis-fl/trellis/internal/memsize"

// A Product is one matrix product C(M×N) = op(A)(M×K)·op(B)(K×N) a caller
// runs, described for Workspace (A is never transposed here: callers that
// transpose A describe the product they run instead).
type Product struct {
	M, N, K, LDB int64
	TransB       bool
	// ReadsC: beta ≠ 0.
	ReadsC bool
	// PackedA: A is packed once per pass into a buffer of its own
	// (PackedA, a convolution's weights), not in the workspace.
	PackedA bool
	// Gathered: B's rows are gathered (SgemmNTGathered), which kernels
	// that read A in place always swap.
	Gathered bool
	// GatheredA: A's rows are gathered (SgemmGatheredNT); kernels that read
	// them in place pack no A.
	GatheredA bool
}

// Workspace is the heap bytes an engine of the default kernel holds after
// running the products (its packing buffers only grow: the largest of
// each; block.go), plus the PackedA buffers of products that pack A once,
// each allocation rounded as the Go allocator does (memsize.Alloc).
func Workspace(ps []Product) int64 {
	if len(ps) == 0 {
		return 0
	}
	k := defaultKernel()
	mr, nr, mc, nc := int64(k.mr), int64(k.nr), int64(k.mc), int64(k.nc)
	inPlaceA := k.microA != nil
	var ap, bp, ct, packed int64
	for _, c := range ps {
		if c.PackedA {
			packed += memsize.Floats(roundUp64(c.M, mr)*c.K + 16)
		}
		moves := int64(1)
		if c.ReadsC {
			moves = 2
		}
		if inPlaceA && c.TransB && (c.Gathered || c.M%nr == 0 && c.K > moves*c.M) {
			// Swapped (Engine.swaps): Cᵀ (N×M) in the engine's scratch,
			// op(A)ᵀ packed as B (transposed, so never in place), A's
			// buffer as for N rows.
			ct = max(ct, c.N*c.M)
			c = Product{M: c.N, N: c.M, K: c.K, TransB: true}
		}
		blocks := (c.K + 255) / 256
		kc := (c.K + blocks - 1) / blocks
		mcb := min(mc, roundUp64(c.M, mr))
		ncb := min(nc, roundUp64(c.N, nr))
		if !c.PackedA && !(c.GatheredA && inPlaceA) {
			ap = max(ap, mcb*kc)
		}
		if !c.TransB && c.M <= 8*mr && c.LDB%1024 != 0 {
			bp = max(bp, kc*nr)
		} else {
			bp = max(bp, kc*ncb)
		}
	}
	ws := memsize.Floats(ap+16) + memsize.Floats(bp+16) + memsize.Floats(mr*nr+16) + packed
	if ct > 0 {
		ws += memsize.Floats(ct + 16)
	}
	return ws
}

// KernelGathersRows is Engine.GathersRows for the default kernel.
func KernelGathersRows() bool { return defaultKernel().microAG != nil }

func roundUp64(x, to int64) int64 { return (x + to - 1) / to * to }
