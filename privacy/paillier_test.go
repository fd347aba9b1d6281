package privacy

import (
	"errors"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"sync"
	"testing"
)

// randMod draws a value in [0, n).
func randMod(n *big.Int, r io.Reader) *big.Int {
	b := make([]byte, (n.BitLen()+7)/8+8)
	_, _ = io.ReadFull(r, b)
	v := new(big.Int).SetBytes(b)
	return v.Mod(v, n)
}

var (
	testKeyOnce sync.Once
	testKey     *PaillierPrivateKey
)

// paillierTestKey is a 1024-bit key from a seeded stream (tests only).
func paillierTestKey(t testing.TB) *PaillierPrivateKey {
	testKeyOnce.Do(func() {
		k, err := GeneratePaillier(testReader(99), 1024)
		if err != nil {
			t.Fatal(err)
		}
		testKey = k
	})
	return testKey
}

// Decryption checked against the textbook formula without the CRT,
// m = L(c^λ mod n²)·μ mod n with λ = lcm(p−1, q−1), μ = L(g^λ mod n²)^-1
// (Paillier 1999, Theorem 15), and a worked example with n = 11·13.
func TestPaillierDecryptsAsTheTextbook(t *testing.T) {
	small, err := paillierFromPrimes(big.NewInt(11), big.NewInt(13))
	if err != nil {
		t.Fatal(err)
	}
	// Enc(42; r = 5) = (1 + 42·143)·5^143 mod 143², by hand with math/big.
	n2 := big.NewInt(143 * 143)
	c := new(big.Int).Exp(big.NewInt(5), big.NewInt(143), n2)
	c.Mul(c, big.NewInt(1+42*143)).Mod(c, n2)
	if m, err := small.Decrypt(c); err != nil || m.Int64() != 42 {
		t.Fatalf("n = 143: Dec = %v, %v; want 42", m, err)
	}
	k := paillierTestKey(t)
	if k.N.BitLen() != 1024 {
		t.Fatalf("n has %d bits", k.N.BitLen())
	}
	one := big.NewInt(1)
	pm1, qm1 := new(big.Int).Sub(k.P, one), new(big.Int).Sub(k.Q, one)
	gcd := new(big.Int).GCD(nil, nil, pm1, qm1)
	lambda := new(big.Int).Mul(pm1, qm1)
	lambda.Quo(lambda, gcd)
	g := new(big.Int).Add(k.N, one)
	L := func(u *big.Int) *big.Int { return new(big.Int).Quo(new(big.Int).Sub(u, one), k.N) }
	mu := L(new(big.Int).Exp(g, lambda, k.N2))
	mu.ModInverse(mu, k.N)
	rd := testReader(3)
	for i := range 20 {
		m := randMod(k.N, testReader(uint64(i)))
		if i == 0 {
			m.SetInt64(0)
		}
		if i == 1 {
			m.Sub(k.N, one)
		}
		c, err := k.Encrypt(m, rd)
		if err != nil {
			t.Fatal(err)
		}
		want := L(new(big.Int).Exp(c, lambda, k.N2))
		want.Mul(want, mu).Mod(want, k.N)
		got, err := k.Decrypt(c)
		if err != nil || got.Cmp(m) != 0 || want.Cmp(m) != 0 {
			t.Fatalf("m = %v: CRT decryption %v (%v), textbook %v", m, got, err, want)
		}
	}
	if _, err := k.Encrypt(k.N, rd); !errors.Is(err, ErrPlaintextRange) {
		t.Errorf("m = n encrypted: %v", err)
	}
	for _, bad := range []*big.Int{big.NewInt(0), k.N2, k.N, new(big.Int).Neg(one)} {
		if _, err := k.Decrypt(bad); !errors.Is(err, ErrCiphertext) {
			t.Errorf("Decrypt(%v…) = %v, want ErrCiphertext", bad.BitLen(), err)
		}
	}
	if _, err := GeneratePaillier(rd, 256); err == nil {
		t.Error("a 256-bit key was made")
	}
	// Seeded key generation repeats; encryption is randomized.
	k2, err := GeneratePaillier(testReader(99), 1024)
	if err != nil || k2.N.Cmp(k.N) != 0 {
		t.Error("the same seed gave another key")
	}
	c1, _ := k.Encrypt(one, rd)
	c2, _ := k.Encrypt(one, rd)
	if c1.Cmp(c2) == 0 {
		t.Error("two encryptions of 1 are equal")
	}
}

