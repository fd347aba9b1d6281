package seed

import "testing"

func TestStreamsAreReproducibleAndDistinct(t *testing.T) {
	a, b := Stream(42, Train, 3, 7), Stream(42, Train, 3, 7)
	for i := 0; i < 10; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same tuple, different streams")
		}
	}
	seen := map[uint64]string{}
	for _, c := range []struct {
		name string
		v    uint64
	}{
		{"base", Derive(42, Train, 3, 7)},
		{"seed", Derive(43, Train, 3, 7)},
		{"purpose", Derive(42, Attack, 3, 7)},
		{"swapped ids", Derive(42, Train, 7, 3)},
		{"fewer ids", Derive(42, Train, 3)},
		{"more ids", Derive(42, Train, 3, 7, 0)},
	} {
		if prev, ok := seen[c.v]; ok {
			t.Errorf("%s collides with %s", c.name, prev)
		}
		seen[c.v] = c.name
	}
}

func TestMixKnownValue(t *testing.T) {
	// SplitMix64's first output for state 0 (Steele, Lea and Flood 2014).
	if got := Mix(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("Mix(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
}
