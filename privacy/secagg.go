package privacy

import (
	"bytes"
	"crypto/ecdh"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"

	"github.com/trellis-fl/trellis/wire"
)

// Secure aggregation (Bonawitz et al. 2017, "Practical Secure Aggregation
// for Privacy-Preserving Machine Learning", §4; the survey, §3.1.3) inside one
// group of a decentralized network. A group is an aggregator a and the
// members it chose among its neighbours (its neighbourhood, or its
// topology-screened peers); a plays the paper's server — it relays what
// members say to each other, since members need not be neighbours of each
// other — and learns x_a + Σ_{j∈U} x_j, the sum of the survivors' inputs
// with its own, and nothing else. One instance runs per (round, group), in
// five exchange phases:
//
//	0  member → a   advertisement: X25519 public keys c (share channel), s (masks), signed
//	1  a → members  roster: every member's signed keys, the threshold t
//	2  member → a   Shamir shares of the self-mask seed b and of s's private key, one
//	                AES-GCM ciphertext per other member; the masked input
//	                y = enc(x) + PRG(b) + Σ_k ±PRG(s_jk)  (mod 2^32)
//	3  a → members  the ciphertexts for them, U2 (shares arrived), U3 (inputs arrived)
//	4  member → a   unmasking: shares of b_j for j ∈ U3, of s_j for j ∈ U2∖U3, and
//	                its own pairwise mask key with each j ∈ R∖U2
//
// and a sums at the end. Dropouts after the masked-input phase are
// recovered while t members answer phase 4; a member that never shares
// (R∖U2) is recovered from the survivors' own pairwise keys with it, which
// needs every survivor's answer. Otherwise the group sum fails with an
// error and the aggregator keeps its own model.
//
// Security (the paper's, in its honest-but-curious and active-adversary
// settings for the server): an honest member answers one unmasking
// request per instance, and never with both b_j and s_j of one j; with
// 2t > n no two requests reach t for both, whatever a says to whom. The
// aggregator together with fewer than t members learns nothing beyond the
// survivors' sum: masks are uniform modulo 2^32, t − 1 shares are
// consistent with every secret. Keys are signed by their owners and
// shares authenticated by AES-GCM under keys bound to round, group and
// pair, so a relay cannot substitute, forge or replay them. Not covered
// (as in the paper without its consistency round): a member that submits
// a wrong share is detected (the shares disagree, or a reconstructed
// secret does not match its commitment) but not identified; the sum then
// fails.

// Tags of the protocol's messages (wire kinds Key, Share, Masked).
const (
	TagSecAggAdvertise = "secagg/adv"
	TagSecAggRoster    = "secagg/roster"
	TagSecAggShares    = "secagg/shares"
	TagSecAggInput     = "secagg/input"
	TagSecAggForward   = "secagg/fwd"
	TagSecAggUnmask    = "secagg/unmask"
)

// SecAggParams are what every party of one instance agrees on.
type SecAggParams struct {
	Round      uint64
	Aggregator uint32
	// Dim is the length of the inputs.
	Dim int
	// Threshold is t: a group of n members needs n ≥ t and 2t > n.
	Threshold int
	// ScaleBits are the fixed-point fraction bits (default 16).
	ScaleBits int
	// Directory holds every party's Ed25519 key (key signatures).
	Directory *wire.Directory
}

// Sizes of the protocol's blobs.
const (
	advSize        = 2 * wire.KeySize
	rosterHeader   = 32
	rosterEntry    = 160
	shareCipher    = 2*ShareValueSize + 16 // b-share ‖ s-share + GCM tag
	sharesHeader   = 36                    // commitment H(b), count
	sharesEntry    = 4 + shareCipher
	pairSecretSize = 32
)

// SecAggSizes are the largest bodies of the protocol's blobs in a group
// of at most n members (an advertisement has exactly its size): a
// receiver checks a blob's length against them before it reads a byte.
type SecAggSizes struct {
	Advertisement, Roster, Shares, Forward, Unmask int
}

// SecAggMaxSizes returns the blobs' largest sizes for groups of at most n
// members.
func SecAggMaxSizes(n int) SecAggSizes {
	n = max(n, 1)
	return SecAggSizes{
		Advertisement: advSize,
		Roster:        rosterHeader + rosterEntry*n,
		Shares:        sharesHeader + (n-1)*sharesEntry,
		Forward:       8 + 8*n + (n-1)*shareCipher,
		Unmask:        max(ShareValueSize, pairSecretSize) * n,
	}
}

