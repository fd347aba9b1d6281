package privacy

import "fmt"

// Method is the accountant that turns composed releases into ε: MethodRDP
// (Rényi DP over an order grid and the Balle et al. 2020 conversion, the
// default) or MethodPLD (privacy loss distributions, pld.go: tighter, and
// an error rather than a loose answer where it cannot meet its tolerance).
type Method string

const (
	MethodRDP Method = "rdp"
	MethodPLD Method = "pld"
)

// ParseMethod is the accountant named name: "rdp" (or "", the default) or
// "pld".
func ParseMethod(name string) (Method, error) {
	switch name {
	case "", "rdp":
		return MethodRDP, nil
	case "pld":
		return MethodPLD, nil
	}
	return "", fmt.Errorf("accountant %q: want rdp or pld", name)
}

// Reading is an ε with the accountant that gave it.
type Reading struct {
	Epsilon float64
	// Accountant is the accountant that gave Epsilon: the one asked for,
	// or MethodRDP when PLD was asked for and failed.
	Accountant Method
	// Fallback, when PLD was asked for and RDP answered instead, is why
	// PLD could not.
	Fallback string
}

// String is e.g. "ε = 2.382 (pld)" or "ε = 2.597 (rdp; pld failed: …)".
func (r Reading) String() string {
	if r.Fallback != "" {
		return fmt.Sprintf("ε = %.4g (rdp; pld failed: %s)", r.Epsilon, r.Fallback)
	}
	return fmt.Sprintf("ε = %.4g (%s)", r.Epsilon, r.Accountant)
}

// EpsilonBy is the ε after steps occurrences of e at δ under accountant m
// (RDP over orders, nil: DefaultOrders). When PLD fails, the reading is
// RDP's, with the reason in Fallback; the error is RDP's own.
func EpsilonBy(m Method, e Event, steps int, delta float64, orders []float64) (Reading, error) {
	if m == MethodPLD {
		eps, err := EpsilonPLD(e, steps, delta)
		if err == nil {
			return Reading{Epsilon: eps, Accountant: MethodPLD}, nil
		}
		r, rerr := EpsilonBy(MethodRDP, e, steps, delta, orders)
		r.Fallback = err.Error()
		return r, rerr
	}
	eps, _, err := EpsilonAfter(e, steps, delta, orders)
	return Reading{Epsilon: eps, Accountant: MethodRDP}, err
}