// Enc(a)·Enc(b) decrypts to a + b and Enc(a)^s to s·a, modulo n, negative
// scalars included.
func TestPaillierHomomorphism(t *testing.T) {
	k := paillierTestKey(t)
	rd := testReader(4)
	src := rand.New(rand.NewPCG(5, 6))
	for range 10 {
		a, b := randMod(k.N, rd), randMod(k.N, rd)
		s := big.NewInt(src.Int64N(1<<40) - 1<<39)
		ca, _ := k.Encrypt(a, rd)
		cb, _ := k.Encrypt(b, rd)
		sum, _ := k.Decrypt(k.Add(ca, cb))
		if want := new(big.Int).Add(a, b); sum.Cmp(want.Mod(want, k.N)) != 0 {
			t.Fatal("Dec(Enc a · Enc b) ≠ a + b mod n")
		}
		prod, _ := k.Decrypt(k.MulScalar(ca, s))
		if want := new(big.Int).Mul(a, s); prod.Cmp(want.Mod(want, k.N)) != 0 {
			t.Fatalf("Dec(Enc(a)^%v) ≠ %v·a mod n", s, s)
		}
	}
}

// Packing round trip and aggregation through an untrusted relay: members
// encrypt their packed vectors under the receiver's public key, a relay
// holding nothing but that key multiplies the ciphertexts (it cannot read
// any), and the receiver decrypts only the sum: Σ round(x·2^16)/2^16 exactly,
// within 2^-17 per member of the real sum. A weighted sum (integer weights
// by plaintext-scalar multiplication) decodes too.
func TestPaillierPackingAndRelay(t *testing.T) {
	k := paillierTestKey(t)
	const members, dim, bits, bound, headroom = 6, 150, 16, 8.0, 5
	pk, err := NewPaillierPacking(&k.PaillierPublicKey, bits, bound, headroom)
	if err != nil {
		t.Fatal(err)
	}
	// 16 fraction bits, values in ±8: 2·8·2^16 needs 21 bits, + 5 headroom.
	if pk.Slot != 21+headroom || pk.Per != 1023/pk.Slot {
		t.Fatalf("packing %+v", pk)
	}
	src := rand.New(rand.NewPCG(7, 8))
	rd := testReader(10)
	relay := &k.PaillierPublicKey // all the relay has
	var agg, wagg []*big.Int
	exact, wexact, real := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	for j := range members {
		x := make([]float32, dim)
		for i := range x {
			x[i] = float32((src.Float64()*2 - 1) * bound)
		}
		x[0], x[1] = bound, -bound
		ms, err := pk.Encode(x)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != pk.Plaintexts(dim) {
			t.Fatalf("%d plaintexts for %d values", len(ms), dim)
		}
		w := big.NewInt(int64(j%3 + 1)) // integer weights summing to ≤ 2^headroom
		for p, m := range ms {
			c, err := relay.Encrypt(m, rd)
			if err != nil {
				t.Fatal(err)
			}
			wc := relay.MulScalar(c, w)
			if j == 0 {
				agg, wagg = append(agg, c), append(wagg, wc)
			} else {
				agg[p], wagg[p] = relay.Add(agg[p], c), relay.Add(wagg[p], wc)
			}
		}
		for i, v := range x {
			q := math.Round(float64(v)*65536) / 65536
			exact[i] += q
			wexact[i] += float64(w.Int64()) * q
			real[i] += float64(v)
		}
	}
	for name, c := range map[string]struct {
		cts   []*big.Int
		want  []float64
		terms int
	}{"sum": {agg, exact, members}, "weighted": {wagg, wexact, 1 + 2 + 3 + 1 + 2 + 3}} {
		ms := make([]*big.Int, len(c.cts))
		for p, ct := range c.cts {
			if ms[p], err = k.Decrypt(ct); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]float64, dim)
		if err := pk.Decode(got, ms, c.terms); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], c.want[i])
			}
		}
	}
	for i := range exact {
		if d := math.Abs(exact[i] - real[i]); d > members*math.Ldexp(1, -17) {
			t.Fatalf("coordinate %d: fixed-point sum off by %g", i, d)
		}
	}
	if _, err := pk.Encode([]float32{bound * 1.01}); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("a value over the bound: %v", err)
	}
	if err := pk.Decode(make([]float64, dim), make([]*big.Int, pk.Plaintexts(dim)), 1<<headroom+1); err == nil {
		t.Error("a sum beyond the headroom was decoded")
	}
	// Plaintexts that no sum of encoded vectors can be: negative, wider than
	// the packed slots, missing, or a slot above terms·2·offset.
	ok := make([]*big.Int, pk.Plaintexts(dim))
	for i := range ok {
		ok[i] = new(big.Int)
	}
	huge := new(big.Int).Lsh(big.NewInt(1), 5000)
	slotOver := big.NewInt(2*pk.offset() + 1)
	for name, m := range map[string]*big.Int{"2^5000": huge, "-1": big.NewInt(-1), "nil": nil, "slot over": slotOver} {
		ms := append([]*big.Int(nil), ok...)
		ms[0] = m
		if err := pk.Decode(make([]float64, dim), ms, 1); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("plaintext %s decoded: %v", name, err)
		}
	}
	if err := pk.Decode(make([]float64, dim), ok, 1); err != nil {
		t.Errorf("all-zero plaintexts refused: %v", err)
	}
	if _, err := NewPaillierPacking(&k.PaillierPublicKey, 40, 1e6, 30); err == nil {
		t.Error("a slot over 63 bits accepted")
	}
}