// Errors the protocol's callers may tell apart.
var (
	// ErrGroupTooSmall: fewer members than the threshold (or 2t ≤ n).
	ErrGroupTooSmall = errors.New("secagg: group below its threshold")
	// ErrBelowThreshold: fewer than t survivors answered.
	ErrBelowThreshold = errors.New("secagg: fewer survivors than the threshold")
	// ErrUnrecoverable: a member that never shared left masks only
	// survivors who did not answer could remove.
	ErrUnrecoverable = errors.New("secagg: masks of a member that never shared cannot be removed without every survivor")
	// ErrForged: a share, key or list failed authentication or is not
	// for this instance.
	ErrForged = errors.New("secagg: forged, replayed or misdirected message")
	// ErrProtocol: a message out of order, duplicated, malformed or from
	// a party outside the group.
	ErrProtocol = errors.New("secagg: protocol violation")
	// ErrBadReconstruction: the survivors' shares disagree or do not
	// match the committed secret.
	ErrBadReconstruction = errors.New("secagg: shares inconsistent with the committed secrets")
)

func protoErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, a...))
}

func forgedErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrForged, fmt.Sprintf(format, a...))
}

// checkGroup applies the threshold rule to a group of n members.
func checkGroup(n, t int) error {
	switch {
	case t < 2:
		return fmt.Errorf("%w: threshold %d, need ≥ 2", ErrGroupTooSmall, t)
	case n < t:
		return fmt.Errorf("%w: %d members, threshold %d", ErrGroupTooSmall, n, t)
	case 2*t <= n:
		return fmt.Errorf("%w: %d members need a threshold above %d, have %d", ErrGroupTooSmall, n, n/2, t)
	}
	return nil
}

// entry is a member's advertisement as the aggregator relays it.
type entry struct {
	id     uint32
	seq    uint64
	c, s   []byte // public keys
	sig    [wire.SignatureSize]byte
	cPub   *ecdh.PublicKey
	sPub   *ecdh.PublicKey
	commit [32]byte // H(b), from the member's shares message (aggregator)
}

// verifyAdvertisement checks that the member signed keys for this
// instance: the wire message it sent, rebuilt.
func verifyAdvertisement(p *SecAggParams, e *entry) error {
	pub, ok := p.Directory.Key(e.id)
	if !ok {
		return forgedErr("member %d not in the directory", e.id)
	}
	m := &wire.Message{
		Header: wire.Header{Kind: wire.KindKey, From: e.id, To: p.Aggregator, Round: p.Round, Seq: e.seq},
		Blob:   wire.Blob{Tag: TagSecAggAdvertise, Data: append(slices.Clip(e.c), e.s...)},
		Sig:    e.sig,
	}
	if !wire.Verify(m, pub) {
		return forgedErr("member %d's keys are not signed by it for round %d, group %d", e.id, p.Round, p.Aggregator)
	}
	return nil
}

func parseKeys(e *entry) error {
	var err error
	if e.cPub, err = ecdh.X25519().NewPublicKey(e.c); err != nil {
		return protoErr("member %d: %v", e.id, err)
	}
	if e.sPub, err = ecdh.X25519().NewPublicKey(e.s); err != nil {
		return protoErr("member %d: %v", e.id, err)
	}
	return nil
}

// sign is the pairwise mask's sign for j against k: + for the smaller id.
func sign(j, k uint32) int {
	if j < k {
		return 1
	}
	return -1
}

// agree is X25519 agreement; a low-order public key (all-zero result) is
// refused by crypto/ecdh.
func agree(priv *ecdh.PrivateKey, pub *ecdh.PublicKey) ([]byte, error) {
	s, err := priv.ECDH(pub)
	if err != nil {
		return nil, forgedErr("key agreement: %v", err)
	}
	return s, nil
}

// ---------------------------------------------------------------------------
// Member

// memberState is where a member is in its instance.
type memberState int

const (
	memberAdvertised memberState = iota
	memberRostered
	memberShared
	memberForwarded
	memberAnswered
)

// SecAggMember is one member's side of an instance.
type SecAggMember struct {
	p     SecAggParams
	self  uint32
	state memberState
	c, s  *ecdh.PrivateKey
	b     [SecretSize]byte
	rand  io.Reader

	roster []entry
	idx    int // own index in roster
	fixed  FixedPoint
	// own shares of the own secrets (X = idx+1)
	ownB, ownS *big.Int
	// cShared caches the share-channel agreements, by member
	cShared map[uint32][]byte
	// from the forward: the lists and the decrypted shares of each j ∈ U2
	u2, u3 []uint32
	bSh    map[uint32]*big.Int
	sSh    map[uint32]*big.Int
}

