package rundir

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/trellis-fl/trellis/metrics"
)

// Final is a run's final metrics: each the mean over the last
// final_rounds evaluated rounds.
type Final struct {
	HonestLocalAcc  float64 `json:"final_honest_local_acc"`
	HonestGlobalAcc float64 `json:"final_honest_global_acc"`
	AllAcc          float64 `json:"final_all_acc"`
	HonestLoss      float64 `json:"final_honest_loss"`
	DeltaMax        float64 `json:"final_delta_max"`
	MeanByzWeight   float64 `json:"final_mean_byz_weight"`
	Rounds          int     `json:"rounds"` // rounds finished
	// DivergedRound is the first round at whose end an honest node's
	// model was diverged (-1: none); Diverged how many honest nodes were
	// diverged in the last round.
	DivergedRound int `json:"diverged_round"`
	Diverged      int `json:"diverged_nodes"`
	// Privacy is the last round's ε over honest nodes (nil without DP):
	// ε only grows, so the final value is the last one.
	Privacy *metrics.PrivacyRound `json:"privacy,omitempty"`
	// Audit is the membership-inference audit of the final models (nil
	// without [privacy.audit]).
	Audit *AuditSummary `json:"audit,omitempty"`
	// Consensus is the last round's record of a run of task type
	// consensus (nil for a learning run): its error after the last
	// iteration, the DP method's ε, the reconstruction error.
	Consensus *metrics.ConsensusRound `json:"consensus,omitempty"`
}

// AuditSummary is what summary.csv keeps of a run's audit: the pooled
// result of its attack (LiRA for attack = "lira") and the pooled loss
// threshold's AUC.
type AuditSummary struct {
	AUC, TPRAt01FPR, TPRAt1FPR, EpsilonLower float64
	ThresholdAUC                             float64
}

// The columns of summary.csv after the name, the seed and a sweep's keys:
// the final metrics, then the privacy columns for runs with DP (the
// honest nodes' largest and mean ε after the last round, the largest δ),
// then the audit columns for audited runs.
var (
	finalColumns = []string{"final_honest_local_acc", "final_honest_global_acc", "final_all_acc",
		"final_honest_loss", "final_delta_max", "final_mean_byz_weight", "rounds", "diverged_round", "diverged_nodes"}
	privacyColumns = []string{"final_honest_max_epsilon", "final_honest_mean_epsilon", "final_delta"}
	auditColumns   = []string{"final_audit_auc", "final_audit_tpr_at_0.1pct", "final_audit_tpr_at_1pct", "final_audit_epsilon_lower", "final_audit_threshold_auc"}
	// ConsensusColumns are the final metrics of a consensus run, after the
	// others: the error after the last iteration, the DP method's ε and
	// the reconstruction error (empty when the run has none).
	ConsensusColumns = []string{"final_consensus_mse", "final_consensus_max_abs_err", "final_consensus_epsilon", "final_consensus_recon_rmse"}
)

// FinalColumns are the final metrics of summary.csv, in column order;
// the privacy columns are there only for runs with DP, the audit columns
// only for runs with [privacy.audit], the consensus columns only for
// runs of task type consensus.
func FinalColumns() []string {
	return append(append(append(slices.Clone(finalColumns), privacyColumns...), auditColumns...), ConsensusColumns...)
}

func (f Final) values() []float64 {
	return []float64{f.HonestLocalAcc, f.HonestGlobalAcc, f.AllAcc, f.HonestLoss, f.DeltaMax, f.MeanByzWeight, float64(f.Rounds),
		float64(f.DivergedRound), float64(f.Diverged)}
}

func (f Final) privacyValues() []string {
	p := f.Privacy
	if p == nil {
		return make([]string, len(privacyColumns))
	}
	return formatFloats(p.HonestMaxEpsilon, p.HonestMeanEpsilon, p.Delta)
}

func consensusValues(c *metrics.ConsensusRound) []string {
	if c == nil {
		return make([]string, len(ConsensusColumns))
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return formatFloats(*v)[0]
	}
	return append(formatFloats(c.MSE, c.MaxAbsErr), opt(c.Epsilon), opt(c.ReconRMSE))
}

func (a *AuditSummary) values() []string {
	if a == nil {
		return make([]string, len(auditColumns))
	}
	return formatFloats(a.AUC, a.TPRAt01FPR, a.TPRAt1FPR, a.EpsilonLower, a.ThresholdAUC)
}

func formatFloats(vs ...float64) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

