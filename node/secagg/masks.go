package secagg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/wire"
)

// Config sets up secure aggregation with pairwise masks
// (privacy.SecAggMember, privacy.SecAggAggregator).
type Config struct {
	// Threshold is t: a group of n members needs n ≥ t and 2t > n.
	Threshold int
	// ScaleBits are the fixed-point fraction bits (0: 16).
	ScaleBits int
	// Screened makes the node's group its topology-screened neighbours
	// (View.Trust.Screened of the previous round: DMTT's screened
	// collaborator candidates); otherwise its in-neighbours of the round.
	Screened bool
	// Across releases the group mean through the strategy in one more
	// exchange phase, so that the strategy's rule (robust or not) combines
	// the neighbours' group means: secure aggregation inside groups,
	// robust rules across groups. Without it the node's new model is its group mean and
	// the strategy's vectors never leave the node.
	Across bool
}

// Reasons of the layers' refusals (every mode's), as Ready.Rejections
// counts them.
const (
	ReasonForged   = "secagg_forged"
	ReasonProtocol = "secagg_protocol"
)

// Layer is secure aggregation inside the node's group with pairwise masks
// (the protocol of privacy.SecAggAggregator): every round the node is the
// aggregator of its own group — its in-neighbours, or its screened peers —
// and a member of each neighbour's group. Its input is its model after
// training (after the DP layer's noise, if there is one). Five exchange
// phases carry the protocol; at the end the node's model becomes its
// group's mean (x_self + Σ_{j∈U} x_j)/(|U| + 1), or, with Across, that mean
// goes out in a sixth phase as the strategy's vector and the strategy
// combines the neighbours' means. When the group sum fails (fewer than t
// members, survivors or answers; a reconstruction the shares do not
// support) the node keeps its own model, and Ready.Reports says so. The
// strategy's own vectors never leave the node (without Across), or only as
// the group mean (with Across): an individual model is never sent in the
// clear.
//
// The protocol relays through the aggregator, so members need not be
// neighbours of each other, but every link must work both ways: the
// node's in-neighbours must also be its out-neighbours (undirected
// graphs).
type Layer struct {
	id     uint32
	model  *nn.Model
	dir    *wire.Directory
	random seed.Source
	cfg    Config

	r       int
	hood    node.Neighborhood
	trust   strategy.TopologyTrust
	members map[uint32]*privacy.SecAggMember // by aggregator
	order   []uint32                         // aggregators, sorted
	agg     *privacy.SecAggAggregator
	own     []float32 // the node's input (its model at phase 2)
	done    bool      // the group result is applied
	rep     node.SecAggReport
	fail    error
}

const (
	secAggPhases = 5
)

// New returns node id's secure-aggregation layer over its model
// (its input, and where the group mean is written).
func New(id int, model *nn.Model, dir *wire.Directory, random seed.Source, cfg Config) (*Layer, error) {
	if model == nil || dir == nil || random == nil {
		return nil, fmt.Errorf("secagg layer: a model, a directory and a seed source are required")
	}
	if cfg.ScaleBits == 0 {
		cfg.ScaleBits = 16
	}
	if cfg.Threshold < 2 {
		return nil, fmt.Errorf("secagg layer: threshold %d, need ≥ 2", cfg.Threshold)
	}
	if _, err := privacy.NewFixedPoint(cfg.ScaleBits, 1); err != nil {
		return nil, fmt.Errorf("secagg layer: %w", err)
	}
	return &Layer{id: uint32(id), model: model, dir: dir, random: random, cfg: cfg}, nil
}

// Name implements node.Layer.
func (*Layer) Name() string { return "secagg" }

// Phases implements node.Layer.
func (l *Layer) Phases() int {
	if l.cfg.Across {
		return secAggPhases + 1
	}
	return secAggPhases
}

// ReleasePhase implements node.Releaser: the last phase (the strategy's vectors
// are dropped there, or are the group mean with Across).
func (l *Layer) ReleasePhase() int { return l.Phases() - 1 }

