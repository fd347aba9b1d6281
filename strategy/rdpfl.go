package strategy

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
	"github.com/trellis-fl/trellis/vec"
)

// R-DPFL's defaults (the R-DPFL paper, Algorithm 2 and Eq. 16).
const (
	RDPFLLambda = 0.01 // collaboration weight λ (the paper's default)
	RDPFLG      = 1.0  // global update coefficient g
	RDPFLGd     = 10.0 // bound G_d on the neighborhood term (the paper gives none)
	RDPFLWarmup = 5    // warm-up rounds W before Barzilai–Borwein prediction
	RDPFLA      = 0.9  // threshold memory a
	RDPFLC      = 1.5  // threshold multiplier c
	RDPFLTau0   = 1.0  // initial threshold τ⁰
	// RDPFLBetaMax clamps the Barzilai–Borwein coefficient to [−10, 10].
	RDPFLBetaMax = 10.0
	rdpflEps     = 1e-8
)

// RDPFLRules are the robust rules R-DPFL's neighborhood direction may use
// (the R-DPFL paper, Algorithm 2).
var RDPFLRules = []string{"mean", "median", "trimmed_mean", "geometric_median"}

var rdpflRow = Row{
	Name:         "rdpfl",
	Personalized: true,
	Summary:      "R-DPFL: a robust neighbourhood direction, predicted from history and clipped around the prediction",
	Rule:         true,
	F:            true,
	Ablations:    true,
	Options: []Option{
		{Name: "lambda", Default: RDPFLLambda, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "g", Default: RDPFLG, Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true},
		{Name: "gd", Default: RDPFLGd, Lo: 0, Hi: math.Inf(1), LoOpen: true}, // inf: no bound
		{Name: "gd_relative", Default: 0, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "warmup", Default: RDPFLWarmup, Lo: 1, Hi: 1e6, Whole: true},
		{Name: "a", Default: RDPFLA, Lo: 0, Hi: 1, HiOpen: true},
		{Name: "c", Default: RDPFLC, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "tau0", Default: RDPFLTau0, Lo: 0, Hi: math.Inf(1), HiOpen: true},
		{Name: "literal", Default: 0, Lo: 0, Hi: 1, Whole: true}, // 1: Eq. 16 as printed (RDPFL.Literal)
	},
	build: func(p Params, o Values) (Strategy, error) {
		rule := p.Rule
		if rule == "" {
			rule = "trimmed_mean"
		}
		s, err := NewRDPFL(rule)
		if err != nil {
			return nil, err
		}
		if spec, _ := aggregate.ParseSpec(rule); p.F != nil && !spec.TakesF() {
			return nil, paramErr("rdpfl", "f", *p.F, fmt.Sprintf("rule %q takes no f (of rdpfl's rules only trimmed_mean has one)", rule))
		}
		s.F = p.F
		s.Lambda, s.G, s.Gd, s.GdRelative = o["lambda"], o["g"], o["gd"], o["gd_relative"]
		s.Warmup, s.A, s.C, s.Tau0 = int(o["warmup"]), o["a"], o["c"], o["tau0"]
		s.NoPrediction, s.NoClipping = p.NoPrediction, p.NoClipping
		s.Literal = o["literal"] == 1
		return s, nil
	},
}

