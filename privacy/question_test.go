package privacy

import (
	"strings"
	"testing"
)

func TestQuestionAnswer(t *testing.T) {
	// The TF-Privacy MNIST point of published_test.go, asked both ways.
	q := Question{Sigma: 1.3, Q: 150.0 / 60000, Steps: 6000, Delta: 1e-5, Orders: tfOrders()}
	a, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(a.Epsilon, 0.7242234026109595) > 1e-9 || a.Order != 19 || a.Calibrated {
		t.Errorf("answer %+v", a)
	}
	if s := a.String(); !strings.Contains(s, "ε = 0.7242") || !strings.Contains(s, "poisson q = 0.0025") {
		t.Errorf("sentence %q", s)
	}
	q.Sigma, q.TargetEps = 0, 0.7242234026109595
	b, err := q.Answer()
	if err != nil {
		t.Fatal(err)
	}
	if relErr(b.Sigma, 1.3) > 1e-5 || !b.Calibrated || b.Epsilon > q.TargetEps {
		t.Errorf("calibration answer %+v", b)
	}
	// The same point in TF-Privacy's terms (n, batch, epochs).
	e, err := Question{Sigma: 1.3, Records: 60000, Batch: 150, Epochs: 15, Delta: 1e-5, Orders: tfOrders()}.Answer()
	if err != nil || e.Steps != 6000 || e.Epsilon != a.Epsilon {
		t.Errorf("records/batch/epochs: %+v, %v", e, err)
	}
	// Not Poisson: no amplification, whatever q says.
	c, _ := Question{Sigma: 1.3, Q: 0.0025, NotPoisson: true, Steps: 6000, Delta: 1e-5}.Answer()
	d, _ := Question{Sigma: 1.3, Q: 1, Steps: 6000, Delta: 1e-5}.Answer()
	if c.Epsilon != d.Epsilon || c.Q != 1 || c.Epsilon < 100*a.Epsilon {
		t.Errorf("unamplified ε %v (q %v), full batch %v, Poisson %v", c.Epsilon, c.Q, d.Epsilon, a.Epsilon)
	}
}

func TestQuestionErrors(t *testing.T) {
	for _, q := range []Question{
		{Sigma: 1, Q: 0, Steps: 1, Delta: 1e-5},
		{Sigma: 1, Q: 0.1, Steps: 0, Delta: 1e-5},
		{Sigma: 1, Q: 0.1, Steps: 1, Delta: 1},
		{Sigma: 0, Q: 0.1, Steps: 1, Delta: 1e-5},
		{Sigma: 1, TargetEps: 1, Q: 0.1, Steps: 1, Delta: 1e-5},
		{TargetEps: -1, Q: 0.1, Steps: 1, Delta: 1e-5},
		{Sigma: 1, Records: 10, Batch: 20, Epochs: 1, Delta: 1e-5},
		{Sigma: 1, Records: 10, Batch: 2, Delta: 1e-5},
	} {
		if _, err := q.Answer(); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}
