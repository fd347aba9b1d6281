package privacy

import (
	"errors"
	"fmt"
	"io"
	"math/big"
)

// Shamir (t, n) secret sharing (Shamir 1979) over the prime field GF(p),
// p = 2^256 + 297 (the least prime above 2^256), so that every 32-byte
// secret — a self-mask seed, an X25519 private key — is one field element:
// the dealer draws a polynomial f of degree t − 1 with f(0) = secret and
// gives party x the share f(x). Any t shares give f(0) by Lagrange
// interpolation; any t − 1 are consistent with every secret (each secret
// fits exactly one polynomial of degree t − 1 through them), so they
// reveal nothing (the survey, §3.1.3 and §3.4).

// ShamirPrime is p = 2^256 + 297.
var ShamirPrime = func() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 256)
	return p.Add(p, big.NewInt(297))
}()

// SecretSize is the size of a shared secret; ShareValueSize that of a
// share's value (an element of GF(p) needs 257 bits).
const (
	SecretSize     = 32
	ShareValueSize = 33
)

// Share is party X's point (X, Y) of a sharing, X in 1…n.
type Share struct {
	X int
	Y *big.Int
}

// ShamirSplit shares the 32-byte secret among parties 1…n with threshold
// t (1 ≤ t ≤ n), the coefficients drawn from rand (40 bytes reduced mod p
// each: a bias below 2^-60).
func ShamirSplit(secret []byte, t, n int, rand io.Reader) ([]Share, error) {
	if len(secret) != SecretSize {
		return nil, fmt.Errorf("shamir: a %d-byte secret, want %d", len(secret), SecretSize)
	}
	return shamirSplit(ShamirPrime, new(big.Int).SetBytes(secret), t, n, rand)
}

// shamirSplit shares secret (in [0, p)) over GF(p): the field is a
// parameter so that tests can enumerate a small one.
func shamirSplit(p, secret *big.Int, t, n int, rand io.Reader) ([]Share, error) {
	if t < 1 || t > n {
		return nil, fmt.Errorf("shamir: threshold %d for %d parties, want 1 ≤ t ≤ n", t, n)
	}
	coef := make([]*big.Int, t)
	coef[0] = new(big.Int).Set(secret)
	var buf [40]byte
	for k := 1; k < t; k++ {
		if _, err := io.ReadFull(rand, buf[:]); err != nil {
			return nil, fmt.Errorf("shamir: randomness: %w", err)
		}
		coef[k] = new(big.Int).SetBytes(buf[:])
		coef[k].Mod(coef[k], p)
	}
	shares := make([]Share, n)
	for i := range shares {
		shares[i] = Share{X: i + 1, Y: evalPoly(p, coef, int64(i+1))}
	}
	return shares, nil
}

// evalPoly is Horner's rule mod p.
func evalPoly(p *big.Int, coef []*big.Int, x int64) *big.Int {
	y := new(big.Int)
	bx := big.NewInt(x)
	for k := len(coef) - 1; k >= 0; k-- {
		y.Mul(y, bx)
		y.Add(y, coef[k])
		y.Mod(y, p)
	}
	return y
}

// Errors of reconstruction.
var (
	ErrFewShares    = errors.New("shamir: fewer shares than the threshold")
	ErrBadShare     = errors.New("shamir: malformed or duplicate share")
	ErrInconsistent = errors.New("shamir: the shares do not lie on one polynomial of the threshold's degree")
	ErrSecretRange  = errors.New("shamir: the reconstructed value is not a 32-byte secret")
)

// ShamirCombine reconstructs the secret from at least t shares. With more
// than t it also checks that the others lie on the polynomial the first t
// define (a wrong share is detected, not silently used).
func ShamirCombine(shares []Share, t int) ([]byte, error) {
	if t < 1 || len(shares) < t {
		return nil, ErrFewShares
	}
	seen := map[int]bool{}
	for _, s := range shares {
		if s.X < 1 || s.Y == nil || s.Y.Sign() < 0 || s.Y.Cmp(ShamirPrime) >= 0 || seen[s.X] {
			return nil, ErrBadShare
		}
		seen[s.X] = true
	}
	base := shares[:t]
	secret := lagrangeAt(ShamirPrime, base, 0)
	for _, s := range shares[t:] {
		if lagrangeAt(ShamirPrime, base, int64(s.X)).Cmp(s.Y) != 0 {
			return nil, ErrInconsistent
		}
	}
	if secret.BitLen() > 8*SecretSize {
		return nil, ErrSecretRange
	}
	return secret.FillBytes(make([]byte, SecretSize)), nil
}

// lagrangeAt evaluates at x the polynomial of degree len(pts) − 1 through
// pts (distinct X), mod p.
func lagrangeAt(p *big.Int, pts []Share, x int64) *big.Int {
	sum := new(big.Int)
	num, den, tmp := new(big.Int), new(big.Int), new(big.Int)
	bx := big.NewInt(x)
	for i, pi := range pts {
		num.SetInt64(1)
		den.SetInt64(1)
		for j, pj := range pts {
			if i == j {
				continue
			}
			xj := big.NewInt(int64(pj.X))
			num.Mul(num, tmp.Sub(bx, xj))
			num.Mod(num, p)
			den.Mul(den, tmp.Sub(big.NewInt(int64(pi.X)), xj))
			den.Mod(den, p)
		}
		den.ModInverse(den, p)
		num.Mul(num, den)
		num.Mul(num, pi.Y)
		sum.Add(sum, num)
		sum.Mod(sum, p)
	}
	return sum
}

// shamirInterpolate returns the coefficients (constant first) of the
// unique polynomial of degree < len(pts) through pts: what a test needs
// to show that t − 1 shares fit every secret.
func shamirInterpolate(p *big.Int, pts []Share) []*big.Int {
	k := len(pts)
	coef := make([]*big.Int, k)
	for i := range coef {
		coef[i] = new(big.Int)
	}
	for i, pi := range pts {
		// basis polynomial ∏_{j≠i} (x − x_j)/(x_i − x_j)
		basis := []*big.Int{big.NewInt(1)}
		den := big.NewInt(1)
		for j, pj := range pts {
			if i == j {
				continue
			}
			next := make([]*big.Int, len(basis)+1)
			for d := range next {
				next[d] = new(big.Int)
			}
			xj := big.NewInt(int64(pj.X))
			for d, c := range basis {
				next[d+1].Add(next[d+1], c)
				next[d].Sub(next[d], new(big.Int).Mul(c, xj))
			}
			for d := range next {
				next[d].Mod(next[d], p)
			}
			basis = next
			den.Mul(den, big.NewInt(int64(pi.X-pj.X)))
			den.Mod(den, p)
		}
		den.ModInverse(den, p)
		for d, c := range basis {
			v := new(big.Int).Mul(c, den)
			v.Mul(v, pi.Y)
			coef[d].Add(coef[d], v)
			coef[d].Mod(coef[d], p)
		}
	}
	return coef
}

// putShareValue writes y as 33 big-endian bytes.
func putShareValue(b []byte, y *big.Int) { y.FillBytes(b[:ShareValueSize]) }

// shareValue reads a 33-byte value, refusing one outside GF(p).
func shareValue(b []byte) (*big.Int, error) {
	y := new(big.Int).SetBytes(b[:ShareValueSize])
	if y.Cmp(ShamirPrime) >= 0 {
		return nil, ErrBadShare
	}
	return y, nil
}
