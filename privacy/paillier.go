package privacy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
)

// Paillier's additively homomorphic encryption (Paillier 1999, "Public-Key
// Cryptosystems Based on Composite Degree Residuosity Classes", scheme 1
// with g = n + 1; the survey's Example 3 (§3.1.2, "Homomorphic
// encryption"), on math/big:
//
//	Enc(m; r) = (1 + m·n) · r^n  mod n²          (g^m = 1 + m·n for g = n + 1)
//	Dec(c)    = L(c^λ mod n²) · μ  mod n,        L(u) = (u − 1)/n, μ = λ^-1 mod n
//	Enc(a)·Enc(b) = Enc(a + b),  Enc(a)^k = Enc(k·a)   (mod n)
//
// with λ = φ(n) = (p − 1)(q − 1) for primes p, q of equal length (then
// gcd(n, φ(n)) = 1 and g = n + 1 is valid). Decryption goes through the
// Chinese remainder theorem (Paillier §7): c^(p−1) mod p², c^(q−1) mod q²,
// about three times faster than one exponentiation mod n².

// PaillierPublicKey is n (and n², kept).
type PaillierPublicKey struct {
	N, N2 *big.Int
}

// PaillierPrivateKey holds the factors and the CRT constants.
type PaillierPrivateKey struct {
	PaillierPublicKey
	P, Q     *big.Int
	p2, q2   *big.Int // p², q²
	hp, hq   *big.Int // (L_p(g^(p−1) mod p²))^-1 mod p, likewise q
	pInvQ    *big.Int // p^-1 mod q
	pm1, qm1 *big.Int
}

// safeBits is the smallest modulus GeneratePaillier accepts: 2048 is the
// recommendation (NIST SP 800-57: 112-bit security); smaller keys are for
// tests only, and 512 is the floor below which nothing is sensible.
const paillierMinBits = 512

// prime draws a prime of exactly bits bits with its top two bits set (so
// the product of two has exactly 2·bits bits) from rand: crypto/rand.Prime
// would ignore a seeded reader, and simulation must repeat.
func prime(rand io.Reader, bits int) (*big.Int, error) {
	b := make([]byte, (bits+7)/8)
	p := new(big.Int)
	top := uint(bits % 8)
	if top == 0 {
		top = 8
	}
	for {
		if _, err := io.ReadFull(rand, b); err != nil {
			return nil, fmt.Errorf("paillier: randomness: %w", err)
		}
		b[0] &= byte(1<<top - 1)
		if top >= 2 {
			b[0] |= 3 << (top - 2)
		} else {
			b[0] |= 1
			if len(b) > 1 {
				b[1] |= 0x80
			}
		}
		b[len(b)-1] |= 1
		p.SetBytes(b)
		if p.ProbablyPrime(20) {
			return p, nil
		}
	}
}

// GeneratePaillier returns a key with an n of bits bits (even, ≥ 512),
// its primes drawn from rand.
func GeneratePaillier(rand io.Reader, bits int) (*PaillierPrivateKey, error) {
	if bits < paillierMinBits || bits%2 != 0 {
		return nil, fmt.Errorf("paillier: a %d-bit modulus; need an even size ≥ %d (2048 for real use)", bits, paillierMinBits)
	}
	for {
		p, err := prime(rand, bits/2)
		if err != nil {
			return nil, err
		}
		q, err := prime(rand, bits/2)
		if err != nil {
			return nil, err
		}
		if p.Cmp(q) == 0 {
			continue
		}
		k, err := paillierFromPrimes(p, q)
		if err != nil {
			continue // gcd(n, φ) ≠ 1: cannot happen for equal-size primes, but check
		}
		return k, nil
	}
}

func paillierFromPrimes(p, q *big.Int) (*PaillierPrivateKey, error) {
	one := big.NewInt(1)
	n := new(big.Int).Mul(p, q)
	pm1, qm1 := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
	phi := new(big.Int).Mul(pm1, qm1)
	if new(big.Int).GCD(nil, nil, n, phi).Cmp(one) != 0 {
		return nil, errors.New("paillier: gcd(n, φ(n)) ≠ 1")
	}
	k := &PaillierPrivateKey{
		PaillierPublicKey: PaillierPublicKey{N: n, N2: new(big.Int).Mul(n, n)},
		P:                 p, Q: q, pm1: pm1, qm1: qm1,
		p2: new(big.Int).Mul(p, p), q2: new(big.Int).Mul(q, q),
	}
	g := new(big.Int).Add(n, one)
	k.hp = hFunc(g, p, k.p2, pm1)
	k.hq = hFunc(g, q, k.q2, qm1)
	k.pInvQ = new(big.Int).ModInverse(p, q)
	if k.hp == nil || k.hq == nil || k.pInvQ == nil {
		return nil, errors.New("paillier: degenerate primes")
	}
	return k, nil
}

