package gemm

import (
	"runtime"
	"testing"
	"time"
)

// TestCloseWhileAHelperWakes: a helper that wakes for a call whose part the
// caller has already run, and sees the stop only then, must still return.
// Close used to lose that stop (the helper took the stop's sequence number
// for the call's) and wait for the helper forever. The hook holds the helper
// between its two reads until the caller has run its part and closed the
// engine; a watchdog names the hang instead of letting the test binary's
// timeout kill the package.
func TestCloseWhileAHelperWakes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	entered, closed := make(chan struct{}, 1), make(chan struct{})
	hold := func() {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-closed
	}
	betweenWakeReads.Store(&hold)
	defer betweenWakeReads.Store(nil)

	done := make(chan struct{})
	go func() {
		defer close(done)
		e := New(2)
		e.Each(2, func(worker, lo, hi int) {})
		<-entered // the helper is held, so the caller ran both parts
		p := e.pool
		go func() { // release the helper once the stop is published
			for !p.quit.Load() || p.helpers[0].seq.Load() < 2 {
				runtime.Gosched()
			}
			close(closed)
		}()
		e.Close()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a liveness bound, not a speed target
		t.Fatal("Engine.Close did not return: a helper missed the stop")
	}
}