// finalOf averages the last k of a run's evaluated rounds' aggregates.
func finalOf(evaluated []*metrics.Round, k, rounds int) Final {
	f := Final{Rounds: rounds, DivergedRound: -1}
	if len(evaluated) == 0 {
		return f
	}
	f.Privacy = evaluated[len(evaluated)-1].Privacy
	f.Consensus = evaluated[len(evaluated)-1].Consensus
	last := evaluated[max(0, len(evaluated)-k):]
	n := float64(len(last))
	for _, r := range last {
		f.HonestLocalAcc += r.HonestLocalAcc / n
		f.HonestGlobalAcc += r.HonestGlobalAcc / n
		f.AllAcc += r.AllAcc / n
		f.HonestLoss += r.HonestLoss / n
		f.DeltaMax += r.DeltaMax / n
		f.MeanByzWeight += r.MeanByzWeight / n
	}
	return f
}

// SummaryRow is one run's row of summary.csv.
type SummaryRow struct {
	Name   string
	Seed   uint64
	Params map[string]string // the swept keys' values (a sweep's summary)
	Final  Final
}

// WriteSummary writes dir's summary.csv (atomically): one row per run —
// name, seed, the swept keys, the final metrics.
func WriteSummary(dir string, keys []string, rows []SummaryRow) error {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	private := slices.ContainsFunc(rows, func(r SummaryRow) bool { return r.Final.Privacy != nil })
	audited := slices.ContainsFunc(rows, func(r SummaryRow) bool { return r.Final.Audit != nil })
	agreed := slices.ContainsFunc(rows, func(r SummaryRow) bool { return r.Final.Consensus != nil })
	head := append(append([]string{"name", "seed"}, keys...), finalColumns...)
	if private {
		head = append(head, privacyColumns...)
	}
	if audited {
		head = append(head, auditColumns...)
	}
	if agreed {
		head = append(head, ConsensusColumns...)
	}
	_ = w.Write(head)
	for _, r := range rows {
		rec := []string{r.Name, strconv.FormatUint(r.Seed, 10)}
		for _, k := range keys {
			rec = append(rec, r.Params[k])
		}
		rec = append(rec, formatFloats(r.Final.values()...)...)
		if private {
			rec = append(rec, r.Final.privacyValues()...)
		}
		if audited {
			rec = append(rec, r.Final.Audit.values()...)
		}
		if agreed {
			rec = append(rec, consensusValues(r.Final.Consensus)...)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, SummaryFile), buf.Bytes())
}

// ReadSummary reads the rows of a run's or sweep's summary.csv back, each
// as column → value.
func ReadSummary(dir string) ([]map[string]string, error) {
	path := filepath.Join(dir, SummaryFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty: no header; remove it and rerun", path)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, k := range recs[0] {
			m[k] = r[i]
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadFinal reads a run directory's final metrics back from its
// summary.csv; false when it has none (an unfinished run) or it does not
// hold one run's complete row.
func ReadFinal(dir string) (Final, bool) {
	rows, err := ReadSummary(dir)
	if err != nil || len(rows) != 1 {
		return Final{}, false
	}
	vals := make([]float64, len(finalColumns))
	for i, k := range finalColumns {
		if _, err := fmt.Sscan(rows[0][k], &vals[i]); err != nil {
			return Final{}, false
		}
	}
	f := Final{HonestLocalAcc: vals[0], HonestGlobalAcc: vals[1], AllAcc: vals[2], HonestLoss: vals[3],
		DeltaMax: vals[4], MeanByzWeight: vals[5], Rounds: int(vals[6]), DivergedRound: int(vals[7]), Diverged: int(vals[8])}
	if v, ok := readColumns(rows[0], privacyColumns); ok {
		f.Privacy = &metrics.PrivacyRound{HonestMaxEpsilon: v[0], HonestMeanEpsilon: v[1], Delta: v[2]}
	}
	if v, ok := readColumns(rows[0], auditColumns); ok {
		f.Audit = &AuditSummary{AUC: v[0], TPRAt01FPR: v[1], TPRAt1FPR: v[2], EpsilonLower: v[3], ThresholdAUC: v[4]}
	}
	if v, ok := readColumns(rows[0], ConsensusColumns[:2]); ok {
		f.Consensus = &metrics.ConsensusRound{MSE: v[0], MaxAbsErr: v[1]}
		for i, p := range []**float64{&f.Consensus.Epsilon, &f.Consensus.ReconRMSE} {
			if v, ok := readColumns(rows[0], ConsensusColumns[2+i:3+i]); ok {
				*p = &v[0]
			}
		}
	}
	return f, true
}

// readColumns parses the summary row's values of cols; false when one is
// absent, empty or not a number.
func readColumns(row map[string]string, cols []string) ([]float64, bool) {
	v := make([]float64, len(cols))
	for i, k := range cols {
		s, ok := row[k]
		if !ok || s == "" {
			return nil, false
		}
		var err error
		if v[i], err = strconv.ParseFloat(s, 64); err != nil {
			return nil, false
		}
	}
	return v, true
}
