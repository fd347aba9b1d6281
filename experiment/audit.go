package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/sim"
)

// AuditFile is what Audit writes into a run directory.
const AuditFile = "audit.json"

// AuditAlpha is the audit's confidence level: its ε lower bounds hold with
// probability 1 − AuditAlpha.
const AuditAlpha = 0.05

// NodeAudit is the membership-inference audit of one honest node's final
// model: the loss-threshold attack (privacy.LossThresholdAudit) with the
// node's training split as members and its local test split as
// non-members.
type NodeAudit struct {
	Node int `json:"node"`
	privacy.AuditResult
	// Delta is the δ of both ε (the node's, or privacy.DefaultDelta of its
	// training split without DP).
	Delta float64 `json:"delta"`
	// Accountant is the node's ε after the last round (nil without DP:
	// no guarantee).
	Accountant *float64 `json:"accountant_epsilon,omitempty"`
	// Reference is the reference-model attack (calibrated per sample:
	// the target model's loss minus the mean loss of reference models
	// that never saw the node's data — the other honest nodes' models,
	// so only for strategy "local"); nil otherwise.
	Reference *privacy.AuditResult `json:"reference,omitempty"`
	// Violation is set when a certified lower bound (of either attack)
	// exceeds the accountant's ε: a bug in the accounting or the noise, or
	// bad luck of probability ≤ AuditAlpha per attack.
	Violation bool `json:"violation,omitempty"`
}

// AuditReport is a run's audit.
type AuditReport struct {
	Run   string      `json:"run"`
	Alpha float64     `json:"alpha"`
	Nodes []NodeAudit `json:"nodes"`
	// Mean AUC and the largest certified ε lower bound over honest nodes.
	MeanAUC          float64 `json:"mean_auc"`
	MeanReferenceAUC float64 `json:"mean_reference_auc,omitempty"`
	MaxEpsilonLower  float64 `json:"max_epsilon_lower"`
}

// referenceAudit is the reference-model attack on node i (Ye et al. 2022,
// "Enhanced Membership Inference Attacks", attack R; the offline form of
// LiRA's per-example calibration, Carlini et al. 2022): each sample's
// score is the target model's loss minus the mean loss of the reference
// models (the other honest nodes'), so a sample that is simply hard or
// easy no longer looks like a non-member or a member.
func referenceAudit(loss func(j, i int, idx []int32) ([]float64, error), honest []int, i int,
	mem, non []float64, memIdx, nonIdx []int32, delta float64) (*privacy.AuditResult, error) {
	cm, cn := slices.Clone(mem), slices.Clone(non)
	k := float64(len(honest) - 1)
	for _, j := range honest {
		if j == i {
			continue
		}
		for _, pair := range []struct {
			dst []float64
			idx []int32
		}{{cm, memIdx}, {cn, nonIdx}} {
			ref, err := loss(j, i, pair.idx)
			if err != nil {
				return nil, err
			}
			for t := range pair.dst {
				pair.dst[t] -= ref[t] / k
			}
		}
	}
	r, err := privacy.LossThresholdAudit(cm, cn, delta, AuditAlpha)
	return &r, err
}

// Audit audits the final models of the run in dir. The models are not
// stored: the run is re-run from its config.toml, which reproduces a
// simulation bit for bit (every stream, the DP noise included, comes from
// the seed), and the re-run's last round is checked against metrics.jsonl
// before its models are trusted. The report is written to dir/audit.json.
func Audit(ctx context.Context, dir string) (*AuditReport, error) {
	c, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	recorded, err := lastRound(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, err
	}
	tt, err := c.LoadData()
	if err != nil {
		return nil, err
	}
	s, err := c.Setup(tt)
	if err != nil {
		return nil, err
	}
	s = s.Defaults()
	b, err := s.Build()
	if err != nil {
		return nil, err
	}
	var last *metrics.Round
	if err := sim.Run(ctx, b.Config, b.Nodes, metrics.SinkFunc(func(r *metrics.Round) error {
		last = r
		return nil
	})); err != nil {
		return nil, err
	}
	if err := sameRound(last, recorded); err != nil {
		return nil, fmt.Errorf("%s: the re-run does not reproduce the recorded run (%w): the code or the data changed since; audit refused", dir, err)
	}
	shift, err := data.FeatureShift(tt.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return nil, err
	}
	rep := &AuditReport{Run: dir, Alpha: AuditAlpha}
	var honest []int
	for i := range b.Nodes {
		if !slices.Contains(b.Config.Byzantine, i) {
			honest = append(honest, i)
		}
	}
	// loss is model j's loss on node i's samples idx.
	loss := func(j, i int, idx []int32) ([]float64, error) {
		out := make([]float64, len(idx))
		_, err := b.Nodes[j].Model().SampleLosses(data.NewBatcher(tt.Train, idx, nil, shift[i]), out)
		return out, err
	}
	// Reference models must be independent of the node's data: with
	// strategy local, the other honest nodes' models are.
	reference := c.Strategy.Name == "local" && len(honest) > 1
	for _, i := range honest {
		sp := b.Splits[i]
		mem, err := loss(i, i, sp.Train)
		if err != nil {
			return nil, err
		}
		non, err := loss(i, i, sp.Test)
		if err != nil {
			return nil, err
		}
		na := NodeAudit{Node: i, Delta: privacy.DefaultDelta(len(sp.Train))}
		nr := last.Nodes[i]
		if nr.Epsilon != nil {
			eps := *nr.Epsilon
			na.Accountant, na.Delta = &eps, *nr.Delta
		}
		if na.AuditResult, err = privacy.LossThresholdAudit(mem, non, na.Delta, AuditAlpha); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		if reference {
			if na.Reference, err = referenceAudit(loss, honest, i, mem, non, sp.Train, sp.Test, na.Delta); err != nil {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
		}
		na.Violation = na.Accountant != nil && (na.EpsilonLower > *na.Accountant ||
			na.Reference != nil && na.Reference.EpsilonLower > *na.Accountant)
		rep.Nodes = append(rep.Nodes, na)
		rep.MeanAUC += na.AUC
		rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.EpsilonLower)
		if na.Reference != nil {
			rep.MeanReferenceAUC += na.Reference.AUC / float64(len(honest))
			rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.Reference.EpsilonLower)
		}
	}
	if len(rep.Nodes) > 0 {
		rep.MeanAUC /= float64(len(rep.Nodes))
	}
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	return rep, writeAtomic(filepath.Join(dir, AuditFile), append(out, '\n'))
}

