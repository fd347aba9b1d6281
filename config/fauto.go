package config

import (
	"fmt"
	"strconv"

	"github.com/trellis-fl/trellis/aggregate"
)

// FSetting is strategy.f, the number of faulty inputs a rule tolerates:
// a count, or "auto" (the default), which robust resolves from the
// declared Byzantine fraction at every aggregation (aggregate.Auto); for the
// other strategies that take an f (scclip, clipped_gossip, rdpfl's
// trimmed mean) "auto" is their default.
type FSetting struct {
	Auto  bool
	Count int
}

// AutoF is the default strategy.f.
func AutoF() *FSetting { return &FSetting{Auto: true} }

// FCount is an explicit strategy.f.
func FCount(n int) *FSetting { return &FSetting{Count: n} }

// UnmarshalTOML implements toml.Unmarshaler: an integer or "auto".
func (f *FSetting) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		*f = FSetting{Count: int(x)}
		return nil
	case string:
		if x == "auto" {
			*f = FSetting{Auto: true}
			return nil
		}
		if n, err := strconv.Atoi(x); err == nil {
			*f = FSetting{Count: n}
			return nil
		}
	}
	return fmt.Errorf("strategy.f = %v: want a whole number ≥ 0 or \"auto\"", v)
}

// MarshalTOML implements toml.Marshaler.
func (f FSetting) MarshalTOML() ([]byte, error) {
	if f.Auto {
		return []byte(`"auto"`), nil
	}
	return []byte(strconv.Itoa(f.Count)), nil
}

func (f FSetting) String() string {
	if f.Auto {
		return "auto"
	}
	return strconv.Itoa(f.Count)
}

// ExplicitF is strategy.f when it is a count.
func (c Config) ExplicitF() (int, bool) {
	if c.Strategy.F == nil || c.Strategy.F.Auto {
		return 0, false
	}
	return c.Strategy.F.Count, true
}

// RobustSpec is robust's rule string parsed; ok is false when the run is
// not robust or the rule string does not parse (Validate says why).
func (c Config) RobustSpec() (aggregate.Spec, bool) {
	if c.Strategy.Name != "robust" {
		return aggregate.Spec{}, false
	}
	s, err := aggregate.ParseSpec(c.Strategy.Rule)
	return s, err == nil
}

// RobustTakesF reports whether the run is robust with a rule that has an f.
func (c Config) RobustTakesF() bool {
	s, ok := c.RobustSpec()
	return ok && s.TakesF()
}

// DeclaredFraction is the Byzantine fraction the defenders are told: the
// configured fraction, or the share of the nodes adversary.ids names
// (each counted once, as adversary.Choose counts them). It is what f = "auto" derives from; the real number of Byzantine neighbours of a node
// is whatever the placement gives (recorded in the manifest), so a
// defender that underestimates f stays expressible with an explicit f.
func (c Config) DeclaredFraction() float64 {
	if len(c.Adversary.IDs) > 0 && c.Nodes > 0 {
		return float64(c.byzantineCount()) / float64(c.Nodes)
	}
	return c.Adversary.Fraction
}
