package experiment

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// The soft memory limit of a simulated run. Without one the collector lets
// the heap grow to twice the live data (GOGC = 100) before it collects: at
// 10,000 nodes of the MNIST MLP that is 11 GiB of garbage on top of 11 GiB
// of live state, on a machine of 24. With the limit the collector runs when
// the process reaches its live data plus a headroom, so the peak resident
// set is about the live memory.
//
// The limit starts from the estimate (LimitHeap). A limit under what the
// run needs makes the collector run back to back (each cycle frees
// nothing; the runtime lets it take up to half the CPU): an estimate a few
// per cent low, or the runtime's own overhead on the heap (metadata,
// fragmentation), does it. A watcher raises the limit by a headroom
// whenever collections come back to back, and after each round
// FollowLiveHeap raises it to the measured live heap plus the headroom; it
// is never lowered, never above the available memory.

// heapHeadroom is the garbage the collector lets accumulate above live
// bytes of live heap: a thirty-second, at least 64 MiB (a small run's
// round makes a few MiB of messages and records; the limit must not make
// it collect every few allocations). A round of 10,000 MLP nodes leaves
// about 120 MiB of garbage, so its collector runs about every three
// rounds.
func heapHeadroom(live int64) int64 { return max(live/32, 64<<20) }

// thrashCycles collections within thrashWindow mean the limit binds: the
// collector runs back to back.
const (
	thrashWindow = 250 * time.Millisecond
	thrashCycles = 4
)

var heapLimit struct {
	sync.Mutex
	on        bool
	available int64
	limit     int64
	headroom  int64
}

// LimitHeap sets the process's soft memory limit for a run estimated as e
// on a machine with m available: e's live heap plus the headroom, never
// above what is available (an unknown m leaves the available memory
// unbounded), and starts the watcher that raises it when it binds.
// GOMEMLIMIT, when set, is the user's: nothing changes.
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
	first := !heapLimit.on
	heapLimit.on, heapLimit.available, heapLimit.headroom = true, m.Available, heapHeadroom(heap)
	heapLimit.limit = capAvailable(heap+heapLimit.headroom, m.Available)
	debug.SetMemoryLimit(heapLimit.limit)
	if first {
		go watchHeapLimit()
	}
}

// watchHeapLimit raises the limit by a headroom whenever thrashCycles
// collections ran within thrashWindow.
func watchHeapLimit() {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	last := s[0].Value.Uint64()
	for range time.Tick(thrashWindow) {
		metrics.Read(s)
		now := s[0].Value.Uint64()
		if now-last >= thrashCycles {
			heapLimit.Lock()
			raise(heapLimit.limit + heapLimit.headroom)
			heapLimit.Unlock()
		}
		last = now
	}
}

// FollowLiveHeap moves the limit set by LimitHeap to the live heap the
// last collection measured plus the headroom, when that is more than the
// limit (the estimate was low). Without LimitHeap it does nothing.
func FollowLiveHeap() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	live := int64(s[0].Value.Uint64())
	heapLimit.Lock()
	defer heapLimit.Unlock()
	raise(live + heapHeadroom(live))
}

// raise sets the limit to want if that is more than it is (capped by the
// available memory). The caller holds heapLimit.
func raise(want int64) {
	if !heapLimit.on {
		return
	}
	if want = capAvailable(want, heapLimit.available); want > heapLimit.limit {
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
