package experiment

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// A limit under the live heap leaves the collector no room: ensureRoom
// raises it until the runtime's heap goal is half a headroom or more above
// the live heap, and a limit with room enough is left alone.
func TestEnsureRoomRaisesABindingLimit(t *testing.T) {
	heapLimit.Lock()
	on, available, limit := heapLimit.on, heapLimit.available, heapLimit.limit
	heapLimit.Unlock()
	defer func() {
		heapLimit.Lock()
		heapLimit.on, heapLimit.available, heapLimit.limit = on, available, limit
		heapLimit.Unlock()
		if on {
			debug.SetMemoryLimit(limit)
		} else {
			debug.SetMemoryLimit(math.MaxInt64)
		}
	}()

	live := make([][]byte, 64) // 64 MiB that stays live
	for i := range live {
		live[i] = make([]byte, 1<<20)
		live[i][0] = 1
	}
	runtime.GC()
	heap := readLive(t)

	// A limit of half the live heap: the goal cannot exceed the limit.
	heapLimit.Lock()
	heapLimit.on, heapLimit.available, heapLimit.limit = true, 0, heap/2
	heapLimit.Unlock()
	debug.SetMemoryLimit(heap / 2)
	runtime.GC()
	ensureRoom()
	runtime.GC()
	heap, goal := readLive(t), readGoal(t)
	if room := heapHeadroom(heap); goal-heap < room/2 {
		t.Fatalf("after ensureRoom the heap goal is %d B over the live heap's %d B: want at least half the headroom, %d B (limit %d B)", goal-heap, heap, room/2, debug.SetMemoryLimit(-1))
	}

	// Enough room: no change.
	before := debug.SetMemoryLimit(-1)
	ensureRoom()
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Fatalf("ensureRoom moved a limit with room from %d to %d B", before, after)
	}
	// A goal GOGC sets, a little above a small heap, under a limit far
	// above it: no reason to raise the limit.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	heapLimit.Lock()
	heapLimit.limit = 1 << 40
	heapLimit.Unlock()
	debug.SetMemoryLimit(1 << 40)
	runtime.GC()
	if heap, goal := readLive(t), readGoal(t); goal-heap >= heapHeadroom(heap)/2 {
		t.Fatalf("GOGC=10 leaves %d B of room over %d B: the case needs less than half a headroom", goal-heap, heap)
	}
	ensureRoom()
	if after := debug.SetMemoryLimit(-1); after != 1<<40 {
		t.Fatalf("ensureRoom raised a limit that does not bind (GOGC sets the goal) from %d to %d B", int64(1<<40), after)
	}
	runtime.KeepAlive(live)
}

func TestLimitBinds(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, goal int64
		gogc       uint64
		want       bool
	}{
		{100 * mib, 200 * mib, 100, false}, // GOGC's goal
		{100 * mib, 150 * mib, 100, true},  // below GOGC's: the limit's
		{100 * mib, 105 * mib, 10, true},
		{100 * mib, 112 * mib, 10, false},
		{100 * mib, 500 * mib, math.MaxUint64, true}, // GOGC=off
	} {
		if got := limitBinds(c.live, c.goal, c.gogc); got != c.want {
			t.Errorf("limitBinds(live %d MiB, goal %d MiB, GOGC %d) = %v, want %v", c.live/mib, c.goal/mib, c.gogc, got, c.want)
		}
	}
}

func readLive(t *testing.T) int64 { return readMetric(t, "/gc/heap/live:bytes") }
func readGoal(t *testing.T) int64 { return readMetric(t, "/gc/heap/goal:bytes") }

func readMetric(t *testing.T, name string) int64 {
	t.Helper()
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skipf("runtime metric %s is not supported by this Go", name)
	}
	return int64(s[0].Value.Uint64())
}
