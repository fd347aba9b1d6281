package cluster

import (
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// A peer that left (its leave marker) and came back after --resume is
// waited for again: its join marker, or its first phase marker of a round
// after it left, clears what the leave set; a leave replayed from before
// its return does not set it again.
func TestRejoinedSenderIsAwaitedAgain(t *testing.T) {
	ids, dir := wire.SimIdentities(1, 3)
	const join = ^uint32(0) - 1 // joinPhase
	for _, tc := range []struct {
		name string
		back Marker
	}{
		{"join marker", Marker{From: 1, To: 0, Round: 6, Phase: join}},
		{"phase marker", Marker{From: 1, To: 0, Round: 6, Phase: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInbox(0, 3, dir, wire.DefaultLimits(), 1<<20)
			send := func(mk Marker) {
				t.Helper()
				b, err := encodeMarker(mk, ids[mk.From])
				if err != nil {
					t.Fatal(err)
				}
				if !in.handle(b) {
					t.Fatalf("marker %+v refused", mk)
				}
			}
			check := func(sl slot, wantAwaited, wantGone []int) {
				t.Helper()
				awaited, gone := in.missing([]int{1, 2}, sl)
				if !slices.Equal(awaited, wantAwaited) || !slices.Equal(gone, wantGone) {
					t.Errorf("round %d phase %d: awaited %v, gone %v; want %v and %v", sl.round, sl.phase, awaited, gone, wantAwaited, wantGone)
				}
			}
			in.open(5)
			leave := Marker{From: 1, To: 0, Round: 5, Phase: ^uint32(0)}
			send(leave)
			check(slot{5, 0}, []int{2}, []int{1})
			in.open(6)
			send(tc.back)
			check(slot{6, 1}, []int{1, 2}, nil)
			send(leave) // a replay of the leave before its return
			check(slot{6, 1}, []int{1, 2}, nil)
			send(Marker{From: 1, To: 0, Round: 7, Phase: ^uint32(0)}) // it leaves again
			check(slot{7, 0}, []int{2}, []int{1})
		})
	}
}