// RDPFL is the prediction-constrained neighborhood collaboration of
// the R-DPFL paper. Nodes exchange local directions u = (w^{t−1} − w~^t)/(ηK)
// — the average stochastic gradient of the round's K local steps — not
// models. Each node robustly aggregates its neighbors' directions into
// dbar, predicts it from history (Barzilai–Borwein after a warm-up), clips
// the deviation from the prediction to an adaptive threshold built from
// past deviations only, bounds the result by G_d and takes the descent step
// w^t = w^{t−1} − g·η·K·(u + λ·d).
//
// State across rounds is Algorithm 2's: w^{t−2} (w^{t−1} is the node's
// start-of-round model, View.Start), dbar^{t−1}, dbar^{t−2}, the threshold
// and the last deviation norm; plus the buffer u is sent from. The
// prediction dhat and the clipped direction d are never stored: they are
// recomputed coordinate by coordinate in the passes that need them.
//
// Choices recorded (docs/methods/rdpfl.md): R-DPFL uses the descent form
// w ← w_prev − g·ηK·(u + λd) this project fixes (the paper's Algorithm 1
// ascends); η is the optimizer's learning rate and K the steps local
// training took (View.LR, View.Steps). Round t of the paper is
// View.Round + 1. With no neighbor direction d = 0 and dbar's history,
// the threshold and the last deviation stay as they were; w_{t−2} is
// still advanced. The prediction uses dbar^{t−1} whenever fewer than two
// past aggregates exist, even after the warm-up. trimmed_mean's f
// defaults to ⌊(|U|−1)/2⌋ and is always capped so that 2f < |U|. The
// weights reported are each sender's share in dbar (the rule's
// Selector weights), not in the final model. With g = 1 the update is
// computed as w~ − ηKλd, so λ = 0 leaves the locally trained model bit
// for bit.
type RDPFL struct {
	// Rule is the robust neighborhood rule: one of RDPFLRules.
	Rule string
	// F is trimmed_mean's f; nil means floor((|U|−1)/2). Either way it is
	// capped so that 2f < |U| (Algorithm 2).
	F *int
	// Lambda is λ, G the global coefficient g, Gd the bound G_d and
	// GdRelative, when positive, the bound as a multiple of ||u||.
	Lambda, G, Gd, GdRelative float64
	// Warmup is W; A, C and Tau0 the threshold recursion's a, c, τ⁰.
	Warmup     int
	A, C, Tau0 float64
	// NoPrediction and NoClipping are the paper's ablations (Table III):
	// dhat = 0, and d~ = dbar.
	NoPrediction, NoClipping bool
	// Literal takes the paper's Eq. 16 as printed, w^t = w^{t−1} − γ_t u^t
	// (+ λ d^t), with γ_t u^t the round's local training (γ_t = ηK, so the
	// local part is unchanged) and λ acting on d directly, with the
	// descent sign: w^t = w^{t−1} − g·(ηK·u + λ·d). The default descent
	// form scales λ by ηK as well (the theorem's w − γ(u + λd)); the two
	// agree when ηK = 1.
	Literal bool

	rules   map[int]aggregate.Rule // by f (trimmed_mean) or 0
	u       []float32              // this round's own direction, sent
	uNorm   float64
	etaK    float64
	wPrev2  []float32 // w^{t−2}
	haveW2  bool
	dbar1   []float32 // dbar^{t−1}
	dbar2   []float32 // dbar^{t−2}; the aggregation output buffer
	nDbar   int       // past aggregates held (0, 1 or 2)
	tau     float64   // τ^{t−1}
	devNorm float64   // ||Δ^{t−1}||
	started bool
	xs      [][]float32
	from    []int
	stats   RDPFLRound
}

// RDPFLRound is what one Combine computed, for tests and diagnostics.
type RDPFLRound struct {
	// Empty is set when no neighbor direction arrived (d = 0).
	Empty bool
	// Beta is the Barzilai–Borwein coefficient used (0 outside prediction).
	Beta float64
	// Predicted says which prediction was used: "none" (ablation), "self"
	// (t = 1: dhat = dbar), "previous" (warm-up: dbar^{t−1}) or "bb".
	Predicted string
	// DevNorm is ||Δ^t||, Tau the threshold τ^t, ClipFactor the factor the
	// adaptive clip scaled Δ by, GdFactor the one the final clip scaled d~
	// by and DNorm ||d^t||.
	DevNorm, Tau, ClipFactor, GdFactor, DNorm float64
}

// NewRDPFL returns R-DPFL with the paper's defaults and the given rule.
func NewRDPFL(rule string) (*RDPFL, error) {
	if !slices.Contains(RDPFLRules, rule) {
		return nil, paramErr("rdpfl", "rule", fmt.Sprintf("%q", rule), "not allowed (valid: "+strings.Join(RDPFLRules, ", ")+")")
	}
	return &RDPFL{Rule: rule, Lambda: RDPFLLambda, G: RDPFLG, Gd: RDPFLGd, Warmup: RDPFLWarmup,
		A: RDPFLA, C: RDPFLC, Tau0: RDPFLTau0}, nil
}

func (s *RDPFL) Name() string { return "rdpfl/" + s.Rule }

// Last returns what the last Combine computed.
func (s *RDPFL) Last() RDPFLRound { return s.stats }

