package config

import (
	"fmt"

	"github.com/trellis-fl/trellis/trust"
)

// defaultTrust is the trust section's defaults: the DMTT paper's values,
// with the evidence rules that screen omission liars ("screen"); "spec",
// the paper's rules as written, lets a third of them pass the screen
// (docs/methods/dmtt.md, "Evidence rules that do not reward a coalition").
func defaultTrust() Trust {
	d := trust.DefaultConfig()
	return Trust{Rho: d.Rho, Timeout: d.Timeout, Xi: d.Xi, TauAdd: d.TauAdd, TauFwd: d.TauFwd,
		Budget: d.Budget, HopLimit: d.HopLimit, Lambda: d.Lambda, Eta: d.Eta, TauU: d.TauU,
		Wd: d.Wd, Rules: "screen"}
}

// TrustOn reports whether the nodes run the topology-trust layer.
func (c Config) TrustOn() bool { return c.Trust.Enabled || c.Strategy.Name == "dmtt" }

// TrustLayer is the trust layer's configuration (nil when it is off).
func (c Config) TrustLayer() (*trust.Config, error) {
	if !c.TrustOn() {
		return nil, nil
	}
	t := trust.DefaultConfig()
	tc := c.Trust
	t.Rho, t.Timeout, t.Xi, t.TauAdd, t.TauFwd = tc.Rho, tc.Timeout, tc.Xi, tc.TauAdd, tc.TauFwd
	t.Budget, t.HopLimit, t.Lambda, t.Eta, t.TauU = tc.Budget, tc.HopLimit, tc.Lambda, tc.Eta, tc.TauU
	t.Wd = tc.Wd
	switch tc.Rules {
	case "spec":
	case "screen":
		t.Rules = trust.ScreenRules()
	case "screen_unhopped":
		t.Rules = trust.ScreenRules()
		t.Rules.Unhopped = true
	default:
		return nil, fmt.Errorf("trust: rules = %q, want \"spec\", \"screen\" or \"screen_unhopped\"", tc.Rules)
	}
	t.Rules.DisjointPaths = tc.DisjointPaths
	switch tc.Claims {
	case "", trust.ClaimsLists:
		if tc.DigestEvery != 0 {
			return nil, fmt.Errorf("trust: digest_every = %d applies to claims = %q only (claims is %q)", tc.DigestEvery, trust.ClaimsEvents, tc.Claims)
		}
	case trust.ClaimsEvents:
		t.Claims = trust.ClaimsEvents
		if tc.DigestEvery < 0 {
			return nil, fmt.Errorf("trust: digest_every = %d, want a positive number of rounds (0: the default, %d)", tc.DigestEvery, t.DigestEvery)
		}
		if tc.DigestEvery > 0 {
			t.DigestEvery = tc.DigestEvery
		}
	default:
		return nil, fmt.Errorf("trust: claims = %q, want %q (the default) or %q", tc.Claims, trust.ClaimsLists, trust.ClaimsEvents)
	}
	if c.Strategy.Name == "dmtt" {
		if v, ok := c.Strategy.Options["tau_trust"]; ok {
			t.TauTrust = v // one τ_trust for the screen and the gate
		}
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	return &t, nil
}

// Topology liars' variants, the names adversary.ClaimAttack takes (a test
// of experiment holds them equal to adversary's).
const (
	LiarOmission  = "omission"
	LiarInflation = "inflation"
)

// claimAttackOn reports whether any topology-claim attack is set.
func (c Config) claimAttackOn() bool {
	a := c.Adversary
	return a.Liar != "" || a.ClaimForgery || a.ClaimReplay || a.ClaimFlood
}

// validateDMTT checks the keys of the trust layer, the claim attacks and
// the evidential strategies, appending what is wrong.
func (c Config) validateDMTT(bad func(key string, val any, allowed string), errs *[]error) {
	switch c.Adversary.Liar {
	case "", LiarOmission, LiarInflation:
	default:
		bad("adversary.liar", fmt.Sprintf("%q", c.Adversary.Liar), `want "", "omission" or "inflation"`)
	}
	if a := c.Adversary; (a.ClaimForgery || a.ClaimReplay || a.ClaimFlood) && c.Trust.Claims == trust.ClaimsEvents {
		// They forge, replay and flood whole-list claims, which the
		// events form sends only as digests; event forms of them are not
		// implemented (the adversary's eventsOf has the liars).
		bad("adversary.claim_forgery/claim_replay/claim_flood", fmt.Sprintf("%v/%v/%v", a.ClaimForgery, a.ClaimReplay, a.ClaimFlood),
			"not implemented for trust.claims = \"events\" (adversary.liar is)")
	}
	if c.claimAttackOn() && !c.TrustOn() {
		bad("adversary.liar", fmt.Sprintf("%q", c.Adversary.Liar), "topology-claim attacks (liar, claim_forgery, claim_replay, claim_flood) need the trust layer: strategy.name = \"dmtt\" or trust.enabled = true")
	}
	if _, err := c.TrustLayer(); err != nil {
		*errs = append(*errs, err)
	}
	if n := c.Strategy.Name; n == "dmtt" || n == "murmura" {
		if c.Model.Head != "evidential" {
			bad("model.head", fmt.Sprintf("%q", c.Model.Head), "strategy "+n+" scores peers by vacuity: needs \"evidential\"")
		}
		if sp := c.Partition.Split; len(sp) == 3 && sp[1] == 0 {
			bad("partition.split", sp, "strategy "+n+" scores peers on the validation split: its fraction must be > 0")
		}
	}
}
