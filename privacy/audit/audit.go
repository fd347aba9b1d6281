package audit

import (
	"context"
	"fmt"
	"slices"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/rundir"
)

// Alpha is the audit's confidence level: its ε lower bounds hold with
// probability 1 − Alpha.
const Alpha = 0.05

// purpose names the audit's own random streams (which samples a shadow
// trains on, its seed, the scored subsets): not one of internal/seed's
// purposes, so independent of every stream of the run.
const purpose uint64 = 0x6175646974 // "audit"

// NodeAudit is the membership-inference audit of one honest node's final
// model: the loss-threshold attack (privacy.LossThresholdAudit) with the
// node's training split as members and its local test split as
// non-members, and the attacks that calibrate it.
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
	// LiRA is the likelihood-ratio attack with shadow models (lira.go;
	// attack = "lira"); nil otherwise.
	LiRA *privacy.AuditResult `json:"lira,omitempty"`
	// Violation is set when a certified lower bound (of any attack)
	// exceeds the accountant's ε: a bug in the accounting or the noise, or
	// bad luck of probability ≤ Alpha per attack.
	Violation bool `json:"violation,omitempty"`
}

// PooledAudit is an attack over every honest node's samples at once —
// one ROC over all members and all non-members — for the rates at low
// false-positive rates that one node's few non-members cannot resolve.
// The scores are comparable across nodes (losses; likelihood ratios).
type PooledAudit struct {
	Threshold privacy.AuditResult  `json:"threshold"`
	LiRA      *privacy.AuditResult `json:"lira,omitempty"`
	// Accountant is the largest ε of the honest nodes (nil without DP):
	// what a pooled lower bound is held against.
	Accountant *float64 `json:"accountant_epsilon,omitempty"`
	Violation  bool     `json:"violation,omitempty"`
}

// Report is a run's audit (a run directory's audit.json).
type Report struct {
	Run   string  `json:"run"`
	Alpha float64 `json:"alpha"`
	// Attack is "threshold" or "lira"; Shadows LiRA's shadow models per
	// node; Samples the cap on scored members and non-members per node
	// (0: all).
	Attack  string `json:"attack"`
	Shadows int    `json:"shadows,omitempty"`
	Samples int    `json:"samples,omitempty"`
	// Models says where the audited models came from: "run" (the end of
	// the run itself), "checkpoints" (the run directory's saved models) or
	// "re-run" (the simulation recomputed from config.toml).
	Models string      `json:"models"`
	Nodes  []NodeAudit `json:"nodes"`
	Pooled PooledAudit `json:"pooled"`
	// Mean AUC and the largest certified ε lower bound over honest nodes.
	MeanAUC          float64 `json:"mean_auc"`
	MeanReferenceAUC float64 `json:"mean_reference_auc,omitempty"`
	MeanLiRAAUC      float64 `json:"mean_lira_auc,omitempty"`
	MaxEpsilonLower  float64 `json:"max_epsilon_lower"`
}

// Options are an audit's attack ("threshold" or "lira"), LiRA's shadow
// models per node and the cap on scored samples per node (0: all): the
// keys of a config's [privacy.audit], which validates them.
type Options struct {
	Attack           string
	Shadows, Samples int
}

// Target is what an audit attacks: a run's final models, the data they
// were trained and tested on, and the run's last records.
type Target struct {
	// Seed is the run's seed: the audit's own streams derive from it.
	Seed uint64
	// Train is the dataset every split indexes.
	Train *data.Dataset
	// Models, Splits and Shift are each node's final model, its training
	// and local test split, and its feature shift, by node id.
	Models []*nn.Model
	Splits []data.ClientSplit
	Shift  []data.Transform
	// Honest are the audited nodes (a Byzantine node is not).
	Honest []int
	// Last is the run's last round's records, by node: each node's ε and
	// δ under DP.
	Last []metrics.NodeRound
	// Reference says the other honest nodes' models never saw a node's
	// data (strategy local): they calibrate the reference-model attack.
	Reference bool
	// Shadow trains shadow model k of node on the samples train (LiRA):
	// as the node trains, from the given seed; trainSize is the node's
	// training split's size, which fixes its DP calibration.
	Shadow func(ctx context.Context, node int, seed uint64, train []int32, trainSize int, shift data.Transform) (*nn.Model, error)
	// Workers is how many shadow models train at once.
	Workers int
}

