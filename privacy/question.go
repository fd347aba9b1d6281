package privacy

import (
	"fmt"
	"math"
	"strings"
)

// Question is what `trellis privacy` answers about T steps of the Gaussian
// mechanism: the ε a noise multiplier gives (Sigma set), or the smallest
// noise multiplier that reaches a target ε (TargetEps set).
type Question struct {
	// Sigma is the noise multiplier z = σ / sensitivity; 0 with TargetEps.
	Sigma float64
	// Q is the Poisson sampling rate in (0, 1]; 1 means every step sees
	// every record (node-level release, full batch).
	Q float64
	// NotPoisson says the records were not Poisson-sampled (fixed batches,
	// a shuffle visited in turn): no amplification is claimed, whatever Q.
	NotPoisson bool
	// Steps is the number of releases (DP-SGD steps or rounds).
	Steps int
	// Records, Batch and Epochs, when all set, replace Q and Steps the way
	// TF-Privacy's compute_dp_sgd_privacy does: q = Batch/Records (the
	// expected batch of Poisson sampling), Steps = ⌈Epochs·Records/Batch⌉.
	Records, Batch int
	Epochs         float64
	// Delta is the δ of the (ε, δ) statement, in (0, 1).
	Delta float64
	// TargetEps, when positive, asks for the noise multiplier instead.
	TargetEps float64
	// Orders is the RDP order grid (nil: DefaultOrders).
	Orders []float64
	// Accountant is the accountant whose ε calibration solves for and
	// Answer.Epsilon states ("": MethodRDP). Both are reported either way.
	Accountant Method
}

// Answer is a Question's (ε, δ) statement, by both accountants.
type Answer struct {
	Sigma    float64 `json:"sigma"`
	Q        float64 `json:"q"`
	Sampling string  `json:"sampling"`
	Steps    int     `json:"steps"`
	Delta    float64 `json:"delta"`
	// Epsilon is the ε of Accountant, the accountant asked for, or RDP's
	// when PLD was asked for and failed (PLDError says why).
	Epsilon    float64 `json:"epsilon"`
	Accountant Method  `json:"accountant"`
	// RDPEpsilon at the order Order, and PLDEpsilon (absent when the PLD
	// accountant failed, with PLDError), side by side.
	RDPEpsilon float64  `json:"rdp_epsilon"`
	Order      float64  `json:"rdp_order"`
	PLDEpsilon *float64 `json:"pld_epsilon"`
	PLDError   string   `json:"pld_error,omitempty"`
	// Calibrated is true when Sigma was solved for.
	Calibrated bool `json:"calibrated"`
	// EdgeOrder is true when the optimum sat at the grid's end, where a
	// wider grid could give a smaller ε.
	EdgeOrder bool `json:"edge_order"`
}

func (q Question) sampling() Sampling {
	if q.NotPoisson || q.Q == 1 {
		return Unamplified()
	}
	return Poisson(q.Q)
}

// resolve turns Records, Batch and Epochs into Q and Steps.
func (q Question) resolve() (Question, error) {
	if q.Records == 0 && q.Batch == 0 && q.Epochs == 0 {
		return q, nil
	}
	if q.Records < 1 || q.Batch < 1 || q.Batch > q.Records || !(q.Epochs > 0) || math.IsInf(q.Epochs, 0) {
		return q, fmt.Errorf("privacy: records = %d, batch = %d, epochs = %v: need 1 ≤ batch ≤ records and epochs > 0", q.Records, q.Batch, q.Epochs)
	}
	q.Q = float64(q.Batch) / float64(q.Records)
	q.Steps = int(math.Ceil(q.Epochs * float64(q.Records) / float64(q.Batch)))
	return q, nil
}

