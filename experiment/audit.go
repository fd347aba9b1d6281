package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/internal/seed"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/sim"
)

// AuditFile is what Audit writes into a run directory; ModelsDir is where
// a run with [privacy.audit] save_models = true keeps its final models,
// one checkpoint directory per node (ModelDir).
const (
	AuditFile = "audit.json"
	ModelsDir = "models"
)

// ModelDir is node i's checkpoint directory under a run directory's
// ModelsDir.
func ModelDir(i int) string { return filepath.Join(ModelsDir, fmt.Sprintf("node-%d", i)) }

// AuditAlpha is the audit's confidence level: its ε lower bounds hold with
// probability 1 − AuditAlpha.
const AuditAlpha = 0.05

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
	// LiRA is the likelihood-ratio attack with shadow models
	// (audit_lira.go; attack = "lira"); nil otherwise.
	LiRA *privacy.AuditResult `json:"lira,omitempty"`
	// Violation is set when a certified lower bound (of any attack)
	// exceeds the accountant's ε: a bug in the accounting or the noise, or
	// bad luck of probability ≤ AuditAlpha per attack.
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

// AuditReport is a run's audit.
type AuditReport struct {
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

// AuditOptions are an audit's attack, shadows and samples
// ([privacy.audit]'s keys).
type AuditOptions struct {
	Attack           string
	Shadows, Samples int
}

// auditOptions are the run's [privacy.audit] settings, or the loss
// threshold on every sample when it has none.
func auditOptions(c Config) AuditOptions {
	if c.Privacy.Audit == nil {
		return AuditOptions{Attack: "threshold"}
	}
	a := c.Privacy.Audit.withDefaults()
	return AuditOptions{Attack: a.Attack, Shadows: a.Shadows, Samples: a.Samples}
}

func (o AuditOptions) check() error {
	a := AuditConfig{Attack: o.Attack, Shadows: o.Shadows, Samples: o.Samples}
	var errs []string
	a.validate(func(key string, val any, allowed string) {
		errs = append(errs, fmt.Sprintf("%s = %v: %s", key, val, allowed))
	})
	if len(errs) > 0 {
		return fmt.Errorf("audit: %s", strings.Join(errs, "; "))
	}
	return nil
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

// Audit audits the final models of the run in dir with the attack of the
// run's [privacy.audit] (the loss threshold when it has none); AuditWith
// chooses it.
func Audit(ctx context.Context, dir string) (*AuditReport, error) {
	return AuditWith(ctx, dir, nil)
}

// AuditWith audits the final models of the run in dir with o (nil: the
// run's [privacy.audit]). The models are the run directory's checkpoints
// when it holds one per honest node (FindModels: a run with save_models,
// a cluster run's node checkpoints), each checked first against the
// last round of metrics.jsonl — its local test accuracy and loss must be
// the recorded ones exactly; otherwise the run is re-run from its
// config.toml, which reproduces a simulation bit for bit (every stream,
// the DP noise included, comes from the seed), and the re-run's last
// round is checked against metrics.jsonl before its models are trusted.
// The report is written to dir/audit.json.
func AuditWith(ctx context.Context, dir string, o *AuditOptions) (*AuditReport, error) {
	c, err := LoadConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	opts := auditOptions(c)
	if o != nil {
		opts = *o
		if opts.Attack == "lira" && opts.Shadows == 0 {
			opts.Shadows = DefaultShadows
		}
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	round, recorded, err := lastRound(filepath.Join(dir, MetricsFile))
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
	source := "checkpoints"
	models, err := FindModels(dir)
	if err != nil {
		return nil, err
	}
	if len(models) > 0 {
		if err := loadModels(s, b, models, round, recorded); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
	} else {
		source = "re-run"
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
	}
	rep, err := auditBuilt(ctx, s, b, recorded, opts)
	if err != nil {
		return nil, err
	}
	rep.Run, rep.Models = dir, source
	return rep, writeReport(dir, rep)
}

func writeReport(dir string, rep *AuditReport) error {
	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, AuditFile), append(out, '\n'))
}

// auditBuilt audits the honest nodes of b, whose models are the run's
// final ones; last is the run's last round (each node's ε and δ).
func auditBuilt(ctx context.Context, s Setup, b *Built, last []metrics.NodeRound, o AuditOptions) (*AuditReport, error) {
	tt := s.Data
	shift, err := data.FeatureShift(tt.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return nil, err
	}
	rep := &AuditReport{Alpha: AuditAlpha, Attack: o.Attack, Shadows: o.Shadows, Samples: o.Samples}
	var honest []int
	for i := range b.Nodes {
		if !slices.Contains(b.Config.Byzantine, i) {
			honest = append(honest, i)
		}
	}
	// scored is node i's members or non-members, at most o.Samples of
	// them (a random subset, from the audit's own stream).
	scored := func(i, which int, idx []int32) []int32 {
		if o.Samples == 0 || len(idx) <= o.Samples {
			return idx
		}
		r := seed.Stream(s.Seed, auditPurpose, 3, uint64(i), uint64(which))
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
		_, err := b.Nodes[j].Model().SampleLosses(data.NewBatcher(tt.Train, idx, nil, shift[i]), out)
		return out, err
	}
	// Reference models must be independent of the node's data: with
	// strategy local, the other honest nodes' models are.
	reference := s.Strategy().Name() == "local" && len(honest) > 1
	var poolMem, poolNon, liraMem, liraNon []float64
	var maxAcct *float64
	for _, i := range honest {
		sp := b.Splits[i]
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
		nr := last[i]
		if nr.Epsilon != nil {
			eps := *nr.Epsilon
			na.Accountant, na.Delta = &eps, *nr.Delta
			if maxAcct == nil || eps > *maxAcct {
				maxAcct = &eps
			}
		}
		if na.AuditResult, err = privacy.LossThresholdAudit(mem, non, na.Delta, AuditAlpha); err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		poolMem, poolNon = append(poolMem, mem...), append(poolNon, non...)
		if reference {
			if na.Reference, err = referenceAudit(loss, honest, i, mem, non, memIdx, nonIdx, na.Delta); err != nil {
				return nil, fmt.Errorf("node %d: %w", i, err)
			}
		}
		if o.Attack == "lira" {
			t := liraTarget{node: i, train: sp.Train, test: sp.Test, mem: memIdx, non: nonIdx, shift: shift[i], model: b.Nodes[i].Model()}
			var lm, ln []float64
			if na.LiRA, lm, ln, err = s.liraAudit(ctx, tt.Train, t, o.Shadows, auditWorkers(s), na.Delta); err != nil {
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
			rep.MeanReferenceAUC += na.Reference.AUC / float64(len(honest))
			rep.MaxEpsilonLower = max(rep.MaxEpsilonLower, na.Reference.EpsilonLower)
		}
		if na.LiRA != nil {
			rep.MeanLiRAAUC += na.LiRA.AUC / float64(len(honest))
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
	if rep.Pooled.Threshold, err = privacy.LossThresholdAudit(poolMem, poolNon, delta, AuditAlpha); err != nil {
		return nil, err
	}
	if o.Attack == "lira" {
		r, err := privacy.ScoreAudit(liraMem, liraNon, delta, AuditAlpha)
		if err != nil {
			return nil, err
		}
		rep.Pooled.LiRA = &r
	}
	rep.Pooled.Violation = maxAcct != nil && (rep.Pooled.Threshold.EpsilonLower > *maxAcct ||
		rep.Pooled.LiRA != nil && rep.Pooled.LiRA.EpsilonLower > *maxAcct)
	return rep, nil
}

// FindModels looks for saved final models in a run directory: every
// checkpoint (experiment.Load) in it or in a directory below it, down to
// three levels — ModelsDir's node-I (save_models), a cluster run's node
// checkpoints — keeping each node's latest round. None is no error (an
// empty map); a checkpoint that does not load is.
func FindModels(dir string) (map[int]*Checkpoint, error) {
	out := map[int]*Checkpoint{}
	root := filepath.Clean(dir)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 3 {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != CheckpointJSON {
			return nil
		}
		st, err := Load(filepath.Dir(p))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Dir(p), err)
		}
		if old, ok := out[st.Node]; !ok || st.Round > old.Round {
			out[st.Node] = st
		}
		return nil
	})
	return out, err
}

// loadModels puts the checkpoints into b's honest models (a Byzantine
// node's is not audited): one per honest node, each of the run's last
// round, of the model's size, and reproducing the node's recorded local
// test accuracy and loss exactly.
func loadModels(s Setup, b *Built, models map[int]*Checkpoint, round int, rec []metrics.NodeRound) error {
	shift, err := data.FeatureShift(s.Data.Train.Shape, s.Nodes, s.Shift)
	if err != nil {
		return err
	}
	for i, n := range b.Nodes {
		if slices.Contains(b.Config.Byzantine, i) {
			continue // not audited: its checkpoint, if any, is not read
		}
		st, ok := models[i]
		if !ok {
			return fmt.Errorf("no checkpoint of node %d (found nodes %v)", i, slices.Sorted(maps.Keys(models)))
		}
		if st.Round != round {
			return fmt.Errorf("node %d's checkpoint is of round %d, the run's last round is %d", i, st.Round, round)
		}
		if err := n.Model().SetParams(st.Params); err != nil {
			return fmt.Errorf("node %d's checkpoint: %w", i, err)
		}
		if i >= len(rec) || rec[i].Node != i {
			return fmt.Errorf("metrics.jsonl's last round has no record of node %d", i)
		}
		ev, err := n.Model().Evaluate(data.NewBatcher(s.Data.Train, b.Splits[i].Test, nil, shift[i]))
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		if ev.Accuracy != rec[i].LocalAcc || ev.Loss != rec[i].LocalLoss {
			return fmt.Errorf("node %d's checkpoint is not the model the run evaluated in round %d: local accuracy %v and loss %v, recorded %v and %v",
				i, round, ev.Accuracy, ev.Loss, rec[i].LocalAcc, rec[i].LocalLoss)
		}
	}
	return nil
}

// saveModels writes every node's model into dir's ModelsDir
// (CaptureModel and Save, after the last round).
func saveModels(dir string, b *Built, round int) error {
	for i, n := range b.Nodes {
		if err := Save(filepath.Join(dir, ModelDir(i)), CaptureModel(n, round)); err != nil {
			return err
		}
	}
	return nil
}

// AuditSummary is what summary.csv keeps of a run's audit: the pooled
// result of its attack (LiRA for attack = "lira") and the pooled loss
// threshold's AUC.
type AuditSummary struct {
	AUC, TPRAt01FPR, TPRAt1FPR, EpsilonLower float64
	ThresholdAUC                             float64
}

// auditColumns are summary.csv's columns of an audited run.
var auditColumns = []string{"final_audit_auc", "final_audit_tpr_at_0.1pct", "final_audit_tpr_at_1pct", "final_audit_epsilon_lower", "final_audit_threshold_auc"}

func (r *AuditReport) summary() *AuditSummary {
	p := r.Pooled.Threshold
	if r.Pooled.LiRA != nil {
		p = *r.Pooled.LiRA
	}
	return &AuditSummary{AUC: p.AUC, TPRAt01FPR: p.TPRAt01FPR, TPRAt1FPR: p.TPRAt1FPR, EpsilonLower: p.EpsilonLower,
		ThresholdAUC: r.Pooled.Threshold.AUC}
}

func (a *AuditSummary) values() []string {
	if a == nil {
		return make([]string, len(auditColumns))
	}
	out := make([]string, 0, len(auditColumns))
	for _, v := range []float64{a.AUC, a.TPRAt01FPR, a.TPRAt1FPR, a.EpsilonLower, a.ThresholdAUC} {
		out = append(out, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return out
}

// readAudit reads auditColumns back from a summary row (nil when absent
// or empty).
func readAudit(row map[string]string) *AuditSummary {
	v, ok := readColumns(row, auditColumns)
	if !ok {
		return nil
	}
	return &AuditSummary{AUC: v[0], TPRAt01FPR: v[1], TPRAt1FPR: v[2], EpsilonLower: v[3], ThresholdAUC: v[4]}
}

// auditAtEnd is [privacy.audit] at the end of a run into dir: the final
// models saved if asked, the audit of b (just run; last its last round)
// written to audit.json, and its summary for summary.csv.
func auditAtEnd(ctx context.Context, c Config, dir string, s Setup, b *Built, last *metrics.Round) (*AuditSummary, error) {
	a := c.Privacy.Audit
	if a == nil || last == nil {
		return nil, nil
	}
	if a.SaveModels {
		if err := saveModels(dir, b, last.Round); err != nil {
			return nil, fmt.Errorf("saving the final models: %w", err)
		}
	}
	rep, err := auditBuilt(ctx, s.Defaults(), b, last.Nodes, auditOptions(c))
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	rep.Run, rep.Models = dir, "run"
	if err := writeReport(dir, rep); err != nil {
		return nil, err
	}
	return rep.summary(), nil
}

// lastRound reads the number and node records of the last round in a
// metrics.jsonl.
func lastRound(path string) (int, []metrics.NodeRound, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
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
			return 0, nil, fmt.Errorf("%s: %w", path, err)
		}
		if r.Round != round {
			round, recs = r.Round, recs[:0]
		}
		recs = append(recs, r.NodeRound)
	}
	if err := sc.Err(); err != nil {
		return 0, nil, err
	}
	if len(recs) == 0 {
		return 0, nil, fmt.Errorf("%s: no records", path)
	}
	return round, recs, nil
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
