package aggregate

import (
	"fmt"
	"math"
	"strings"
)

// Params are a rule's parameters as a config names them. Zero values mean
// the defaults. A parameter that does not apply to the named rule or its
// pre-aggregators must be zero (so a misplaced one is reported, not
// ignored), except F and Threads, which every rule accepts (rules without
// an f ignore it).
type Params struct {
	// F is the number of faulty inputs to tolerate: trimmed_mean, krum,
	// multi_krum, bulyan, msr, ios, rtc, safe_area, centerpoint_lp,
	// tverberg, radon, centered_clipping (adaptive radius), and the nnm and arc
	// pre-aggregators.
	F int
	// M is the number of inputs multi_krum averages; 0 means n − F.
	M int
	// Tau is centered_clipping's and rtc's radius; 0 means adaptive.
	Tau float64
	// Iterations is centered_clipping's M (0: 3) or geometric_median's
	// largest number of updates (0: 100).
	Iterations int
	// FromPrevious starts centered_clipping from its previous output.
	FromPrevious bool
	// Bucket is the bucketing pre-aggregator's bucket size s; 0 means 2.
	Bucket int
	// Seed seeds the bucketing permutation stream.
	Seed uint64
	// Clip is the clip pre-aggregator's norm bound c (> 0, required).
	Clip float64
	// Threads is the goroutines large inputs are split across; 0 means 1.
	// Outputs do not depend on it.
	Threads int
}

// New returns the rule called name, tolerating f faulty inputs where the
// rule has such a parameter; it is NewWith(name, Params{F: f}). Every rule
// is returned as a pointer and, like all rule values, serves one goroutine
// at a time.
func New(name string, f int) (Rule, error) {
	return NewWith(name, Params{F: f})
}

// NewWith returns the rule called name with parameters p. name is a rule
// name (Names) optionally preceded by pre-aggregators (PreNames) joined by
// "+": "median", "nnm+krum", "bucketing+clip+trimmed_mean". With
// pre-aggregators the result is a *Chain whose Name is name. Unknown names
// and parameters out of range or not applicable are errors that name them
// and the valid choices.
func NewWith(name string, p Params) (Rule, error) {
	s, err := ParseSpec(name)
	if err != nil {
		return nil, err
	}
	return s.New(p)
}

// build makes the rule of s with checked parameters p.
func (s Spec) build(p Params) Rule {
	ruleName, pres := s.Rule, s.Pre
	var rule Rule
	switch ruleName {
	case "mean":
		rule = &Mean{Threads: p.Threads}
	case "median":
		rule = &Median{Threads: p.Threads}
	case "trimmed_mean":
		rule = &TrimmedMean{F: p.F, Threads: p.Threads}
	case "krum":
		rule = &Krum{F: p.F, Threads: p.Threads}
	case "multi_krum":
		rule = &MultiKrum{F: p.F, M: p.M, Threads: p.Threads}
	case "geometric_median":
		rule = &GeometricMedian{Iterations: p.Iterations, Threads: p.Threads}
	case "centered_clipping":
		rule = &CenteredClipping{Tau: p.Tau, Iterations: p.Iterations, F: p.F, FromPrevious: p.FromPrevious, Threads: p.Threads}
	case "bulyan":
		rule = &Bulyan{F: p.F, Threads: p.Threads}
	case "msr":
		rule = &MSR{F: p.F, Threads: p.Threads}
	case "ios":
		rule = &IOS{F: p.F}
	case "rtc":
		rule = &RTC{F: p.F, Tau: p.Tau}
	case "safe_area":
		rule = &SafeArea{F: p.F}
	case "centerpoint_lp":
		rule = &CenterpointLP{F: p.F}
	case "tverberg":
		rule = &TverbergPoint{F: p.F}
	case "radon":
		rule = &RadonPoint{F: p.F}
	}
	if len(pres) == 0 {
		return rule
	}
	c := &Chain{Rule: rule, Threads: p.Threads}
	for _, pre := range pres {
		switch pre {
		case "bucketing":
			s := p.Bucket
			if s == 0 {
				s = 2
			}
			c.Pre = append(c.Pre, &Bucketing{S: s, Seed: p.Seed, Threads: p.Threads})
		case "nnm":
			c.Pre = append(c.Pre, &NNM{F: p.F, Threads: p.Threads})
		case "clip":
			c.Pre = append(c.Pre, &Clip{C: p.Clip, Threads: p.Threads})
		case "arc":
			c.Pre = append(c.Pre, &AdaptiveClip{F: p.F, Threads: p.Threads})
		}
	}
	return c
}

// check validates the parameters for the rule and pre-aggregators of s.
func (p Params) check(s Spec) error {
	name := s.String()
	type param struct {
		key     string
		set     bool
		bad     bool
		value   any
		allowed string
		rules   []string
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	params := []param{
		{"f", p.F != 0, p.F < 0, p.F, "[0, ∞)", nil},
		{"m", p.M != 0, p.M < 0, p.M, "[1, n] (0: n − f)", []string{"multi_krum"}},
		{"tau", p.Tau != 0, !(p.Tau >= 0) || !finite(p.Tau), p.Tau, "(0, ∞) (0: adaptive)", []string{"centered_clipping", "rtc"}},
		{"iterations", p.Iterations != 0, p.Iterations < 0, p.Iterations, "[1, ∞) (0: default)", []string{"centered_clipping", "geometric_median"}},
		{"from_previous", p.FromPrevious, false, p.FromPrevious, "true or false", []string{"centered_clipping"}},
		{"bucket", p.Bucket != 0, p.Bucket < 0, p.Bucket, "[1, ∞) (0: 2)", []string{"bucketing"}},
		{"seed", p.Seed != 0, false, p.Seed, "any", []string{"bucketing"}},
		{"clip", p.Clip != 0, !(p.Clip >= 0) || !finite(p.Clip), p.Clip, "(0, ∞)", []string{"clip"}},
		{"threads", p.Threads != 0, p.Threads < 0, p.Threads, "[0, ∞) (0: 1)", nil},
	}
	for _, q := range params {
		if q.bad {
			return fmt.Errorf("aggregate %q: %s = %v, allowed range %s", name, q.key, q.value, q.allowed)
		}
		if !q.set || q.rules == nil {
			continue
		}
		applies := false
		for _, r := range q.rules {
			applies = applies || s.Uses(r)
		}
		if !applies {
			return fmt.Errorf("aggregate %q: parameter %s = %v does not apply (it is for %s)", name, q.key, q.value, strings.Join(q.rules, ", "))
		}
	}
	if s.Uses("clip") && p.Clip == 0 {
		return fmt.Errorf("aggregate %q: the clip pre-aggregator needs clip > 0 (the norm bound c)", name)
	}
	return nil
}
