package trust

import (
	"strings"
	"testing"
)

// TestBetaWorkedValues pins Algorithm 4 to the DMTT paper's worked values.
func TestBetaWorkedValues(t *testing.T) {
	c := DefaultConfig()
	b := NewBeta()
	near(t, "prior R", b.Reputation(), 0.5, 1e-12)
	near(t, "prior U", b.Uncertainty(), 0.288675, 1e-6) // sqrt(1/12) < τ_U: no penalty
	near(t, "prior T", b.Trust(&c), 0.5, 1e-12)

	// d = 3: α = 0.9·1 + 3 = 3.9, β = 0.9; R = 3.9/4.8 = 0.8125,
	// U = sqrt(3.51 / (4.8² · 5.8)) = 0.162068 < 0.3.
	b1 := NewBeta().Update(Evidence{D: 3}, &c)
	near(t, "alpha", b1.Alpha, 3.9, 1e-12)
	near(t, "beta", b1.Beta, 0.9, 1e-12)
	near(t, "U", b1.Uncertainty(), 0.162068, 1e-6)
	near(t, "T(d=3)", b1.Trust(&c), 0.8125, 1e-12)

	// d = 3, x = 2: β = 2.9; R = 3.9/6.8 = 0.573529, U = 0.177082.
	b2 := NewBeta().Update(Evidence{D: 3, X: 2}, &c)
	near(t, "beta", b2.Beta, 2.9, 1e-12)
	near(t, "U", b2.Uncertainty(), 0.177082, 1e-6)
	near(t, "T(d=3,x=2)", b2.Trust(&c), 0.573529, 1e-6)
}

// TestBetaAllEvidence checks the weight of each of the six evidence kinds:
// from (1, 1) with d=1, c=2, f=4, x=1, q=2, z=3,
// α = 0.9 + 1·1 + 0.5·2 + 0.25·4 = 3.9 and β = 0.9 + 1 + 2 + 3 = 6.9.
func TestBetaAllEvidence(t *testing.T) {
	c := DefaultConfig()
	b := NewBeta().Update(Evidence{D: 1, C: 2, F: 4, X: 1, Q: 2, Z: 3}, &c)
	near(t, "alpha", b.Alpha, 3.9, 1e-12)
	near(t, "beta", b.Beta, 6.9, 1e-12)
	near(t, "T", b.Trust(&c), 3.9/10.8, 1e-12) // U = 0.1398 < τ_U
	for name, e := range map[string]Evidence{
		"d": {D: 1}, "c": {C: 1}, "f": {F: 1}, "x": {X: 1}, "q": {Q: 1}, "z": {Z: 1},
	} {
		got := NewBeta().Update(e, &c)
		want := map[string]Beta{
			"d": {1.9, 0.9}, "c": {1.4, 0.9}, "f": {1.15, 0.9},
			"x": {0.9, 1.9}, "q": {0.9, 1.9}, "z": {0.9, 1.9},
		}[name]
		near(t, name+" alpha", got.Alpha, want.Alpha, 1e-12)
		near(t, name+" beta", got.Beta, want.Beta, 1e-12)
	}
}

// TestBetaPenaltyAndFloor: Beta(0.5, 0.5) has U = sqrt(0.25/2) = 0.353553 >
// τ_U, so T = 0.5·exp(-5·0.053553) = 0.382543; α and β never fall below 0.01.
func TestBetaPenaltyAndFloor(t *testing.T) {
	c := DefaultConfig()
	near(t, "penalized T", Beta{0.5, 0.5}.Trust(&c), 0.382543, 1e-6)
	b := Beta{0.01, 0.01}.Update(Evidence{}, &c)
	if b.Alpha != 0.01 || b.Beta != 0.01 {
		t.Errorf("floor: got %+v", b)
	}
	b = Beta{0.01, 0.01}.Update(Evidence{D: 1}, &c)
	near(t, "alpha", b.Alpha, 1.009, 1e-12)
	near(t, "beta floored", b.Beta, 0.01, 0)
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"Rho":          func(c *Config) { c.Rho = 0 },
		"Lambda":       func(c *Config) { c.Lambda = 1.5 },
		"TauAdd":       func(c *Config) { c.TauAdd = -1 },
		"MinWitnesses": func(c *Config) { c.MinWitnesses = 3 },
		"Budget":       func(c *Config) { c.Budget = 0 },
		"HopLimit":     func(c *Config) { c.HopLimit = 256 },
		"Floor":        func(c *Config) { c.Floor = 0 },
		"Xi":           func(c *Config) { c.Xi = -0.1 },
	} {
		c := DefaultConfig()
		mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s out of range: got %v", name, err)
		}
	}
}
