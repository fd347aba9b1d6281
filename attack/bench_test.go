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
