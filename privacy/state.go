package privacy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
)

// State that outlives a process: the accountant's composed RDP (a node
// restarted from a checkpoint must go on charging from where it was, never
// from ε = 0) and a Paillier private key (a node keeps its key across
// rounds). Both formats are little-endian and start with a magic string
// and a version byte.

const (
	accountantMagic   = "trellis/rdp"
	accountantVersion = 1
	paillierMagic     = "trellis/paillier"
	paillierVersion   = 1
	// maxPaillierPrimeBits bounds the primes of a saved key: 8192-bit
	// primes are a 16384-bit modulus, far beyond any key in use, and keep
	// a damaged file from asking for a primality test of a huge number.
	maxPaillierPrimeBits = 8192
)

// MarshalBinary is the accountant's state: its order grid, the RDP
// composed at each order and the number of releases.
//
//	magic "trellis/rdp", version u8 (1), orders u32,
//	orders × f64, orders × f64 (RDP), steps u64
func (a *Accountant) MarshalBinary() ([]byte, error) {
	b := append([]byte(accountantMagic), accountantVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(a.orders)))
	for _, xs := range [][]float64{a.orders, a.rdp} {
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return binary.LittleEndian.AppendUint64(b, uint64(a.steps)), nil
}

// UnmarshalBinary puts MarshalBinary's state into a, which must have the
// same order grid (an accountant built from the same configuration): the
// composed RDP and the release count continue from the saved ones.
func (a *Accountant) UnmarshalBinary(b []byte) error {
	if len(b) < len(accountantMagic)+1+4 || string(b[:len(accountantMagic)]) != accountantMagic {
		return errors.New("accountant: not an accountant state")
	}
	if v := b[len(accountantMagic)]; v != accountantVersion {
		return fmt.Errorf("accountant: state format %d, this trellis reads %d", v, accountantVersion)
	}
	b = b[len(accountantMagic)+1:]
	k := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(k) != uint64(len(a.orders)) {
		return fmt.Errorf("accountant: the state has %d RDP orders, this accountant %d (another order grid: restore with the config that saved it)", k, len(a.orders))
	}
	if want := 16*len(a.orders) + 8; len(b) != want {
		return fmt.Errorf("accountant: state of %d bytes after its header, want %d", len(b), want)
	}
	f := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])) }
	rdp := make([]float64, len(a.orders))
	for i, o := range a.orders {
		if got := f(i); math.Float64bits(got) != math.Float64bits(o) {
			return fmt.Errorf("accountant: the state's order %d is %v, this accountant's %v (another order grid)", i, got, o)
		}
		rdp[i] = f(len(a.orders) + i)
		if !(rdp[i] >= 0) { // NaN or negative: no RDP curve
			return fmt.Errorf("accountant: RDP %v at order %v in the state", rdp[i], o)
		}
	}
	steps := binary.LittleEndian.Uint64(b[16*len(a.orders):])
	if steps > math.MaxInt32 {
		return fmt.Errorf("accountant: %d releases in the state", steps)
	}
	a.rdp, a.steps, a.last = rdp, int(steps), nil
	return nil
}

// MarshalBinary is the private key: its two primes.
//
//	magic "trellis/paillier", version u8 (1),
//	p: u32 length + big-endian bytes, q: likewise
func (k *PaillierPrivateKey) MarshalBinary() ([]byte, error) {
	b := append([]byte(paillierMagic), paillierVersion)
	for _, x := range []*big.Int{k.P, k.Q} {
		xb := x.Bytes()
		b = binary.LittleEndian.AppendUint32(b, uint32(len(xb)))
		b = append(b, xb...)
	}
	return b, nil
}

// UnmarshalPaillier rebuilds a private key from MarshalBinary's bytes,
// checking that its factors are primes of equal size.
func UnmarshalPaillier(b []byte) (*PaillierPrivateKey, error) {
	if len(b) < len(paillierMagic)+1 || string(b[:len(paillierMagic)]) != paillierMagic {
		return nil, errors.New("paillier: not a private key")
	}
	if v := b[len(paillierMagic)]; v != paillierVersion {
		return nil, fmt.Errorf("paillier: key format %d, this trellis reads %d", v, paillierVersion)
	}
	b = b[len(paillierMagic)+1:]
	var pq [2]*big.Int
	for i := range pq {
		if len(b) < 4 {
			return nil, errors.New("paillier: key truncated")
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) || n > maxPaillierPrimeBits/8 {
			return nil, fmt.Errorf("paillier: a prime of %d bytes in a key of %d bytes left (at most %d)", n, len(b), maxPaillierPrimeBits/8)
		}
		pq[i] = new(big.Int).SetBytes(b[:n])
		b = b[n:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("paillier: %d trailing bytes after the key", len(b))
	}
	p, q := pq[0], pq[1]
	if p.BitLen() < paillierMinBits/2 || p.BitLen() != q.BitLen() || p.Cmp(q) == 0 {
		return nil, fmt.Errorf("paillier: factors of %d and %d bits (two distinct primes of equal size, at least %d bits each)", p.BitLen(), q.BitLen(), paillierMinBits/2)
	}
	if !p.ProbablyPrime(20) || !q.ProbablyPrime(20) {
		return nil, errors.New("paillier: a factor of the key is not prime")
	}
	return paillierFromPrimes(p, q)
}