// Run audits t's honest nodes with o: the loss threshold always, the
// reference-model attack when t.Reference, LiRA when o.Attack is "lira";
// per node and pooled over nodes.
func Run(ctx context.Context, t Target, o Options) (*Report, error) {
	rep := &Report{Alpha: Alpha, Attack: o.Attack, Shadows: o.Shadows, Samples: o.Samples}
	if len(t.Last) < len(t.Models) {
		return nil, fmt.Errorf("the last round has records of %d nodes, the run has %d", len(t.Last), len(t.Models))
	}
	// scored is node i's members or non-members, at most o.Samples of
	// them (a random subset, from the audit's own stream).
	scored := func(i, which int, idx []int32) []int32 {
		if o.Samples == 0 || len(idx) <= o.Samples {
			return idx
		}
		r := seed.Stream(t.Seed, purpose, 3, uint64(i), uint64(which))
		perm := r.Perm(len(idx))[:o.Samples]
		out := make([]int32, len(perm))
		for k, p := range perm {
			out[k] = idx[p]
		}
		return out
	}
	// loss is model j's loss on node i's samples idx.
	loss := func(j, i int, idx []int32) ([]float64, error) {
		out := make([]float64, len(idx))
		_, err := t.Models[j].SampleLosses(data.NewBatcher(t.Train, idx, nil, t.Shift[i]), out)
		return out, err
	}
	reference := t.Reference && len(t.Honest) > 1
	var poolMem, poolNon, liraMem, liraNon []float64
	var maxAcct *float64
	for _, i := range t.Honest {
		sp := t.Splits[i]
		memIdx, nonIdx := scored(i, 0, sp.Train), scored(i, 1, sp.Test)
		mem, err := loss(i, i, memIdx)
		if err != nil {
			return nil, err
		}
		non, err := loss(i, i, nonIdx)
		if err != nil {
			return nil, err
		}
		na := NodeAudit{Node: i, Delta: privacy.DefaultDelta(len(sp.Train))}
		nr := t.Last[i]
		if nr.Epsilon != nil && nr.Delta != nil {
			eps := *nr.Epsilon
			na.Accountant, na.Delta = &eps, *nr.Delta
			if maxAcct == nil || eps > *maxAcct {
				maxAcct = &eps
			}
		}
		if na.AuditResult, err = privacy.LossThresholdAudit(mem, non, na.Delta, Alpha); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		poolMem, poolNon = append(poolMem, mem...), append(poolNon, non...)
		if reference {
			if na.Reference, err = referenceAudit(loss, t.Honest, i, mem, non, memIdx, nonIdx, na.Delta); err != nil {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
		}
		if o.Attack == "lira" {
			lt := liraTarget{node: i, train: sp.Train, test: sp.Test, mem: memIdx, non: nonIdx, shift: t.Shift[i], model: t.Models[i]}
			var lm, ln []float64
			if na.LiRA, lm, ln, err = t.lira(ctx, lt, o.Shadows, na.Delta); err != nil {
				return nil, fmt.Errorf("node %d: lira: %w", i, err)
			}
			liraMem, liraNon = append(liraMem, lm...), append(liraNon, ln...)
		}
		na.Violation = na.Accountant != nil && (na.EpsilonLower > *na.Accountant ||
			na.Reference != nil && na.Reference.EpsilonLower > *na.Accountant ||
			na.LiRA != nil && na.LiRA.EpsilonLower > *na.Accountant)
		rep.Nodes = append(rep.Nodes, na)
		rep.MeanAUC += na.AUC
		rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.EpsilonLower)
		if na.Reference != nil {
			rep.MeanReferenceAUC += na.Reference.AUC / float64(len(t.Honest))
			rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.Reference.EpsilonLower)
		}
		if na.LiRA != nil {
			rep.MeanLiRAAUC += na.LiRA.AUC / float64(len(t.Honest))
			rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.LiRA.EpsilonLower)
		}
	}
	if len(rep.Nodes) == 0 {
		return rep, nil
	}
	rep.MeanAUC /= float64(len(rep.Nodes))
	// Pooled over nodes, δ is the largest node's (the weakest claim).
	delta := 0.0
	for _, n := range rep.Nodes {
		delta = max(delta, n.Delta)
	}
	rep.Pooled.Accountant = maxAcct
	var err error
	if rep.Pooled.Threshold, err = privacy.LossThresholdAudit(poolMem, poolNon, delta, Alpha); err != nil {
		return nil, err
	}
	if o.Attack == "lira" {
		r, err := privacy.ScoreAudit(liraMem, liraNon, delta, Alpha)
		if err != nil {
			return nil, err
		}
		rep.Pooled.LiRA = &r
	}
	rep.Pooled.Violation = maxAcct != nil && (rep.Pooled.Threshold.EpsilonLower > *maxAcct ||
		rep.Pooled.LiRA != nil && rep.Pooled.LiRA.EpsilonLower > *maxAcct)
	return rep, nil
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
	r, err := privacy.LossThresholdAudit(cm, cn, delta, Alpha)
	return &r, err
}

