package consensus

import (
	"fmt"
	"math"
	"math/big"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/privacy"
)

const (
	heKey    = 0x4e01 // node i's Paillier key, under seed.Identity
	heWeight = 0x4e02 // a_{i→j}(k), private to i, under seed.Strategy
	heEnc    = 0x4e03 // encryption randomness, under seed.Mask
)

// Encrypted is the pairwise homomorphically encrypted consensus of the
// survey's §3.3.2 and Table 5 (refs. [151], [102]: additive homomorphism,
// individual keys): every node has its own Paillier key; along an edge
// {i, j} at iteration k
//
//  1. i sends Enc_i(−x_i) under its own key;
//  2. j returns Enc_i(a_{j→i}·(x_j − x_i)) = (Enc_i(−x_i) · Enc_i(x_j))^{a_{j→i}},
//     with a_{j→i}(k) > 0 drawn privately by j;
//  3. i decrypts a_{j→i}(x_j − x_i), multiplies by its own a_{i→j}(k) and sets
//     x_i(k+1) = x_i(k) + ε Σ_j a_{i→j}(k) a_{j→i}(k) (x_j(k) − x_i(k)).
//
// The weight a_ij = a_{i→j}·a_{j→i} is symmetric, so the sum is kept and the
// states reach x̄; neither end learns the other's state, only a randomly
// scaled difference. Fixed point: states are sent as round(x·2^Frac), the
// weights as integers A/2^WeightBits with A in [Lo·2^WeightBits,
// 2^WeightBits], and i forms the flow as the integer A_{i→j}·(decrypted)
// before scaling, which is exactly antisymmetric in i and j.
type Encrypted struct {
	Bits       int     // Paillier modulus bits (0 means 512: for tests and benches, far from 2048-bit security)
	Frac       int     // fractional bits of the fixed-point states (0 means 40)
	WeightBits int     // bits of a weight (0 means 16)
	Lo         float64 // weights in [Lo, 1] (0 means 0.5: a_ij = a_{i→j}·a_{j→i} then averages 0.56, so fewer costly iterations)
	Eps        float64 // step ε (0 means 1/(d_max + 1))
}

func (e Encrypted) def() Encrypted {
	if e.Bits == 0 {
		e.Bits = 512
	}
	if e.Frac == 0 {
		e.Frac = 40
	}
	if e.WeightBits == 0 {
		e.WeightBits = 16
	}
	if e.Lo == 0 {
		e.Lo = 0.5
	}
	return e
}

// Weight is A_{i→j}(k), node i's private integer weight for its edge to j.
func (e Encrypted) Weight(sd uint64, i, j, k int) int64 {
	e = e.def()
	top := int64(1) << e.WeightBits
	lo := int64(math.Ceil(e.Lo * float64(top)))
	r := seed.Stream(sd, seed.Strategy, heWeight, uint64(i), uint64(j), uint64(k))
	return lo + r.Int64N(top-lo+1)
}

// Run runs the method. Trace.Msgs holds, per edge and iteration, the
// ciphertext i sent (Kind Cipher) and the reply (Kind Reply, Value what its
// receiver decrypts, a_{j→i}(x_j − x_i) in real units).
func (e Encrypted) Run(p *Problem) (*Trace, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	e = e.def()
	n := p.G.N()
	eps := e.Eps
	if eps == 0 {
		eps = 1 / float64(maxDegree(p.G)+1)
	}
	keys := make([]*privacy.PaillierPrivateKey, n)
	encs := make([]*privacy.PaillierEncrypter, n)
	for i := range n {
		r := seed.Stream(p.Seed, seed.Identity, heKey, uint64(i))
		k, err := privacy.GeneratePaillier(privacy.NewStreamReader(r.Uint64), e.Bits)
		if err != nil {
			return nil, err
		}
		keys[i] = k
		if encs[i], err = k.PaillierPublicKey.Encrypter(); err != nil {
			return nil, err
		}
	}
	scale := math.Ldexp(1, e.Frac)
	unscale := math.Ldexp(1, -(e.Frac + 2*e.WeightBits))
	x := append([]float64(nil), p.X0...)
	q := make([]*big.Int, n)
	t := newTrace(p)
	t.observe(x)
	for k := range p.Iters {
		for i := range n {
			v := math.Round(x[i] * scale)
			if math.Abs(v) >= 1<<62 {
				return nil, fmt.Errorf("consensus: state %v too large for %d fractional bits", x[i], e.Frac)
			}
			q[i] = big.NewInt(int64(v))
		}
		// 1. Enc_i(−q_i) under i's key, sent to every neighbour.
		cts := make([]*big.Int, n)
		for i := range n {
			rd := privacy.NewStreamReader(seed.Stream(p.Seed, seed.Mask, heEnc, uint64(i), uint64(k), uint64(n)).Uint64)
			m := new(big.Int).Neg(q[i])
			c, err := encs[i].Encrypt(m.Mod(m, keys[i].N), rd)
			if err != nil {
				return nil, err
			}
			cts[i] = c
			if p.Record {
				for _, j := range p.G.Out(i) {
					t.Msgs = append(t.Msgs, Message{Iter: k, From: i, To: j, Kind: Cipher, Value: math.NaN(), Ct: c})
				}
			}
		}
		nx := append([]float64(nil), x...)
		for i := range n {
			pk := &keys[i].PaillierPublicKey
			flow := 0.0
			for _, j := range p.G.Out(i) {
				// 2. j's reply: (Enc_i(−q_i)·Enc_i(q_j))^{A_{j→i}}.
				rd := privacy.NewStreamReader(seed.Stream(p.Seed, seed.Mask, heEnc, uint64(j), uint64(k), uint64(i)).Uint64)
				m := new(big.Int).Mod(q[j], pk.N)
				cj, err := encs[i].Encrypt(m, rd)
				if err != nil {
					return nil, err
				}
				aji := e.Weight(p.Seed, j, i, k)
				reply := pk.MulScalar(pk.Add(cts[i], cj), big.NewInt(aji))
				// 3. i decrypts A_{j→i}(q_j − q_i) and applies its own weight.
				d, err := keys[i].Decrypt(reply)
				if err != nil {
					return nil, err
				}
				if d.Cmp(new(big.Int).Rsh(pk.N, 1)) > 0 { // a negative difference
					d.Sub(d, pk.N)
				}
				if p.Record {
					f, _ := new(big.Float).SetInt(d).Float64()
					t.Msgs = append(t.Msgs, Message{Iter: k, From: j, To: i, Kind: Reply,
						Value: f * math.Ldexp(1, -(e.Frac+e.WeightBits)), Ct: reply})
				}
				d.Mul(d, big.NewInt(e.Weight(p.Seed, i, j, k)))
				f, _ := new(big.Float).SetInt(d).Float64()
				flow += f * unscale
			}
			nx[i] = x[i] + eps*flow
		}
		x = nx
		t.observe(x)
	}
	t.finish(x)
	return t, nil
}
