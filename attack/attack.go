package attack

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/trellis-fl/trellis/nn"
)

// View is what the adversary sees in a round, built by the driver; honest
// code never sees it.
//
// A View remembers statistics of Honest (mean, spread, extremes, pairwise
// distances) and the vectors of the deterministic omniscient attacks the
// first time an attack needs them, so every Craft against one View after the
// first costs one copy: a driver builds one View per round and payload tag,
// shares it among all Byzantine nodes and receivers, and never modifies it
// after the first Craft. Use it through a pointer (it holds a mutex, so
// Crafts may run concurrently) and build a new one for the next round.
type View struct {
	Round int
	// Honest holds the honest payloads of this round in sender-id order
	// (omniscient attacks), all of the length of the payloads crafted.
	Honest [][]float32
	// Senders is n of alie's z_max: how many nodes send a payload of this
	// round and tag, honest and Byzantine together. 0 means
	// len(Honest) + Attackers.
	Senders int
	// Attackers is m of alie's z_max: how many of those senders are
	// Byzantine (colluding; all run the same attack).
	Attackers int
	// Tag is the payload tag of Honest ("model", "update", ...), set by the
	// driver: fang_trim reads from it whether the payloads are models (the
	// direction is their change since Previous) or already changes. ""
	// means changes (updates).
	Tag string
	// From lists the senders of Honest, in the same order, and In the
	// in-neighbors of a receiver this round (sorted); both set by the
	// driver for attacks that target each receiver's own neighborhood
	// (adaptive_receiver). Nil when the driver has no graph.
	From []int
	In   func(to int) []int
	// Previous is the same tag's View of the previous round, for attacks
	// that use history (adaptive); nil in the first round. The driver
	// Settles it, so only its statistics remain, not its payloads.
	Previous *View

	settled *moments // Honest's moments, kept by Settle
	mu      sync.Mutex
	cache   map[string]*memoEntry // statistics and crafted vectors, by key
}

// Attack crafts what Byzantine node from sends to node to, given its own
// honest payload. It writes into dst (len(dst) == len(honest); dst may be
// honest itself). rng is the attack's stream for (seed, from, round); v may
// be nil for attacks that do not read it.
type Attack interface {
	// Name is the attack's config name ("gaussian", "sign_flip", ...).
	Name() string
	Craft(dst []float32, v *View, honest []float32, from, to int, rng *rand.Rand) error
}

// Params are the parameters of every attack, as configs give them; each
// attack reads its own and ignores the rest. A zero value means the
// default where there is one.
type Params struct {
	// Sigma is gaussian's noise standard deviation σ_n, in (0, MaxSigma];
	// each experiment sets it, so it has no default.
	Sigma float64
	// Replace makes gaussian send the noise alone, N(0, σ_n² I), instead of
	// the honest vector plus noise.
	Replace bool
	// Scale is scaling's factor s, in [−MaxScale, MaxScale]; 0 means the
	// default, DefaultScale.
	Scale float64
	// Model is the architecture random draws fresh models of; required for
	// random.
	Model *nn.Spec
	// Percent is ana_proportional's s, in (0, MaxScale]: the noise on each
	// coordinate has standard deviation s/100 of the coordinate's
	// magnitude. Each experiment sets it, so it has no default.
	Percent float64
	// Z is alie's fixed z, in [−MaxScale, MaxScale]; 0 means z_max, from
	// the View's Senders and Attackers.
	Z float64
	// Minus makes alie send μ − zσ instead of μ + zσ.
	Minus bool
	// Epsilon is ipm's ε and adaptive's (and adaptive_receiver's) e, in
	// (0, MaxScale]; 0 means
	// DefaultEpsilon.
	Epsilon float64
	// Perturbation is min_max's and min_sum's direction p: "unit_vec"
	// (μ/||μ||, the default for ""), "std" (the sample standard deviation
	// σ) or "sign" (sign(μ)).
	Perturbation string
	// GammaInit is min_max's and min_sum's γ_init, in (0, MaxGammaInit]; 0
	// means DefaultGammaInit. The search never accepts γ ≥ 2·γ_init.
	GammaInit float64
	// B is fang_trim's b, in (1, MaxScale]; 0 means DefaultB.
	B float64
}

