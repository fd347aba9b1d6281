package strategy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/agreement"
)

// LIGHTYEAR defaults (the LIGHTYEAR paper, §4.5–4.7).
const (
	LightyearTau  = 0.6
	LightyearG    = 0.95
	LightyearNVal = 128
)

// Score kinds of LIGHTYEAR (the LIGHTYEAR paper, §4.5), and
// the NTK variants of the score study (agreement/variants.go: each a
// reconstruction of the paper's lost formula with one normalisation
// changed).
const (
	ScoreNTK           = "ntk"
	ScoreCalibration   = "calibration"
	ScoreCosine        = "cosine"
	ScoreNTKLogits     = "ntk_logits"
	ScoreNTKUncentered = "ntk_uncentered"
	ScoreNTKClasswise  = "ntk_classwise"
)

// ScoreKinds lists the agreement scores LIGHTYEAR can select by, in the
// order its diagnostics report them.
var ScoreKinds = []string{ScoreNTK, ScoreCalibration, ScoreCosine, ScoreNTKLogits, ScoreNTKUncentered, ScoreNTKClasswise}

// The paper's defaults: tau = 0.6, g = 0.95, n_val = 128; include_self 1
// is the authors' aggregation, 0 (default) the paper's Eq. 17.
var lightyearRow = Row{
	Name:         "lightyear",
	Personalized: true,
	Summary:      "LIGHTYEAR: score peers' models on the own validation data, keep those that agree",
	Score:        true,
	// Async: each input is scored against the node's own model only (its
	// outputs on the node's validation samples), never against another
	// input, so inputs of other steps change nothing in its score; t in
	// G^t is the node's own step (View.Round), so a fast node's pull
	// towards its neighbours decays sooner in time than a slow one's.
	Async: true,
	Options: []Option{
		{Name: "tau", Default: LightyearTau, Lo: 0, Hi: 1},
		{Name: "g", Default: LightyearG, Lo: 0, Hi: 1, LoOpen: true},
		{Name: "n_val", Default: LightyearNVal, Lo: 1, Hi: 1 << 20, Whole: true},
		{Name: "include_self", Default: 0, Lo: 0, Hi: 1, Whole: true},
	},
	build: func(p Params, o Values) (Strategy, error) {
		score := cmp.Or(p.Score, ScoreNTK)
		if !slices.Contains(ScoreKinds, score) {
			return nil, paramErr("lightyear", "score", fmt.Sprintf("%q", p.Score), "want one of "+strings.Join(ScoreKinds, ", "))
		}
		return &Lightyear{Tau: o["tau"], G: o["g"], NVal: int(o["n_val"]), Score: score, IncludeSelf: o["include_self"] == 1}, nil
	},
}

// Lightyear is LIGHTYEAR (the LIGHTYEAR paper): after one local epoch the node
// sends its model; it scores every received model against its own on the
// first NVal samples of its validation split, keeps the set S of senders
// with score ≥ Tau, and moves towards the kept models with weight G^t
// (t the 0-based round). By default this is the paper's Eq. 17 (§4.7):
//
//	θ_i ← θ_i + G^t · (1/|S|) Σ_{j∈S} (θ_j − θ_i),
//
// so sender j ∈ S gets weight G^t / |S| and the node's own model 1 − G^t.
// With IncludeSelf it is the authors' public code, which averages the own
// model in as well:
//
//	avg = (θ_i + Σ_{j∈S} θ_j) / (|S| + 1),   θ_i ← θ_i + G^t (avg − θ_i),
//
// sender j ∈ S getting G^t / (|S| + 1). The two differ most early: at
// t = 0 Eq. 17 replaces θ_i by the mean of S, the authors' code keeps a
// share 1/(|S|+1) of it. An empty S keeps θ_i either way; senders outside
// S get weight 0. Whatever kind it selects by, every Combine computes every
// score of ScoreKinds for every sender (one forward pass per model serves
// the function-space kinds, each then a few n×n kernels; cosine is one
// pass over the parameters), so a run records how each would have
// separated the senders (Scores).
//
// A peer model whose outputs on the validation samples are not finite
// scores 0 in function space; non-finite parameter vectors get weight 0
// without being scored (peerInputs).
type Lightyear struct {
	Tau, G float64
	NVal   int
	// Score is the kind that selects, one of ScoreKinds.
	Score string
	// IncludeSelf selects the authors' aggregation (own model in the
	// average) instead of the paper's Eq. 17.
	IncludeSelf bool

	p             peerInputs
	own, peer     agreement.Outputs
	ownK, peerK   agreement.Kernel
	ownKL, peerKL agreement.Kernel // logits variant
	ownKC, peerKC agreement.ClassKernels
	scores        []PeerScore
}

