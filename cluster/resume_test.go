package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/privacy"
	"github.com/trellis-fl/trellis/rundir"
)

// killedRecord is what the kill-and-resume tests read of metrics.jsonl.
type killedRecord struct {
	Round, Node int
	Missing     bool
	Epsilon     *float64
	SecAgg      *struct{ Members, Survivors int }
}

// killAndResume runs config text on `trellis node` processes in
// wall-clock mode (Δ = delta) with checkpoints and a monitor, SIGKILLs
// node victim once its checkpoint after round 1 (or later) is on disk,
// restarts it with --resume two rounds later, and returns the run's
// records and the round of the checkpoint it resumed from.
func killAndResume(t *testing.T, text string, nodes, rounds, victim int, delta time.Duration) (recs []killedRecord, killedAt int) {
	t.Helper()
	// 15 s: the processes start on a busy machine.
	wc := startWallclock(t, text, nodes, 15*time.Second, delta)
	out := wc.out
	for deadline := time.Now().Add(3 * time.Minute); wc.checkpointRound(victim) < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("node %d wrote no checkpoint after round 1", victim)
		}
	}
	killedAt = wc.kill(victim)
	if killedAt > rounds-4 {
		t.Fatalf("node %d was killed after round %d of %d: too late to resume", victim, killedAt, rounds)
	}
	wc.waitRounds(killedAt + 3)
	wc.resume(victim)
	wc.wait()
	b, err := os.ReadFile(filepath.Join(out, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var x killedRecord
		if err := json.Unmarshal(l, &x); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, x)
	}
	if len(recs) != rounds*nodes {
		t.Fatalf("%d records, want %d (%d rounds × %d nodes)", len(recs), rounds*nodes, rounds, nodes)
	}
	for _, r := range recs {
		// From the kill on (a process that started late misses the first
		// rounds, as any late node does).
		if r.Missing && r.Node != victim && r.Round > killedAt {
			t.Errorf("node %d lost its record of round %d", r.Node, r.Round)
		}
	}
	if last := recs[len(recs)-nodes+victim]; last.Node != victim || last.Missing {
		t.Errorf("the resumed node %d has no record of the last round: it did not rejoin", victim)
	}
	d, err := os.ReadFile(filepath.Join(out, cluster.DriverFile))
	if err != nil || !bytes.Contains(d, []byte(fmt.Sprintf(`"resumed_after":%d}`, killedAt))) {
		t.Errorf("%s has no record of node %d resumed after round %d (err %v)", cluster.DriverFile, victim, killedAt, err)
	}
	return recs, killedAt
}

// A node-level DP node killed with SIGKILL and resumed from its checkpoint
// goes on charging its accountant from where it was: after its k-th
// release (the checkpoint's rounds, then the rounds it ran after the
// restart) its ε is that of k Gaussian releases, computed here from the
// mechanism alone, never that of a fresh accountant. The other nodes lose
// no record.
func TestWallclockResumedDPNodeKeepsItsBudget(t *testing.T) {
	const nodes, rounds, victim = 4, 9, 2
	const z, delta = 1.5, 1e-3
	text := logregFedAvg("resume-dp", nodes, rounds, 5, 800) +
		fmt.Sprintf("[privacy]\nmode = \"node\"\nclip = 1.0\nnoise_multiplier = %v\ndelta = %v\n", z, delta)
	recs, killedAt := killAndResume(t, text, nodes, rounds, victim, 2*time.Second)
	epsAfter := func(releases int) float64 {
		eps, _, err := privacy.EpsilonAfter(privacy.GaussianEvent{Multiplier: z, Sampling: privacy.Unamplified()}, releases, delta, nil)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	// The victim's records in round order: those up to its checkpoint's
	// round are the releases it resumes with; a record the killed process
	// may have sent after its last checkpoint is not in it; then the dead
	// rounds (missing); then the resumed process's.
	releases, saved, dead, checked := 0, 0, false, 0
	for _, r := range recs {
		switch {
		case r.Node != victim:
			continue
		case r.Missing:
			dead = dead || r.Round > killedAt
			continue
		case r.Round > killedAt && !dead:
			continue // after the last checkpoint, before the kill
		}
		if r.Round <= killedAt {
			saved++
		}
		releases++
		if r.Epsilon == nil {
			t.Fatalf("node %d round %d has no ε", victim, r.Round)
		}
		if want := epsAfter(releases); math.Abs(*r.Epsilon-want) > 1e-9*want {
			t.Errorf("node %d round %d: ε = %v, want %v (%d releases; a fresh accountant would give %v)", victim, r.Round, *r.Epsilon, want, releases, epsAfter(releases-saved))
		}
		if dead {
			checked++
		}
	}
	if !dead || checked == 0 || saved == 0 {
		t.Fatalf("node %d: checkpoint of round %d, %d releases before it, %d records after the restart: nothing to compare", victim, killedAt, saved, checked)
	}
}

// A secure-aggregation node killed with SIGKILL resumes from its
// checkpoint and its group sums again; its neighbours' groups go on
// without it meanwhile, and nobody loses a record.
func TestWallclockResumedSecAggNode(t *testing.T) {
	const nodes, rounds, victim = 5, 9, 3
	text := logregFedAvg("resume-secagg", nodes, rounds, 7, 1000) + "[topology]\nkind = \"kregular\"\nk = 4\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 3\n"
	recs, killedAt := killAndResume(t, text, nodes, rounds, victim, 3*time.Second)
	last := recs[len(recs)-nodes+victim]
	if last.SecAgg == nil || last.SecAgg.Survivors == 0 {
		t.Errorf("the resumed node's last round: secure aggregation %+v, want a group sum with survivors", last.SecAgg)
	}
	for _, r := range recs {
		if r.Node != victim && r.Round > killedAt+1 && r.Round <= killedAt+2 && r.SecAgg == nil {
			t.Errorf("node %d round %d (node %d dead): no secure aggregation record", r.Node, r.Round, victim)
		}
	}
}
