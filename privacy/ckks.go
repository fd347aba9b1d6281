package privacy

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/schemes/ckks"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

// CKKS (Cheon, Kim, Kim, Song 2017: approximate arithmetic on batched
// ciphertexts) with threshold key generation and decryption, through
// github.com/tuneinsight/lattigo/v6 (v6.1.1; its multiparty package is
// Mouchet et al. 2021, "Multiparty Homomorphic Encryption from
// Ring-Learning-with-Errors"): the survey, §3.1.2.
//
// A group's parties each hold a secret-key share s_i; the collective
// public key encrypts under s = Σ s_i, which no party holds. A weighted sum
// of ciphertexts is computed by anyone (plaintext-scalar products, one
// rescale), and decrypted only when every party contributes a key-switching
// share from s_i to the receiver's output key (N-out-of-N, Mouchet et al.
// §4.3), each flooded with noise so that a share reveals nothing of s_i.
// A missing share leaves the result encrypted.

// CKKSParams are the scheme's parameters: ring degree 2^13 (4096 slots a
// ciphertext), a 60-bit first modulus and one 50-bit level for the
// rescale after the scalar products, a 60-bit special modulus for key
// switching, default scale 2^50: 128-bit security for a 170-bit QP
// (HomomorphicEncryption.org standard: N = 2^13 allows 218 bits).
var CKKSParams = ckks.ParametersLiteral{
	LogN:            13,
	LogQ:            []int{60, 50},
	LogP:            []int{60},
	LogDefaultScale: 50,
}

// CKKSGroup is the shared state of one group: parameters, the common
// reference string's key (public), and the collective public key once made.
type CKKSGroup struct {
	Params ckks.Parameters
	crsKey []byte
	enc    *ckks.Encoder
	eval   *ckks.Evaluator
	cks    multiparty.KeySwitchProtocol
	ckg    multiparty.PublicKeyGenProtocol
	crp    multiparty.PublicKeyGenCRP
	pk     *rlwe.PublicKey
	shapeState
}

// ckksSmudging is the key-switching shares' flooding noise: 2^20 times the
// fresh noise's σ (3.2), far above the ciphertext's own noise, so a share
// hides its secret-dependent part; at scale 2^50 it costs the decoded
// values about 2^-22 absolute error.
const ckksSmudging = 1 << 20 * rlwe.DefaultNoise

// NewCKKSGroup sets up a group with the given common reference string key
// (all parties use the same, e.g. derived from the round and the group).
func NewCKKSGroup(lit ckks.ParametersLiteral, crsKey []byte) (*CKKSGroup, error) {
	params, err := ckks.NewParametersFromLiteral(lit)
	if err != nil {
		return nil, fmt.Errorf("ckks: %w", err)
	}
	cks, err := multiparty.NewKeySwitchProtocol(params, ring.DiscreteGaussian{Sigma: ckksSmudging, Bound: 6 * ckksSmudging})
	if err != nil {
		return nil, fmt.Errorf("ckks: %w", err)
	}
	g := &CKKSGroup{Params: params, crsKey: crsKey, enc: ckks.NewEncoder(params), eval: ckks.NewEvaluator(params, nil),
		cks: cks, ckg: multiparty.NewPublicKeyGenProtocol(params)}
	crs, err := sampling.NewKeyedPRNG(crsKey)
	if err != nil {
		return nil, err
	}
	g.crp = g.ckg.SampleCRP(crs)
	return g, nil
}

// Slots is how many values one ciphertext holds.
func (g *CKKSGroup) Slots() int { return g.Params.MaxSlots() }

// Ciphertexts is how many ciphertexts a vector of dim values needs.
func (g *CKKSGroup) Ciphertexts(dim int) int { return (dim + g.Slots() - 1) / g.Slots() }

// CKKSParty is one party's secret-key share.
type CKKSParty struct {
	g  *CKKSGroup
	sk *rlwe.SecretKey
}

// NewParty draws a party's secret-key share.
func (g *CKKSGroup) NewParty() *CKKSParty {
	return &CKKSParty{g: g, sk: rlwe.NewKeyGenerator(g.Params).GenSecretKeyNew()}
}

// PublicKeyShare is the party's share of the collective public key.
func (p *CKKSParty) PublicKeyShare() multiparty.PublicKeyGenShare {
	sh := p.g.ckg.AllocateShare()
	p.g.ckg.GenShare(p.sk, p.g.crp, &sh)
	return sh
}

// SetPublicKey makes the collective public key from every party's share.
func (g *CKKSGroup) SetPublicKey(shares []multiparty.PublicKeyGenShare) error {
	if len(shares) == 0 {
		return fmt.Errorf("ckks: no public-key shares")
	}
	agg := g.ckg.AllocateShare()
	for _, s := range shares {
		g.ckg.AggregateShares(agg, s, &agg)
	}
	g.pk = rlwe.NewPublicKey(g.Params)
	g.ckg.GenPublicKey(agg, g.crp, g.pk)
	return nil
}