func (q Question) validate() error {
	var errs []string
	if !(q.Q > 0 && q.Q <= 1) {
		errs = append(errs, fmt.Sprintf("q = %v, allowed range (0, 1]", q.Q))
	}
	if q.Steps < 1 {
		errs = append(errs, fmt.Sprintf("steps = %d, need ≥ 1", q.Steps))
	}
	if !(q.Delta > 0 && q.Delta < 1) {
		errs = append(errs, fmt.Sprintf("delta = %v, allowed range (0, 1)", q.Delta))
	}
	if _, err := ParseMethod(string(q.Accountant)); err != nil {
		errs = append(errs, err.Error())
	}
	switch {
	case q.TargetEps != 0 && q.Sigma != 0:
		errs = append(errs, "give either sigma or a target epsilon, not both")
	case q.TargetEps == 0 && !(q.Sigma > 0 && !math.IsInf(q.Sigma, 0)):
		errs = append(errs, fmt.Sprintf("sigma = %v, need a finite value > 0 (or a target epsilon)", q.Sigma))
	case q.TargetEps != 0 && !(q.TargetEps > 0 && !math.IsInf(q.TargetEps, 0)):
		errs = append(errs, fmt.Sprintf("target epsilon = %v, need a finite value > 0", q.TargetEps))
	}
	if len(errs) > 0 {
		return fmt.Errorf("privacy: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Answer solves the question.
func (q Question) Answer() (Answer, error) {
	q, err := q.resolve()
	if err != nil {
		return Answer{}, err
	}
	if err := q.validate(); err != nil {
		return Answer{}, err
	}
	s := q.sampling()
	method, _ := ParseMethod(string(q.Accountant))
	a := Answer{Sigma: q.Sigma, Q: s.Rate(), Sampling: s.String(), Steps: q.Steps, Delta: q.Delta}
	if q.TargetEps > 0 {
		z, err := CalibrateWith(method, q.TargetEps, q.Delta, q.Steps, s, q.Orders)
		if err != nil {
			return Answer{}, err
		}
		a.Sigma, a.Calibrated = z, true
	}
	ev := GaussianEvent{Multiplier: a.Sigma, Sampling: s}
	acct, err := NewAccountant(q.Orders)
	if err != nil {
		return Answer{}, err
	}
	if err := acct.Compose(ev, q.Steps); err != nil {
		return Answer{}, err
	}
	if a.RDPEpsilon, a.Order, err = acct.Epsilon(q.Delta); err != nil {
		return Answer{}, err
	}
	o := acct.Orders()
	a.EdgeOrder = !math.IsInf(a.RDPEpsilon, 1) && a.RDPEpsilon > 0 && (a.Order == o[0] || a.Order == o[len(o)-1])
	if pld, err := EpsilonPLD(ev, q.Steps, q.Delta); err != nil {
		a.PLDError = err.Error()
	} else {
		a.PLDEpsilon = &pld
	}
	a.Epsilon, a.Accountant = a.RDPEpsilon, MethodRDP
	if method == MethodPLD && a.PLDEpsilon != nil {
		a.Epsilon, a.Accountant = *a.PLDEpsilon, MethodPLD
	}
	return a, nil
}

// String is the answer as one sentence, e.g. "noise multiplier 1.1 with
// poisson q = 0.004267 over 14063 steps: (ε = 2.92, δ = 1e-05)-DP by RDP
// (order 10, Balle et al. 2020 conversion); PLD: ε = 2.382", the
// accountant asked for first.
func (a Answer) String() string {
	verb := "noise multiplier"
	if a.Calibrated {
		verb = "smallest noise multiplier"
	}
	rdp := fmt.Sprintf("RDP (order %.6g, Balle et al. 2020 conversion)", a.Order)
	if a.EdgeOrder {
		rdp += " — the optimum is at the end of the order grid, a wider grid may give a smaller ε"
	}
	pld := "PLD failed: " + a.PLDError
	if a.PLDEpsilon != nil {
		pld = fmt.Sprintf("PLD: ε = %.4g", *a.PLDEpsilon)
	}
	head := fmt.Sprintf("%s %.6g with %s over %d steps: (ε = %.4g, δ = %g)-DP by ", verb, a.Sigma, a.Sampling, a.Steps, a.Epsilon, a.Delta)
	if a.Accountant == MethodPLD {
		return head + fmt.Sprintf("PLD; RDP: ε = %.4g at order %.6g", a.RDPEpsilon, a.Order)
	}
	if a.PLDEpsilon == nil && a.PLDError != "" {
		return head + rdp + "; " + pld + " (the RDP bound is printed)"
	}
	return head + rdp + "; " + pld
}