// Write writes rep into dir's audit.json.
func Write(dir string, rep *Report) error { return rundir.WriteAudit(dir, rep) }

// Summary is what summary.csv keeps of the report: the pooled result of
// its attack (LiRA for attack = "lira") and the pooled loss threshold's
// AUC.
func (r *Report) Summary() *rundir.AuditSummary {
	p := r.Pooled.Threshold
	if r.Pooled.LiRA != nil {
		p = *r.Pooled.LiRA
	}
	return &rundir.AuditSummary{AUC: p.AUC, TPRAt01FPR: p.TPRAt01FPR, TPRAt1FPR: p.TPRAt1FPR, EpsilonLower: p.EpsilonLower,
		ThresholdAUC: r.Pooled.Threshold.AUC}
}

// String is the report as a table.
func (r *Report) String() string {
	s := fmt.Sprintf("membership inference, members = training split, non-members = local test split (models: %s); ε lower bounds at confidence %.0f %%\n", r.Models, 100*(1-r.Alpha))
	head := fmt.Sprintf("%5s %8s %8s %7s %10s %11s %9s %9s %11s %9s\n", "node", "members", "non-mem", "AUC", "TPR@1%FPR", "TPR@.1%FPR", "advant.", "ε_lower", "ε_account.", "δ")
	row := func(node int, a privacy.AuditResult, acct string, delta float64, flag string) string {
		d := ""
		if delta > 0 {
			d = fmt.Sprintf("%9.2g", delta)
		}
		return fmt.Sprintf("%5d %8d %8d %7.4f %10.4f %11.4f %9.4f %9.4f %11s %s%s\n", node, a.Members, a.NonMembers,
			a.AUC, a.TPRAt1FPR, a.TPRAt01FPR, a.Advantage, a.EpsilonLower, acct, d, flag)
	}
	acctOf := func(p *float64) string {
		if p == nil {
			return "∞ (no DP)"
		}
		return fmt.Sprintf("%.4g", *p)
	}
	s += "loss threshold:\n" + head
	for _, n := range r.Nodes {
		flag := ""
		if n.Violation {
			flag = "  VIOLATION"
		}
		s += row(n.Node, n.AuditResult, acctOf(n.Accountant), n.Delta, flag)
	}
	for k, n := range r.Nodes {
		if n.Reference != nil {
			if k == 0 {
				s += "reference-model attack (score = loss − mean loss of the other nodes' models, which never saw the node's data):\n"
			}
			s += row(n.Node, *n.Reference, acctOf(n.Accountant), 0, "")
		}
	}
	for k, n := range r.Nodes {
		if n.LiRA != nil {
			if k == 0 {
				s += fmt.Sprintf("LiRA (Carlini et al. 2022), %d shadow models per node trained like it on random subsets of its samples:\n", r.Shadows)
			}
			s += row(n.Node, *n.LiRA, acctOf(n.Accountant), 0, "")
		}
	}
	pooled := func(name string, a privacy.AuditResult) string {
		flag := ""
		if r.Pooled.Accountant != nil && a.EpsilonLower > *r.Pooled.Accountant {
			flag = "  VIOLATION"
		}
		return fmt.Sprintf("pooled %-9s %8d %8d %7.4f %10.4f %11.4f %9.4f %9.4f %11s%s\n", name, a.Members, a.NonMembers,
			a.AUC, a.TPRAt1FPR, a.TPRAt01FPR, a.Advantage, a.EpsilonLower, acctOf(r.Pooled.Accountant), flag)
	}
	if len(r.Nodes) > 0 {
		s += "every honest node's samples in one ROC:\n"
		s += pooled("threshold", r.Pooled.Threshold)
		if r.Pooled.LiRA != nil {
			s += pooled("LiRA", *r.Pooled.LiRA)
		}
	}
	s += fmt.Sprintf("honest nodes: mean AUC %.4f", r.MeanAUC)
	if r.MeanReferenceAUC > 0 {
		s += fmt.Sprintf(" (reference-model attack %.4f)", r.MeanReferenceAUC)
	}
	if r.MeanLiRAAUC > 0 {
		s += fmt.Sprintf(" (LiRA %.4f)", r.MeanLiRAAUC)
	}
	s += fmt.Sprintf(", largest ε lower bound %.4f\n", r.MaxEpsilonLower)
	return s
}
