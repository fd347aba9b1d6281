package sim

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// forEach runs fn(i) for i in [0, n) on up to workers goroutines, each i
// exactly once. Which goroutine runs which i varies, so fn must touch only
// state owned by i; the returned error is the one of the lowest i, so it
// does not depend on scheduling either.
func forEach(n, workers int, fn func(i int) error) error {
	return forEachIn(nil, n, workers, fn)
}

// forEachWorker is forEach telling fn which worker runs it, w in [0,
// workers): fn may use state owned by w (scratch reused from one item to
// the next) besides state owned by i.
func forEachWorker(n, workers int, fn func(w, i int) error) error {
	return pool(nil, n, workers, fn)
}

// forEachIn is forEach handing the items out in order (a permutation of
// [0, n); nil is 0, 1, …). Only when each item starts depends on the order,
// never what it computes, so the order is a scheduling choice: longest
// first keeps the last worker from starting a long item alone.
func forEachIn(order []int, n, workers int, fn func(i int) error) error {
	return pool(order, n, workers, func(_, i int) error { return fn(i) })
}

// pool runs fn(w, i) for the items in order on up to workers goroutines,
// w the goroutine's index.
func pool(order []int, n, workers int, fn func(w, i int) error) error {
	item := func(k int) int {
		if order == nil {
			return k
		}
		return order[k]
	}
	errs := make([]error, n)
	if workers <= 1 || n <= 1 {
		for k := 0; k < n; k++ {
			i := item(k)
			errs[i] = fn(0, i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < min(workers, n); w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for {
					k := int(next.Add(1) - 1)
					if k >= n {
						return
					}
					i := item(k)
					errs[i] = fn(w, i)
				}
			}(w)
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// longestFirst is the indices of cost in decreasing cost, ties by index.
func longestFirst(cost []float64) []int {
	order := make([]int, len(cost))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	return order
}
