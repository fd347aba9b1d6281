package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/strategy"
)

// scoreSample is the scores honest nodes gave benign and Byzantine
// (malfunctioning) senders, for one attack and score kind.
type scoreSample struct{ benign, byz []float64 }

// collectScores reads the agreement scores of every finished run under dir
// (metrics.NodeRound.Scores in metrics.jsonl), as given by honest receivers in
// every round, grouped by the run's attack and then by score kind.
func collectScores(dir string) (map[string]map[string]*scoreSample, error) {
	out := map[string]map[string]*scoreSample{}
	err := eachRun(dir, rundir.MetricsFile, func(p string, c config.Config) error {
		return rundir.EachHonestNode(p, "scores", func(n *metrics.NodeRound) {
			for _, s := range n.Scores {
				g := out[c.Adversary.Attack]
				if g == nil {
					g = map[string]*scoreSample{}
					out[c.Adversary.Attack] = g
				}
				k := g[s.Kind]
				if k == nil {
					k = &scoreSample{}
					g[s.Kind] = k
				}
				if s.Byzantine {
					k.byz = append(k.byz, s.Value)
				} else {
					k.benign = append(k.benign, s.Value)
				}
			}
		})
	})
	return out, err
}

// scoreReport writes, when runs under dir recorded agreement scores, one
// histogram per attack and score kind (benign vs malfunctioning senders,
// the threshold tau = strategy.LightyearTau marked) and returns a Markdown
// section with, per attack and kind, how many of each were scored, their
// means, and the fractions on the right side of tau (the LIGHTYEAR paper:
// the presets show how often each score separates malfunctioning from
// benign peers). It returns "" when no run recorded scores.
func scoreReport(dir string) (string, error) {
	groups, err := collectScores(dir)
	if err != nil || len(groups) == 0 {
		return "", err
	}
	// The table is LIGHTYEAR's agreement scores; other reporters (DMTT's
	// s_model, trust, q) have their own metrics.
	lightyear := false
	for _, g := range groups {
		for _, kind := range strategy.ScoreKinds {
			lightyear = lightyear || g[kind] != nil
		}
	}
	if !lightyear {
		return "", nil
	}
	tau := strategy.LightyearTau
	var md bytes.Buffer
	fmt.Fprintf(&md, "\n## Agreement scores (benign vs malfunctioning senders)\n\n")
	fmt.Fprintf(&md, "Scores honest nodes gave their peers, every round of every run above; τ = %g.\n", tau)
	fmt.Fprintf(&md, "Separated = benign scored ≥ τ or malfunctioning scored < τ, over all scores;\n")
	fmt.Fprintf(&md, "balanced = the mean of the two rates (blind to how many of each there were);\n")
	fmt.Fprintf(&md, "AUC = the area under the ROC curve over every threshold (P(benign scored above malfunctioning); 0.5 is chance).\n")
	fmt.Fprintf(&md, "The ROC curves, one plot per attack, are roc_ATTACK.png.\n\n")
	fmt.Fprintf(&md, "| attack | score | benign n | benign mean | benign ≥ τ | malfunctioning n | malfunctioning mean | malfunctioning < τ | separated | balanced | AUC |\n")
	fmt.Fprintf(&md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, atk := range slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}) {
		var rocKinds []string
		var rocSamples []*scoreSample
		for _, kind := range strategy.ScoreKinds {
			s := groups[atk][kind]
			if s == nil {
				continue
			}
			auc := "–"
			if len(s.benign) > 0 && len(s.byz) > 0 {
				auc = fmt.Sprintf("%.3f", rocAUC(s.benign, s.byz))
				rocKinds, rocSamples = append(rocKinds, kind), append(rocSamples, s)
			}
			keep := countIf(s.benign, func(v float64) bool { return v >= tau })
			rej := countIf(s.byz, func(v float64) bool { return v < tau })
			balanced := "–"
			if len(s.benign) > 0 && len(s.byz) > 0 {
				balanced = fmt.Sprintf("%.3f", (float64(keep)/float64(len(s.benign))+float64(rej)/float64(len(s.byz)))/2)
			}
			fmt.Fprintf(&md, "| %s | %s | %d | %s | %s | %d | %s | %s | %s | %s | %s |\n", atk, kind,
				len(s.benign), meanCell(s.benign), frac(keep, len(s.benign)),
				len(s.byz), meanCell(s.byz), frac(rej, len(s.byz)), frac(keep+rej, len(s.benign)+len(s.byz)), balanced, auc)
			ch, err := Histograms([]HistGroup{{Label: "benign", Values: s.benign}, {Label: "malfunctioning", Values: s.byz}},
				20, 0, 1, tau, Figure{Title: fmt.Sprintf("%s score, attack %s", kind, atk), XLabel: kind + " agreement A"})
			if err != nil {
				return "", err
			}
			name := "scores_" + config.SafeName(atk) + "_" + kind
			if err := ch.Save(0, 0, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
				return "", err
			}
		}
		if len(rocSamples) > 0 {
			ch, err := rocChart(rocKinds, rocSamples, Figure{Title: "agreement scores as a filter, attack " + atk})
			if err != nil {
				return "", err
			}
			name := "roc_" + config.SafeName(atk)
			if err := ch.Save(0, 0, filepath.Join(dir, name+".png"), filepath.Join(dir, name+".svg")); err != nil {
				return "", err
			}
		}
	}
	return md.String(), nil
}

func countIf(xs []float64, f func(float64) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}

func frac(k, n int) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", float64(k)/float64(n))
}

func meanCell(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return fmt.Sprintf("%.3f", s/float64(len(xs)))
}
