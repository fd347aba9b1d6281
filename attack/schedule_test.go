package attack

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A scheduled sign flip sends the honest payload in rounds 0..From−1 and
// −payload from From on; the wrapper keeps the name and the history flag.
func TestScheduledStartsAtItsRound(t *testing.T) {
	a, err := NewScheduled(SignFlip{}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "sign_flip" {
		t.Errorf("name %q, want the wrapped attack's", a.Name())
	}
	honest := []float32{1, -2, 3}
	for r := range 6 {
		dst := make([]float32, 3)
		if err := a.Craft(dst, &View{Round: r}, honest, 1, 2, rand.New(rand.NewPCG(1, 2))); err != nil {
			t.Fatal(err)
		}
		want := honest
		if r >= 3 {
			want = []float32{-1, 2, -3}
		}
		if !slices.Equal(dst, want) {
			t.Errorf("round %d: sent %v, want %v", r, dst, want)
		}
	}
	if ad, _ := NewScheduled(Adaptive{}, 2); !UsesPrevious(ad) {
		t.Error("a scheduled adaptive attack no longer asks for the previous round's view")
	}
	if a0, _ := NewScheduled(SignFlip{}, 0); a0 != (SignFlip{}) {
		t.Errorf("start round 0 should leave the attack as it is, got %#v", a0)
	}
}

func TestScheduledRefusals(t *testing.T) {
	if _, err := NewScheduled(SignFlip{}, -1); err == nil || !strings.Contains(err.Error(), "-1") {
		t.Errorf("negative start round: %v", err)
	}
	if _, err := NewScheduled(LabelFlip{}, 2); err == nil || !strings.Contains(err.Error(), "start_round") {
		t.Errorf("scheduled label flip: %v", err)
	}
	a, _ := NewScheduled(SignFlip{}, 1)
	if err := a.Craft(make([]float32, 2), nil, []float32{1, 2}, 0, 1, nil); err == nil {
		t.Error("nil view accepted")
	}
}