// hFunc is h_p = L_p(g^(p−1) mod p²)^-1 mod p (Paillier §7).
func hFunc(g, p, p2, pm1 *big.Int) *big.Int {
	u := new(big.Int).Exp(g, pm1, p2)
	l := lFunc(u, p)
	return l.ModInverse(l, p)
}

// lFunc is L(u) = (u − 1)/d.
func lFunc(u, d *big.Int) *big.Int {
	l := new(big.Int).Sub(u, big.NewInt(1))
	return l.Quo(l, d)
}

// ErrPlaintextRange is the error of a plaintext outside [0, n).
var ErrPlaintextRange = errors.New("paillier: plaintext outside [0, n)")

// Encrypt returns Enc(m; r) for m in [0, n), r drawn uniformly from Z*_n.
func (k *PaillierPublicKey) Encrypt(m *big.Int, rand io.Reader) (*big.Int, error) {
	if m.Sign() < 0 || m.Cmp(k.N) >= 0 {
		return nil, ErrPlaintextRange
	}
	r, err := k.unit(rand)
	if err != nil {
		return nil, err
	}
	c := new(big.Int).Exp(r, k.N, k.N2)
	gm := new(big.Int).Mul(m, k.N)
	gm.Add(gm, big.NewInt(1)) // (1 + m·n) < n² since m < n
	c.Mul(c, gm)
	return c.Mod(c, k.N2), nil
}

// unit draws r in [1, n) coprime to n.
func (k *PaillierPublicKey) unit(rand io.Reader) (*big.Int, error) {
	b := make([]byte, (k.N.BitLen()+7)/8+8)
	r, g := new(big.Int), new(big.Int)
	for {
		if _, err := io.ReadFull(rand, b); err != nil {
			return nil, fmt.Errorf("paillier: randomness: %w", err)
		}
		r.SetBytes(b)
		r.Mod(r, k.N)
		if r.Sign() > 0 && g.GCD(nil, nil, r, k.N).Cmp(big.NewInt(1)) == 0 {
			return r, nil
		}
	}
}

// ErrCiphertext is the error of a value that is not a ciphertext of the key.
var ErrCiphertext = errors.New("paillier: not a ciphertext of this key")

// Valid reports whether c is in Z*_{n²}.
func (k *PaillierPublicKey) Valid(c *big.Int) bool {
	return c != nil && c.Sign() > 0 && c.Cmp(k.N2) < 0 && new(big.Int).GCD(nil, nil, c, k.N).Cmp(big.NewInt(1)) == 0
}

// Add returns Enc(a + b mod n) from Enc(a) and Enc(b): their product.
func (k *PaillierPublicKey) Add(a, b *big.Int) *big.Int {
	c := new(big.Int).Mul(a, b)
	return c.Mod(c, k.N2)
}

// MulScalar returns Enc(s·a mod n) from Enc(a): c^s (a negative s is
// taken mod n).
func (k *PaillierPublicKey) MulScalar(c, s *big.Int) *big.Int {
	e := new(big.Int).Mod(s, k.N)
	return new(big.Int).Exp(c, e, k.N2)
}

// Decrypt returns m in [0, n) of c, through the CRT.
func (k *PaillierPrivateKey) Decrypt(c *big.Int) (*big.Int, error) {
	if !k.Valid(c) {
		return nil, ErrCiphertext
	}
	mp := lFunc(new(big.Int).Exp(c, k.pm1, k.p2), k.P)
	mp.Mul(mp, k.hp).Mod(mp, k.P)
	mq := lFunc(new(big.Int).Exp(c, k.qm1, k.q2), k.Q)
	mq.Mul(mq, k.hq).Mod(mq, k.Q)
	// m = mp + p·((mq − mp)·p^-1 mod q)
	m := new(big.Int).Sub(mq, mp)
	m.Mul(m, k.pInvQ).Mod(m, k.Q)
	m.Mul(m, k.P).Add(m, mp)
	return m, nil
}

// PaillierPacking encodes real vectors as few plaintexts: each coordinate
// becomes round(x·2^Bits) + ⌈Bound·2^Bits⌉, a non-negative integer of at
// most 2⌈Bound·2^Bits⌉, in a slot of Slot bits, Per slots to a plaintext.
// Slot leaves Headroom bits above the value so that a sum of up to
// 2^Headroom encoded vectors (or a combination whose integer weights sum
// to at most that) never carries into the next slot; decoding subtracts
// the offsets of the Terms (the weights' sum) that were added.
type PaillierPacking struct {
	Bits     int
	Bound    float64
	Headroom int
	Slot     int
	Per      int
}

