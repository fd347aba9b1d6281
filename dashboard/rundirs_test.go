package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
)

// tinyConfig is a run of a few seconds: 6 nodes, 2 of them Gaussian
// liars, on a 2-regular graph, logistic regression on 600 samples.
func tinyConfig(t *testing.T, rounds int) config.Config {
	t.Helper()
	c := config.Default()
	c.Name = "tiny"
	for k, v := range map[string]string{"nodes": "6", "rounds": "3", "data.samples": "600", "model.kind": "logreg",
		"topology.kind": "kregular", "topology.k": "2", "adversary.fraction": "0.34", "adversary.attack": "gaussian",
		"adversary.sigma": "10", "strategy.name": "fedavg", "evaluation.global_test": "200"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(k, err)
		}
	}
	c.Rounds = rounds
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// A run with the dashboard attached writes the same files, byte for
// byte, as one without (metrics.Round.Live is never written), and so does
// one without edges.jsonl (run.edges = false); the live frames carry the
// weights; trellis serve's reader shows the run directory with every
// round, its edges weighted as live from edges.jsonl, or unweighted
// without the file.
func TestLiveRunAndServeRunDir(t *testing.T) {
	c := tinyConfig(t, 3)
	plain, watched, noEdges := t.TempDir(), t.TempDir(), t.TempDir()
	if _, err := experiment.RunToDir(t.Context(), c, plain, nil); err != nil {
		t.Fatal(err)
	}
	c2 := c
	c2.Run.Edges = false
	if _, err := experiment.RunToDir(t.Context(), c2, noEdges, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(noEdges, rundir.EdgesFile)); err == nil {
		t.Errorf("run.edges = false wrote %s", rundir.EdgesFile)
	}
	s := New("live")
	sw := s.Plan(watched, []config.SweepRun{{Config: c}}, false)
	if _, err := experiment.RunToDirWith(t.Context(), c, watched, experiment.RunOptions{Live: sw.Live(0, config.SweepRun{Config: c})}); err != nil {
		t.Fatal(err)
	}
	sw.Done(nil)
	for _, f := range []string{rundir.MetricsFile, rundir.RoundsFile, rundir.SummaryFile, rundir.EdgesFile} {
		a, _ := os.ReadFile(filepath.Join(plain, f))
		b, _ := os.ReadFile(filepath.Join(watched, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs with the dashboard attached", f)
		}
		if f == rundir.EdgesFile {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(noEdges, f)); !bytes.Equal(a, b) {
			t.Errorf("%s differs without edges.jsonl", f)
		}
	}
	info, _ := s.Run(0)
	if info.Status != Finished || info.Final["final_honest_global_acc"] <= 0 {
		t.Errorf("live run's info after Done: %+v", info)
	}
	var liveFrames []frame
	for _, e := range s.hub.all() {
		var f frame
		if json.Unmarshal(e, &f) == nil && f.Type == "round" {
			liveFrames = append(liveFrames, f)
		}
	}
	// A Latest sink may skip a record, never reorder one.
	if len(liveFrames) == 0 || !liveFrames[len(liveFrames)-1].Weighted {
		t.Fatalf("live frames: %d", len(liveFrames))
	}
	for _, f := range liveFrames {
		if len(f.Edges) != 12 {
			t.Fatalf("round %d: %d edges, want 12", f.Round, len(f.Edges))
		}
	}

	// A sweep called again keeps the finished run: the page shows it
	// from its files, with no live sink.
	again := New("again")
	sw = again.Plan(watched, []config.SweepRun{{Config: c}}, false)
	if sink := sw.Live(0, config.SweepRun{Config: c}); sink != nil {
		t.Fatal("a live sink for a run kept as it is")
	}
	if info, _ := again.Run(0); info.Status != Finished {
		t.Fatalf("kept run: %+v", info)
	}
	if n := strings.Count(string(joinEvents(again.hub.all())), `"type":"round"`); n != 3 {
		t.Fatalf("kept run: %d rounds shown, want 3", n)
	}

	liveEdges := map[int]string{}
	for _, f := range liveFrames {
		b, _ := json.Marshal(f.Edges)
		liveEdges[f.Round] = string(b)
	}

	// The finished directories, as trellis serve reads them.
	for _, dir := range []string{plain, noEdges} {
		srv := New("serve")
		n, err := srv.LoadDirs(dir)
		if err != nil || n != 1 {
			t.Fatalf("LoadDirs: %d %v", n, err)
		}
		ts := httptest.NewServer(srv.Handler())
		resp := get(t, ts.URL+"/api/events.json", nil)
		var evs []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&evs); err != nil {
			t.Fatal(err)
		}
		ts.Close()
		var rounds int
		for _, e := range evs {
			switch e["type"] {
			case "run":
				if e["status"] != Finished || !strings.Contains(e["config"].(string), "fedavg") || !strings.Contains(e["command"].(string), "trellis run") {
					t.Errorf("run event: %v", e)
				}
			case "round":
				if len(e["nodes"].([]any)) != 6 {
					t.Errorf("round %v: %d nodes", e["round"], len(e["nodes"].([]any)))
				}
				edges := e["edges"].([]any)
				if dir == noEdges {
					// The round's graph, rebuilt from the config: the
					// same edges as live, without weights.
					if len(edges) != 12 || edges[0].([]any)[2] != nil || e["weighted"] != false {
						t.Errorf("round %v: edges %v", e["round"], edges)
					}
				} else {
					// From edges.jsonl: the live weights.
					b, _ := json.Marshal(edges)
					round := int(e["round"].(float64))
					if want, ok := liveEdges[round]; e["weighted"] != true || len(edges) != 12 || ok && string(b) != want {
						t.Errorf("round %d from edges.jsonl: %s, live %s", round, b, want)
					}
				}
				rounds++
			}
		}
		if rounds != 3 {
			t.Errorf("%d rounds served, want 3", rounds)
		}
	}

	// report.html: one file, the page with the events inline, no
	// reference to anything outside it.
	p, err := WriteReport(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`src="app.js"`, `href="app.css"`, `src="http`, `href="http`, "url(http", "EventSource(\"http"} {
		if bytes.Contains(b, []byte(bad)) {
			t.Errorf("report.html refers outside itself: %s", bad)
		}
	}
	if !bytes.Contains(b, []byte("window.TRELLIS_EVENTS = [")) {
		t.Errorf("report.html has no inline data")
	}
}

func runTiny(t *testing.T, c config.Config, dir string) (rundir.Final, error) {
	t.Helper()
	return experiment.RunToDir(t.Context(), c, dir, nil)
}
