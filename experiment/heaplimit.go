package experiment

import (
	"math"
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
// The limit starts from the estimate (LimitHeap). A limit that leaves the
// heap no room above its live data makes the collector run back to back,
// each cycle freeing nothing (the runtime lets it take up to half the
// CPU): an estimate a little low does it, and so does the runtime's own
// memory beside the heap's objects (metadata, free pages not yet returned,
// the unused ends of size classes), which the limit counts and the
// estimate cannot know. So a watcher reads, four times a second, the heap
// goal the runtime derives from the limit and the live heap the last
// collection left: when the goal leaves less than half a headroom of room,
// it raises the limit by what is missing. It is never lowered, never
// above the available memory. FollowLiveHeap runs the same check after
// each round.

// heapHeadroom is the garbage the collector lets accumulate above live
// bytes of live heap: a sixty-fourth, at least 64 MiB (a small run's round
// makes a few MiB of messages and records; the limit must not make it
// collect every few allocations). A round of 10,000 MLP nodes leaves
// about 700 MiB of garbage: four collections of about 0.15 s each, in a
// round of minutes; a larger headroom would put the 10,000-node run's
// peak over 12 GiB.
func heapHeadroom(live int64) int64 { return max(live/64, 64<<20) }

// checkEvery is the watcher's period.
const checkEvery = 250 * time.Millisecond

var heapLimit struct {
	sync.Mutex
	on        bool
	available int64
	limit     int64
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
	heapLimit.on, heapLimit.available = true, m.Available
	heapLimit.limit = capAvailable(heap+heapHeadroom(heap), m.Available)
	debug.SetMemoryLimit(heapLimit.limit)
	if first {
		go watchHeapLimit()
	}
}

// watchHeapLimit runs ensureRoom every checkEvery.
func watchHeapLimit() {
	for range time.Tick(checkEvery) {
		ensureRoom()
	}
}

// FollowLiveHeap raises the limit set by LimitHeap when it leaves the
// heap less than half a headroom above the live heap the last collection
// measured (ensureRoom); the run's sink calls it after each round. Without
// LimitHeap it does nothing.
func FollowLiveHeap() { ensureRoom() }

// ensureRoom raises the limit so that the runtime's heap goal is at least
// the live heap plus a headroom, when it is less than the live heap plus
// half of one. The goal follows the limit less the runtime's own memory,
// except where it was clamped, so a raise may fall short once: it checks
// again, a few times at most.
func ensureRoom() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/gogc:percent"}}
	heapLimit.Lock()
	defer heapLimit.Unlock()
	for range 3 {
		metrics.Read(s)
		if !heapLimit.on || s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 || s[2].Value.Kind() != metrics.KindUint64 {
			return
		}
		live, goal, gogc := int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64()), s[2].Value.Uint64()
		room := heapHeadroom(live)
		if live == 0 || goal-live >= room/2 || !limitBinds(live, goal, gogc) || !raise(heapLimit.limit+live+room-goal) {
			return
		}
	}
}

// limitBinds says whether the heap goal is the memory limit's rather than
// GOGC's, which is at least the live heap plus gogc percent of it. GOGC=off
// reads as -1 in two's complement, a huge percent: then the goal is always
// the limit's. A small heap early in a run has a GOGC goal of a few MiB
// above it: that is no reason to raise the limit (doing it four times a
// second while 100,000 nodes were built took the limit from 7 GiB to past
// 9, and the peak with it).
func limitBinds(live, goal int64, gogc uint64) bool {
	return gogc > math.MaxInt32 || goal < live+live/100*int64(gogc)
}

// raise sets the limit to want if that is more than it is (capped by the
// available memory) and says whether it did. The caller holds heapLimit.
func raise(want int64) bool {
	if want = capAvailable(want, heapLimit.available); heapLimit.on && want > heapLimit.limit {
		heapLimit.limit = want
		debug.SetMemoryLimit(want)
		return true
	}
	return false
}

func capAvailable(b, available int64) int64 {
	if available > 0 && b > available {
		return available
	}
	return b
}