func (*Lightyear) Name() string { return "lightyear" }

// AsyncInputs: LIGHTYEAR is defined for asynchronous inputs (its row's
// Async).
func (*Lightyear) AsyncInputs() bool { return true }

// Share sends the trained model to every out-neighbor.
func (*Lightyear) Share(v *View) []Outgoing { return shareModel(v) }

// Scores returns the scores of the last Combine: per sender in id order,
// every kind in ScoreKinds order. The slice is reused by the next
// Combine.
func (l *Lightyear) Scores() []PeerScore { return l.scores }

// Combine scores, selects and aggregates.
func (l *Lightyear) Combine(v *View, in []Incoming) (map[int]float64, error) {
	sel := slices.Index(ScoreKinds, l.Score)
	if sel < 0 {
		return nil, fmt.Errorf("unknown score %q (valid: %s)", l.Score, strings.Join(ScoreKinds, ", "))
	}
	w := v.Model.Params()
	if err := l.p.gather(in, len(w)); err != nil {
		return nil, err
	}
	l.scores = l.scores[:0]
	if len(l.p.xs) == 0 {
		return l.p.weights(), nil
	}
	if v.Validate == nil {
		return nil, fmt.Errorf("lightyear needs the node's validation data (View.Validate)")
	}
	if err := v.Validate(w, l.NVal, &l.own); err != nil {
		return nil, fmt.Errorf("own model on validation data: %w", err)
	}
	if l.own.N == 0 {
		return nil, fmt.Errorf("the node has no validation samples to score peers on")
	}
	if err := l.ownK.Compute(&l.own); err != nil {
		return nil, err
	}
	if err := l.ownKL.LogitKernel(&l.own); err != nil {
		return nil, err
	}
	if err := l.ownKC.Compute(&l.own); err != nil {
		return nil, err
	}
	ownCal, err := agreement.Calibrate(&l.own)
	if err != nil {
		return nil, err
	}
	kept := 0
	for k, m := range l.p.xs {
		var s [6]float64 // in ScoreKinds order
		s[2] = agreement.Cosine(w, m.Vector)
		// A peer model that cannot be evaluated (non-finite outputs) agrees
		// with nothing in function space.
		if v.Validate(m.Vector, l.NVal, &l.peer) == nil && l.peer.N == l.own.N {
			if l.peerK.Compute(&l.peer) == nil {
				s[0] = agreement.CKA(&l.ownK, &l.peerK)
				s[4] = agreement.Alignment(&l.ownK, &l.peerK)
			}
			if c, err := agreement.Calibrate(&l.peer); err == nil {
				s[1] = agreement.CalibrationScore(ownCal, c)
			}
			if l.peerKL.LogitKernel(&l.peer) == nil {
				s[3] = agreement.CKA(&l.ownKL, &l.peerKL)
			}
			if l.peerKC.Compute(&l.peer) == nil {
				s[5] = agreement.ClasswiseCKA(&l.ownKC, &l.peerKC)
			}
		}
		for i, kind := range ScoreKinds {
			l.scores = append(l.scores, PeerScore{From: m.From, Kind: kind, Value: s[i]})
		}
		if s[sel] >= l.Tau {
			l.p.coef[k] = 1 // marked; the weight is set below
			kept++
		}
	}
	if kept == 0 {
		return l.p.weights(), nil // spec: empty S keeps θ_i
	}
	den := float64(kept) // Eq. 17: the mean of S
	if l.IncludeSelf {
		den++ // the authors' code: the own model is one more term
	}
	c := math.Pow(l.G, float64(v.Round)) / den
	for k := range l.p.coef {
		if l.p.coef[k] != 0 {
			l.p.coef[k] = c
		}
	}
	return l.p.apply(w), nil
}