// NewSecAggMember draws the member's keys and self-mask seed from rand.
func NewSecAggMember(p SecAggParams, self uint32, rand io.Reader) (*SecAggMember, error) {
	if p.Directory == nil || p.Dim < 1 {
		return nil, fmt.Errorf("secagg: member needs a directory and a positive dimension")
	}
	m := &SecAggMember{p: p, self: self, rand: rand}
	var err error
	if m.c, err = x25519Key(rand); err != nil {
		return nil, err
	}
	if m.s, err = x25519Key(rand); err != nil {
		return nil, err
	}
	if _, err := io.ReadFull(rand, m.b[:]); err != nil {
		return nil, err
	}
	return m, nil
}

// Advertisement is phase 0's blob: the public keys c ‖ s.
func (m *SecAggMember) Advertisement() []byte {
	return append(slices.Clip(m.c.PublicKey().Bytes()), m.s.PublicKey().Bytes()...)
}

// Members returns the roster's ids (nil before TakeRoster).
func (m *SecAggMember) Members() []uint32 {
	ids := make([]uint32, len(m.roster))
	for k, e := range m.roster {
		ids[k] = e.id
	}
	return ids
}

// TakeRoster reads phase 1's roster: every entry signed by its member for
// this instance, sorted, the member itself in it with its own keys, and
// the threshold the instance's.
func (m *SecAggMember) TakeRoster(blob []byte) error {
	if m.state != memberAdvertised {
		return protoErr("a second roster")
	}
	ents, t, bits, err := parseRoster(blob)
	if err != nil {
		return err
	}
	if t != m.p.Threshold || bits != m.p.ScaleBits {
		return protoErr("roster with threshold %d and %d fraction bits, the instance's are %d and %d", t, bits, m.p.Threshold, m.p.ScaleBits)
	}
	if err := checkGroup(len(ents), t); err != nil {
		return err
	}
	idx := -1
	own := m.Advertisement()
	for k := range ents {
		e := &ents[k]
		if e.id == m.p.Aggregator {
			return protoErr("the aggregator %d listed as a member", e.id)
		}
		if err := verifyAdvertisement(&m.p, e); err != nil {
			return err
		}
		if err := parseKeys(e); err != nil {
			return err
		}
		if e.id == m.self {
			if !bytes.Equal(append(slices.Clip(e.c), e.s...), own) {
				return forgedErr("the roster lists other keys for this member")
			}
			idx = k
		}
	}
	if idx < 0 {
		return protoErr("member %d not in the roster", m.self)
	}
	fp, err := NewFixedPoint(m.p.ScaleBits, len(ents))
	if err != nil {
		return err
	}
	m.roster, m.idx, m.fixed, m.state = ents, idx, fp, memberRostered
	return nil
}

func parseRoster(blob []byte) ([]entry, int, int, error) {
	if len(blob) < rosterHeader || (len(blob)-rosterHeader)%rosterEntry != 0 {
		return nil, 0, 0, protoErr("roster of %d bytes", len(blob))
	}
	n := int(binary.LittleEndian.Uint32(blob))
	t := int(binary.LittleEndian.Uint32(blob[4:]))
	bits := int(binary.LittleEndian.Uint32(blob[8:]))
	if n != (len(blob)-rosterHeader)/rosterEntry {
		return nil, 0, 0, protoErr("roster says %d members in %d bytes", n, len(blob))
	}
	ents := make([]entry, n)
	for k := range ents {
		b := blob[rosterHeader+k*rosterEntry:]
		e := &ents[k]
		e.id = binary.LittleEndian.Uint32(b)
		e.seq = binary.LittleEndian.Uint64(b[8:])
		e.c = slices.Clone(b[32:64])
		e.s = slices.Clone(b[64:96])
		copy(e.sig[:], b[96:160])
		if k > 0 && e.id <= ents[k-1].id {
			return nil, 0, 0, protoErr("roster ids not strictly increasing")
		}
	}
	return ents, t, bits, nil
}