// Expects implements node.Layer: advertisements (0), rosters (1), shares and
// masked inputs (2), forwarded shares (3), unmasking answers (4), their
// sizes bounded by a group as large as the directory.
func (l *Layer) Expects(p int) []node.Expect {
	sz := privacy.SecAggMaxSizes(l.dir.Len())
	switch p {
	case 0:
		return []node.Expect{node.ExpectBlob(wire.KindKey, sz.Advertisement, sz.Advertisement)}
	case 1:
		return []node.Expect{node.ExpectBlob(wire.KindKey, 1, sz.Roster)}
	case 2:
		return []node.Expect{node.ExpectBlob(wire.KindShare, 1, sz.Shares),
			{Kind: wire.KindMasked, Content: wire.MaskedContent(l.model.NumParams())}}
	case 3:
		return []node.Expect{node.ExpectBlob(wire.KindShare, 1, sz.Forward)}
	case 4:
		return []node.Expect{node.ExpectBlob(wire.KindShare, 1, sz.Unmask)}
	}
	return nil
}

// ReleasesVectors implements node.Releaser: only the group mean, with Across.
func (l *Layer) ReleasesVectors() bool { return l.cfg.Across }

// Owns implements node.Layer: keys, shares and masked inputs.
func (*Layer) Owns(k wire.Kind) bool {
	return k == wire.KindKey || k == wire.KindShare || k == wire.KindMasked
}

// Observe implements node.Layer.
func (*Layer) Observe(*wire.Message, error) error { return nil }

// See implements node.Layer: the topology trust, for a screened group.
func (l *Layer) See(v *strategy.View) {
	if v.Trust != nil {
		l.trust = v.Trust
	}
}

func (l *Layer) params(agg uint32) privacy.SecAggParams {
	return privacy.SecAggParams{Round: uint64(l.r), Aggregator: agg, Dim: l.model.NumParams(),
		Threshold: l.cfg.Threshold, ScaleBits: l.cfg.ScaleBits, Directory: l.dir}
}