// NewPaillierPacking fits slots into the key's plaintexts (n's bits − 1, so
// every packed value is below n): values |x| ≤ bound at 2^bits steps,
// sums of up to 2^headroom terms.
func NewPaillierPacking(k *PaillierPublicKey, bits int, bound float64, headroom int) (PaillierPacking, error) {
	if bits < 0 || bits > 52 || !(bound > 0) || headroom < 0 || headroom > 32 {
		return PaillierPacking{}, fmt.Errorf("paillier packing: bits %d (0…52), bound %v (> 0), headroom %d (0…32)", bits, bound, headroom)
	}
	off := math.Ceil(bound * float64(uint64(1)<<bits))
	if 2*off >= 1<<62 {
		return PaillierPacking{}, fmt.Errorf("paillier packing: bound %v at %d bits needs more than 62 bits a value", bound, bits)
	}
	vbits := big.NewInt(2 * int64(off)).BitLen()
	slot := vbits + headroom
	if slot > 63 {
		return PaillierPacking{}, fmt.Errorf("paillier packing: a %d-bit value with %d bits of headroom exceeds 63 bits a slot", vbits, headroom)
	}
	per := (k.N.BitLen() - 1) / slot
	if per < 1 {
		return PaillierPacking{}, fmt.Errorf("paillier packing: a %d-bit slot does not fit a %d-bit key", slot, k.N.BitLen())
	}
	return PaillierPacking{Bits: bits, Bound: bound, Headroom: headroom, Slot: slot, Per: per}, nil
}

// Plaintexts is how many plaintexts a vector of dim coordinates needs.
func (pk PaillierPacking) Plaintexts(dim int) int { return (dim + pk.Per - 1) / pk.Per }

// Encode packs x into plaintexts (slot 0 in the lowest bits). A value
// outside ±Bound is an error.
func (pk PaillierPacking) Encode(x []float32) ([]*big.Int, error) {
	scale := float64(uint64(1) << pk.Bits)
	off := pk.offset()
	out := make([]*big.Int, 0, pk.Plaintexts(len(x)))
	v := new(big.Int)
	for start := 0; start < len(x); start += pk.Per {
		m := new(big.Int)
		end := min(len(x), start+pk.Per)
		for i := end - 1; i >= start; i-- {
			d := float64(x[i])
			if !(d >= -pk.Bound && d <= pk.Bound) {
				return nil, fmt.Errorf("%w: x[%d] = %v, allowed |x| ≤ %v", ErrOutOfRange, i, x[i], pk.Bound)
			}
			q := int64(math.Round(d*scale)) + off // in [0, 2·off] since off ≥ Bound·2^Bits
			m.Lsh(m, uint(pk.Slot))
			m.Add(m, v.SetInt64(q))
		}
		out = append(out, m)
	}
	return out, nil
}

// offset is ⌈Bound·2^Bits⌉, added to every coordinate.
func (pk PaillierPacking) offset() int64 {
	return int64(math.Ceil(pk.Bound * float64(uint64(1)<<pk.Bits)))
}

// Decode unpacks dim coordinates of plaintexts that hold the sum of terms
// encoded vectors (terms ≤ 2^Headroom) into dst: Σ round(x·2^Bits)/2^Bits.
func (pk PaillierPacking) Decode(dst []float64, ms []*big.Int, terms int) error {
	if terms < 1 || terms > 1<<pk.Headroom {
		return fmt.Errorf("paillier packing: a sum of %d terms, headroom for 1…%d", terms, 1<<pk.Headroom)
	}
	if len(ms) != pk.Plaintexts(len(dst)) {
		return fmt.Errorf("paillier packing: %d plaintexts for %d coordinates, want %d", len(ms), len(dst), pk.Plaintexts(len(dst)))
	}
	scale := float64(uint64(1) << pk.Bits)
	off := pk.offset() * int64(terms)
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(pk.Slot)), big.NewInt(1))
	s := new(big.Int)
	for k, m := range ms {
		// A decrypted sum holds slots × Slot bits and each slot at most
		// terms·2·offset; anything else is not a sum of encoded vectors (a
		// wrong key, a garbled ciphertext, more terms than said) and would
		// decode to plausible-looking wrong numbers.
		slots := min(len(dst), (k+1)*pk.Per) - k*pk.Per
		if m == nil || m.Sign() < 0 || m.BitLen() > slots*pk.Slot {
			return fmt.Errorf("%w: plaintext %d is %s, outside the %d-bit range of %d packed slots",
				ErrOutOfRange, k, describePlaintext(m), slots*pk.Slot, slots)
		}
		r := new(big.Int).Set(m)
		for i := k * pk.Per; i < k*pk.Per+slots; i++ {
			s.And(r, mask)
			v := s.Int64()
			if v > 2*off {
				return fmt.Errorf("%w: plaintext %d slot %d holds %d, above %d for a sum of %d terms",
					ErrOutOfRange, k, i-k*pk.Per, v, 2*off, terms)
			}
			dst[i] = float64(v-off) / scale
			r.Rsh(r, uint(pk.Slot))
		}
	}
	return nil
}

// describePlaintext names a refused plaintext without printing thousands of
// digits.
func describePlaintext(m *big.Int) string {
	switch {
	case m == nil:
		return "missing"
	case m.Sign() < 0:
		return "negative"
	}
	return fmt.Sprintf("a %d-bit number", m.BitLen())
}
