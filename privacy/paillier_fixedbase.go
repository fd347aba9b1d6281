package privacy

import (
	"crypto/sha3"
	"fmt"
	"io"
	"math/big"
	"sync"
)

// Fast encryption (Damgård, Jurik and Nielsen, "A generalization of
// Paillier's public-key system with applications to electronic voting",
// IJIS 2010, the efficient variant of encryption with s = 1): instead of a
// fresh r^n mod n² with a full-length exponent, every encryption raises
// one fixed element h_s = h^n mod n² of the n-th residues to a short random
// exponent α of ⌈k/2⌉ bits (k = n's bit length),
//
//	Enc(m; α) = (1 + m·n) · h_s^α  mod n²,   h = −x² mod n,
//
// and a fixed base admits a precomputed table: h_s^(j·2^(w·i)) for every
// window i of w bits of α and every digit j, so an encryption is one
// product per window (⌈k/2⌉/w multiplications mod n²) instead of a
// 2048-bit exponentiation (about 3,000 multiplications). Ciphertexts are
// Paillier ciphertexts: Decrypt, Add and MulScalar are unchanged.
//
// h is derived from n alone (x = SHAKE-256 of n, reduced mod n), so an
// encrypting node needs nothing but the key holder's n and the key holder
// cannot choose a weak h_s (one of small order would let the relay read the
// plaintexts): DJN let the key owner draw x; a hash of the public key is
// the usual way to draw public randomness nobody controls.

// fixedBaseWindow is w: 6 bits, 64 entries a window. Per 2048-bit key the
// table holds ⌈1024/6⌉ · 63 = 10,773 values of 512 bytes (5.5 MB) and
// takes as many multiplications to build (≈ 60 ms), paid back by the
// first four encryptions.
const fixedBaseWindow = 6

// PaillierEncrypter encrypts under one public key with the fixed-base
// table. It is safe for concurrent use.
type PaillierEncrypter struct {
	key      *PaillierPublicKey
	expBytes int          // α has 8·expBytes ≥ ⌈k/2⌉ bits
	table    [][]*big.Int // table[i][j-1] = h_s^(j·2^(w·i)) mod n²
}

// encrypters caches one table per modulus in the process: every node of a
// simulation that encrypts under the same key holder's key shares it (a
// table depends on public data only). Bounded: at maxCachedEncrypters keys
// (64 × 5.5 MB at 2048 bits) a new key evicts one; an evicted key's table
// is rebuilt when it is used again.
var encrypters = struct {
	sync.Mutex
	m map[string]*PaillierEncrypter
}{m: map[string]*PaillierEncrypter{}}

const maxCachedEncrypters = 64

// Encrypter returns k's fixed-base encrypter (built once per process and
// modulus).
func (k *PaillierPublicKey) Encrypter() (*PaillierEncrypter, error) {
	id := string(k.N.Bytes())
	encrypters.Lock()
	defer encrypters.Unlock()
	if e := encrypters.m[id]; e != nil {
		return e, nil
	}
	e, err := newPaillierEncrypter(k)
	if err != nil {
		return nil, err
	}
	if len(encrypters.m) >= maxCachedEncrypters {
		for old := range encrypters.m { // evict one (any: a cache of a pure function)
			delete(encrypters.m, old)
			break
		}
	}
	encrypters.m[id] = e
	return e, nil
}

// djnBase returns h_s = (−x²)^n mod n² with x drawn from SHAKE-256 of n.
func djnBase(k *PaillierPublicKey) (*big.Int, error) {
	xof := sha3.NewSHAKE256()
	xof.Write([]byte("trellis/privacy paillier DJN h"))
	xof.Write(k.N.Bytes())
	b := make([]byte, (k.N.BitLen()+7)/8+16)
	x, g, one := new(big.Int), new(big.Int), big.NewInt(1)
	for range 64 {
		xof.Read(b)
		x.SetBytes(b).Mod(x, k.N)
		if x.Sign() > 0 && g.GCD(nil, nil, x, k.N).Cmp(one) == 0 {
			h := new(big.Int).Mul(x, x)
			h.Mod(h, k.N).Sub(k.N, h) // −x² mod n (x² mod n ≠ 0 since x is a unit)
			return h.Exp(h, k.N, k.N2), nil
		}
	}
	return nil, fmt.Errorf("paillier: no unit drawn for the fixed base (is n a product of two large primes?)")
}

func newPaillierEncrypter(k *PaillierPublicKey) (*PaillierEncrypter, error) {
	if k == nil || k.N == nil || k.N.BitLen() < paillierMinBits {
		return nil, fmt.Errorf("paillier: an encrypter needs a public key of at least %d bits", paillierMinBits)
	}
	hs, err := djnBase(k)
	if err != nil {
		return nil, err
	}
	expBits := (k.N.BitLen() + 1) / 2
	e := &PaillierEncrypter{key: k, expBytes: (expBits + 7) / 8}
	windows := (8*e.expBytes + fixedBaseWindow - 1) / fixedBaseWindow
	e.table = make([][]*big.Int, windows)
	base := hs // h_s^(2^(w·i))
	for i := range e.table {
		row := make([]*big.Int, 1<<fixedBaseWindow-1)
		row[0] = base
		for j := 1; j < len(row); j++ {
			v := new(big.Int).Mul(row[j-1], base)
			row[j] = v.Mod(v, k.N2)
		}
		e.table[i] = row
		next := new(big.Int).Mul(row[len(row)-1], base) // base^(2^w)
		base = next.Mod(next, k.N2)
	}
	return e, nil
}

// Encrypt returns Enc(m; α) for m in [0, n), α drawn from rand.
func (e *PaillierEncrypter) Encrypt(m *big.Int, rand io.Reader) (*big.Int, error) {
	k := e.key
	if m.Sign() < 0 || m.Cmp(k.N) >= 0 {
		return nil, ErrPlaintextRange
	}
	a := make([]byte, e.expBytes)
	if _, err := io.ReadFull(rand, a); err != nil {
		return nil, fmt.Errorf("paillier: randomness: %w", err)
	}
	c := new(big.Int).Mul(m, k.N)
	c.Add(c, big.NewInt(1)) // (1 + m·n) < n²
	// Windows of α from its least significant bit; a is big-endian.
	for i, row := range e.table {
		if j := window(a, i*fixedBaseWindow, fixedBaseWindow); j != 0 {
			c.Mul(c, row[j-1])
			c.Mod(c, k.N2)
		}
	}
	return c, nil
}

// window returns bits [lo, lo+w) of the big-endian number a (0 past its end).
func window(a []byte, lo, w int) int {
	v := 0
	for b := w - 1; b >= 0; b-- {
		bit := lo + b
		v <<= 1
		if byteIdx := len(a) - 1 - bit/8; byteIdx >= 0 {
			v |= int(a[byteIdx]>>(bit%8)) & 1
		}
	}
	return v
}
