package node

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/trellis-fl/trellis/agreement"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/strategy"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

// Config sets up a node.
type Config struct {
	ID        int
	Model     *nn.Model
	Optimizer nn.Optimizer
	// NewOptimizer, if set, makes a second optimizer of the same kind for
	// strategies that train a second model on the node's data
	// (View.TrainCopy; Ditto's global model).
	NewOptimizer func() (nn.Optimizer, error)
	// Train says how much local training a round does (epochs or steps).
	Train    nn.TrainConfig
	Strategy strategy.Strategy
	// TrainData is the node's training split; Test its local test split;
	// GlobalTest, if not nil, the dataset's global test set.
	TrainData nn.Batches
	// Val, if not nil, is the node's validation split, in a fixed order
	// (View.Validate reads its first samples).
	Val        nn.Batches
	Test       nn.Batches
	GlobalTest nn.Batches
	Identity   *wire.Identity
	Directory  *wire.Directory
	// Seed is the experiment seed; the node derives its streams from it.
	Seed   uint64
	Rounds int
	// Trust, if not nil, runs DMTT's topology-trust layer with these
	// parameters: every round the node broadcasts its signed claim (its
	// in-neighbors of the round) and forwards the claims its layer selects,
	// feeds what arrives to the layer, closes the layer's round before the
	// strategy combines, and shows the strategy the result (View.Trust).
	Trust *trust.Config
	// VerifyCache, if set, is shared signature-verification memory for the
	// validator and the trust layer (wire.VerifyCache); a simulator gives
	// all its nodes one. Results never depend on it.
	VerifyCache *wire.VerifyCache
}

// Neighborhood is what a node knows of the round's graph: whom it may hear
// from (sorted), their degrees, and its own degree. Every node can rebuild
// it from the experiment seed (spec/dmtt.md, "Mobility").
type Neighborhood struct {
	In       []int
	InDegree []int
	Degree   int
}

// Node is one participant. It is not safe for concurrent use; a driver runs
// one goroutine per node at a time.
type Node struct {
	cfg       Config
	validator *wire.Validator
	start     []float32
	round     int
	hood      Neighborhood
	inbox     []strategy.Incoming
	seq       uint64
	trainRes  nn.TrainResult
	// sendBufs back the payloads of Outbox, reused every round so that a
	// round allocates no model-sized buffers.
	sendBufs [][]float32
	// probe is the batch of local training data strategies score
	// parameters on (View.BatchLoss), drawn at the first use in a round.
	probe      oneBatch
	probeRound int
	saved      []float32
	// copyOpt is the optimizer of View.TrainCopy, made on first use.
	copyOpt nn.Optimizer
	// valLabels are the labels of the validation samples View.Validate
	// reads (fixed: the split's order never changes); valX is scratch.
	valLabels []int
	valX      []float32
	// rng is the strategy's stream of the round, one for Share and Combine
	// alike, so their draws continue each other rather than repeat.
	rng *rand.Rand
	// ts is the topology-trust layer (nil without Config.Trust), made at
	// the first round from its neighborhood; fwd are the claims it chose to
	// forward at the end of the previous round, sent with this round's.
	ts  *trust.State
	fwd []wire.Claim
}

// New checks the configuration and returns a node at round 0.
func New(cfg Config) (*Node, error) {
	switch {
	case cfg.Model == nil || cfg.Optimizer == nil || cfg.Strategy == nil:
		return nil, fmt.Errorf("node %d: model, optimizer and strategy are required", cfg.ID)
	case cfg.TrainData == nil || cfg.Test == nil:
		return nil, fmt.Errorf("node %d: training and test data are required", cfg.ID)
	case cfg.Identity == nil || cfg.Directory == nil:
		return nil, fmt.Errorf("node %d: identity and peer directory are required", cfg.ID)
	case int(cfg.Identity.ID()) != cfg.ID:
		return nil, fmt.Errorf("node %d: identity is for node %d", cfg.ID, cfg.Identity.ID())
	}
	v, err := wire.NewValidator(wire.ValidatorConfig{
		Self: uint32(cfg.ID), Directory: cfg.Directory, PayloadLen: cfg.Model.NumParams(), Cache: cfg.VerifyCache})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
	}
	if cfg.Trust != nil {
		if err := cfg.Trust.Validate(); err != nil {
			return nil, fmt.Errorf("node %d: %w", cfg.ID, err)
		}
	}
	return &Node{cfg: cfg, validator: v, start: make([]float32, cfg.Model.NumParams())}, nil
}