// StateBytes is the memory the strategy keeps across rounds and for
// sending: w^{t−2}, dbar^{t−1}, dbar^{t−2} and u.
func (s *RDPFL) StateBytes() int {
	return 4 * (cap(s.wPrev2) + cap(s.dbar1) + cap(s.dbar2) + cap(s.u))
}

// Share sends the local direction u = (w^{t−1} − w~^t)/(ηK) (the R-DPFL paper, §III-B),
// with K the steps local training actually took. A round without a step
// sends zeros.
func (s *RDPFL) Share(v *View) []Outgoing {
	return []Outgoing{{To: Broadcast, Tag: TagDirection, Vector: s.direction(v.Start, v.Model.Params(), v.LR, v.Steps)}}
}

// direction computes u from the start-of-round and trained parameters.
func (s *RDPFL) direction(start, w []float32, lr float64, steps int) []float32 {
	s.u = resize(s.u, len(w))
	s.etaK = lr * float64(steps)
	if s.etaK > 0 {
		vec.Sub(s.u, start, w)
		vec.Scale(float32(1/s.etaK), s.u)
	} else {
		vec.Fill(s.u, 0)
	}
	s.uNorm = vec.Norm(s.u)
	return s.u
}

// Combine computes d^t from the neighbors' directions and applies the
// personalized update (Algorithm 2 and Eq. 16).
func (s *RDPFL) Combine(v *View, in []Incoming) (map[int]float64, error) {
	return s.combine(v.Round, v.Start, v.Model.Params(), in)
}

// combine is Combine on round r (0-based) with the start-of-round
// parameters start and the trained ones w, which it updates in place.
func (s *RDPFL) combine(r int, start, w []float32, in []Incoming) (map[int]float64, error) {
	n := len(w)
	got, err := withTag(in, TagDirection, n)
	if err != nil {
		return nil, err
	}
	if !s.started {
		s.tau, s.started = s.Tau0, true
	}
	if len(s.u) != n { // Combine without Share: u from this round's models, η·K unknown
		s.direction(start, w, 0, 0)
	}
	s.stats = RDPFLRound{Empty: len(got) == 0, Tau: s.tau}
	if len(got) == 0 {
		// d = 0; the state that needs dbar^t is kept (Algorithm 2).
		s.update(start, w, nil)
		s.remember(start)
		return nil, nil
	}
	t := r + 1 // the paper counts rounds from 1

	// Prediction coefficients, before dbar^{t−2}'s buffer is reused.
	mode := s.predictionMode(t)
	beta := 0.0
	if mode == "bb" {
		var ss, sy float64
		for j := range n {
			sj := float64(start[j]) - float64(s.wPrev2[j])
			ss += sj * sj
			sy += sj * (float64(s.dbar1[j]) - float64(s.dbar2[j]))
		}
		beta = max(-RDPFLBetaMax, min(RDPFLBetaMax, sy/(ss+rdpflEps)))
	}

	// dbar^t = RobustAgg(U^t), into the buffer of dbar^{t−2}.
	s.dbar2 = resize(s.dbar2, n)
	dbar := s.dbar2
	weights, err := s.aggregate(dbar, got)
	if err != nil {
		return nil, err
	}

	p := predictor{mode: mode, beta: beta, dbar: dbar, dbar1: s.dbar1, start: start, wPrev2: s.wPrev2}
	var dev2 float64
	for j := range n {
		d := float64(dbar[j]) - p.at(j)
		dev2 += d * d
	}
	devNorm := math.Sqrt(dev2)
	// τ^t from Δ^{t−1} only (the paper's eq. 15).
	s.tau = s.A*s.tau + (1-s.A)*s.C*s.devNorm
	cf := 1.0
	if !s.NoClipping {
		cf = min(1, s.tau/(devNorm+rdpflEps))
	}
	var dt2 float64
	for j := range n {
		d := p.tilde(j, cf, s.NoClipping)
		dt2 += d * d
	}
	gd := s.Gd
	if s.GdRelative > 0 {
		gd = s.GdRelative * s.uNorm
	}
	gf := min(1, gd/(math.Sqrt(dt2)+rdpflEps))
	s.stats = RDPFLRound{Beta: beta, Predicted: mode, DevNorm: devNorm, Tau: s.tau,
		ClipFactor: cf, GdFactor: gf, DNorm: gf * math.Sqrt(dt2)}
	s.update(start, w, func(j int) float64 { return gf * p.tilde(j, cf, s.NoClipping) })

	s.devNorm = devNorm
	s.dbar1, s.dbar2 = s.dbar2, s.dbar1
	s.nDbar = min(2, s.nDbar+1)
	s.remember(start)
	return weights, nil
}