// Bounds and defaults of the parameters.
const (
	// MaxSigma keeps σ·N(0, 1) inside float32 range: rand's NormFloat64
	// never exceeds 15 in magnitude.
	MaxSigma = 1e30
	// MaxScale keeps s·b finite for any honest value below 3e8; it bounds
	// the other multiplicative parameters (Percent, Z, Epsilon, B) too.
	MaxScale = 1e30
	// MaxGammaInit keeps the γ search of min_max and min_sum within 200
	// halvings.
	MaxGammaInit = 1e30
	// DefaultScale is the default s of scaling.
	DefaultScale = 10
	// DefaultEpsilon is the default ε of ipm.
	DefaultEpsilon = 0.1
	// DefaultGammaInit is the default γ_init of min_max and min_sum.
	DefaultGammaInit = 10
	// DefaultB is the default b of fang_trim.
	DefaultB = 2
)

// ErrLength is wrapped by Craft when dst, the honest vector or a model
// disagree on length.
var ErrLength = errors.New("length mismatch")

// names lists the attacks New accepts, in the order of docs/methods/toolbox.md.
var names = []string{
	"none", "gaussian", "sign_flip", "scaling", "random", "ana_proportional",
	"alie", "ipm", "min_max", "min_sum", "fang_trim", "label_flip",
	// R-DPFL's defense-aware attack on directions (the R-DPFL paper).
	"adaptive", "adaptive_receiver",
	// LIGHTYEAR's malfunctions (the LIGHTYEAR paper): ana is gaussian (θ + ε,
	// ε ~ N(0, σ²I)), sfa is sign_flip (−aθ, a = 1), under the paper's
	// names; dynamic picks one of ana, sfa, random per round.
	"ana", "sfa", "dynamic",
	// Gaussian noise at the honest norm (the norm-gate ablation).
	"gaussian_norm",
}

// aliases are the paper names of attacks that exist under another name;
// the attack reports its own name.
var aliases = map[string]string{"ana": "gaussian", "sfa": "sign_flip"}

// Names returns the attack names New accepts.
func Names() []string { return append([]string(nil), names...) }

// New returns the attack called name with its parameters from p, after
// checking them.
func New(name string, p Params) (Attack, error) {
	var a Attack
	switch name {
	case "none":
		a = None{}
	case "gaussian", "ana":
		a = Gaussian{Sigma: p.Sigma, Replace: p.Replace}
	case "gaussian_norm":
		a = GaussianNorm{Sigma: p.Sigma}
	case "dynamic":
		return newDynamic(p)
	case "sign_flip", "sfa":
		a = SignFlip{}
	case "scaling":
		a = Scaling{S: p.Scale}
	case "random":
		if p.Model == nil {
			return nil, fmt.Errorf("attack random: Model (the architecture to draw) is required")
		}
		return NewRandom(*p.Model)
	case "ana_proportional":
		a = AnaProportional{Percent: p.Percent}
	case "alie":
		a = ALIE{Z: p.Z, Minus: p.Minus}
	case "ipm":
		a = IPM{Epsilon: p.Epsilon}
	case "min_max":
		a = MinMax{Perturbation: Perturbation(p.Perturbation), GammaInit: p.GammaInit}
	case "min_sum":
		a = MinSum{Perturbation: Perturbation(p.Perturbation), GammaInit: p.GammaInit}
	case "fang_trim":
		a = FangTrim{B: p.B}
	case "label_flip":
		a = LabelFlip{}
	case "adaptive":
		a = Adaptive{E: p.Epsilon}
	case "adaptive_receiver":
		a = AdaptiveReceiver{E: p.Epsilon}
	default:
		return nil, fmt.Errorf("attack: unknown attack %q (valid: %s)", name, strings.Join(names, ", "))
	}
	if c, ok := a.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// checkLen reports a dst whose length differs from the honest vector's.
func checkLen(name string, dst, honest []float32) error {
	if len(dst) != len(honest) {
		return fmt.Errorf("attack %s: %w: dst has length %d, honest vector %d", name, ErrLength, len(dst), len(honest))
	}
	return nil
}