// ID is the node's id.
func (n *Node) ID() int { return n.cfg.ID }

// Model is the node's model (its parameters are the node's current state).
func (n *Node) Model() *nn.Model { return n.cfg.Model }

// Strategy is the node's strategy.
func (n *Node) Strategy() strategy.Strategy { return n.cfg.Strategy }

// Begin starts round r without local training: it records the
// neighborhood, saves the start-of-round parameters and opens the trust
// layer's round. Train calls it; a driver calls it alone for a node that
// does not train (a Byzantine node of spec/dmtt.md).
func (n *Node) Begin(r int, hood Neighborhood) error {
	n.round, n.hood = r, hood
	n.inbox = n.inbox[:0]
	n.seq = 0
	n.trainRes = nn.TrainResult{}
	n.validator.SetRound(uint64(r))
	n.rng = seed.Stream(n.cfg.Seed, seed.Strategy, uint64(n.cfg.ID), uint64(r))
	copy(n.start, n.cfg.Model.Params())
	if n.cfg.Trust == nil {
		return nil
	}
	if n.ts == nil {
		var first []uint32 // N_dir^0: the first round's neighbors, without the node
		for _, j := range ids32(hood.In) {
			if j != uint32(n.cfg.ID) {
				first = append(first, j)
			}
		}
		ts, err := trust.New(n.cfg.Identity, n.cfg.Directory, first, *n.cfg.Trust)
		if err != nil {
			return fmt.Errorf("node %d: %w", n.cfg.ID, err)
		}
		n.ts = ts
	}
	if err := n.ts.BeginRound(uint64(r)); err != nil {
		return fmt.Errorf("node %d: %w", n.cfg.ID, err)
	}
	return nil
}

func ids32(xs []int) []uint32 {
	out := make([]uint32, len(xs))
	for k, x := range xs {
		out[k] = uint32(x)
	}
	return out
}

// Train starts round r (Begin) and runs local training.
func (n *Node) Train(r int, hood Neighborhood) (nn.TrainResult, error) {
	if err := n.Begin(r, hood); err != nil {
		return nn.TrainResult{}, err
	}
	if h, ok := n.cfg.Model.Head().(*nn.Evidential); ok {
		// The KL weight anneals by round (spec/dmtt.md, "Models").
		h.Lambda = nn.AnnealedLambda(r, n.cfg.Rounds, nn.EvidentialLambdaMax)
	}
	tc := n.cfg.Train
	if lt, ok := n.cfg.Strategy.(strategy.LocalTrainer); ok {
		tc = lt.LocalTraining(n.view(), tc)
	}
	res, err := n.cfg.Model.Train(n.cfg.TrainData, n.cfg.Optimizer, tc,
		seed.Stream(n.cfg.Seed, seed.Train, uint64(n.cfg.ID), uint64(r)))
	if err != nil {
		return res, fmt.Errorf("node %d round %d: %w", n.cfg.ID, r, err)
	}
	n.trainRes = res
	return res, nil
}

func (n *Node) view() *strategy.View {
	return &strategy.View{
		ID: n.cfg.ID, Round: n.round, Rounds: n.cfg.Rounds,
		Model: n.cfg.Model, Start: n.start,
		Neighbors: n.hood.In, NeighborDegree: n.hood.InDegree, Degree: n.hood.Degree,
		RNG:       n.rng,
		LR:        n.cfg.Optimizer.LR(),
		Steps:     n.trainRes.Steps,
		BatchLoss: n.batchLoss,
		TrainCopy: n.trainCopy,
		Validate:  n.validate,
		Trust:     n.trustView(),
	}
}