// ShareAndMask is phase 2: the shares blob (one ciphertext per other
// member) and the masked input of x, which must be within the fixed-point
// range for the group's size.
func (m *SecAggMember) ShareAndMask(x []float32) (shares []byte, masked []uint32, err error) {
	if m.state != memberRostered {
		return nil, nil, protoErr("shares before the roster or twice")
	}
	if len(x) != m.p.Dim {
		return nil, nil, fmt.Errorf("secagg: input of %d values, the instance's dimension is %d", len(x), m.p.Dim)
	}
	n, t := len(m.roster), m.p.Threshold
	masked = make([]uint32, len(x))
	if err := m.fixed.Encode(masked, x); err != nil {
		return nil, nil, fmt.Errorf("secagg: %w", err)
	}
	bShares, err := ShamirSplit(m.b[:], t, n, m.rand)
	if err != nil {
		return nil, nil, err
	}
	sShares, err := ShamirSplit(m.s.Bytes(), t, n, m.rand)
	if err != nil {
		return nil, nil, err
	}
	commit := sha256.Sum256(m.b[:])
	shares = make([]byte, sharesHeader, sharesHeader+(n-1)*sharesEntry)
	copy(shares, commit[:])
	binary.LittleEndian.PutUint32(shares[32:], uint32(n-1))
	var pt [2 * ShareValueSize]byte
	for k := range m.roster {
		e := &m.roster[k]
		if k == m.idx {
			m.ownB, m.ownS = bShares[k].Y, sShares[k].Y
			continue
		}
		shared, err := m.channel(e)
		if err != nil {
			return nil, nil, err
		}
		aead, ad := shareAEAD(shared, m.p.Round, m.p.Aggregator, m.self, e.id)
		putShareValue(pt[:], bShares[k].Y)
		putShareValue(pt[ShareValueSize:], sShares[k].Y)
		shares = binary.LittleEndian.AppendUint32(shares, e.id)
		shares = aead.Seal(shares, make([]byte, aead.NonceSize()), pt[:], ad)
	}
	clear(pt[:])
	self := deriveKey(m.b[:], labelSelf, m.p.Round, m.p.Aggregator, m.self)
	addMask(masked, &self, 1)
	for k, e := range m.roster {
		if k == m.idx {
			continue
		}
		shared, err := agree(m.s, e.sPub)
		if err != nil {
			return nil, nil, err
		}
		lo, hi := min(m.self, e.id), max(m.self, e.id)
		key := pairKey(shared, m.p.Round, m.p.Aggregator, lo, hi)
		addMask(masked, &key, sign(m.self, e.id))
	}
	m.state = memberShared
	return shares, masked, nil
}

// TakeForward reads phase 3's blob: U2 and U3 (sorted, U3 ⊆ U2 ⊆ roster,
// the member in U3, |U3| ≥ t) and the ciphertexts for the member from each
// other j ∈ U2, each authenticated for this round, group and pair.
func (m *SecAggMember) TakeForward(blob []byte) error {
	if m.state != memberShared {
		return protoErr("a forward before the member shared, or a second one")
	}
	u2, u3, cts, err := parseForward(blob, m.self)
	if err != nil {
		return err
	}
	inRoster := func(id uint32) int {
		k, ok := slices.BinarySearchFunc(m.roster, id, func(e entry, id uint32) int { return cmpU32(e.id, id) })
		if !ok {
			return -1
		}
		return k
	}
	for _, j := range u2 {
		if inRoster(j) < 0 {
			return protoErr("U2 lists %d, not in the roster", j)
		}
	}
	for _, j := range u3 {
		if _, ok := slices.BinarySearch(u2, j); !ok {
			return protoErr("U3 lists %d, not in U2", j)
		}
	}
	if _, ok := slices.BinarySearch(u3, m.self); !ok {
		return protoErr("member %d not among the survivors it is asked to unmask for", m.self)
	}
	if len(u3) < m.p.Threshold {
		return fmt.Errorf("%w: %d survivors, threshold %d", ErrBelowThreshold, len(u3), m.p.Threshold)
	}
	bSh, sSh := map[uint32]*big.Int{}, map[uint32]*big.Int{}
	var pt [2 * ShareValueSize]byte
	for k, j := range otherThan(u2, m.self) {
		e := &m.roster[inRoster(j)]
		shared, err := m.channel(e)
		if err != nil {
			return err
		}
		aead, ad := shareAEAD(shared, m.p.Round, m.p.Aggregator, j, m.self)
		out, err := aead.Open(pt[:0], make([]byte, aead.NonceSize()), cts[k], ad)
		if err != nil {
			return forgedErr("the share from member %d does not authenticate for round %d, group %d", j, m.p.Round, m.p.Aggregator)
		}
		if bSh[j], err = shareValue(out); err != nil {
			return forgedErr("member %d's share: %v", j, err)
		}
		if sSh[j], err = shareValue(out[ShareValueSize:]); err != nil {
			return forgedErr("member %d's share: %v", j, err)
		}
	}
	clear(pt[:])
	bSh[m.self], sSh[m.self] = m.ownB, m.ownS
	m.u2, m.u3, m.bSh, m.sSh, m.state = u2, u3, bSh, sSh, memberForwarded
	return nil
}