// lastRound reads the node records of the last round in a metrics.jsonl.
func lastRound(path string) ([]metrics.NodeRound, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []metrics.NodeRound
	round := -1
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Round int `json:"round"`
			metrics.NodeRound
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if r.Round != round {
			round, recs = r.Round, recs[:0]
		}
		recs = append(recs, r.NodeRound)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no records", path)
	}
	return recs, nil
}

// sameRound checks the re-run's last round against the recorded one: the
// evaluation and ε of every node.
func sameRound(r *metrics.Round, rec []metrics.NodeRound) error {
	if r == nil || len(r.Nodes) != len(rec) {
		return fmt.Errorf("a different number of nodes or rounds")
	}
	for i, a := range r.Nodes {
		b := rec[i]
		if a.Node != b.Node || a.LocalAcc != b.LocalAcc || a.LocalLoss != b.LocalLoss || a.TrainLoss != b.TrainLoss {
			return fmt.Errorf("node %d: local accuracy %v, recorded %v", a.Node, a.LocalAcc, b.LocalAcc)
		}
		if (a.Epsilon == nil) != (b.Epsilon == nil) || a.Epsilon != nil && *a.Epsilon != *b.Epsilon {
			return fmt.Errorf("node %d: ε differs from the recorded one", a.Node)
		}
	}
	return nil
}

// String is the report as a table.
func (r *AuditReport) String() string {
	s := fmt.Sprintf("membership inference (loss threshold), members = training split, non-members = local test split; ε lower bounds at confidence %.0f %%\n", 100*(1-r.Alpha))
	s += fmt.Sprintf("%5s %8s %8s %7s %10s %9s %9s %11s %9s\n", "node", "members", "non-mem", "AUC", "TPR@1%FPR", "advant.", "ε_lower", "ε_account.", "δ")
	for _, n := range r.Nodes {
		acct := "∞ (no DP)"
		if n.Accountant != nil {
			acct = fmt.Sprintf("%.4g", *n.Accountant)
		}
		flag := ""
		if n.Violation {
			flag = "  VIOLATION"
		}
		s += fmt.Sprintf("%5d %8d %8d %7.4f %10.4f %9.4f %9.4f %11s %9.2g%s\n", n.Node, n.Members, n.NonMembers,
			n.AUC, n.TPRAt1FPR, n.Advantage, n.EpsilonLower, acct, n.Delta, flag)
	}
	for _, n := range r.Nodes {
		if n.Reference != nil {
			if n.Node == r.Nodes[0].Node {
				s += "reference-model attack (score = loss − mean loss of the other nodes' models, which never saw the node's data):\n"
			}
			s += fmt.Sprintf("%5d %8d %8d %7.4f %10.4f %9.4f %9.4f\n", n.Node, n.Reference.Members, n.Reference.NonMembers,
				n.Reference.AUC, n.Reference.TPRAt1FPR, n.Reference.Advantage, n.Reference.EpsilonLower)
		}
	}
	s += fmt.Sprintf("honest nodes: mean AUC %.4f", r.MeanAUC)
	if r.MeanReferenceAUC > 0 {
		s += fmt.Sprintf(" (reference-model attack %.4f)", r.MeanReferenceAUC)
	}
	s += fmt.Sprintf(", largest ε lower bound %.4f\n", r.MaxEpsilonLower)
	return s
}
