package experiment

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// The soft memory limit of a simulated run. Without one the collector lets
// the heap grow to twice the live data (GOGC = 100) before it collects: at
// 10,000 nodes of the MNIST MLP that is 11 GiB of garbage on top of 11 GiB
// of live state, on a machine of 24. With the limit the collector runs when
// the process reaches its live data plus a headroom, so the peak resident
// set is about the live memory.
//
// The limit starts from the estimate (LimitHeap) and follows the measured
// live heap after each round (FollowLiveHeap): an estimate that is low
// must not make the collector run without pause (it would take half the
// CPU, the runtime's cap), and one that is high must not leave room for
// garbage the run does not need.

// heapHeadroom is the garbage the collector lets accumulate above live
// bytes of live heap: a sixteenth, at least 64 MiB (a small run's round
// makes a few MiB of messages and records; the limit must not make it
// collect every few allocations).
func heapHeadroom(live int64) int64 { return max(live/16, 64<<20) }

var heapLimit struct {
	sync.Mutex
	on        bool
	available int64
	limit     int64
}

// LimitHeap sets the process's soft memory limit for a run estimated as e
// on a machine with m available: e's live heap plus the headroom, never
// above what is available (an unknown m leaves the available memory
// unbounded). GOMEMLIMIT, when set, is the user's: nothing changes.
func LimitHeap(m Memory, e Estimate) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heap := e.Live
	for _, p := range e.Parts {
		if p.OutsideHeap && !p.Garbage {
			heap -= p.Bytes // the memory limit counts the Go runtime's memory, not the program's pages
		}
	}
	heapLimit.Lock()
	defer heapLimit.Unlock()
	heapLimit.on, heapLimit.available = true, m.Available
	heapLimit.limit = capAvailable(heap+heapHeadroom(heap), m.Available)
	debug.SetMemoryLimit(heapLimit.limit)
}

// FollowLiveHeap moves the limit set by LimitHeap to the live heap the
// last collection measured plus the headroom, when that is more than the
// limit (the estimate was low). It never lowers the limit: a round's
// first collection may not have run yet. Without LimitHeap it does nothing.
func FollowLiveHeap() {
	heapLimit.Lock()
	defer heapLimit.Unlock()
	if !heapLimit.on {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := int64(s[0].Value.Uint64())
	if want := capAvailable(live+heapHeadroom(live), heapLimit.available); want > heapLimit.limit {
		heapLimit.limit = want
		debug.SetMemoryLimit(want)
	}
}

func capAvailable(b, available int64) int64 {
	if available > 0 && b > available {
		return available
	}
	return b
}
