package topology

import (
	"math"
	"strings"
	"testing"
)

// refLinkUniform is the hash documented on Drops, written out independently.
func refLinkUniform(seed uint64, round, from, to int) float64 {
	h := refMix(seed)
	for _, v := range []uint64{5, uint64(round), uint64(from), uint64(to)} {
		h = refMix(h ^ v)
	}
	return float64(h>>11) / (1 << 53)
}

func TestDropsDeterministic(t *testing.T) {
	d, err := NewDrops(0.3, 99)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := NewDrops(0.3, 99)
	// Ask in two different orders; every answer must agree and match the
	// documented hash.
	for round := range 20 {
		for from := range 10 {
			for to := range 10 {
				a := d.Dropped(round, from, to)
				b := same.Dropped(19-round, 9-from, 9-to)
				want := refLinkUniform(99, round, from, to) < 0.3
				if a != want {
					t.Fatalf("Dropped(%d, %d, %d) = %v, documented hash says %v", round, from, to, a, want)
				}
				if b != (refLinkUniform(99, 19-round, 9-from, 9-to) < 0.3) {
					t.Fatal("answer depends on query order")
				}
			}
		}
	}
	if d.P() != 0.3 {
		t.Errorf("P = %v", d.P())
	}
}

func TestDropsRate(t *testing.T) {
	const rounds, nodes = 50, 64 // 50·64·63 = 201,600 links
	for _, p := range []float64{0.05, 0.3, 0.5} {
		d, _ := NewDrops(p, 7)
		other, _ := NewDrops(p, 8)
		dropped, both, disagree, total := 0, 0, 0, 0
		for round := range rounds {
			for from := range nodes {
				for to := range nodes {
					if from == to {
						continue
					}
					total++
					x := d.Dropped(round, from, to)
					if x {
						dropped++
						if d.Dropped(round, to, from) {
							both++
						}
					}
					if x != other.Dropped(round, from, to) {
						disagree++
					}
				}
			}
		}
		n := float64(total)
		rate := float64(dropped) / n
		if sd := math.Sqrt(p * (1 - p) / n); math.Abs(rate-p) > 5*sd {
			t.Errorf("p = %v: empirical rate %.4f, want %.4f ± %.4f", p, rate, p, 5*sd)
		}
		// The two directions of a link drop independently: P(both) = p².
		if pb, sd := float64(both)/n, math.Sqrt(p*p*(1-p*p)/n); math.Abs(pb-p*p) > 5*sd {
			t.Errorf("p = %v: both directions dropped %.4f, want p² = %.4f", p, pb, p*p)
		}
		// Another seed gives independent decisions: they differ w.p. 2p(1-p).
		if pd, sd := float64(disagree)/n, math.Sqrt(2*p*(1-p)*(1-2*p*(1-p))/n); math.Abs(pd-2*p*(1-p)) > 5*sd {
			t.Errorf("p = %v: seeds disagree on %.4f of links, want %.4f", p, pd, 2*p*(1-p))
		}
	}
}

func TestDropsEdgeCases(t *testing.T) {
	never, _ := NewDrops(0, 1)
	always, _ := NewDrops(1, 1)
	var zero Drops
	for k := range 1000 {
		if never.Dropped(k, k+1, k+2) || zero.Dropped(k, 1, 2) {
			t.Fatal("p = 0 dropped a message")
		}
		if !always.Dropped(k, k+1, k+2) {
			t.Fatal("p = 1 delivered a message")
		}
	}
	for _, p := range []float64{-0.01, 1.01, math.NaN(), math.Inf(1)} {
		if _, err := NewDrops(p, 1); err == nil || !strings.Contains(err.Error(), "0 <= p <= 1") {
			t.Errorf("NewDrops(%v): error %v", p, err)
		}
	}
}
