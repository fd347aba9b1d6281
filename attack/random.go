package attack

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/trellis-fl/trellis/nn"
)

// Random sends the parameters of a freshly initialized model of a given
// architecture ("random" in docs/methods/toolbox.md, model exchanges only), drawn with nn's
// initialization (PyTorch's defaults) from a seed taken from rng: a peer
// that never trained. It assumes knowledge of the model architecture, which
// every participant shares, and nothing else; the honest vector only fixes
// the length.
//
// Random keeps one model, built once, and redraws its parameters for each
// Craft; a mutex makes it safe for concurrent use.
type Random struct {
	mu sync.Mutex
	m  *nn.Model
}

// NewRandom returns the random attack for models of spec.
func NewRandom(spec nn.Spec) (*Random, error) {
	m, err := nn.Build(spec, 0, nn.Options{Batch: 1})
	if err != nil {
		return nil, fmt.Errorf("attack random: %w", err)
	}
	return &Random{m: m}, nil
}

// Name implements Attack.
func (*Random) Name() string { return "random" }

// NumParams is the length of the vectors Random crafts.
func (r *Random) NumParams() int { return r.m.NumParams() }

// Craft implements Attack. It takes one rng.Uint64 as the model's seed.
func (r *Random) Craft(dst []float32, _ *View, honest []float32, _, _ int, rng *rand.Rand) error {
	if r.m == nil {
		return fmt.Errorf("attack random: not built (use NewRandom or New)")
	}
	if err := checkLen("random", dst, honest); err != nil {
		return err
	}
	if n := r.m.NumParams(); len(dst) != n {
		return fmt.Errorf("attack random: %w: payload has length %d, the model %d parameters", ErrLength, len(dst), n)
	}
	if rng == nil {
		return fmt.Errorf("attack random: needs a random stream, got nil")
	}
	seed := rng.Uint64()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m.Init(seed)
	copy(dst, r.m.Params())
	return nil
}
