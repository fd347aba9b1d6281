package consensus

import (
	"fmt"
	"math"
	"math/big"

	"github.com/trellis-fl/trellis/topology"
)

// Kind says what a message carries.
type Kind uint8

const (
	// State is a node's (public part of its) state: x_i, α_i, or a noisy
	// state θ_i.
	State Kind = iota
	// Cipher is Enc_i(−x_i) under the sender's own key: opaque to the
	// receiver (Value is NaN).
	Cipher
	// Reply is Enc_j(a_{i→j}·(x_i − x_j)) under the receiver's key: Value
	// is what the receiver decrypts.
	Reply
	// Mass is the weight (y) part of a push-sum push; the State message
	// of the same push carries its value (x) part.
	Mass
)

// Message is one thing node From sent to neighbour To at iteration Iter.
// Value is what To reads from it (NaN when To cannot read it); Ct is the
// ciphertext of the encrypted method, nil otherwise.
type Message struct {
	Iter     int
	From, To int
	Kind     Kind
	Value    float64
	Ct       *big.Int
}

// Problem is one average-consensus instance.
type Problem struct {
	G     *topology.Graph
	X0    []float64 // the private initial values
	Iters int       // synchronous iterations
	Seed  uint64    // every random stream of the run derives from it
	// Record keeps every message in Trace.Msgs (the adversary needs it;
	// the error tables do not).
	Record bool
	// Ref, when set, makes the problem a dynamic one (signal.go): node i
	// tracks the average of the reference signals r_j(k) = Ref(j, k), and
	// X0 is unused. Only the dynamic methods accept it.
	Ref Signal
}

// check is the static methods' check: an undirected graph, n finite
// initial values, no reference signals.
func (p *Problem) check() error {
	if p.G == nil || !p.G.Undirected() {
		return fmt.Errorf("consensus: need an undirected graph")
	}
	if p.Ref != nil {
		return fmt.Errorf("consensus: a static method got reference signals (use a dynamic one)")
	}
	return p.checkValues()
}

// checkValues checks the initial values and the iteration count.
func (p *Problem) checkValues() error {
	if len(p.X0) != p.G.N() {
		return fmt.Errorf("consensus: %d initial values for %d nodes", len(p.X0), p.G.N())
	}
	if p.Iters < 0 {
		return fmt.Errorf("consensus: %d iterations", p.Iters)
	}
	for i, v := range p.X0 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("consensus: x_%d(0) = %v", i, v)
		}
	}
	return nil
}

// Trace is what a run leaves: the true average, the per-iteration error of
// the nodes' estimates, their final estimates and (if recorded) every
// message.
type Trace struct {
	// Avg is (1/n) Σ x_i(0), in float64; in a dynamic run, the average of
	// the references at the last iteration, r̄(Iters).
	Avg float64
	// Targets, in a dynamic run only, is r̄(k) for k = 0..Iters, the
	// time-varying average the errors are measured against.
	Targets []float64
	// MaxErr[k] = max_i |x_i(k) − Avg| and MSE[k] = (1/n) Σ_i (x_i(k) − Avg)²,
	// for k = 0..Iters, on the nodes' estimates of the average (Targets[k]
	// in place of Avg in a dynamic run: the tracking error).
	MaxErr, MSE []float64
	Final       []float64
	Msgs        []Message
}

func newTrace(p *Problem) *Trace {
	s := 0.0
	for _, v := range p.X0 {
		s += v
	}
	return &Trace{Avg: s / float64(len(p.X0))}
}

// observe appends the error of the estimates x.
func (t *Trace) observe(x []float64) {
	m, s := 0.0, 0.0
	for _, v := range x {
		d := v - t.Avg
		m = max(m, math.Abs(d))
		s += d * d
	}
	t.MaxErr = append(t.MaxErr, m)
	t.MSE = append(t.MSE, s/float64(len(x)))
}

func (t *Trace) finish(x []float64) {
	t.Final = append([]float64(nil), x...)
}

// broadcast records that every node i sent v[i] to each neighbour at
// iteration k.
func (t *Trace) broadcast(p *Problem, k int, v []float64) {
	if !p.Record {
		return
	}
	for i := range v {
		for _, j := range p.G.Out(i) {
			t.Msgs = append(t.Msgs, Message{Iter: k, From: i, To: j, Kind: State, Value: v[i]})
		}
	}
}

// FinalMSE is MSE at the last iteration.
func (t *Trace) FinalMSE() float64 { return t.MSE[len(t.MSE)-1] }
