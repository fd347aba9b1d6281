package strategy

import (
	"bytes"
	"strings"
	"testing"
)

// Every strategy either keeps nothing across rounds or saves what it keeps.
func TestEveryStrategyStatelessOrStateful(t *testing.T) {
	for _, name := range Names() {
		p := Params{}
		if name == "rdpfl" || name == "robust" {
			p.Rule = "trimmed_mean"
		}
		s, err := New(name, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, stateful := s.(Stateful)
		if stateful == Stateless(s) {
			t.Errorf("%s (%T): stateful %v and stateless %v", name, s, stateful, Stateless(s))
		}
	}
}

func TestStateRefusesDamage(t *testing.T) {
	a := &AFA{rep: map[int]*reputation{3: {alpha: 2, beta: 1}, 1: {alpha: 1, beta: 4, blocked: true}}}
	g := &GradientTracking{started: true, y: []float32{1, 2}, yMix: []float32{3, 4}, dPrev: []float32{5, 6}}
	m := &Murmura{smoothed: map[int]float64{2: 0.5, 7: 0.25}}
	d := &DMTT{collab: []int{1, 4}}
	for _, s := range []Stateful{a, g, m, d} {
		b, err := s.SaveState()
		if err != nil {
			t.Fatal(err)
		}
		fresh, _ := New(strings.SplitN(s.Name(), "/", 2)[0], Params{})
		f := fresh.(Stateful)
		if err := f.LoadState(b); err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		if again, _ := f.SaveState(); !bytes.Equal(again, b) {
			t.Errorf("%s: state differs after a round trip", s.Name())
		}
		for n := range len(b) {
			if err := f.LoadState(b[:n]); err == nil {
				t.Fatalf("%s: state truncated to %d of %d bytes accepted", s.Name(), n, len(b))
			}
		}
		if err := f.LoadState(append(bytes.Clone(b), 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
			t.Errorf("%s: trailing byte: %v", s.Name(), err)
		}
	}
	b, _ := d.SaveState()
	if err := m.LoadState(b); err == nil || !strings.Contains(err.Error(), "strategy dmtt's") {
		t.Errorf("DMTT's state given to MURMURA: %v", err)
	}
}
