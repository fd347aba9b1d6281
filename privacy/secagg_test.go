package privacy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/trellis-fl/trellis/wire"
)

// group is one secure-aggregation instance run in memory: aggregator 0,
// members 1…n, every message as the protocol hands it over.
type group struct {
	tb      testing.TB
	p       SecAggParams
	ids     []*wire.Identity
	members []*SecAggMember
	agg     *SecAggAggregator
	inputs  [][]float32
	fwd     map[uint32][]byte
}

func newGroup(tb testing.TB, n, thr, dim int, seed uint64, round uint64) *group {
	ids, dir := wire.SimIdentities(seed, n+1)
	p := SecAggParams{Round: round, Aggregator: 0, Dim: dim, Threshold: thr, ScaleBits: 16, Directory: dir}
	g := &group{tb: tb, p: p, ids: ids}
	cand := make([]int, n)
	for i := range cand {
		cand[i] = i + 1
	}
	var err error
	if g.agg, err = NewSecAggAggregator(p, cand); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, round))
	for i := 1; i <= n; i++ {
		m, err := NewSecAggMember(p, uint32(i), testReader(seed*1000+uint64(i)+round<<20))
		if err != nil {
			tb.Fatal(err)
		}
		g.members = append(g.members, m)
		x := make([]float32, dim)
		for k := range x {
			x[k] = float32(rng.NormFloat64() * 3)
		}
		x[0] = FixedPointBound(16, n) // the range's edges are exact too
		x[1] = -x[0]
		g.inputs = append(g.inputs, x)
	}
	return g
}

// FixedPointBound is the encoding's bound (a test helper).
func FixedPointBound(bits, n int) float32 {
	f, _ := NewFixedPoint(bits, n)
	b := float32(f.Bound)
	if float64(b) > f.Bound {
		b = math.Nextafter32(b, 0)
	}
	return b
}

// advertisement signs member i's keys as its wire message would be.
func (g *group) advertise(i int) {
	m := g.members[i-1]
	msg := &wire.Message{Header: wire.Header{Kind: wire.KindKey, From: uint32(i), To: 0, Round: g.p.Round, Seq: uint64(3 + i)},
		Blob: wire.Blob{Tag: TagSecAggAdvertise, Data: m.Advertisement()}}
	if err := wire.Sign(msg, g.ids[i]); err != nil {
		g.tb.Fatal(err)
	}
	if err := g.agg.TakeAdvertisement(uint32(i), msg.Seq, msg.Sig, msg.Blob.Data); err != nil {
		g.tb.Fatal(err)
	}
}

// run plays the protocol: members in noAdv never advertise, those in
// noShare drop before phase 2, those in noInput send shares but not their
// input, those in noAnswer drop after the masked-input phase (the worst
// moment). It returns the sum, the plain fixed-point sum of the inputs in
// the sum, and the error.
func (g *group) run(noShare, noInput, noAnswer []int) ([]float64, []float64, SecAggResult, error) {
	n := len(g.members)
	for i := 1; i <= n; i++ {
		g.advertise(i)
	}
	roster, ids, err := g.agg.Roster()
	if err != nil {
		return nil, nil, SecAggResult{}, err
	}
	if len(ids) != n {
		g.tb.Fatalf("roster of %d, want %d", len(ids), n)
	}
	for _, m := range g.members {
		if err := m.TakeRoster(roster); err != nil {
			g.tb.Fatal(err)
		}
	}
	fp, _ := NewFixedPoint(16, n)
	want := make([]float64, g.p.Dim)
	enc := make([]uint32, g.p.Dim)
	for i := 1; i <= n; i++ {
		if slices.Contains(noShare, i) {
			continue
		}
		sh, y, err := g.members[i-1].ShareAndMask(g.inputs[i-1])
		if err != nil {
			g.tb.Fatal(err)
		}
		if err := g.agg.TakeShares(uint32(i), sh); err != nil {
			g.tb.Fatal(err)
		}
		if slices.Contains(noInput, i) {
			continue
		}
		if err := g.agg.TakeMasked(uint32(i), y); err != nil {
			g.tb.Fatal(err)
		}
		if err := fp.Encode(enc, g.inputs[i-1]); err != nil {
			g.tb.Fatal(err)
		}
		for k, v := range enc {
			want[k] += float64(int32(v)) / 65536
		}
	}
	fwd, err := g.agg.Forwards()
	if err != nil {
		return nil, want, SecAggResult{}, err
	}
	g.fwd = fwd
	for k, blob := range fwd {
		if slices.Contains(noAnswer, int(k)) {
			continue
		}
		m := g.members[k-1]
		if err := m.TakeForward(blob); err != nil {
			g.tb.Fatal(err)
		}
		ans, err := m.Unmask()
		if err != nil {
			g.tb.Fatal(err)
		}
		if err := g.agg.TakeUnmask(k, ans); err != nil {
			g.tb.Fatal(err)
		}
	}
	sum := make([]float64, g.p.Dim)
	res, err := g.agg.Sum(sum)
	return sum, want, res, err
}

