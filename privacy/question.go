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
}

// Answer is a Question's (ε, δ) statement.
type Answer struct {
	Sigma    float64 `json:"sigma"`
	Q        float64 `json:"q"`
	Sampling string  `json:"sampling"`
	Steps    int     `json:"steps"`
	Delta    float64 `json:"delta"`
	Epsilon  float64 `json:"epsilon"`
	Order    float64 `json:"rdp_order"`
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
	a := Answer{Sigma: q.Sigma, Q: s.Rate(), Sampling: s.String(), Steps: q.Steps, Delta: q.Delta}
	if q.TargetEps > 0 {
		z, err := Calibrate(q.TargetEps, q.Delta, q.Steps, s, q.Orders)
		if err != nil {
			return Answer{}, err
		}
		a.Sigma, a.Calibrated = z, true
	}
	acct, err := NewAccountant(q.Orders)
	if err != nil {
		return Answer{}, err
	}
	if err := acct.Compose(GaussianEvent{Multiplier: a.Sigma, Sampling: s}, q.Steps); err != nil {
		return Answer{}, err
	}
	if a.Epsilon, a.Order, err = acct.Epsilon(q.Delta); err != nil {
		return Answer{}, err
	}
	o := acct.Orders()
	a.EdgeOrder = !math.IsInf(a.Epsilon, 1) && a.Epsilon > 0 && (a.Order == o[0] || a.Order == o[len(o)-1])
	return a, nil
}

// String is the answer as one sentence, e.g. "noise multiplier 1.1 with
// poisson q = 0.004267 over 14063 steps: (ε = 2.92, δ = 1e-05)-DP (RDP
// order 10)".
func (a Answer) String() string {
	verb := "noise multiplier"
	if a.Calibrated {
		verb = "smallest noise multiplier"
	}
	s := fmt.Sprintf("%s %.6g with %s over %d steps: (ε = %.4g, δ = %g)-DP (RDP order %.6g, Balle et al. 2020 conversion)",
		verb, a.Sigma, a.Sampling, a.Steps, a.Epsilon, a.Delta, a.Order)
	if a.EdgeOrder {
		s += "; the optimum is at the end of the order grid, a wider grid may give a smaller ε"
	}
	return s
}
