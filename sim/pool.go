package sim

import (
	"sync"
	"sync/atomic"
)

// forEach runs fn(i) for i in [0, n) on up to workers goroutines, each i
// exactly once. Which goroutine runs which i varies, so fn must touch only
// state owned by i; the returned error is the one of the lowest i, so it
// does not depend on scheduling either.
func forEach(n, workers int, fn func(i int) error) error {
	errs := make([]error, n)
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			errs[i] = fn(i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < min(workers, n); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					errs[i] = fn(i)
				}
			}()
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