// The group sum equals the plain sum, exactly in fixed point,
// for groups of 3 to 20 (aggregator and 2…19 members), for every number of
// dropouts after the masked-input phase from 0 to n − t, at the smallest
// threshold the rule allows (⌊n/2⌋ + 1) and at t = n.
func TestSecAggExactWithDropouts(t *testing.T) {
	pick := rand.New(rand.NewPCG(11, 12))
	runs := 0
	for n := 2; n <= 19; n++ {
		if testing.Short() && !slices.Contains([]int{2, 3, 5, 9}, n) {
			continue
		}
		for _, thr := range slices.Compact([]int{n/2 + 1, n}) {
			for d := 0; d <= n-thr; d++ {
				g := newGroup(t, n, thr, 33, uint64(100*n+thr), uint64(d))
				perm := pick.Perm(n)
				var drop []int
				for _, k := range perm[:d] {
					drop = append(drop, k+1)
				}
				sum, want, res, err := g.run(nil, nil, drop)
				if err != nil {
					t.Fatalf("n=%d t=%d, %d dropouts %v: %v", n, thr, d, drop, err)
				}
				if res.Survivors != n || res.Answered != n-d {
					t.Fatalf("n=%d t=%d: %+v", n, thr, res)
				}
				for k := range sum {
					if sum[k] != want[k] {
						t.Fatalf("n=%d t=%d, %d dropouts: sum[%d] = %v, plain fixed-point sum %v", n, thr, d, k, sum[k], want[k])
					}
				}
				runs++
			}
		}
	}
	t.Logf("%d instances exact", runs)
}

// Members that never share, or share but lose their input, are recovered
// too (their inputs are not in the sum), together with dropouts at the
// unmasking while what they need is there.
func TestSecAggEarlyDropouts(t *testing.T) {
	cases := []struct {
		n, t                       int
		noShare, noInput, noAnswer []int
	}{
		{5, 3, []int{2}, nil, nil},
		{5, 3, nil, []int{4}, nil},
		{5, 3, nil, []int{4}, []int{1}},
		{7, 4, []int{1}, []int{7}, nil},
		{9, 5, nil, []int{2, 3}, []int{9, 8}},
		{19, 10, []int{5, 6}, []int{1, 2, 3}, nil},
	}
	for _, c := range cases {
		g := newGroup(t, c.n, c.t, 17, uint64(c.n), 3)
		sum, want, res, err := g.run(c.noShare, c.noInput, c.noAnswer)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if res.Survivors != c.n-len(c.noShare)-len(c.noInput) {
			t.Fatalf("%+v: %+v", c, res)
		}
		for k := range sum {
			if sum[k] != want[k] {
				t.Fatalf("%+v: sum[%d] = %v, want %v", c, k, sum[k], want[k])
			}
		}
	}
}

