// Package audit is the membership-inference audit of a run's final
// models: what an attacker who sees a released model learns about which
// samples trained it, as an empirical lower bound on ε to hold against
// the accountant's.
//
// Run attacks every honest node of a Target (its final models, splits and
// last records): the loss threshold (privacy.LossThresholdAudit, members =
// the node's training split, non-members = its local test split), the
// reference-model attack when the other nodes' models never saw the node's
// data (strategy local), and LiRA with shadow models (privacy.FitLiRA)
// trained by the Target's Shadow function, per node and pooled over nodes.
// The Report is written into the run directory's audit.json (Write) and
// summarized in its summary.csv (Summary, rundir.AuditSummary).
//
// The package reads no config and runs no experiment: experiment builds
// the Target — from the end of a run, from the run directory's saved
// models, or by re-running the run from its config — and trains the
// shadows (experiment.AuditWith; `trellis audit`).
package audit
