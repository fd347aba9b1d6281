package strategy

import (
	"math"
	"testing"
)

// cosineInputs: own A = (1,0,0,0) as node 2, B = (2,0,0,0) from 1,
// C = (1,1,0,0) from 3, D = (−1,0,0,0) from 5, shifted by start.
func cosineInputs(t *testing.T, start float32, extra ...Incoming) (*View, []Incoming) {
	sh := func(x ...float32) []float32 {
		x = append([]float32(nil), x...)
		for i := range x {
			x[i] += start
		}
		return x
	}
	v := &View{ID: 2, Model: tinyModel(t, sh(1, 0, 0, 0)...), Start: sh(0, 0, 0, 0)}
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: sh(2, 0, 0, 0)},
		{From: 3, Tag: TagModel, Vector: sh(1, 1, 0, 0)},
		{From: 5, Tag: TagModel, Vector: sh(-1, 0, 0, 0)},
	}
	for _, m := range extra {
		m.Vector = sh(m.Vector...)
		in = append(in, m)
	}
	return v, in
}

func shifted(x []float32, by float32) []float32 {
	out := append([]float32(nil), x...)
	for i := range out {
		out[i] -= by
	}
	return out
}

func TestASMRHandValues(t *testing.T) {
	// Distances: AB 0, AC = BC = 1 − 1/√2, AD = BD = 2, CD = 1 + 1/√2.
	// Mean distances: A, B, C (2 + 1 − 1/√2)/3 alike, D (5 + 1/√2)/3:
	// OF is equal for A, B, C and lower for D; the one gap drops D.
	for _, start := range []float32{0, 2} {
		v, in := cosineInputs(t, start)
		w, err := (&ASMR{}).Combine(v, in)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "asmr", shifted(v.Model.Params(), start), 4.0/3, 1.0/3, 0, 0)
		if math.Abs(w[1]-1.0/3) > 1e-15 || math.Abs(w[3]-1.0/3) > 1e-15 || w[5] != 0 {
			t.Errorf("weights %v", w)
		}
	}
	// All identical: every OF equal, nothing dropped.
	m := tinyModel(t, 1, 2, 3, 4)
	w, err := (&ASMR{}).Combine(&View{ID: 0, Model: m}, []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{1, 2, 3, 4}},
		{From: 2, Tag: TagModel, Vector: []float32{2, 4, 6, 8}},
	})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "identical directions", m.Params(), 4.0/3, 8.0/3, 4, 16.0/3)
	if w[1] != 1.0/3 || w[2] != 1.0/3 {
		t.Errorf("weights %v", w)
	}
}

func TestCFLHandValues(t *testing.T) {
	// Add E = (−2,0,0,0) from 6. Merges: AB (0), then DE (0), then
	// {A,B}+C (1 − 1/√2 < 1 + 1/√2 < 2): clusters {A,B,C} and {D,E}.
	e := Incoming{From: 6, Tag: TagModel, Vector: []float32{-2, 0, 0, 0}}
	for _, start := range []float32{0, 2} {
		v, in := cosineInputs(t, start, e)
		w, err := (&CFL{}).Combine(v, in)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "cfl", shifted(v.Model.Params(), start), 4.0/3, 1.0/3, 0, 0)
		if math.Abs(w[1]-1.0/3) > 1e-15 || math.Abs(w[3]-1.0/3) > 1e-15 || w[5] != 0 || w[6] != 0 {
			t.Errorf("weights %v", w)
		}
	}
	// The node on the other side keeps {D, E}: node 5 with own D.
	v := &View{ID: 5, Model: tinyModel(t, -1, 0, 0, 0), Start: make([]float32, 4)}
	in := []Incoming{
		{From: 1, Tag: TagModel, Vector: []float32{2, 0, 0, 0}},
		{From: 2, Tag: TagModel, Vector: []float32{1, 0, 0, 0}},
		{From: 3, Tag: TagModel, Vector: []float32{1, 1, 0, 0}},
		e,
	}
	w, err := (&CFL{}).Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "cfl other side", v.Model.Params(), -1.5, 0, 0, 0)
	if w[6] != 0.5 || w[1] != 0 {
		t.Errorf("weights %v", w)
	}
	// Complete, not single, linkage: directions at 0° (own), 42°, 80°,
	// 120°, 125°. Merges: 120–125 (5°), 42–80 (38°), then complete linkage
	// compares 0–{42,80} (80°), {42,80}–{120,125} (83°), 0–{120,125}
	// (125°) and keeps {0, 42, 80}; single linkage would join 80 and 120
	// (40°) next and leave the node alone.
	deg := func(d float64) []float32 {
		r := d * math.Pi / 180
		return []float32{float32(math.Cos(r)), float32(math.Sin(r)), 0, 0}
	}
	v = &View{ID: 0, Model: tinyModel(t, deg(0)...)}
	in = []Incoming{
		{From: 1, Tag: TagModel, Vector: deg(42)},
		{From: 2, Tag: TagModel, Vector: deg(80)},
		{From: 3, Tag: TagModel, Vector: deg(120)},
		{From: 4, Tag: TagModel, Vector: deg(125)},
	}
	w, err = (&CFL{}).Combine(v, in)
	if err != nil {
		t.Fatal(err)
	}
	if w[1] != 1.0/3 || w[2] != 1.0/3 || w[3] != 0 || w[4] != 0 {
		t.Errorf("complete linkage weights %v, want {0°, 42°, 80°} kept", w)
	}
}