// Below the threshold the sum fails with an error saying so: too few
// members to start, too few inputs, too few answers, or a member that
// never shared when a survivor did not answer.
func TestSecAggBelowThresholdFailsCleanly(t *testing.T) {
	g := newGroup(t, 5, 3, 8, 1, 0)
	for i := 1; i <= 2; i++ {
		g.advertise(i)
	}
	if _, _, err := g.agg.Roster(); !errors.Is(err, ErrGroupTooSmall) {
		t.Errorf("2 advertisers of 5, t = 3: %v", err)
	}
	for n := 3; n <= 12; n++ {
		thr := n/2 + 1
		g := newGroup(t, n, thr, 8, uint64(n), 1)
		drop := make([]int, n-thr+1)
		for k := range drop {
			drop[k] = k + 1
		}
		if _, _, _, err := g.run(nil, nil, drop); !errors.Is(err, ErrBelowThreshold) {
			t.Errorf("n=%d t=%d, %d silent at unmasking: %v, want ErrBelowThreshold", n, thr, len(drop), err)
		}
		g = newGroup(t, n, thr, 8, uint64(n), 2)
		if _, _, _, err := g.run(nil, drop, nil); !errors.Is(err, ErrBelowThreshold) {
			t.Errorf("n=%d t=%d, %d inputs lost: %v, want ErrBelowThreshold", n, thr, len(drop), err)
		}
	}
	g = newGroup(t, 5, 3, 8, 9, 0)
	if _, _, _, err := g.run([]int{1}, nil, []int{2}); !errors.Is(err, ErrUnrecoverable) {
		t.Errorf("a member never shared and a survivor is silent: %v, want ErrUnrecoverable", err)
	}
	for _, c := range []struct{ n, t int }{{4, 2}, {2, 1}, {3, 4}} {
		if err := checkGroup(c.n, c.t); !errors.Is(err, ErrGroupTooSmall) {
			t.Errorf("n=%d t=%d accepted", c.n, c.t)
		}
	}
}

// chiSquareZ is the Wilson–Hilferty normal score of a chi-square statistic
// with k degrees of freedom.
func chiSquareZ(chi2 float64, k int) float64 {
	kf := float64(k)
	return (math.Cbrt(chi2/kf) - (1 - 2/(9*kf))) / math.Sqrt(2/(9*kf))
}

func chiSquare(counts []int, total int) float64 {
	e := float64(total) / float64(len(counts))
	var c float64
	for _, o := range counts {
		d := float64(o) - e
		c += d * d / e
	}
	return c
}

