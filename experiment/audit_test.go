package experiment

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/privacy/audit"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/sim"
)

// TestAuditKeysAreChecked: [privacy.audit]'s keys are strict and range
// checked, with or without DP.
func TestAuditKeysAreChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{`attack = "lirra"`, `privacy.audit.attack = "lirra": want "threshold" or "lira"`},
		{"", `privacy.audit.attack = "": want "threshold" or "lira"`},
		{"attack = \"lira\"\nshadows = 2", "privacy.audit.shadows = 2: allowed range 4 to 256 (0: 16)"},
		{"attack = \"lira\"\nshadows = 1000", "privacy.audit.shadows = 1000: allowed range 4 to 256"},
		{"attack = \"threshold\"\nshadows = 8", `privacy.audit.shadows = 8: only attack = "lira" trains shadow models`},
		{"attack = \"threshold\"\nsamples = -1", "privacy.audit.samples = -1: need ≥ 0"},
	} {
		_, err := config.Parse([]byte("[privacy.audit]\n"+c.toml+"\n"), "p.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.toml, err, c.want)
		}
	}
	_, err := config.Parse([]byte("[privacy.audit]\nattack = \"lira\"\nshadow = 8\n"), "p.toml")
	if err == nil || !strings.Contains(err.Error(), `unknown key "privacy.audit.shadow"`) {
		t.Errorf("misspelt key: %v", err)
	}
	c, err := config.Parse([]byte("[privacy]\nmode = \"sample\"\ntarget_epsilon = 1.0\n[privacy.audit]\nattack = \"lira\"\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	if o := auditOptions(c); o.Attack != "lira" || o.Shadows != config.DefaultShadows {
		t.Errorf("options %+v", o)
	}
	// A config without the section keeps its hash (the section is
	// omitted from the resolved TOML, not written empty).
	plain, _ := config.Parse(nil, "p.toml")
	h1, _ := ConfigHash(plain)
	plain.Privacy.Audit = nil
	h2, _ := ConfigHash(plain)
	if h1 != h2 {
		t.Error("no audit section changes the config hash")
	}
}

