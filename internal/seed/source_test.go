package seed

import "testing"

func TestSeededSourceIsStream(t *testing.T) {
	a := Seeded(42).Stream(Train, 3, 7)
	b := Stream(42, Train, 3, 7)
	for range 100 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("Seeded.Stream differs from Stream")
		}
	}
}

func TestCryptoSourceIsNotReproducible(t *testing.T) {
	a, b := Crypto{}.Stream(Noise, 1), Crypto{}.Stream(Noise, 1)
	same := 0
	for range 8 {
		if a.Uint64() == b.Uint64() {
			same++
		}
	}
	if same == 8 {
		t.Fatal("two crypto streams for the same purpose and ids repeat each other")
	}
	// Roughly uniform: the mean of 20000 draws in [0, 1) is 0.5 ± 0.01
	// (6 standard errors of 1/sqrt(12·20000) ≈ 0.002).
	var sum float64
	for range 20000 {
		sum += a.Float64()
	}
	if m := sum / 20000; m < 0.49 || m > 0.51 {
		t.Fatalf("mean of crypto draws %v", m)
	}
}

func TestMixedAndDescribe(t *testing.T) {
	m := Mixed{Seed: 5, Crypto: []uint64{Noise}}
	if !m.Seeded(Train) || m.Seeded(Noise) {
		t.Fatal("Mixed.Seeded")
	}
	if m.Stream(Train, 1).Uint64() != Stream(5, Train, 1).Uint64() {
		t.Fatal("Mixed does not seed the other purposes")
	}
	for _, c := range []struct {
		src  Source
		want string
	}{{Seeded(1), "seeded"}, {Crypto{}, "crypto"}, {m, "mixed"}, {Mixed{Crypto: Private}, "crypto"}} {
		if got := Describe(c.src); got != c.want {
			t.Errorf("Describe(%T) = %s, want %s", c.src, got, c.want)
		}
	}
}
