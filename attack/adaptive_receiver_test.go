package attack

import (
	"math"
	"testing"
)

// By hand, e = 0.5: honest senders 0, 1, 2; receiver 5 hears 0, 1 and the
// attacker 4. Round 0: payloads (2,0), (0,2), (9,9): cur_5 = (1,1), no
// history, so pred = cur and the message is (1 − e)·cur = (0.5, 0.5).
// Round 1: (4,0), (4,0), (9,9): cur_5 = (4,0), pred_5 = (1,1) from round 0,
// message (1,1) − 0.5·√2·(1,0) = (1 − √2/2, 1). Receiver 6 hears only the
// attacker: it gets the global adaptive message.
func TestAdaptiveReceiverHandValues(t *testing.T) {
	in := func(to int) []int {
		if to == 5 {
			return []int{0, 1, 4}
		}
		return []int{4}
	}
	a := AdaptiveReceiver{E: 0.5}
	v0 := &View{Round: 0, Honest: [][]float32{{2, 0}, {0, 2}, {9, 9}}, From: []int{0, 1, 2}, In: in}
	got := make([]float32, 2)
	if err := a.Craft(got, v0, []float32{0, 0}, 4, 5, nil); err != nil {
		t.Fatal(err)
	}
	near2(t, "round 0", got, 0.5, 0.5)
	v0.Settle()
	v1 := &View{Round: 1, Honest: [][]float32{{4, 0}, {4, 0}, {9, 9}}, From: []int{0, 1, 2}, In: in, Previous: v0}
	if err := a.Craft(got, v1, []float32{0, 0}, 4, 5, nil); err != nil {
		t.Fatal(err)
	}
	near2(t, "round 1", got, 1-math.Sqrt2/2, 1)
	want := make([]float32, 2)
	if err := (Adaptive{E: 0.5}).Craft(want, v1, []float32{0, 0}, 4, 6, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Craft(got, v1, []float32{0, 0}, 4, 6, nil); err != nil {
		t.Fatal(err)
	}
	near2(t, "no honest in-neighbor", got, float64(want[0]), float64(want[1]))
	if err := a.Craft(got, &View{Round: 0, Honest: [][]float32{{1, 1}}}, []float32{0, 0}, 4, 5, nil); err == nil {
		t.Error("a view without the graph accepted")
	}
	if !UsesPrevious(a) {
		t.Error("adaptive_receiver must ask the driver for the previous round's view")
	}
}

func near2(t *testing.T, what string, got []float32, x, y float64) {
	t.Helper()
	if math.Abs(float64(got[0])-x) > 1e-6 || math.Abs(float64(got[1])-y) > 1e-6 {
		t.Errorf("%s: %v, want (%v, %v)", what, got, x, y)
	}
}
