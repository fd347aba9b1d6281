package attack

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/trellis-fl/trellis/vec"
)

// ErrNoView is wrapped by Craft when an omniscient attack gets no View or a
// View without honest payloads.
var ErrNoView = errors.New("no honest payloads in the view")

// honestOf returns the View's honest payloads G after checking that there
// is at least one and that each has length d.
func honestOf(name string, v *View, d int) ([][]float32, error) {
	if v == nil || len(v.Honest) == 0 {
		return nil, fmt.Errorf("attack %s: %w (the driver fills View.Honest with the round's honest payloads)", name, ErrNoView)
	}
	for i, g := range v.Honest {
		if len(g) != d {
			return nil, fmt.Errorf("attack %s: %w: honest payload %d of the view has length %d, the payload crafted %d", name, ErrLength, i, len(g), d)
		}
	}
	return v.Honest, nil
}

// memo returns the value cached in v under key, computing it with f on the
// first call; concurrent callers of one key wait for that computation, and
// f may itself call memo for other keys. The result, error included,
// depends only on the View, so both are kept.
func (v *View) memo(key string, f func() (any, error)) (any, error) {
	v.mu.Lock()
	e, ok := v.cache[key]
	if !ok {
		if v.cache == nil {
			v.cache = map[string]*memoEntry{}
		}
		e = &memoEntry{}
		v.cache[key] = e
	}
	v.mu.Unlock()
	e.once.Do(func() { e.val, e.err = f() })
	return e.val, e.err
}

type memoEntry struct {
	once sync.Once
	val  any
	err  error
}

// moments are per-coordinate statistics of G: the mean μ and the sum of
// squared deviations Σ_i (g_ij − μ_j)², both accumulated in float64 in
// sender order (two passes, so the deviations are not cancelled).
type moments struct {
	k     int // |G|
	mean  []float64
	sqDev []float64
}

// std returns σ_j: the population standard deviation, or with sample the
// (k−1)-normalized one.
func (m *moments) std(j int, sample bool) float64 {
	den := float64(m.k)
	if sample {
		den--
	}
	return math.Sqrt(m.sqDev[j] / den)
}

// momentsOf returns the moments of G (cached in v).
func momentsOf(v *View, g [][]float32) *moments {
	x, _ := v.memo("moments", func() (any, error) {
		d := len(g[0])
		m := &moments{k: len(g), mean: make([]float64, d), sqDev: make([]float64, d)}
		for _, x := range g {
			for j, y := range x {
				m.mean[j] += float64(y)
			}
		}
		for j := range m.mean {
			m.mean[j] /= float64(len(g))
		}
		for _, x := range g {
			for j, y := range x {
				e := float64(y) - m.mean[j]
				m.sqDev[j] += e * e
			}
		}
		return m, nil
	})
	return x.(*moments)
}

// extremesOf returns the per-coordinate minimum and maximum over G (cached
// in v).
func extremesOf(v *View, g [][]float32) (lo, hi []float32) {
	x, _ := v.memo("extremes", func() (any, error) {
		lo, hi := append([]float32(nil), g[0]...), append([]float32(nil), g[0]...)
		for _, x := range g[1:] {
			for j, y := range x {
				lo[j] = min(lo[j], y)
				hi[j] = max(hi[j], y)
			}
		}
		return [2][]float32{lo, hi}, nil
	})
	e := x.([2][]float32)
	return e[0], e[1]
}

// maxPairSqDist returns max_{i,j} ||g_i − g_j||² (cached in v): O(|G|² d),
// the one quadratic cost of min_max, paid once per View.
func maxPairSqDist(v *View, g [][]float32) float64 {
	x, _ := v.memo("maxpair", func() (any, error) {
		var t float64
		for i := range g {
			for j := i + 1; j < len(g); j++ {
				t = max(t, vec.SqDist(g[i], g[j]))
			}
		}
		return t, nil
	})
	return x.(float64)
}

// memoVector returns the vector an attack computes from the View alone
// (cached in v under key, the attack's type and parameters), copying it into
// dst.
func memoVector(v *View, key string, dst []float32, f func(out []float32) error) error {
	x, err := v.memo(key, func() (any, error) {
		out := make([]float32, len(dst))
		if err := f(out); err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	copy(dst, x.([]float32))
	return nil
}
