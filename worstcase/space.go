package worstcase

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Param is an attack's continuous parameter: the adversary key it sets
// and its meaningful range. A Log parameter is searched in log |value|
// (its scale matters, not its units); a Negative one takes the values
// −value, so that a range of negative scales is searched like a positive
// one.
type Param struct {
	Key      string // adversary key: "z", "sigma", …
	Lo, Hi   float64
	Log      bool
	Negative bool
}

// u maps a parameter value to the coordinate the grid spreads evenly and
// the refinement brackets: log |v| for a Log parameter, v otherwise.
func (p Param) u(v float64) float64 {
	if p.Log {
		return math.Log(math.Abs(v))
	}
	return v
}

// value is u's inverse, rounded to 4 significant digits: every evaluated
// value is a short decimal, the same in the run's config and its
// directory name.
func (p Param) value(u float64) float64 {
	v := u
	if p.Log {
		v = math.Exp(u)
		if p.Negative {
			v = -v
		}
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}

// span is the parameter's range in u.
func (p Param) span() (lo, hi float64) {
	lo, hi = p.u(p.Lo), p.u(p.Hi)
	return min(lo, hi), max(lo, hi)
}

// grid is n values spread evenly in u over the range, ends included, in
// increasing u.
func (p Param) grid(n int) []float64 {
	lo, hi := p.span()
	vs := make([]float64, n)
	for i := range vs {
		vs[i] = p.value(lo + (hi-lo)*float64(i)/float64(n-1))
	}
	return vs
}

// Setting is one attack as the search varies it: an attack of the
// catalogue with its discrete choices fixed (ALIE's sign, min-max's
// direction, a topology liar) and at most one continuous parameter.
type Setting struct {
	// Family is the attack's catalogue name; settings of one family are
	// reported together, at the family's worst point.
	Family string
	// Name tells the setting apart within the search, and names its
	// directories: the family and its discrete choices ("alie-minus",
	// "min_max-std-liar_omission").
	Name string
	// Keys are the adversary keys the setting fixes, "attack" included.
	Keys  map[string]any
	Param *Param
}

// Describe is the setting's choices as text for tables:
// "minus = true, liar = omission".
func (s Setting) Describe() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Keys)) {
		if k != "attack" {
			parts = append(parts, fmt.Sprintf("%s = %v", k, s.Keys[k]))
		}
	}
	return strings.Join(parts, ", ")
}

// The ranges of the continuous parameters: what a strong attack needs is
// inside, and the ends are attacks every defence sees through (noise far
// larger than any weight) or no attack at all (noise far below the
// honest spread). σ and ε are in the units of the payload's coordinates
// (MNIST MLP weights are of order 0.01–0.1).
var (
	sigmaRange   = Param{Key: "sigma", Lo: 0.01, Hi: 100, Log: true}
	scaleRange   = Param{Key: "scale", Lo: 0.1, Hi: 100, Log: true}
	percentRange = Param{Key: "percent", Lo: 1, Hi: 1000, Log: true}
	// ALIE's z: the paper's z_max for 20 to 100 nodes is about 0.2–1.5;
	// beyond 10 standard deviations the crafted vector is an outlier.
	zRange = Param{Key: "z", Lo: 0.1, Hi: 10, Log: true}
	// IPM's ε: below 1 the mean keeps the honest direction, shrunk;
	// above 1 it reverses.
	epsilonRange = Param{Key: "epsilon", Lo: 0.01, Hi: 100, Log: true}
	// fang_trim's b > 1: how far beyond the honest extremes it goes.
	bRange = Param{Key: "b", Lo: 1.1, Hi: 10, Log: true}
)

// catalogue lists the settings of one attack of the catalogue.
func catalogue(attack string) ([]Setting, error) {
	one := func(name string, keys map[string]any, p *Param) Setting {
		k := map[string]any{"attack": attack}
		maps.Copy(k, keys)
		return Setting{Family: attack, Name: name, Keys: k, Param: p}
	}
	param := func(p Param) *Param { return &p }
	switch attack {
	case "sign_flip", "random", "label_flip":
		return []Setting{one(attack, nil, nil)}, nil
	case "gaussian":
		return []Setting{
			one(attack, map[string]any{"replace": false}, param(sigmaRange)),
			one(attack+"-replace", map[string]any{"replace": true}, param(sigmaRange)),
		}, nil
	case "gaussian_norm", "dynamic":
		return []Setting{one(attack, nil, param(sigmaRange))}, nil
	case "scaling":
		neg := scaleRange
		neg.Lo, neg.Hi, neg.Negative = -scaleRange.Lo, -scaleRange.Hi, true
		return []Setting{one(attack, nil, param(scaleRange)), one(attack+"-negative", nil, param(neg))}, nil
	case "ana_proportional":
		return []Setting{one(attack, nil, param(percentRange))}, nil
	case "alie":
		return []Setting{
			one(attack, map[string]any{"minus": false}, param(zRange)),
			one(attack+"-minus", map[string]any{"minus": true}, param(zRange)),
		}, nil
	case "ipm", "adaptive", "adaptive_receiver":
		return []Setting{one(attack, nil, param(epsilonRange))}, nil
	case "fang_trim":
		return []Setting{one(attack, nil, param(bRange))}, nil
	case "min_max", "min_sum":
		var out []Setting
		for _, p := range []string{"unit_vec", "std", "sign"} {
			out = append(out, one(attack+"-"+p, map[string]any{"perturbation": p}, nil))
		}
		return out, nil
	}
	return nil, fmt.Errorf("the worst-case search has no parameter ranges for attack %q: add it to worstcase.catalogue", attack)
}

// Settings lists the settings of the attacks named (each with the topology
// liars when liars is true: a liar lies about the topology while its
// payloads attack, so each setting also runs with each liar).
func Settings(attacks []string, liars bool) ([]Setting, error) {
	var out []Setting
	for _, a := range attacks {
		ss, err := catalogue(a)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			out = append(out, s)
			if !liars {
				continue
			}
			for _, l := range []string{"omission", "inflation"} {
				t := s
				t.Keys = maps.Clone(s.Keys)
				t.Keys["liar"] = l
				t.Name = s.Name + "-liar_" + l
				out = append(out, t)
			}
		}
	}
	return out, nil
}
