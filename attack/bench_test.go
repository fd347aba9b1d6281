package attack

import "testing"

// BenchmarkGaussian crafts one payload of the MLP 784-256-128-10
// (235,146 parameters), additive and replace.
func BenchmarkGaussian(b *testing.B) {
	const d = 235146
	honest := honestVector(d)
	dst := make([]float32, d)
	rng := stream(1)
	for _, replace := range []bool{false, true} {
		name := "add"
		if replace {
			name = "replace"
		}
		g := Gaussian{Sigma: 10, Replace: replace}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(4 * d)
			b.ReportAllocs()
			for b.Loop() {
				if err := g.Craft(dst, nil, honest, 0, 1, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRandom draws one fresh MLP 784-256-128-10.
func BenchmarkRandom(b *testing.B) {
	a, err := NewRandom(mlp)
	if err != nil {
		b.Fatal(err)
	}
	n := a.NumParams()
	honest, dst := honestVector(n), make([]float32, n)
	rng := stream(1)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Craft(dst, nil, honest, 0, 1, rng); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOmniscient crafts one payload of the MLP against a fresh View of
// 20 honest payloads, so every statistic is computed (min_max's pairwise
// distances included); later Crafts against the same View are one copy.
func BenchmarkOmniscient(b *testing.B) {
	const d, k = 235146, 20
	g := make([][]float32, k)
	for i := range g {
		g[i] = honestVector(d)
		g[i][i] += 1
	}
	honest, dst := honestVector(d), make([]float32, d)
	for _, a := range []Attack{ALIE{Z: 1}, IPM{}, MinMax{}, MinSum{}, FangTrim{}} {
		b.Run(a.Name(), func(b *testing.B) {
			b.SetBytes(4 * d * k)
			for b.Loop() {
				v := &View{Honest: g}
				if err := a.Craft(dst, v, honest, 0, 1, stream(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