// predictionMode picks dhat's formula for round t from the history held.
func (s *RDPFL) predictionMode(t int) string {
	switch {
	case s.NoPrediction:
		return "none"
	case s.nDbar == 0:
		return "self"
	case t <= s.Warmup || s.nDbar < 2 || !s.haveW2:
		return "previous"
	default:
		return "bb"
	}
}

// predictor evaluates dhat^t and d~^t coordinate by coordinate.
type predictor struct {
	mode                       string
	beta                       float64
	dbar, dbar1, start, wPrev2 []float32
}

// at is dhat^t_j.
func (p *predictor) at(j int) float64 {
	switch p.mode {
	case "none":
		return 0
	case "self":
		return float64(p.dbar[j])
	case "previous":
		return float64(p.dbar1[j])
	default:
		return float64(p.dbar1[j]) + p.beta*(float64(p.start[j])-float64(p.wPrev2[j]))
	}
}

// tilde is d~^t_j = dhat_j + cf·Δ_j, or dbar_j without clipping.
func (p *predictor) tilde(j int, cf float64, noClip bool) float64 {
	if noClip {
		return float64(p.dbar[j])
	}
	h := p.at(j)
	return h + cf*(float64(p.dbar[j])-h)
}

// update sets w^t = w^{t−1} − g·ηK·(u + λd) (Literal: − g·(ηK·u + λd));
// with g = 1 this is w~^t − ηKλd (w~^t − λd), computed in that form so
// λ = 0 (or d = nil) leaves the locally trained model bit for bit.
func (s *RDPFL) update(startW, w []float32, d func(int) float64) {
	coef := s.G * s.etaK * s.Lambda
	if s.Literal {
		coef = s.G * s.Lambda
	}
	if s.G == 1 {
		if d == nil || coef == 0 {
			return
		}
		for j := range w {
			w[j] = float32(float64(w[j]) - coef*d(j))
		}
		return
	}
	for j := range w {
		w0 := float64(startW[j])
		x := w0 - s.G*(w0-float64(w[j]))
		if d != nil && coef != 0 {
			x -= coef * d(j)
		}
		w[j] = float32(x)
	}
}

// remember keeps w^{t−1} as next round's w^{t−2}.
func (s *RDPFL) remember(start []float32) {
	s.wPrev2 = resize(s.wPrev2, len(start))
	copy(s.wPrev2, start)
	s.haveW2 = true
}

// aggregate writes RobustAgg(U) into dst and returns each sender's share
// in it, from the rule's Selector weights.
func (s *RDPFL) aggregate(dst []float32, got []Incoming) (map[int]float64, error) {
	k := len(got)
	f := 0
	if spec, err := aggregate.ParseSpec(s.Rule); err == nil && spec.TakesF() { // trimmed_mean
		f = (k - 1) / 2
		if s.F != nil {
			f = *s.F
		}
		f = max(0, min(f, (k-1)/2)) // 2f < |U|
	}
	if s.rules == nil {
		s.rules = map[int]aggregate.Rule{}
	}
	r, ok := s.rules[f]
	if !ok {
		var err error
		if r, err = aggregate.New(s.Rule, f); err != nil {
			return nil, fmt.Errorf("rdpfl: %w", err)
		}
		s.rules[f] = r
	}
	s.xs, s.from = s.xs[:0], s.from[:0]
	for _, m := range got {
		s.xs, s.from = append(s.xs, m.Vector), append(s.from, m.From)
	}
	if err := r.Aggregate(dst, s.xs); err != nil {
		return nil, fmt.Errorf("rdpfl %s over %d directions: %w", s.Rule, k, err)
	}
	weights := make(map[int]float64, k)
	var used []float64
	if sel, ok := r.(aggregate.Selector); ok {
		used = sel.Weights()
	}
	for i, id := range s.from {
		if used != nil {
			weights[id] = used[i]
		} else {
			weights[id] = 1 / float64(k)
		}
	}
	return weights, nil
}
