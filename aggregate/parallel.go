package aggregate

import (
	"sync"
	"sync/atomic"
)

// Large single-node work (100 vectors of 1M) splits by coordinate (DESIGN.md,
// "Performance rules"). The split is into groups of contiguous coordinates
// whose bounds depend on the vector length alone, never on the thread
// count: a rule that reduces across coordinates keeps one partial result
// per group and adds the partials in group order, so its output is
// bit-identical for every thread count. Threads only decide who computes
// which group.

// span is a fixed partition of the coordinates [0, d) into groups.
type span struct{ d, size, count int }

const (
	// maxGroups bounds the groups of a span, and so the per-group partial
	// results a reduction keeps.
	maxGroups = 64
	// minGroup is the smallest group worth a goroutine's hand-over.
	minGroup = 4096
)

// split returns the partition of d items into at most limit groups (limit
// < 1 means maxGroups) of at least least items each.
func split(d, least, limit int) span {
	if limit < 1 || limit > maxGroups {
		limit = maxGroups
	}
	count := min(limit, max(1, d/max(1, least)))
	size := (d + count - 1) / count
	if size == 0 {
		size = 1
	}
	count = max(1, (d+size-1)/size)
	return span{d: d, size: size, count: count}
}

// bounds returns group g's coordinates [lo, hi).
func (s span) bounds(g int) (lo, hi int) {
	lo = g * s.size
	return lo, min(lo+s.size, s.d)
}

// task is one phase of a rule's work: do runs group (or item) g on worker
// w, where w < the thread count indexes per-worker scratch. Rules pass
// pointers to their own scratch as tasks, so a single-threaded call
// allocates nothing.
type task interface{ do(w, g int) }

// parallel runs t.do for g = 0 .. count-1 on up to threads goroutines (the
// caller's included) and returns when all are done. Items are handed out
// in order through a shared counter.
func parallel(threads, count int, t task) {
	threads = min(threads, count)
	if threads <= 1 {
		for g := range count {
			t.do(0, g)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func(w int) {
		for {
			g := int(next.Add(1) - 1)
			if g >= count {
				return
			}
			t.do(w, g)
		}
	}
	for w := 1; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(w)
		}()
	}
	work(0)
	wg.Wait()
}

// workers returns the goroutines a rule with the Threads setting t uses:
// values below 1 mean 1 (the simulator already runs one node per core).
func workers(t int) int { return max(1, t) }