// Begin implements node.Layer: the round's instances — a member of every
// in-neighbour's group (keys drawn now, from seed.Mask), the aggregator of
// its own.
func (l *Layer) Begin(r int, hood node.Neighborhood) error {
	l.r, l.hood = r, hood
	l.members, l.order, l.own, l.done, l.fail = map[uint32]*privacy.SecAggMember{}, nil, nil, false, nil
	l.rep = node.SecAggReport{}
	for _, a := range hood.In {
		if a < 0 || uint32(a) == l.id {
			continue
		}
		rng := l.random.Stream(seed.Mask, uint64(l.id), uint64(r), uint64(a))
		m, err := privacy.NewSecAggMember(l.params(uint32(a)), l.id, privacy.NewStreamReader(rng.Uint64))
		if err != nil {
			return err
		}
		l.members[uint32(a)] = m
		l.order = append(l.order, uint32(a))
	}
	slices.Sort(l.order)
	cand := hood.In
	if l.cfg.Screened && l.trust != nil {
		cand = intersect(hood.In, l.trust.Screened())
	}
	var err error
	l.agg, err = privacy.NewSecAggAggregator(l.params(l.id), cand)
	return err
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func (l *Layer) msg(k wire.Kind, to uint32, tag string, blob []byte) *wire.Message {
	return &wire.Message{Header: wire.Header{Kind: k, To: to}, Blob: wire.Blob{Tag: tag, Data: blob}}
}

// Outbox implements node.Layer: the protocol's messages of phase p.
func (l *Layer) Outbox(p int) ([]*wire.Message, error) {
	var out []*wire.Message
	switch p {
	case 0:
		for _, a := range l.order {
			out = append(out, l.msg(wire.KindKey, a, privacy.TagSecAggAdvertise, l.members[a].Advertisement()))
		}
	case 1:
		blob, ids, err := l.agg.Roster()
		if err != nil {
			l.failed(err)
			return nil, nil
		}
		l.rep.Members = len(ids)
		for _, id := range ids {
			out = append(out, l.msg(wire.KindKey, id, privacy.TagSecAggRoster, blob))
		}
	case 2:
		l.own = append(l.own[:0], l.model.Params()...)
		for _, a := range l.order {
			m := l.members[a]
			if m.Members() == nil || len(m.Members()) == 0 {
				continue // no roster from a: not in its group
			}
			l.rep.Joined++
			shares, masked, err := m.ShareAndMask(l.own)
			if errors.Is(err, privacy.ErrOutOfRange) {
				// The model does not fit the encoding: the node sits this
				// group out (an error of the encoding, never a silent
				// saturation), and says so.
				l.rep.Reason = err.Error()
				continue
			}
			if err != nil {
				return nil, err
			}
			l.rep.Contributed++
			out = append(out, l.msg(wire.KindShare, a, privacy.TagSecAggShares, shares),
				&wire.Message{Header: wire.Header{Kind: wire.KindMasked, To: a}, Masked: wire.Masked{Tag: privacy.TagSecAggInput, Data: masked}})
		}
	case 3:
		if l.fail != nil {
			return nil, nil
		}
		fwd, err := l.agg.Forwards()
		if err != nil {
			l.failed(err)
			return nil, nil
		}
		ids := make([]uint32, 0, len(fwd))
		for id := range fwd {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			out = append(out, l.msg(wire.KindShare, id, privacy.TagSecAggForward, fwd[id]))
		}
	case 4:
		for _, a := range l.order {
			ans, err := l.members[a].Unmask()
			if err != nil {
				continue // no forward from a (or it was refused)
			}
			l.rep.Unmasked++
			out = append(out, l.msg(wire.KindShare, a, privacy.TagSecAggUnmask, ans))
		}
	case 5:
		l.finish()
	}
	return out, nil
}

func (l *Layer) failed(err error) {
	if l.fail == nil {
		l.fail = err
	}
}

// finish sums the group and writes its mean into the model, or keeps the
// model when the sum failed.
func (l *Layer) finish() {
	if l.done {
		return
	}
	l.done = true
	w := l.model.Params()
	if l.fail == nil {
		sum := make([]float64, len(w))
		res, err := l.agg.Sum(sum)
		l.rep.Survivors, l.rep.Answered = res.Survivors, res.Answered
		if err == nil {
			// The node's own input is the model it masked with (phase 2),
			// which is its model now.
			k := float64(res.Survivors + 1)
			for i := range w {
				w[i] = float32((float64(w[i]) + sum[i]) / k)
			}
			if !l.cfg.Across {
				l.rep.Weights = meanWeights(l.id, res.Inputs)
			}
			return
		}
		l.fail = err
	}
	l.rep.Fallback = true
	l.rep.Reason = l.fail.Error()
}

// Handle implements node.Layer: each message to the instance it belongs to.
func (l *Layer) Handle(m *wire.Message) error {
	var err error
	switch {
	case m.Kind == wire.KindMasked && m.Masked.Tag == privacy.TagSecAggInput:
		err = l.agg.TakeMasked(m.From, m.Masked.Data)
	case m.Kind == wire.KindKey && m.Blob.Tag == privacy.TagSecAggAdvertise:
		err = l.agg.TakeAdvertisement(m.From, m.Seq, m.Sig, m.Blob.Data)
	case m.Kind == wire.KindShare && m.Blob.Tag == privacy.TagSecAggShares:
		err = l.agg.TakeShares(m.From, m.Blob.Data)
	case m.Kind == wire.KindShare && m.Blob.Tag == privacy.TagSecAggUnmask:
		err = l.agg.TakeUnmask(m.From, m.Blob.Data)
	case m.Kind == wire.KindKey && m.Blob.Tag == privacy.TagSecAggRoster,
		m.Kind == wire.KindShare && m.Blob.Tag == privacy.TagSecAggForward:
		mem := l.members[m.From]
		if mem == nil {
			err = fmt.Errorf("%w: a %s from %d, not a group this node is in", privacy.ErrProtocol, m.Blob.Tag, m.From)
		} else if m.Kind == wire.KindKey {
			err = mem.TakeRoster(m.Blob.Data)
		} else {
			err = mem.TakeForward(m.Blob.Data)
		}
	default:
		err = fmt.Errorf("%w: a %s message tagged %q", privacy.ErrProtocol, m.Kind, tagOf(m))
	}
	return hiddenRefusal("secagg", m.From, err)
}

// meanWeights are a group mean's weights: 1/(|inputs| + 1) for the node
// and each input's sender.
func meanWeights(self uint32, inputs []uint32) map[int]float64 {
	k := 1 / float64(len(inputs)+1)
	w := map[int]float64{int(self): k}
	for _, j := range inputs {
		w[int(j)] = k
	}
	return w
}

// hiddenRefusal is a privacy layer's refusal of a message from node from:
// forged (authentication failed) or a protocol violation; nil for nil.
func hiddenRefusal(layer string, from uint32, err error) error {
	if err == nil {
		return nil
	}
	reason := ReasonProtocol
	if errors.Is(err, privacy.ErrForged) {
		reason = ReasonForged
	}
	return &node.Refusal{Reason: reason, Err: fmt.Errorf("%s: from node %d: %w", layer, from, err)}
}

// dropVectors keeps the non-vector messages of out: the layers whose
// group mean is the node's combination send no model in the clear.
func dropVectors(out []*wire.Message) []*wire.Message {
	keep := out[:0]
	for _, m := range out {
		if m.Kind != wire.KindVector {
			keep = append(keep, m)
		}
	}
	return keep
}

func tagOf(m *wire.Message) string {
	if m.Kind == wire.KindMasked {
		return m.Masked.Tag
	}
	return m.Blob.Tag
}

// Release implements node.Releaser: without Across the strategy's vectors are
// dropped (the group mean is the node's combination); with Across only
// the group mean goes out, and nothing when the group sum failed (the
// node's own model would go out in the clear).
func (l *Layer) Release(out []*wire.Message) ([]*wire.Message, error) {
	keep := out[:0]
	w := l.model.Params()
	for _, m := range out {
		if m.Kind != wire.KindVector {
			keep = append(keep, m)
			continue
		}
		if !l.cfg.Across || l.rep.Fallback {
			continue
		}
		if m.Payload.Tag != strategy.TagModel || len(m.Payload.Data) != len(w) {
			return nil, fmt.Errorf("secagg layer: a %q vector is not the group mean; only the model (the group mean) may go out", m.Payload.Tag)
		}
		for i, v := range m.Payload.Data {
			if math.Float32bits(v) != math.Float32bits(w[i]) {
				return nil, fmt.Errorf("secagg layer: the %q vector differs from the group mean at %d", m.Payload.Tag, i)
			}
		}
		keep = append(keep, m)
	}
	return keep, nil
}

// End implements node.Layer: the group's mean becomes the model (without
// Across) and the round's account goes into Ready.Reports.
func (l *Layer) End(rd *node.Ready) error {
	l.finish()
	rep := l.rep
	rd.Reports = append(rd.Reports, &rep)
	return nil
}

// Snapshot implements node.Layer. Everything of the protocol is per round: the
// keys of every group are drawn at Begin (from seed.Mask, or crypto/rand),
// and a round's instances end with it. The state is the layer's
// configuration, so that a restart with another threshold, encoding or
// grouping is refused rather than mixed with the saved run:
//
//	version u8 (1), threshold u32, scale bits u8, screened u8, across u8
func (l *Layer) Snapshot() ([]byte, error) { return l.configState(), nil }

func (l *Layer) configState() []byte {
	b := binary.LittleEndian.AppendUint32([]byte{stateVersion}, uint32(l.cfg.Threshold))
	return append(b, uint8(l.cfg.ScaleBits), boolByte(l.cfg.Screened), boolByte(l.cfg.Across))
}

// Restore implements node.Layer.
func (l *Layer) Restore(b []byte) error {
	if want := l.configState(); !bytes.Equal(b, want) {
		if len(b) != len(want) || b[0] != stateVersion {
			return fmt.Errorf("secagg layer: not a secagg state of format %d", stateVersion)
		}
		return fmt.Errorf("secagg layer: the state is of another configuration (threshold %d, scale bits %d, screened %v, across %v; this layer's threshold %d, scale bits %d, screened %v, across %v)",
			binary.LittleEndian.Uint32(b[1:]), b[5], b[6] == 1, b[7] == 1, l.cfg.Threshold, l.cfg.ScaleBits, l.cfg.Screened, l.cfg.Across)
	}
	return nil
}

func boolByte(x bool) byte {
	if x {
		return 1
	}
	return 0
}

// stateVersion is the format of the layers' states (Snapshot), their
// first byte. A layer with nothing to carry between rounds saves it alone
// (versionOnly), so that a later format can refuse an old state by name.
const stateVersion = 1

// versionOnly is the state of a layer with nothing to save, and its check.
func versionOnly() []byte { return []byte{stateVersion} }

func checkVersionOnly(layer string, b []byte) error {
	if len(b) != 1 || b[0] != stateVersion {
		return fmt.Errorf("%s layer: not a %s state of format %d (%d bytes)", layer, layer, stateVersion, len(b))
	}
	return nil
}

// Interface check.
var _ node.Releaser = (*Layer)(nil)
