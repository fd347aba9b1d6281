package report

import (
	"slices"
	"strings"
)

// Metric is one quantity a run records or a report derives: its name as
// in the files (and on the command line), the label people read, and its
// unit.
type Metric struct {
	// Name is the metric's name in the files: a key of rounds.jsonl,
	// metrics.jsonl, timings.jsonl or summary.csv, or a curve the report
	// derives (trust_neighbor_honest for rounds.jsonl's
	// trust.neighbor_honest). A final metric is "final_" + Name.
	Name string `json:"name"`
	// Label is what a plot's axis, a table's header or the dashboard
	// calls it, without the unit.
	Label string `json:"label"`
	// Unit is the unit in words ("" for a plain count that needs none).
	Unit string `json:"unit,omitempty"`
}

// Text is the label with its unit: "honest global accuracy (fraction)".
func (m Metric) Text() string {
	if m.Unit == "" {
		return m.Label
	}
	return m.Label + " (" + m.Unit + ")"
}

// The units of the convention every output follows (docs/reports.md):
// accuracies and other shares are fractions in [0, 1], never percent;
// rounds are numbered from 0, as in the files.
const (
	UnitFraction = "fraction"
	// UnitWeight is a total weight a node gave some senders: its weights
	// sum to 1 over its inputs.
	UnitWeight = "0–1"
)

// metricTable is the one table of metric labels: plots, results.md, the
// dashboard and report.html all take their labels from it (a test checks
// that it covers every field of the records and every summary column).
var metricTable = []Metric{
	// The round: rounds.jsonl, and the node lines of metrics.jsonl.
	{"round", "round", "from 0"},
	{"evaluated", "evaluated this round", "true/false"},
	{"honest_local_acc", "honest local accuracy", UnitFraction},
	{"honest_local_acc_std", "std of honest local accuracy over nodes", UnitFraction},
	{"honest_global_acc", "honest global accuracy", UnitFraction},
	{"all_acc", "local accuracy of all nodes", UnitFraction},
	{"honest_loss", "honest local test loss", "mean per sample"},
	{"all_loss", "local test loss of all nodes", "mean per sample"},
	{"delta_max", "largest Byzantine weight δ_max", UnitWeight},
	{"max_delta_max", "largest δ_max of any round", UnitWeight},
	{"mean_byz_weight", "mean Byzantine weight", UnitWeight},
	{"bytes_sent", "bytes sent", "bytes"},
	{"diverged", "diverged honest nodes", "nodes"},
	{"nodes", "nodes", ""},
	// DMTT's topology trust (rounds.jsonl's trust.*).
	{"trust_neighbor_honest", "mean topology trust in honest neighbours", "T_topo, 0–1"},
	{"trust_neighbor_byzantine", "mean topology trust in Byzantine neighbours", "T_topo, 0–1"},
	{"trust_all_honest", "mean topology trust in all honest nodes", "T_topo, 0–1"},
	{"trust_all_byzantine", "mean topology trust in all Byzantine nodes", "T_topo, 0–1"},
	{"trust_screened_honest", "honest neighbours passing the topology screen", UnitFraction},
	{"trust_screened_byzantine", "Byzantine neighbours passing the topology screen", UnitFraction},
	{"trust_view_edges", "edges in an honest node's trusted view", "edges, mean per node"},
	{"trust_view_true_edges", "true edges in an honest node's trusted view", "edges, mean per node"},
	{"trust_true_edges", "edges of the round's graph", "edges"},
	{"trust_claims_accepted", "topology claims accepted", "claims"},
	{"trust_claims_rejected", "topology claims refused, by reason", "claims"},
	{"trust_claim_bytes_per_node", "bytes of claims sent", "bytes per node"},
	// Differential privacy (rounds.jsonl's privacy.*, summary.csv).
	{"honest_max_epsilon", "largest ε of an honest node so far", "ε at δ"},
	{"honest_mean_epsilon", "mean ε of honest nodes so far", "ε at δ"},
	{"delta", "δ of the privacy account", "probability"},
	{"accountant", "privacy accountant of ε when not the default RDP", "pld, rdp or pld+rdp"},
	{"rdp_fallbacks", "honest nodes whose PLD failed (RDP ε reported)", "nodes"},
	{"accountant_fallback", "why the PLD accountant could not answer", "error text"},
	// Task type consensus (rounds.jsonl's consensus.*, summary.csv).
	{"consensus_method", "consensus method", "name"},
	{"consensus_mse", "MSE to the average", "over nodes and coordinates"},
	{"consensus_max_abs_err", "largest distance to the average", "over nodes and coordinates"},
	{"consensus_epsilon", "method's ε", "ε-DP; dp_gossip: pairwise Rényi DP"},
	{"consensus_recon_rmse", "reconstruction error of the target", "RMS over coordinates"},
	// One node's record (metrics.jsonl).
	{"node", "node", "id, from 0"},
	{"byzantine", "Byzantine (ground truth)", "true/false"},
	{"local_acc", "local accuracy", UnitFraction},
	{"local_loss", "local test loss", "mean per sample"},
	{"global_acc", "global accuracy", UnitFraction},
	{"global_loss", "global test loss", "mean per sample"},
	{"train_loss", "training loss", "mean per batch"},
	{"steps", "training steps", "batches"},
	{"claim_bytes", "bytes of topology claims sent", "bytes"},
	{"byz_weight", "Byzantine weight", UnitWeight},
	{"rejected", "messages refused", "messages"},
	{"kept_own", "too few inputs for the rule's f, own model kept", "true/false"},
	{"missing", "record missing (the node did not report)", "true/false"},
	{"scores", "agreement scores given each sender", "0–1"},
	{"epsilon", "ε so far", "ε at δ"},
	{"correction.clip_factor", "R-DPFL adaptive clip factor", "1: not clipped"},
	{"correction.gd_factor", "R-DPFL G_d bound factor", "1: not bounded"},
	{"correction.prediction", "R-DPFL prediction used", "none, self, previous or bb"},
	{"correction.empty", "no neighbour direction arrived", "true/false"},
	{"secagg.members", "secure-aggregation group members besides the node", "nodes"},
	{"secagg.survivors", "inputs in the secure group sum", "inputs"},
	{"secagg.fallback", "secure group sum failed, own model kept", "true/false"},
	// timings.jsonl: wall-clock, never reproducible.
	{"round_seconds", "round time", "seconds"},
	{"train_seconds", "training time", "seconds"},
	{"combine_node_seconds", "time closing rounds, summed over nodes", "seconds"},
	{"train_node_seconds", "training time, summed over nodes", "seconds"},
	// summary.csv besides the final metrics.
	{"seed", "seed", ""},
	{"name", "experiment name", ""},
	{"rounds", "rounds finished", "rounds"},
	{"diverged_round", "first round with a diverged honest node", "round, from 0; −1: none"},
	{"diverged_nodes", "honest nodes diverged at the end", "nodes"},
	{"audit_auc", "membership-inference AUC of the audit's attack", "0–1"},
	{"audit_tpr_at_0.1pct", "audit true-positive rate at a false-positive rate of 0.001", UnitFraction},
	{"audit_tpr_at_1pct", "audit true-positive rate at a false-positive rate of 0.01", UnitFraction},
	{"audit_epsilon_lower", "certified ε lower bound from the audit", "ε at δ"},
	{"audit_threshold_auc", "loss-threshold attack AUC", "0–1"},
	// The dashboard's own curves.
	{"local_acc_min", "lowest honest local accuracy", UnitFraction},
	{"score_ntk", "NTK agreement score", "0–1"},
	{"score_calibration", "calibration agreement score", "0–1"},
	{"score_cosine", "cosine agreement score", "0–1"},
	{"score_ntk_logits", "NTK agreement score, logits' Jacobian", "0–1"},
	{"score_ntk_uncentered", "NTK agreement score, uncentred alignment", "0–1"},
	{"score_ntk_classwise", "NTK agreement score, per-class blocks", "0–1"},
}