// channel is the share channel's agreement with member e.
func (m *SecAggMember) channel(e *entry) ([]byte, error) {
	if s := m.cShared[e.id]; s != nil {
		return s, nil
	}
	s, err := agree(m.c, e.cPub)
	if err != nil {
		return nil, err
	}
	if m.cShared == nil {
		m.cShared = map[uint32][]byte{}
	}
	m.cShared[e.id] = s
	return s, nil
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func otherThan(ids []uint32, self uint32) []uint32 {
	out := make([]uint32, 0, len(ids))
	for _, j := range ids {
		if j != self {
			out = append(out, j)
		}
	}
	return out
}

// parseForward reads |U2|, |U3|, U2, U3 and one ciphertext per member of
// U2 other than self.
func parseForward(blob []byte, self uint32) (u2, u3 []uint32, cts [][]byte, err error) {
	if len(blob) < 8 {
		return nil, nil, nil, protoErr("forward of %d bytes", len(blob))
	}
	n2 := uint64(binary.LittleEndian.Uint32(blob))
	n3 := uint64(binary.LittleEndian.Uint32(blob[4:]))
	if n3 > n2 || n2 == 0 || 8+4*(n2+n3) > uint64(len(blob)) {
		return nil, nil, nil, protoErr("forward lists of %d and %d in %d bytes", n2, n3, len(blob))
	}
	off := 8
	read := func(k uint64) ([]uint32, error) {
		ids := make([]uint32, k)
		for i := range ids {
			ids[i] = binary.LittleEndian.Uint32(blob[off:])
			off += 4
			if i > 0 && ids[i] <= ids[i-1] {
				return nil, protoErr("forward lists not strictly increasing")
			}
		}
		return ids, nil
	}
	if u2, err = read(n2); err != nil {
		return
	}
	if u3, err = read(n3); err != nil {
		return
	}
	others := len(otherThan(u2, self))
	if len(blob)-off != others*shareCipher {
		return nil, nil, nil, protoErr("forward with %d bytes of ciphertexts for %d senders", len(blob)-off, others)
	}
	for range others {
		cts = append(cts, blob[off:off+shareCipher])
		off += shareCipher
	}
	return u2, u3, cts, nil
}

// Unmask is phase 4's answer, once: the shares of b_j for j ∈ U3, of s_j
// for j ∈ U2∖U3, and the member's pairwise mask key with each j in the
// roster but not in U2, in those lists' orders.
func (m *SecAggMember) Unmask() ([]byte, error) {
	if m.state != memberForwarded {
		return nil, protoErr("unmasking before the forward, or twice")
	}
	m.state = memberAnswered
	var out []byte
	var v [ShareValueSize]byte
	for _, j := range m.u3 {
		putShareValue(v[:], m.bSh[j])
		out = append(out, v[:]...)
	}
	for _, j := range m.u2 {
		if _, ok := slices.BinarySearch(m.u3, j); !ok {
			putShareValue(v[:], m.sSh[j])
			out = append(out, v[:]...)
		}
	}
	for _, e := range m.roster {
		if _, ok := slices.BinarySearch(m.u2, e.id); ok {
			continue
		}
		shared, err := agree(m.s, e.sPub)
		if err != nil {
			return nil, err
		}
		key := pairKey(shared, m.p.Round, m.p.Aggregator, min(m.self, e.id), max(m.self, e.id))
		out = append(out, key[:]...)
	}
	if len(out) == 0 {
		out = []byte{} // cannot happen: the member is in U3
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Aggregator

type aggState int

const (
	aggCollecting aggState = iota // advertisements
	aggRostered                   // shares and inputs
	aggForwarded                  // unmasking answers
	aggDone
)

// SecAggAggregator is the aggregator's side of an instance.
type SecAggAggregator struct {
	p          SecAggParams
	candidates []uint32 // sorted: whom it accepts as members
	state      aggState
	adv        map[uint32]*entry
	roster     []entry
	fixed      FixedPoint
	shares     map[uint32][]byte // member → its shares blob's entries
	inputs     map[uint32][]uint32
	u2, u3     []uint32
	answers    map[uint32][]byte
}

// NewSecAggAggregator starts an instance whose members may be any of
// candidates (the aggregator's neighbours, or its screened peers).
func NewSecAggAggregator(p SecAggParams, candidates []int) (*SecAggAggregator, error) {
	if p.Directory == nil || p.Dim < 1 {
		return nil, fmt.Errorf("secagg: aggregator needs a directory and a positive dimension")
	}
	var c []uint32
	for _, id := range candidates {
		if id >= 0 && uint32(id) != p.Aggregator {
			c = append(c, uint32(id))
		}
	}
	slices.Sort(c)
	c = slices.Compact(c)
	return &SecAggAggregator{p: p, candidates: c, adv: map[uint32]*entry{}}, nil
}

func (a *SecAggAggregator) candidate(id uint32) bool {
	_, ok := slices.BinarySearch(a.candidates, id)
	return ok
}

// TakeAdvertisement records member from's signed keys (phase 0): the
// wire message's sequence number and signature, which the roster relays.
func (a *SecAggAggregator) TakeAdvertisement(from uint32, seq uint64, sig [wire.SignatureSize]byte, keys []byte) error {
	switch {
	case a.state != aggCollecting:
		return protoErr("an advertisement from %d after the roster went out", from)
	case !a.candidate(from):
		return protoErr("an advertisement from %d, not a candidate member", from)
	case a.adv[from] != nil:
		return protoErr("a second advertisement from %d", from)
	case len(keys) != advSize:
		return protoErr("an advertisement of %d bytes from %d", len(keys), from)
	}
	e := &entry{id: from, seq: seq, sig: sig, c: slices.Clone(keys[:32]), s: slices.Clone(keys[32:])}
	if err := parseKeys(e); err != nil {
		return err
	}
	a.adv[from] = e
	return nil
}

// Roster is phase 1: the blob for every member, and the members (those
// that advertised, sorted). A group below its threshold fails here.
func (a *SecAggAggregator) Roster() ([]byte, []uint32, error) {
	if a.state != aggCollecting {
		return nil, nil, protoErr("a second roster")
	}
	a.state = aggRostered
	for _, id := range a.candidates {
		if e := a.adv[id]; e != nil {
			a.roster = append(a.roster, *e)
		}
	}
	if err := checkGroup(len(a.roster), a.p.Threshold); err != nil {
		a.state = aggDone
		return nil, nil, err
	}
	fp, err := NewFixedPoint(a.p.ScaleBits, len(a.roster))
	if err != nil {
		a.state = aggDone
		return nil, nil, err
	}
	a.fixed = fp
	blob := make([]byte, rosterHeader+rosterEntry*len(a.roster))
	binary.LittleEndian.PutUint32(blob, uint32(len(a.roster)))
	binary.LittleEndian.PutUint32(blob[4:], uint32(a.p.Threshold))
	binary.LittleEndian.PutUint32(blob[8:], uint32(a.p.ScaleBits))
	ids := make([]uint32, len(a.roster))
	for k, e := range a.roster {
		b := blob[rosterHeader+k*rosterEntry:]
		binary.LittleEndian.PutUint32(b, e.id)
		binary.LittleEndian.PutUint64(b[8:], e.seq)
		copy(b[32:], e.c)
		copy(b[64:], e.s)
		copy(b[96:], e.sig[:])
		ids[k] = e.id
	}
	a.shares, a.inputs = map[uint32][]byte{}, map[uint32][]uint32{}
	return blob, ids, nil
}

func (a *SecAggAggregator) rosterIndex(id uint32) int {
	k, ok := slices.BinarySearchFunc(a.roster, id, func(e entry, id uint32) int { return cmpU32(e.id, id) })
	if !ok {
		return -1
	}
	return k
}

// TakeShares records member from's shares (phase 2): a commitment to its
// self-mask seed and one ciphertext for every other member, in roster
// order.
func (a *SecAggAggregator) TakeShares(from uint32, blob []byte) error {
	k := a.rosterIndex(from)
	switch {
	case a.state != aggRostered:
		return protoErr("shares from %d out of phase", from)
	case k < 0:
		return protoErr("shares from %d, not a member", from)
	case a.shares[from] != nil:
		return protoErr("a second shares message from %d", from)
	}
	n := len(a.roster)
	if len(blob) != sharesHeader+(n-1)*sharesEntry || int(binary.LittleEndian.Uint32(blob[32:])) != n-1 {
		return protoErr("shares of %d bytes from %d for a group of %d", len(blob), from, n)
	}
	i := 0
	for _, e := range a.roster {
		if e.id == from {
			continue
		}
		if binary.LittleEndian.Uint32(blob[sharesHeader+i*sharesEntry:]) != e.id {
			return protoErr("shares from %d not in roster order", from)
		}
		i++
	}
	copy(a.roster[k].commit[:], blob[:32])
	a.shares[from] = blob
	return nil
}

// TakeMasked records member from's masked input (phase 2).
func (a *SecAggAggregator) TakeMasked(from uint32, y []uint32) error {
	switch {
	case a.state != aggRostered:
		return protoErr("a masked input from %d out of phase", from)
	case a.rosterIndex(from) < 0:
		return protoErr("a masked input from %d, not a member", from)
	case a.inputs[from] != nil:
		return protoErr("a second masked input from %d", from)
	case len(y) != a.p.Dim:
		return protoErr("a masked input of %d values from %d, want %d", len(y), from, a.p.Dim)
	}
	a.inputs[from] = y
	return nil
}

// Forwards is phase 3: for every survivor k ∈ U3 the blob of the lists and
// its ciphertexts. U2 are the members whose shares arrived, U3 those of U2
// whose masked input arrived too; below the threshold the sum fails here.
func (a *SecAggAggregator) Forwards() (map[uint32][]byte, error) {
	if a.state != aggRostered {
		return nil, protoErr("forwards out of phase")
	}
	a.state = aggForwarded
	for _, e := range a.roster {
		if a.shares[e.id] != nil {
			a.u2 = append(a.u2, e.id)
			if a.inputs[e.id] != nil {
				a.u3 = append(a.u3, e.id)
			}
		}
	}
	if len(a.u3) < a.p.Threshold {
		a.state = aggDone
		return nil, fmt.Errorf("%w: %d of %d members sent shares and a masked input, threshold %d", ErrBelowThreshold, len(a.u3), len(a.roster), a.p.Threshold)
	}
	head := make([]byte, 8, 8+4*(len(a.u2)+len(a.u3)))
	binary.LittleEndian.PutUint32(head, uint32(len(a.u2)))
	binary.LittleEndian.PutUint32(head[4:], uint32(len(a.u3)))
	for _, id := range a.u2 {
		head = binary.LittleEndian.AppendUint32(head, id)
	}
	for _, id := range a.u3 {
		head = binary.LittleEndian.AppendUint32(head, id)
	}
	out := make(map[uint32][]byte, len(a.u3))
	for _, k := range a.u3 {
		b := slices.Clone(head)
		for _, j := range a.u2 {
			if j == k {
				continue
			}
			b = append(b, a.cipherFor(j, k)...)
		}
		out[k] = b
	}
	a.answers = map[uint32][]byte{}
	return out, nil
}

// cipherFor is j's ciphertext for k from j's shares blob.
func (a *SecAggAggregator) cipherFor(j, k uint32) []byte {
	blob := a.shares[j]
	for off := sharesHeader; off < len(blob); off += sharesEntry {
		if binary.LittleEndian.Uint32(blob[off:]) == k {
			return blob[off+4 : off+sharesEntry]
		}
	}
	return nil // TakeShares checked every member is there
}

// answerSize is the length of an unmasking answer for the lists.
func (a *SecAggAggregator) answerSize() int {
	return ShareValueSize*len(a.u2) + pairSecretSize*(len(a.roster)-len(a.u2))
}

// TakeUnmask records survivor from's unmasking answer (phase 4).
func (a *SecAggAggregator) TakeUnmask(from uint32, blob []byte) error {
	switch {
	case a.state != aggForwarded:
		return protoErr("an unmasking answer from %d out of phase", from)
	case !slices.Contains(a.u3, from):
		return protoErr("an unmasking answer from %d, not a survivor", from)
	case a.answers[from] != nil:
		return protoErr("a second unmasking answer from %d", from)
	case len(blob) != a.answerSize():
		return protoErr("an unmasking answer of %d bytes from %d, want %d", len(blob), from, a.answerSize())
	}
	a.answers[from] = blob
	return nil
}

// SecAggResult is what an instance produced.
type SecAggResult struct {
	// Members is the roster's size n, Survivors |U3| (whose inputs are in
	// the sum), Answered how many survivors answered the unmasking.
	Members, Survivors, Answered int
	// Inputs lists the survivors (U3).
	Inputs []uint32
}

// Sum writes the sum of the survivors' inputs into dst (exact in fixed
// point: Σ_j round(x_j·2^bits) / 2^bits) once the unmasking answers are in.
func (a *SecAggAggregator) Sum(dst []float64) (SecAggResult, error) {
	res := SecAggResult{Members: len(a.roster), Survivors: len(a.u3), Answered: len(a.answers), Inputs: slices.Clone(a.u3)}
	if a.state != aggForwarded {
		return res, protoErr("sum out of phase")
	}
	a.state = aggDone
	if len(dst) != a.p.Dim {
		return res, fmt.Errorf("secagg: a sum of %d values into %d", a.p.Dim, len(dst))
	}
	t := a.p.Threshold
	// The answering survivors, in roster order, with their x-coordinates.
	var ans []uint32
	for _, k := range a.u3 {
		if a.answers[k] != nil {
			ans = append(ans, k)
		}
	}
	if len(ans) < t {
		return res, fmt.Errorf("%w: %d of %d survivors answered, threshold %d", ErrBelowThreshold, len(ans), len(a.u3), t)
	}
	missing := len(a.roster) - len(a.u2)
	if missing > 0 && len(ans) < len(a.u3) {
		return res, fmt.Errorf("%w: %d members never shared and %d survivors did not answer", ErrUnrecoverable, missing, len(a.u3)-len(ans))
	}
	share := func(k uint32, pos int) (Share, error) {
		y, err := shareValue(a.answers[k][pos*ShareValueSize:])
		if err != nil {
			return Share{}, fmt.Errorf("%w: survivor %d: %v", ErrBadReconstruction, k, err)
		}
		return Share{X: a.rosterIndex(k) + 1, Y: y}, nil
	}
	sum := make([]uint32, a.p.Dim)
	for _, j := range a.u3 {
		for i, v := range a.inputs[j] {
			sum[i] += v
		}
	}
	pos := 0
	for _, j := range a.u3 {
		sh := make([]Share, len(ans))
		for i, k := range ans {
			var err error
			if sh[i], err = share(k, pos); err != nil {
				return res, err
			}
		}
		b, err := ShamirCombine(sh, t)
		if err != nil {
			return res, fmt.Errorf("%w: the self-mask seed of %d: %v", ErrBadReconstruction, j, err)
		}
		commit := sha256.Sum256(b)
		if subtle.ConstantTimeCompare(commit[:], a.roster[a.rosterIndex(j)].commit[:]) != 1 {
			return res, fmt.Errorf("%w: the self-mask seed of %d does not match its commitment", ErrBadReconstruction, j)
		}
		key := deriveKey(b, labelSelf, a.p.Round, a.p.Aggregator, j)
		addMask(sum, &key, -1)
		pos++
	}
	// Members that shared but whose input is missing: their s key is
	// rebuilt, and the survivors' masks with them removed.
	for _, j := range a.u2 {
		if slices.Contains(a.u3, j) {
			continue
		}
		sh := make([]Share, len(ans))
		for i, k := range ans {
			var err error
			if sh[i], err = share(k, pos); err != nil {
				return res, err
			}
		}
		pos++
		sk, err := ShamirCombine(sh, t)
		if err != nil {
			return res, fmt.Errorf("%w: the mask key of %d: %v", ErrBadReconstruction, j, err)
		}
		priv, err := ecdh.X25519().NewPrivateKey(sk)
		e := &a.roster[a.rosterIndex(j)]
		if err != nil || !bytes.Equal(priv.PublicKey().Bytes(), e.s) {
			return res, fmt.Errorf("%w: the mask key of %d does not match its advertised key", ErrBadReconstruction, j)
		}
		for _, k := range a.u3 {
			shared, err := agree(priv, a.roster[a.rosterIndex(k)].sPub)
			if err != nil {
				return res, err
			}
			key := pairKey(shared, a.p.Round, a.p.Aggregator, min(j, k), max(j, k))
			addMask(sum, &key, -sign(k, j))
		}
	}
	// Members that never shared: each survivor gave its own pairwise key.
	off := ShareValueSize * pos
	for _, e := range a.roster {
		if slices.Contains(a.u2, e.id) {
			continue
		}
		for _, k := range a.u3 {
			key := [32]byte(a.answers[k][off : off+pairSecretSize])
			addMask(sum, &key, -sign(k, e.id))
		}
		off += pairSecretSize
	}
	a.fixed.Decode(dst, sum)
	return res, nil
}