// TestAuditAtEndOfRunAndFromCheckpoints: a run with [privacy.audit]
// (LiRA, four shadows, save_models) writes audit.json, the final_audit_*
// columns and every node's model; `trellis audit` on the directory then
// audits the saved models (no re-run) and gets the same report; the same
// checkpoints under a cluster run's layout are found too; a checkpoint
// that is not the evaluated model is refused.
func TestAuditAtEndOfRunAndFromCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("a run with sixteen shadow trainings, twice")
	}
	c := tinyConfig(t, `
[training]
lr = 0.1
epochs = 5
[strategy]
name = "local"
[partition]
method = "iid"
split = [0.5, 0.0, 0.5]
[privacy]
mode = "sample"
target_epsilon = 4.0
[privacy.audit]
attack = "lira"
shadows = 4
save_models = true
`)
	c.Rounds, c.FinalRounds = 2, 1
	dir := t.TempDir()
	fin, err := RunToDir(context.Background(), c, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fin.Audit == nil {
		t.Fatal("no audit summary")
	}
	rows, err := rundir.ReadSummary(dir)
	if err != nil || rows[0]["final_audit_auc"] == "" || rows[0]["final_audit_tpr_at_0.1pct"] == "" {
		t.Fatalf("summary %v, %v: no audit columns", rows, err)
	}
	atEnd := readAudit(t, dir)
	if atEnd.Models != "run" || atEnd.Attack != "lira" || atEnd.Shadows != 4 || atEnd.Pooled.LiRA == nil || len(atEnd.Nodes) != c.Nodes {
		t.Fatalf("audit at the end of the run: %+v", atEnd)
	}
	for _, n := range atEnd.Nodes {
		if n.LiRA == nil || n.Accountant == nil || n.Violation || n.LiRA.Members != n.Members {
			t.Errorf("node %d: %+v", n.Node, n)
		}
	}
	t.Logf("at the end of the run:\n%s", &atEnd)
	again, err := Audit(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Models != "checkpoints" {
		t.Errorf("audit of a directory with saved models used %q", again.Models)
	}
	for k := range again.Nodes {
		if a, e := again.Nodes[k], atEnd.Nodes[k]; a.AUC != e.AUC || a.LiRA.AUC != e.LiRA.AUC || a.LiRA.TPRAt1FPR != e.LiRA.TPRAt1FPR {
			t.Errorf("node %d: from checkpoints AUC %v / LiRA %v, at the end of the run %v / %v", a.Node, a.AUC, a.LiRA.AUC, e.AUC, e.LiRA.AUC)
		}
	}
	// A cluster run keeps node I's checkpoint in cluster/node-I.state.
	if err := os.MkdirAll(filepath.Join(dir, "cluster"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range c.Nodes {
		if err := os.Rename(filepath.Join(dir, rundir.ModelDir(i)), filepath.Join(dir, "cluster", "node-"+string(rune('0'+i))+".state")); err != nil {
			t.Fatal(err)
		}
	}
	models, err := FindModels(dir)
	if err != nil || len(models) != c.Nodes {
		t.Fatalf("cluster layout: %d models, %v", len(models), err)
	}
	// Node 2's checkpoint replaced by node 1's model: refused.
	st := models[1]
	st.Node = 2
	if err := Save(filepath.Join(dir, "cluster", "node-2.state"), st); err != nil {
		t.Fatal(err)
	}
	if _, err := Audit(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "not the model the run evaluated") {
		t.Errorf("a foreign checkpoint: %v", err)
	}
}

// TestAuditOfAnAsyncRun: [privacy.audit] in asynchronous timing. Node 3
// is 4× slower, so by the horizon it has ended fewer steps than the
// others: each node's shadows train as many rounds as the node ended
// steps (steps.jsonl's), each one release of the DP layer as in the node,
// the report carries each node's ε of its own steps, and `trellis audit`
// re-runs the simulation (saved models cannot be checked per step) and
// gives the same report.
func TestAuditOfAnAsyncRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a run with sixteen shadow trainings, twice")
	}
	c := tinyConfig(t, `
[training]
lr = 0.1
[strategy]
name = "local"
[partition]
method = "iid"
split = [0.5, 0.0, 0.5]
[privacy]
mode = "node"
noise_multiplier = 1.0
clip = 1.0
[privacy.audit]
attack = "lira"
shadows = 4
save_models = true
[timing]
mode = "async"
stragglers = 0.25
slowdown = 4.0
horizon = 6.5
`)
	c.Rounds = 6
	dir := t.TempDir()
	fin, err := RunToDir(context.Background(), c, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fin.Audit == nil {
		t.Fatal("no audit summary")
	}
	// The steps each node ended, from steps.jsonl.
	ended := make([]int, c.Nodes)
	steps, err := rundir.ReadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		ended[st.Node] = max(ended[st.Node], st.Step+1)
	}
	// The shadows' rounds, from the nodes after the same run.
	s := validSetup(t, c).Defaults()
	built, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Run(context.Background(), built.Config, built.Nodes, metrics.SinkFunc(func(*metrics.Round) error { return nil })); err != nil {
		t.Fatal(err)
	}
	rounds, err := shadowRounds(s, built)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steps ended by each node: %v", ended)
	if !slices.Equal(rounds, ended) || slices.Min(ended) == slices.Max(ended) {
		t.Fatalf("shadow rounds %v, steps ended %v: want them equal, and the straggler's fewer", rounds, ended)
	}
	atEnd := readAudit(t, dir)
	_, last, err := rundir.LastRound(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range atEnd.Nodes {
		if n.LiRA == nil || n.Accountant == nil || last[n.Node].Epsilon == nil || *n.Accountant != *last[n.Node].Epsilon {
			t.Errorf("node %d: %+v, recorded ε %v", n.Node, atEnd.Nodes[k], last[n.Node].Epsilon)
		}
	}
	again, err := Audit(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Models != "re-run" {
		t.Errorf("the audit of an asynchronous run used %q, want the re-run", again.Models)
	}
	for k := range again.Nodes {
		if a, e := again.Nodes[k], atEnd.Nodes[k]; a.AUC != e.AUC || a.LiRA.AUC != e.LiRA.AUC {
			t.Errorf("node %d: audited again AUC %v / LiRA %v, at the end of the run %v / %v", a.Node, a.AUC, a.LiRA.AUC, e.AUC, e.LiRA.AUC)
		}
	}
	// The same directory as a deployment's monitor leaves it (no virtual
	// clock in the manifest): refused with the reason.
	man, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	man.Async = nil
	if err := rundir.WriteManifest(dir, man); err != nil {
		t.Fatal(err)
	}
	if _, err := Audit(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "a deployed asynchronous run (its manifest has no virtual clock) cannot be audited") {
		t.Errorf("a deployed asynchronous run: %v", err)
	}
}

// readAudit reads dir's audit.json.
func readAudit(t *testing.T, dir string) audit.Report {
	t.Helper()
	var rep audit.Report
	b, err := os.ReadFile(filepath.Join(dir, rundir.AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}