// Metrics returns the label table, in its order.
func Metrics() []Metric { return slices.Clone(metricTable) }

// Describe returns what the table says of a metric. A final metric
// ("final_" + name, the mean over the run's last final_rounds evaluated
// rounds) is labelled "final " + the label; a name as written inside
// rounds.jsonl's nested objects ("trust.neighbor_honest",
// "privacy.honest_max_epsilon") is found too. ok is false for a name the
// table does not know (its Metric then has the name as its label).
func Describe(name string) (Metric, bool) {
	base, final := strings.CutPrefix(name, "final_")
	if b, ok := strings.CutPrefix(base, "trust."); ok {
		base = "trust_" + b
	}
	base = strings.TrimPrefix(base, "privacy.")
	if b, ok := strings.CutPrefix(base, "consensus."); ok {
		base = "consensus_" + b
	}
	i := slices.IndexFunc(metricTable, func(m Metric) bool { return m.Name == base })
	if i < 0 {
		return Metric{Name: name, Label: name}, false
	}
	m := metricTable[i]
	m.Name = name
	if final {
		m.Label = "final " + m.Label
	}
	return m, true
}

// Label is a metric's label with its unit, for an axis or a table header:
// "final honest global accuracy (fraction)". A name the table does not
// know is returned as it is.
func Label(name string) string {
	m, _ := Describe(name)
	return m.Text()
}

// capital is s with its first letter upper-case (a plot's title).
func capital(s string) string {
	for i, r := range s {
		return strings.ToUpper(string(r)) + s[i+len(string(r)):]
	}
	return s
}
