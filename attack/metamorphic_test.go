package attack

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Metamorphic relations of the attacks, on honest sets of
// dyadic values so that permuting, scaling by 2^k and translating by 2^k
// are exact: every vector attack is invariant under a permutation of the
// honest payloads (up to the rounding of their mean and spread); the
// attacks built from b, μ, σ and the extremes scale with their inputs; and
// those built from b, μ and σ alone translate with them. random (a fresh
// model, no input) and label_flip (a data attack) have no vector relation.
func TestAttackMetamorphic(t *testing.T) {
	r := rand.New(rand.NewPCG(80, 80))
	const k, d = 6, 40
	G := make([][]float32, k)
	for i := range G {
		G[i] = make([]float32, d)
		for j := range G[i] {
			G[i][j] = float32(r.IntN(65)-32) / 16
		}
	}
	b := slices.Clone(G[2])
	p := Params{Sigma: 1, Percent: 10}
	std := Params{Perturbation: "std"}
	type rel struct {
		name          string
		p             Params
		scale, offset bool
	}
	rels := []rel{
		{"none", p, true, true}, {"gaussian", p, false, true}, {"sign_flip", p, true, false},
		{"scaling", p, true, false}, {"ana_proportional", p, true, false}, {"alie", p, true, true},
		{"ipm", p, true, false}, {"min_max", p, false, false}, {"min_sum", p, false, false},
		{"min_max", std, true, true}, {"min_sum", std, true, true}, {"fang_trim", p, true, false},
		{"adaptive", p, true, false},
	}
	craftOn := func(a Attack, g [][]float32, own []float32, seed uint64) []float32 {
		dst := make([]float32, d)
		if err := a.Craft(dst, &View{Honest: g, Tag: "update", Attackers: 2}, own, 0, 1, stream(seed)); err != nil {
			t.Fatalf("%s: %v", a.Name(), err)
		}
		return dst
	}
	near := func(got, want float64, scale float64) bool {
		return math.Abs(got-want) <= 1e-5*(math.Abs(want)+scale)
	}
	for _, c := range rels {
		a, err := New(c.name, c.p)
		if err != nil {
			t.Fatal(err)
		}
		what := c.name + "/" + string(c.p.Perturbation)
		base := craftOn(a, G, b, 1)
		perm := make([][]float32, k)
		for i, q := range r.Perm(k) {
			perm[i] = G[q]
		}
		for j, v := range craftOn(a, perm, b, 1) {
			if !near(float64(v), float64(base[j]), 1) {
				t.Errorf("%s: permuting the honest payloads moved coordinate %d from %v to %v", what, j, base[j], v)
				break
			}
		}
		if c.scale {
			for _, e := range []int{-20, 20} {
				s := math.Ldexp(1, e)
				sc := func(x []float32) []float32 {
					y := make([]float32, len(x))
					for j, v := range x {
						y[j] = float32(float64(v) * s)
					}
					return y
				}
				var gs [][]float32
				for _, g := range G {
					gs = append(gs, sc(g))
				}
				for j, v := range craftOn(a, gs, sc(b), 1) {
					if !near(float64(v), float64(base[j])*s, s) {
						t.Errorf("%s: scaling by 2^%d: coordinate %d is %v, want %v", what, e, j, v, float64(base[j])*s)
						break
					}
				}
			}
		}
		if c.offset {
			const off = 1 << 12
			tr := func(x []float32) []float32 {
				y := make([]float32, len(x))
				for j, v := range x {
					y[j] = v + off
				}
				return y
			}
			var gt [][]float32
			for _, g := range G {
				gt = append(gt, tr(g))
			}
			for j, v := range craftOn(a, gt, tr(b), 1) {
				if !near(float64(v), float64(base[j])+off, 1) {
					t.Errorf("%s: translating by 2^12: coordinate %d is %v, want %v", what, j, v, float64(base[j])+off)
					break
				}
			}
		}
	}
}
