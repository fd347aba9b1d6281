package privacy

import (
	"strings"
	"testing"
)

// An accountant restored from its state goes on composing from the saved
// RDP: ε after 3 + 2 releases is that of one accountant composing 3, then 2
// (bit for bit: the same additions).
func TestAccountantStateContinues(t *testing.T) {
	e := GaussianEvent{Multiplier: 1.1, Sampling: Unamplified()}
	a, _ := NewAccountant(nil)
	if err := a.Compose(e, 3); err != nil {
		t.Fatal(err)
	}
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewAccountant(nil)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	_ = b.Compose(e, 2)
	want, _ := NewAccountant(nil)
	_ = want.Compose(e, 3)
	_ = want.Compose(e, 2)
	eb, _, _ := b.Epsilon(1e-5)
	ew, _, _ := want.Epsilon(1e-5)
	if b.Steps() != 5 || eb != ew {
		t.Fatalf("restored and composed: %d steps, ε %v; in one accountant ε %v", b.Steps(), eb, ew)
	}
	dense, _ := NewAccountant(DenseOrders())
	if err := dense.UnmarshalBinary(st); err == nil || !strings.Contains(err.Error(), "order grid") {
		t.Errorf("a state of another order grid: %v", err)
	}
	for k := range len(st) {
		if err := b.UnmarshalBinary(st[:k]); err == nil {
			t.Fatalf("a state truncated to %d bytes was taken", k)
		}
	}
}