// A masked input is indistinguishable from uniform: every byte position
// of its words, and the words' top 10 bits, pass a chi-square test, for an
// input that is constant (the worst case for a weak mask) — both as the
// aggregator receives it and after a coalition of the aggregator and t − 1
// members strips every pairwise mask it can compute (those with its
// members): the self mask alone, whose seed needs t shares, still hides
// it.
func TestSecAggMaskedInputUniform(t *testing.T) {
	const dim = 1 << 16
	const n, thr = 5, 3
	g := newGroup(t, n, thr, dim, 21, 0)
	for i := range g.inputs[0] {
		g.inputs[0][i] = 1
	}
	for i := 1; i <= n; i++ {
		g.advertise(i)
	}
	roster, _, err := g.agg.Roster()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range g.members {
		if err := m.TakeRoster(roster); err != nil {
			t.Fatal(err)
		}
	}
	_, y, err := g.members[0].ShareAndMask(g.inputs[0])
	if err != nil {
		t.Fatal(err)
	}
	stripped := slices.Clone(y)
	for _, k := range []int{2, 3} { // t − 1 colluding members
		c := g.members[k-1]
		e := g.members[0]
		shared, err := c.s.ECDH(e.s.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		key := pairKey(shared, g.p.Round, 0, 1, uint32(k))
		addMask(stripped, &key, -sign(1, uint32(k)))
	}
	for name, w := range map[string][]uint32{"masked": y, "coalition's view": stripped} {
		for pos := range 4 {
			counts := make([]int, 256)
			for _, v := range w {
				counts[(v>>(8*pos))&0xff]++
			}
			z := chiSquareZ(chiSquare(counts, dim), 255)
			t.Logf("%s: byte %d: chi-square z = %.2f", name, pos, z)
			if math.Abs(z) > 4.5 {
				t.Errorf("%s: byte %d: chi-square z = %.2f", name, pos, z)
			}
		}
		counts := make([]int, 1024)
		for _, v := range w {
			counts[v>>22]++
		}
		if z := chiSquareZ(chiSquare(counts, dim), 1023); math.Abs(z) > 4.5 {
			t.Errorf("%s: top 10 bits: chi-square z = %.2f", name, z)
		}
	}
	// The test has power: the encoded input alone is far from uniform.
	enc := make([]uint32, dim)
	fp, _ := NewFixedPoint(16, n)
	_ = fp.Encode(enc, g.inputs[0])
	counts := make([]int, 256)
	for _, v := range enc {
		counts[(v>>16)&0xff]++
	}
	if z := chiSquareZ(chiSquare(counts, dim), 255); z < 100 {
		t.Errorf("the unmasked encoding passes as uniform (z = %.1f): the test has no power", z)
	}
}

// Forged, replayed or misdirected shares and keys are refused: a
// ciphertext changed in transit, one from another round or another group,
// a roster that swaps a member's key, messages from non-members or out of
// order, and a wrong share in an unmasking answer.
func TestSecAggRefusesForgeries(t *testing.T) {
	const n, thr = 5, 3
	g := newGroup(t, n, thr, 8, 31, 4)
	if _, _, _, err := g.run(nil, nil, []int{1, 2, 3, 4, 5}); !errors.Is(err, ErrBelowThreshold) {
		t.Fatalf("a sum with no answers: %v", err)
	}
	fresh := func(round uint64) (*group, []byte) {
		g := newGroup(t, n, thr, 8, 31, round)
		for i := 1; i <= n; i++ {
			g.advertise(i)
		}
		roster, _, err := g.agg.Roster()
		if err != nil {
			t.Fatal(err)
		}
		return g, roster
	}
	shareAll := func(g *group, roster []byte) {
		for i, m := range g.members {
			if err := m.TakeRoster(roster); err != nil {
				t.Fatal(err)
			}
			sh, y, err := m.ShareAndMask(g.inputs[i])
			if err != nil {
				t.Fatal(err)
			}
			if err := g.agg.TakeShares(uint32(i+1), sh); err != nil {
				t.Fatal(err)
			}
			if err := g.agg.TakeMasked(uint32(i+1), y); err != nil {
				t.Fatal(err)
			}
		}
	}
	g1, r1 := fresh(5)
	shareAll(g1, r1)
	fwd1, err := g1.agg.Forwards()
	if err != nil {
		t.Fatal(err)
	}
	// A forward whose ciphertext was changed.
	tampered := slices.Clone(fwd1[2])
	tampered[len(tampered)-1] ^= 1
	if err := g1.members[1].TakeForward(tampered); !errors.Is(err, ErrForged) {
		t.Errorf("a changed ciphertext: %v, want ErrForged", err)
	}
	// The same member set and keys in another round (a replay of round 5's
	// ciphertexts in round 6): the share keys are bound to the round.
	g2, r2 := fresh(6)
	shareAll(g2, r2)
	fwd2, err := g2.agg.Forwards()
	if err != nil {
		t.Fatal(err)
	}
	replay := slices.Clone(fwd2[3])
	head := 8 + 4*(n+n)
	copy(replay[head:], fwd1[3][head:]) // round 5's ciphertexts for member 3
	if err := g2.members[2].TakeForward(replay); !errors.Is(err, ErrForged) {
		t.Errorf("round 5's shares replayed in round 6: %v, want ErrForged", err)
	}
	// Correct forwards still work after the refusals.
	if err := g2.members[2].TakeForward(fwd2[3]); err != nil {
		t.Errorf("the genuine forward after a refused replay: %v", err)
	}
	if err := g2.members[2].TakeForward(fwd2[3]); !errors.Is(err, ErrProtocol) {
		t.Errorf("the forward twice: %v, want ErrProtocol", err)
	}
	// Another group of the same round: the share keys name the group.
	other := g1.members[0]
	other.p.Aggregator = 9 // as if member 1 took this blob for group 9
	other.state = memberShared
	if err := other.TakeForward(fwd1[1]); !errors.Is(err, ErrForged) {
		t.Errorf("group 0's shares taken as group 9's: %v, want ErrForged", err)
	}
	// A roster that swaps a member's key for the aggregator's own.
	g4, r4 := fresh(7)
	swapped := slices.Clone(r4)
	binary.LittleEndian.PutUint64(swapped[rosterHeader+2*rosterEntry+64:], 0xdeadbeef)
	if err := g4.members[0].TakeRoster(swapped); !errors.Is(err, ErrForged) {
		t.Errorf("a roster with a substituted key: %v, want ErrForged", err)
	}
	// A roster that claims another round.
	g5, r5 := fresh(8)
	g5.members[0].p.Round = 9
	if err := g5.members[0].TakeRoster(r5); !errors.Is(err, ErrForged) {
		t.Errorf("round 8's roster in round 9: %v, want ErrForged", err)
	}
	// Non-members and out-of-order messages.
	g6, r6 := fresh(9)
	if err := g6.agg.TakeShares(42, []byte{1}); !errors.Is(err, ErrProtocol) {
		t.Errorf("shares from a non-member: %v", err)
	}
	if err := g6.agg.TakeAdvertisement(1, 1, [64]byte{}, make([]byte, 64)); !errors.Is(err, ErrProtocol) {
		t.Errorf("an advertisement after the roster: %v", err)
	}
	if err := g6.agg.TakeUnmask(1, nil); !errors.Is(err, ErrProtocol) {
		t.Errorf("an answer before the forwards: %v", err)
	}
	shareAll(g6, r6)
	sh, _, _ := g6.members[0].ShareAndMask(g6.inputs[0])
	if sh != nil {
		t.Error("a member shared twice")
	}
	// A wrong share in an answer: detected against the other answers (more
	// than t) and against the commitment (exactly t).
	for _, answering := range []int{n, thr} {
		g7, r7 := fresh(10 + uint64(answering))
		shareAll(g7, r7)
		fwd, err := g7.agg.Forwards()
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= answering; k++ {
			m := g7.members[k-1]
			if err := m.TakeForward(fwd[uint32(k)]); err != nil {
				t.Fatal(err)
			}
			ans, _ := m.Unmask()
			if k == 1 {
				ans[ShareValueSize-1] ^= 1 // its share of member 1's seed
			}
			if err := g7.agg.TakeUnmask(uint32(k), ans); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := g7.agg.Sum(make([]float64, 8)); !errors.Is(err, ErrBadReconstruction) {
			t.Errorf("%d answers, one share wrong: %v, want ErrBadReconstruction", answering, err)
		}
	}
}

// Encoding refuses values outside its range instead of saturating.
func TestFixedPointRange(t *testing.T) {
	fp, err := NewFixedPoint(16, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(math.MaxInt32) / 65536 / 20
	if fp.Bound != want {
		t.Fatalf("bound %v, want %v", fp.Bound, want)
	}
	dst := make([]uint32, 1)
	for _, v := range []float32{float32(want * 1.001), -float32(want * 1.001), float32(math.NaN()), float32(math.Inf(1))} {
		if err := fp.Encode(dst, []float32{v}); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("%v encoded: %v", v, err)
		}
	}
	x := []float32{0, 1.5, -1.5, 1.0 / 65536, -3.0 / 131072, float32(want) * 0.999}
	enc := make([]uint32, len(x))
	if err := fp.Encode(enc, x); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(x))
	fp.Decode(out, enc)
	for i := range x {
		if math.Abs(out[i]-float64(x[i])) > 0.5/65536 {
			t.Errorf("%v decoded as %v", x[i], out[i])
		}
	}
	// 20 values at the bound sum without wrapping.
	sum := uint32(0)
	if err := fp.Encode(dst, []float32{-FixedPointBound(16, 20)}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		sum += dst[0]
	}
	fp.Decode(out[:1], []uint32{sum})
	if out[0] > -20*want+1 || out[0] < -20*want-1 {
		t.Errorf("20 values at −bound sum to %v", out[0])
	}
	if _, err := NewFixedPoint(25, 2); err == nil {
		t.Error("25 bits accepted")
	}
	if _, err := NewFixedPoint(24, 1000); err == nil {
		t.Error("a range below 1 accepted")
	}
}

// BenchmarkSecAggMember: one member's phase 2 (Shamir shares of two
// secrets, n − 1 share encryptions, 2(n − 1) X25519 agreements, n masks of
// the 784-256-128-10 MLP's 235,146 parameters), and the aggregator's sum
// of n inputs with no dropout (n self masks removed, Shamir
// reconstruction of n seeds) is in group/n: the whole instance, every
// member's phase 2 included, on one core's worth of the loop.
func BenchmarkSecAggMember(b *testing.B) {
	const dim = 235146
	for _, n := range []int{5, 10} {
		b.Run(fmt.Sprintf("mask/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g := newGroup(b, n, n/2+1, dim, 1, uint64(i))
				for k := 1; k <= n; k++ {
					g.advertise(k)
				}
				roster, _, _ := g.agg.Roster()
				m := g.members[0]
				if err := m.TakeRoster(roster); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, _, err := m.ShareAndMask(g.inputs[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("group/n=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g := newGroup(b, n, n/2+1, dim, 1, uint64(i))
				g.inputs = g.inputs[:n]

				b.StartTimer()
				if _, _, _, err := g.run(nil, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzSecAggDecoders: nothing a peer sends — a roster, a forward, shares,
// an unmasking answer, a CKKS object — panics a party; each is refused or
// taken.
func FuzzSecAggDecoders(f *testing.F) {
	g := newGroup(f, 3, 2, 4, 1, 0)
	for i := 1; i <= 3; i++ {
		g.advertise(i)
	}
	roster, _, _ := g.agg.Roster()
	f.Add(uint8(0), roster)
	f.Add(uint8(1), make([]byte, 8+4*3+4*3+2*shareCipher))
	f.Add(uint8(2), make([]byte, sharesHeader+2*sharesEntry))
	f.Add(uint8(3), make([]byte, 3*ShareValueSize))
	f.Add(uint8(4), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		g := newGroup(t, 3, 2, 4, 1, 0)
		for i := 1; i <= 3; i++ {
			g.advertise(i)
		}
		r, _, err := g.agg.Roster()
		if err != nil {
			t.Fatal(err)
		}
		m := g.members[0]
		switch which % 5 {
		case 0:
			_ = m.TakeRoster(b)
		case 1:
			if m.TakeRoster(r) == nil {
				if _, _, err := m.ShareAndMask(g.inputs[0]); err == nil {
					_ = m.TakeForward(b)
				}
			}
		case 2:
			_ = g.agg.TakeShares(1, b)
		case 3:
			_ = g.agg.TakeUnmask(1, b)
		case 4:
			if ck, err := NewCKKSGroup(CKKSParams, []byte("fuzz")); err == nil {
				_ = ck.SetPublicKeyBytes(b)
				_, _ = ck.Ciphertext(b, 1)
				_ = ck.SetPublicKeyFromBytes([][]byte{b})
			}
		}
	})
}