// Encrypt encrypts x under the collective public key, Slots values a
// ciphertext.
func (g *CKKSGroup) Encrypt(x []float64) ([]*rlwe.Ciphertext, error) {
	if g.pk == nil {
		return nil, fmt.Errorf("ckks: no collective public key yet")
	}
	enc := rlwe.NewEncryptor(g.Params, g.pk)
	out := make([]*rlwe.Ciphertext, 0, g.Ciphertexts(len(x)))
	for start := 0; start < len(x); start += g.Slots() {
		pt := ckks.NewPlaintext(g.Params, g.Params.MaxLevel())
		if err := g.enc.Encode(x[start:min(len(x), start+g.Slots())], pt); err != nil {
			return nil, err
		}
		ct, err := enc.EncryptNew(pt)
		if err != nil {
			return nil, err
		}
		out = append(out, ct)
	}
	return out, nil
}

// WeightedSum is Σ_j w_j·cts[j] (one rescale), computed on ciphertexts
// alone: what a party that cannot decrypt does.
func (g *CKKSGroup) WeightedSum(cts [][]*rlwe.Ciphertext, w []float64) ([]*rlwe.Ciphertext, error) {
	if len(cts) == 0 || len(cts) != len(w) {
		return nil, fmt.Errorf("ckks: %d vectors and %d weights", len(cts), len(w))
	}
	out := make([]*rlwe.Ciphertext, len(cts[0]))
	for k := range out {
		var acc *rlwe.Ciphertext
		for j := range cts {
			if len(cts[j]) != len(out) {
				return nil, fmt.Errorf("ckks: vector %d has %d ciphertexts, want %d", j, len(cts[j]), len(out))
			}
			if acc == nil {
				var err error
				if acc, err = g.eval.MulNew(cts[j][k], w[j]); err != nil {
					return nil, err
				}
				continue
			}
			if err := g.eval.MulThenAdd(cts[j][k], w[j], acc); err != nil {
				return nil, err
			}
		}
		if err := g.eval.Rescale(acc, acc); err != nil {
			return nil, err
		}
		out[k] = acc
	}
	return out, nil
}

// CKKSReceiver holds the output key a result is switched to.
type CKKSReceiver struct {
	g  *CKKSGroup
	sk *rlwe.SecretKey
}

// NewReceiver draws an output key for the party that is to read a result.
func (g *CKKSGroup) NewReceiver() *CKKSReceiver {
	return &CKKSReceiver{g: g, sk: rlwe.NewKeyGenerator(g.Params).GenSecretKeyNew()}
}

// DecryptionShare is the party's key-switching share of ct, from its s_i
// to the receiver's key (out) if it is the receiver, to zero otherwise.
func (p *CKKSParty) DecryptionShare(ct *rlwe.Ciphertext, out *CKKSReceiver) multiparty.KeySwitchShare {
	sh := p.g.cks.AllocateShare(ct.Level())
	target := rlwe.NewSecretKey(p.g.Params)
	if out != nil {
		target = out.sk
	}
	p.g.cks.GenShare(p.sk, target, ct, &sh)
	return sh
}

// Decrypt switches ct to the receiver's key with the shares of every party
// and decodes dim values. With a share missing the switch is incomplete and
// the decoded values are noise — which the tests check.
func (r *CKKSReceiver) Decrypt(cts []*rlwe.Ciphertext, shares [][]multiparty.KeySwitchShare, dim int) ([]float64, error) {
	g := r.g
	if len(shares) != len(cts) {
		return nil, fmt.Errorf("ckks: shares for %d ciphertexts, have %d", len(shares), len(cts))
	}
	dec := rlwe.NewDecryptor(g.Params, r.sk)
	out := make([]float64, 0, dim)
	vals := make([]float64, g.Slots())
	for k, ct := range cts {
		if len(shares[k]) == 0 {
			return nil, fmt.Errorf("ckks: no decryption shares for ciphertext %d", k)
		}
		agg := g.cks.AllocateShare(ct.Level())
		for _, s := range shares[k] {
			if err := g.cks.AggregateShares(agg, s, &agg); err != nil {
				return nil, err
			}
		}
		sw := rlwe.NewCiphertext(g.Params, 1, ct.Level())
		g.cks.KeySwitch(ct, agg, sw)
		pt := dec.DecryptNew(sw)
		if err := g.enc.Decode(pt, vals); err != nil {
			return nil, err
		}
		out = append(out, vals[:min(g.Slots(), dim-k*g.Slots())]...)
	}
	return out, nil
}
