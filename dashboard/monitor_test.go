package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/wire"
)

// A deployed run's monitor with a dashboard attached (MonitorConfig.Live,
// what trellis monitor --dashboard does) streams every round it writes to
// a viewer connected before the run, with the round's weighted edges, and
// writes the same edges into the run directory's edges.jsonl. The cluster
// runs in-process: the monitor and 4 node drivers (cluster.RunNode) over
// Unix sockets.
func TestMonitorServesLiveRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 4-node deployed run in-process")
	}
	c := tinyConfig(t, 3)
	c.Nodes = 4
	tt, err := experiment.LoadData(c)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := os.MkdirTemp("", "dash-") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	peers := cluster.IPCEndpoints(sock, c.Nodes)
	keys := wire.NewSeedKeys(c.Seed, c.Nodes)
	dir, err := keys.Directory()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()

	srv := New("monitor")
	sink := srv.Plan(out, []config.SweepRun{{Config: c}}, true).Live(0, config.SweepRun{Config: c})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()

	// A viewer, connected before the first round.
	frames := make(chan frame, 64)
	resp, err := http.Get(ts.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var f frame
				if json.Unmarshal([]byte(data), &f) == nil && f.Type == "round" {
					frames <- f
				}
			}
		}
		close(frames)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	s, err := experiment.SetupOf(c, tt)
	if err != nil {
		t.Fatal(err)
	}
	// The run as `trellis monitor` and `trellis node` wire it, each
	// process with its own deployment (a dynamic graph is not shared
	// between goroutines).
	deploy := func() (*experiment.Deployment, cluster.Run) {
		d, err := s.Deploy()
		if err != nil {
			t.Fatal(err)
		}
		return d, cluster.Run{Nodes: c.Nodes, Rounds: d.Setup.Rounds, EvalEvery: d.Setup.EvalEvery, Graph: d.Graph, Drops: d.Drops,
			Byzantine: d.Adversary.Byzantine}
	}
	_, run := deploy()
	rd, err := experiment.CreateRunDir(c, out, "seeded (test)", nil)
	if err != nil {
		t.Fatal(err)
	}
	monDone := make(chan error, 1)
	go func() {
		err := cluster.RunMonitor(ctx, cluster.MonitorConfig{Run: run, Out: rd, Endpoint: peers.Monitor,
			Directory: dir, Dir: out, Live: sink})
		_, err = rd.Close(err)
		monDone <- err
	}()
	nodeErrs := make(chan error, c.Nodes)
	for i := range c.Nodes {
		d, run := deploy()
		n, adv, err := d.Node(i, keys)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := keys.Identity(i)
		nc := cluster.NodeConfig{Node: n, Identity: id, Directory: dir, Run: run, Adversary: adv, Global: d.Global(), Peers: peers,
			Timing: cluster.Timing{Mode: cluster.Lockstep, PhaseTimeout: time.Minute}}
		go func() { nodeErrs <- cluster.RunNode(ctx, nc) }()
	}
	for range c.Nodes {
		if err := <-nodeErrs; err != nil {
			t.Fatalf("node: %v", err)
		}
	}
	if err := <-monDone; err != nil {
		t.Fatalf("monitor: %v", err)
	}

	// Three rounds written, three streamed (nothing slowed the viewer, so
	// the Latest sink skipped none), with the round's weights.
	var got []frame
	timeout := time.After(time.Minute)
	for len(got) < c.Rounds {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("the stream ended after %d rounds", len(got))
			}
			got = append(got, f)
		case <-timeout:
			t.Fatalf("%d of %d rounds streamed", len(got), c.Rounds)
		}
	}
	edges, err := os.ReadFile(filepath.Join(out, rundir.EdgesFile))
	if err != nil {
		t.Fatalf("the monitor wrote no %s: %v", rundir.EdgesFile, err)
	}
	for k, f := range got {
		if f.Round != k || !f.Weighted || len(f.Nodes) != c.Nodes || len(f.Edges) != 2*c.Nodes {
			t.Errorf("streamed round %d: round %d, weighted %v, %d nodes, %d edges", k, f.Round, f.Weighted, len(f.Nodes), len(f.Edges))
		}
	}
	if n := strings.Count(string(edges), "\n"); n != c.Rounds {
		t.Errorf("%s has %d lines, want %d", rundir.EdgesFile, n, c.Rounds)
	}
	if info, _ := srv.Run(0); info.Status != Running {
		t.Errorf("run status %q while the monitor's dashboard is up", info.Status)
	}
}