var (
	benchKeyOnce sync.Once
	benchKey     *PaillierPrivateKey
)

// BenchmarkPaillier2048: encryption, addition and decryption with a
// 2048-bit modulus, per plaintext; with packing (16 fraction bits, ±8,
// 5 bits of headroom: 26-bit slots, 78 coordinates a plaintext) a
// plaintext carries Per coordinates, so the cost per coordinate is the
// figure divided by Per (BENCHMARKS.md).
func BenchmarkPaillier2048(b *testing.B) {
	benchKeyOnce.Do(func() {
		var err error
		if benchKey, err = GeneratePaillier(testReader(2048), 2048); err != nil {
			b.Fatal(err)
		}
	})
	k := benchKey
	pk, err := NewPaillierPacking(&k.PaillierPublicKey, 16, 8, 5)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("packing: %d-bit slots, %d coordinates per plaintext", pk.Slot, pk.Per)
	rd := testReader(1)
	x := make([]float32, pk.Per)
	ms, _ := pk.Encode(x)
	c, _ := k.Encrypt(ms[0], rd)
	c2, _ := k.Encrypt(ms[0], rd)
	b.Run("encrypt", func(b *testing.B) {
		for b.Loop() {
			if _, err := k.Encrypt(ms[0], rd); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The fixed-base encrypter (DJN): a table per key, then one product
	// per 6-bit window of a 1024-bit exponent.
	b.Run("encrypt-fixedbase", func(b *testing.B) {
		e, err := k.Encrypter()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := e.Encrypt(ms[0], rd); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fixedbase-table", func(b *testing.B) {
		for b.Loop() {
			if _, err := newPaillierEncrypter(&k.PaillierPublicKey); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			k.Add(c, c2)
		}
	})
	b.Run("decrypt", func(b *testing.B) {
		for b.Loop() {
			if _, err := k.Decrypt(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := pk.Encode(x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
