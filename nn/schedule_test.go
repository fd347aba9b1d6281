package nn

import "testing"

// The model passes the round to its evidential head, which anneals its KL
// weight as λ_t = 0.1 · min(1, t/(R/2)) (spec/dmtt.md): 0, 0.025, 0.05,
// 0.075, then 0.1 for R = 8.
func TestSetRoundAnnealsTheEvidentialHead(t *testing.T) {
	m, err := Build(Spec{Kind: "logreg", Input: []int{2}, Classes: 3, Head: "evidential"}, 1, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Head().(*Evidential)
	for r, want := range []float64{0, 0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1} {
		m.SetRound(r, 8)
		if d := h.Lambda - want; d > 1e-15 || d < -1e-15 {
			t.Errorf("round %d: λ = %v, want %v", r, h.Lambda, want)
		}
	}
	soft, _ := Build(Spec{Kind: "logreg", Input: []int{2}, Classes: 3}, 1, Options{Batch: 2})
	soft.SetRound(3, 8) // no round-scheduled part: nothing to do, no panic
}
