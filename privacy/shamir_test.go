package privacy

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

func testReader(s uint64) *uint64Reader {
	r := rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	return &uint64Reader{next: r.Uint64}
}

func TestShamirPrime(t *testing.T) {
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	if !ShamirPrime.ProbablyPrime(64) || ShamirPrime.Cmp(two256) <= 0 {
		t.Fatal("p is not a prime above 2^256")
	}
	// The least such prime: no prime in (2^256, p).
	for c := int64(1); c < 297; c += 2 {
		if new(big.Int).Add(two256, big.NewInt(c)).ProbablyPrime(32) {
			t.Fatalf("2^256 + %d is prime: p is not the least", c)
		}
	}
}

// Any t of n shares give the secret back, in any order; more than t are
// checked against each other; fewer than t are refused.
func TestShamirRoundTrip(t *testing.T) {
	rd := testReader(1)
	pick := rand.New(rand.NewPCG(2, 3))
	for n := 1; n <= 20; n++ {
		for th := 1; th <= n; th++ {
			secret := make([]byte, SecretSize)
			rd.Read(secret)
			if n%3 == 0 {
				for i := range secret { // the largest secret
					secret[i] = 0xff
				}
			}
			sh, err := ShamirSplit(secret, th, n, rd)
			if err != nil {
				t.Fatal(err)
			}
			perm := pick.Perm(n)
			k := th + pick.IntN(n-th+1)
			sub := make([]Share, k)
			for i := range sub {
				sub[i] = sh[perm[i]]
			}
			got, err := ShamirCombine(sub, th)
			if err != nil || !bytes.Equal(got, secret) {
				t.Fatalf("n=%d t=%d from %d shares: %x, %v; want %x", n, th, k, got, err, secret)
			}
			if th > 1 {
				if _, err := ShamirCombine(sub[:th-1], th); !errors.Is(err, ErrFewShares) {
					t.Fatalf("n=%d t=%d: %d shares gave %v, want ErrFewShares", n, th, th-1, err)
				}
			}
			if k > th {
				bad := append([]Share(nil), sub...)
				bad[k-1] = Share{X: bad[k-1].X, Y: new(big.Int).Add(bad[k-1].Y, big.NewInt(1))}
				bad[k-1].Y.Mod(bad[k-1].Y, ShamirPrime)
				if _, err := ShamirCombine(bad, th); !errors.Is(err, ErrInconsistent) {
					t.Fatalf("n=%d t=%d: a wrong extra share gave %v, want ErrInconsistent", n, th, err)
				}
			}
		}
	}
	if _, err := ShamirSplit(make([]byte, 31), 2, 3, rd); err == nil {
		t.Error("a 31-byte secret was shared")
	}
	if _, err := ShamirSplit(make([]byte, 32), 4, 3, rd); err == nil {
		t.Error("t > n was accepted")
	}
	sh, _ := ShamirSplit(make([]byte, 32), 2, 3, rd)
	if _, err := ShamirCombine([]Share{sh[0], sh[0]}, 2); !errors.Is(err, ErrBadShare) {
		t.Errorf("a duplicate share gave %v", err)
	}
	if _, err := ShamirCombine([]Share{sh[0], {X: 2, Y: ShamirPrime}}, 2); !errors.Is(err, ErrBadShare) {
		t.Errorf("a share outside the field gave %v", err)
	}
}

// Perfect secrecy, by enumeration over a small field (p = 257, the same
// code): for t = 3 the t − 1 = 2 shares of parties 1 and 4 take every
// value pair exactly once as the dealer's coefficients range over all
// p² choices, for every secret: their distribution does not depend on the
// secret at all.
func TestShamirBelowThresholdRevealsNothingSmallField(t *testing.T) {
	p := big.NewInt(257)
	const th = 3
	for _, s := range []int64{0, 1, 128, 256} {
		seen := make([]int, 257*257)
		coef := []*big.Int{big.NewInt(s), new(big.Int), new(big.Int)}
		for a := range int64(257) {
			for b := range int64(257) {
				coef[1].SetInt64(a)
				coef[2].SetInt64(b)
				y1, y4 := evalPoly(p, coef, 1), evalPoly(p, coef, 4)
				seen[y1.Int64()*257+y4.Int64()]++
			}
		}
		for v, c := range seen {
			if c != 1 {
				t.Fatalf("secret %d: share pair %d seen %d times, want 1", s, v, c)
			}
		}
	}
	_ = th
}

// In the real field: t − 1 shares of a real sharing are consistent with
// every candidate secret — through them and (0, s') passes exactly one
// polynomial of degree t − 1, which interpolation finds.
func TestShamirBelowThresholdConsistentWithEverySecret(t *testing.T) {
	rd := testReader(7)
	for _, c := range []struct{ t, n int }{{2, 3}, {3, 5}, {6, 10}, {11, 20}} {
		secret := make([]byte, SecretSize)
		rd.Read(secret)
		sh, err := ShamirSplit(secret, c.t, c.n, rd)
		if err != nil {
			t.Fatal(err)
		}
		held := sh[c.n-c.t+1:] // the last t − 1 parties
		for k := range 8 {
			cand := make([]byte, SecretSize)
			rd.Read(cand)
			if k == 0 {
				copy(cand, secret)
			}
			pts := append([]Share{{X: 0, Y: new(big.Int).SetBytes(cand)}}, held...)
			coef := shamirInterpolate(ShamirPrime, pts)
			if len(coef) != c.t {
				t.Fatalf("degree %d, want %d", len(coef)-1, c.t-1)
			}
			if coef[0].Cmp(new(big.Int).SetBytes(cand)) != 0 {
				t.Fatalf("t=%d: the interpolated polynomial has f(0) ≠ the candidate", c.t)
			}
			for _, s := range held {
				if evalPoly(ShamirPrime, coef, int64(s.X)).Cmp(s.Y) != 0 {
					t.Fatalf("t=%d: candidate %d inconsistent with share %d", c.t, k, s.X)
				}
			}
		}
	}
}
