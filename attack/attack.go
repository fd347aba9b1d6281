package attack

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/trellis-fl/trellis/nn"
)

// View is what the adversary sees in a round, built by the driver; honest
// code never sees it.
type View struct {
	Round int
	// Honest holds the honest payloads of this round in sender-id order
	// (omniscient attacks).
	Honest [][]float32
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
// attack reads its own and ignores the rest.
type Params struct {
	// Sigma is gaussian's noise standard deviation σ_n, in (0, MaxSigma];
	// the spec sets it per experiment, so it has no default.
	Sigma float64
	// Replace makes gaussian send the noise alone, N(0, σ_n² I), instead of
	// the honest vector plus noise.
	Replace bool
	// Scale is scaling's factor s, in [−MaxScale, MaxScale]; 0 means the
	// spec's default DefaultScale.
	Scale float64
	// Model is the architecture random draws fresh models of; required for
	// random.
	Model *nn.Spec
}

// Bounds of the parameters.
const (
	// MaxSigma keeps σ·N(0, 1) inside float32 range: rand's NormFloat64
	// never exceeds 15 in magnitude.
	MaxSigma = 1e30
	// MaxScale keeps s·b finite for any honest value below 3e8.
	MaxScale = 1e30
	// DefaultScale is the spec's s.
	DefaultScale = 10
)

// ErrLength is wrapped by Craft when dst, the honest vector or a model
// disagree on length.
var ErrLength = errors.New("length mismatch")

// names lists the attacks New accepts, in the order of spec/robust-rules.md.
var names = []string{"none", "gaussian", "sign_flip", "scaling", "random"}

// Names returns the attack names New accepts.
func Names() []string { return append([]string(nil), names...) }

// New returns the attack called name with its parameters from p, after
// checking them.
func New(name string, p Params) (Attack, error) {
	var a Attack
	switch name {
	case "none":
		a = None{}
	case "gaussian":
		a = Gaussian{Sigma: p.Sigma, Replace: p.Replace}
	case "sign_flip":
		a = SignFlip{}
	case "scaling":
		a = Scaling{S: p.Scale}
	case "random":
		if p.Model == nil {
			return nil, fmt.Errorf("attack random: Model (the architecture to draw) is required")
		}
		return NewRandom(*p.Model)
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