// trustView is View.Trust: nil without a trust layer.
func (n *Node) trustView() strategy.TopologyTrust {
	if n.ts == nil {
		return nil
	}
	return trustView{n.ts}
}

type trustView struct{ s *trust.State }

func (t trustView) Trust(j int) float64 {
	if j < 0 || int64(j) > int64(^uint32(0)) {
		return 0
	}
	return t.s.Trust(uint32(j))
}

func (t trustView) Reliability(j int) float64 {
	if j < 0 || int64(j) > int64(^uint32(0)) {
		return 0
	}
	return t.s.Reliability(uint32(j))
}

func (t trustView) Screened() []int {
	sc := t.s.Screened()
	out := make([]int, len(sc))
	for k, x := range sc {
		out[k] = int(x)
	}
	return out
}

// Trust returns the node's topology-trust layer, nil without one (for
// drivers' diagnostics; the node owns it).
func (n *Node) Trust() *trust.State { return n.ts }

// validate is View.Validate: the outputs of params on the first max
// samples of the node's validation split, the node's model restored
// afterwards.
func (n *Node) validate(params []float32, max int, dst *agreement.Outputs) error {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return fmt.Errorf("validate: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.cfg.Val == nil || n.cfg.Val.Len() == 0 {
		return fmt.Errorf("node %d has no validation samples", n.cfg.ID)
	}
	src := &firstN{src: n.cfg.Val, n: min(max, n.cfg.Val.Len())}
	cnt, k, f := src.Len(), m.Classes(), m.FeatureSize()
	if len(n.valLabels) != cnt {
		// Labels do not depend on the parameters: read them once.
		n.valLabels = make([]int, 0, cnt)
		n.valX = grow(n.valX, m.Batch()*m.InputSize())
		y := make([]int, m.Batch())
		src.Reset()
		for b := src.Next(n.valX, y); b > 0; b = src.Next(n.valX, y) {
			n.valLabels = append(n.valLabels, y[:b]...)
		}
	}
	dst.N, dst.Classes, dst.Dim, dst.Labels = cnt, k, f, n.valLabels
	dst.Probs = grow(dst.Probs, cnt*k)
	dst.Features = grow(dst.Features, cnt*f)
	vac := dst.Vacuity
	dst.Vacuity = nil
	if _, ok := m.Head().(nn.UncertaintyHead); ok {
		dst.Vacuity = grow(vac, cnt)
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	err := m.Outputs(src, dst.Probs, dst.Vacuity, dst.Features)
	copy(m.Params(), n.saved)
	return err
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// firstN yields the first n samples of a source.
type firstN struct {
	src  nn.Batches
	n    int
	seen int
}

func (f *firstN) Len() int { return f.n }
func (f *firstN) Reset()   { f.src.Reset(); f.seen = 0 }
func (f *firstN) Next(x []float32, y []int) int {
	if f.seen >= f.n {
		return 0
	}
	b := f.src.Next(x, y[:min(len(y), f.n-f.seen)])
	f.seen += b
	return b
}

// trainCopy is View.TrainCopy: this round's local training applied to
// params in place, with its own optimizer and training stream, the
// node's model restored afterwards.
func (n *Node) trainCopy(params []float32) (nn.TrainResult, error) {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return nn.TrainResult{}, fmt.Errorf("train copy: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.copyOpt == nil {
		if n.cfg.NewOptimizer == nil {
			return nn.TrainResult{}, fmt.Errorf("node %d: the strategy trains a second model but the node has no NewOptimizer", n.cfg.ID)
		}
		var err error
		if n.copyOpt, err = n.cfg.NewOptimizer(); err != nil {
			return nn.TrainResult{}, err
		}
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	res, err := m.Train(n.cfg.TrainData, n.copyOpt, n.cfg.Train,
		seed.Stream(n.cfg.Seed, seed.Train, uint64(n.cfg.ID), uint64(n.round), 1))
	copy(params, m.Params())
	copy(m.Params(), n.saved)
	return res, err
}

// batchLoss is View.BatchLoss: the mean loss of params on one batch of the
// node's training data, the same batch for the whole round (UBAR's test).
// The model's own parameters are restored afterwards.
func (n *Node) batchLoss(params []float32) (float64, error) {
	m := n.cfg.Model
	if len(params) != m.NumParams() {
		return 0, fmt.Errorf("batch loss: %d parameters, the model has %d", len(params), m.NumParams())
	}
	if n.probe.x == nil || n.probeRound != n.round {
		if n.probe.x == nil {
			n.probe.x = make([]float32, m.Batch()*m.InputSize())
			n.probe.y = make([]int, m.Batch())
		}
		n.cfg.TrainData.Reset()
		n.probe.n = n.cfg.TrainData.Next(n.probe.x, n.probe.y)
		n.probeRound = n.round
	}
	n.saved = append(n.saved[:0], m.Params()...)
	copy(m.Params(), params)
	res, err := m.Evaluate(&n.probe)
	copy(m.Params(), n.saved)
	return res.Loss, err
}

// oneBatch is a fixed batch as nn.Batches.
type oneBatch struct {
	x    []float32
	y    []int
	n    int
	done bool
}

func (b *oneBatch) Len() int { return b.n }
func (b *oneBatch) Reset()   { b.done = false }
func (b *oneBatch) Next(x []float32, y []int) int {
	if b.done {
		return 0
	}
	b.done = true
	copy(x, b.x)
	copy(y, b.y[:b.n])
	return b.n
}

// Outbox returns the signed messages the strategy wants sent this round.
// A message to wire.Broadcast goes to every out-neighbor. Payloads are
// copies, so the node may go on changing its model; they stay valid until
// the node's next Outbox call.
func (n *Node) Outbox() ([]*wire.Message, error) {
	var out []*wire.Message
	if n.ts != nil {
		// The node's signed claim of this round's neighborhood, then the
		// claims its layer chose to forward (spec/dmtt.md, Algorithms 1, 3).
		own, err := n.ts.OwnClaim(ids32(n.hood.In))
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.cfg.ID, err)
		}
		for _, c := range append([]wire.Claim{own}, n.fwd...) {
			n.seq++
			m := &wire.Message{
				Header: wire.Header{Kind: wire.KindClaim, From: uint32(n.cfg.ID), To: wire.Broadcast, Round: uint64(n.round), Seq: n.seq},
				Claim:  c,
			}
			if err := wire.Sign(m, n.cfg.Identity); err != nil {
				return nil, fmt.Errorf("node %d: signing: %w", n.cfg.ID, err)
			}
			out = append(out, m)
		}
		n.fwd = nil
	}
	var prev []float32 // the last vector copied, and its copy
	var prevBuf []float32
	for k, o := range n.cfg.Strategy.Share(n.view()) {
		if k == len(n.sendBufs) {
			n.sendBufs = append(n.sendBufs, nil)
		}
		var buf []float32
		if len(o.Vector) > 0 && len(o.Vector) == len(prev) && &o.Vector[0] == &prev[0] {
			// The same vector to another peer: share the copy (payloads
			// are read-only once sent, like a broadcast's).
			buf = prevBuf
		} else {
			n.sendBufs[k] = append(n.sendBufs[k][:0], o.Vector...)
			buf, prev, prevBuf = n.sendBufs[k], o.Vector, n.sendBufs[k]
		}
		to := uint32(wire.Broadcast)
		if o.To != strategy.Broadcast {
			to = uint32(o.To)
		}
		n.seq++
		m := &wire.Message{
			Header:  wire.Header{Kind: wire.KindVector, From: uint32(n.cfg.ID), To: to, Round: uint64(n.round), Seq: n.seq},
			Payload: wire.Payload{Tag: o.Tag, Data: buf},
		}
		if err := wire.Sign(m, n.cfg.Identity); err != nil {
			return nil, fmt.Errorf("node %d: signing: %w", n.cfg.ID, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Deliver hands the node one message that arrived. A message that fails
// validation is dropped and counted against its sender; the error says
// why (drivers may log it; the node has already dealt with it).
//
// With a trust layer, every authenticated message is a sign of life of its
// sender (trust.State.Heard), claims go to the layer (Ingest), and a claim
// message the validator refused for content its sender signed is evidence
// against it (ObserveRejected). A claim the layer refuses as evidence of
// wrongdoing is returned as an error too; duplicates are not.
func (n *Node) Deliver(m *wire.Message) error {
	if err := n.validator.Check(m); err != nil {
		var we *wire.Error
		if n.ts != nil && m != nil && m.Kind == wire.KindClaim && errors.As(err, &we) {
			n.ts.ObserveRejected(m.From, we.Reason)
		}
		return err
	}
	if n.ts != nil {
		if err := n.ts.Heard(m.From); err != nil {
			return err
		}
		if m.Kind == wire.KindClaim {
			err := n.ts.Ingest(m.From, &m.Claim)
			var rej *trust.Rejection
			if errors.As(err, &rej) && !rej.Reason.Evidence() {
				return nil
			}
			return err
		}
	}
	if m.Kind != wire.KindVector {
		return nil // claims are for the trust layer
	}
	n.inbox = append(n.inbox, strategy.Incoming{From: int(m.From), Tag: m.Payload.Tag, Vector: m.Payload.Data})
	return nil
}

// Combine runs the strategy on what arrived (sorted by sender, then tag)
// and returns the weight it gave each sender.
func (n *Node) Combine() (map[int]float64, error) {
	if err := n.endTrustRound(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(n.inbox, func(a, b strategy.Incoming) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.Tag, b.Tag))
	})
	w, err := n.cfg.Strategy.Combine(n.view(), n.inbox)
	if err != nil {
		return nil, fmt.Errorf("node %d round %d: %s: %w", n.cfg.ID, n.round, n.cfg.Strategy.Name(), err)
	}
	n.inbox = n.inbox[:0]
	return w, nil
}

// Settle closes the round without combining: the node keeps its model and
// drops what arrived (a driver's choice for nodes that do not learn, such
// as spec/dmtt.md's Byzantine nodes); its trust layer still ends the round.
func (n *Node) Settle() error {
	n.inbox = n.inbox[:0]
	return n.endTrustRound()
}

// endTrustRound closes the trust layer's round (before the strategy reads
// it) and keeps the claims to forward next round.
func (n *Node) endTrustRound() error {
	if n.ts == nil {
		return nil
	}
	if _, err := n.ts.EndRound(); err != nil {
		return fmt.Errorf("node %d round %d: %w", n.cfg.ID, n.round, err)
	}
	n.fwd = n.ts.Forwards()
	return nil
}

// Rejections returns what the validator refused, per sender.
func (n *Node) Rejections(sender int) wire.Counts { return n.validator.Counts(uint32(sender)) }

// Evaluation is a node's model quality after a round.
type Evaluation struct {
	Local  nn.EvalResult
	Global nn.EvalResult // zero when the node has no global test set
	Train  nn.TrainResult
}

// Evaluate measures the model on the local test split and, when it has
// one and global is set, on the global test set.
func (n *Node) Evaluate(global bool) (Evaluation, error) {
	ev := Evaluation{Train: n.trainRes}
	var err error
	if ev.Local, err = n.cfg.Model.Evaluate(n.cfg.Test); err != nil {
		return ev, fmt.Errorf("node %d: local test: %w", n.cfg.ID, err)
	}
	if global && n.cfg.GlobalTest != nil {
		if ev.Global, err = n.cfg.Model.Evaluate(n.cfg.GlobalTest); err != nil {
			return ev, fmt.Errorf("node %d: global test: %w", n.cfg.ID, err)
		}
	}
	return ev, nil
}
