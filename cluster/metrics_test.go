package cluster

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/wire"
)

// scrape serves m on a loopback port (":0": the default interface) and
// GETs /metrics, checking the content type and parsing the text format
// strictly.
func scrape(t *testing.T, m Prometheus) map[string]float64 {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, err := ServeMetrics(ctx, ":0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr.String(), "127.0.0.1:") {
		t.Errorf("metrics without a host bound %s, want the loopback interface", addr)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s, %q", resp.Status, ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParsePrometheus(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return out
}

// TestMetricsOfARun: a monitor and two nodes in-process (lock-step, over
// IPC); after the run, the monitor's and a node's /metrics say what the
// run did: three rounds, the records, the messages and frames each node
// sent (one vector and one phase marker per round to its one peer), the
// round-duration histograms, nothing missing.
func TestMetricsOfARun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small deployed experiment in-process")
	}
	c, s := testSetup(t, twoNodes)
	sock, err := os.MkdirTemp("", "pm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	peers := IPCEndpoints(sock, 2)
	keys := wire.NewSeedKeys(c.Seed, 2)
	dir, _ := keys.Directory()
	mm := NewMonitorMetrics()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang guard
	defer cancel()
	monDone := make(chan error, 1)
	runDir := filepath.Join(t.TempDir(), "run")
	rd, err := experiment.CreateRunDir(c, runDir, "seeded", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Deploy()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		err := RunMonitor(ctx, MonitorConfig{Run: testRun(d), Out: rd, Endpoint: peers.Monitor, Directory: dir,
			Dir: runDir, Metrics: mm})
		_, err = rd.Close(err)
		monDone <- err
	}()
	nm := []*NodeMetrics{NewNodeMetrics(0), NewNodeMetrics(1)}
	nodeDone := make(chan error, 2)
	for i := range 2 {
		nc := testNode(t, s, i, keys)
		nc.Peers, nc.Timing, nc.Metrics = peers, Timing{Mode: Lockstep, PhaseTimeout: time.Minute}, nm[i]
		go func() { nodeDone <- RunNode(ctx, nc) }()
	}
	for range 2 {
		if err := <-nodeDone; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-monDone; err != nil {
		t.Fatal(err)
	}
	mon := scrape(t, mm)
	for name, want := range map[string]float64{
		"trellis_monitor_round":                           2,
		"trellis_monitor_rounds_written_total":            3,
		"trellis_monitor_records_total":                   8, // 3 rounds × 2 nodes, and each node's last
		"trellis_monitor_records_refused_total":           0,
		"trellis_monitor_missing_records_total":           0,
		"trellis_monitor_missing_nodes":                   0,
		"trellis_monitor_round_seconds_count":             3,
		`trellis_monitor_round_seconds_bucket{le="+Inf"}`: 3,
	} {
		if got, ok := mon[name]; !ok || got != want {
			t.Errorf("monitor %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if mon["trellis_monitor_bytes_received_total"] <= 0 {
		t.Error("the monitor received no bytes")
	}
	node := scrape(t, nm[1])
	for name, want := range map[string]float64{
		`trellis_node_round{node="1"}`:                  2,
		`trellis_node_rounds_total{node="1"}`:           3,
		`trellis_node_messages_sent_total{node="1"}`:    3,
		`trellis_node_frames_sent_total{node="1"}`:      6,
		`trellis_node_frames_dropped_total{node="1"}`:   0,
		`trellis_node_missing_peers{node="1"}`:          0,
		`trellis_node_late_total{node="1"}`:             0,
		`trellis_node_round_seconds_count{node="1"}`:    3,
		`trellis_node_exchange_seconds_count{node="1"}`: 3,
		`trellis_node_train_seconds_count{node="1"}`:    3,
		`trellis_node_missing_markers_total{node="1"}`:  0,
	} {
		if got, ok := node[name]; !ok || got != want {
			t.Errorf("node %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	// Node 0's three vectors and three markers, and its leave marker if it
	// came before node 1 stopped listening.
	if got := node[`trellis_node_frames_received_total{node="1"}`]; got != 6 && got != 7 {
		t.Errorf("node 1 received %v frames, want 6 or 7", got)
	}
	if node[`trellis_node_bytes_sent_total{node="1"}`] <= 0 || node[`trellis_node_bytes_received_total{node="1"}`] <= 0 {
		t.Error("node 1 counted no bytes")
	}
}

func TestParsePrometheusRefuses(t *testing.T) {
	for _, text := range []string{
		"x 1\n", // no TYPE
		"# TYPE x counter\nx one\n",
		"# TYPE x counter\nx{a=\"b\" 1\n",
		"# TYPE x counter\nx{a=b} 1\n",
		"# TYPE x counter\n# TYPE x gauge\nx 1\n",
		"# TYPE x counter\nx 1\nx 2\n",
		"# TYPE 1x counter\n1x 1\n",
		"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 0\nh_count 1\n",
		"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0\nh_count 3\n",
	} {
		if _, err := ParsePrometheus(strings.NewReader(text)); err == nil {
			t.Errorf("accepted %q", text)
		}
	}
	m, err := ParsePrometheus(strings.NewReader("# HELP h a histogram\n# TYPE h histogram\nh_bucket{n=\"0\",le=\"1\"} 1\nh_bucket{n=\"0\",le=\"+Inf\"} 2\nh_sum{n=\"0\"} 3.5\nh_count{n=\"0\"} 2\n"))
	if err != nil || m[`h_sum{n="0"}`] != 3.5 {
		t.Errorf("a valid histogram: %v %v", m, err)
	}
}

// A round no node reported (they all started after its window) is
// written with every node missing once the next round is complete,
// instead of holding back every later round.
func TestMonitorWritesARoundNobodyReported(t *testing.T) {
	c, err := config.Parse([]byte(twoNodes), "test config")
	if err != nil {
		t.Fatal(err)
	}
	s, err := experiment.SetupOf(c, data.TrainTest{}) // the monitor needs no data
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Deploy()
	if err != nil {
		t.Fatal(err)
	}
	run := testRun(d)
	dir := t.TempDir()
	rd, err := experiment.CreateRunDir(c, dir, "seeded", nil)
	if err != nil {
		t.Fatal(err)
	}
	df, err := os.Create(filepath.Join(dir, DriverFile))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	mm := NewMonitorMetrics()
	m := &monitor{s: run, graph: run.Graph, byz: run.byzantine(), rd: rd, pend: map[int]*pending{},
		done: make([]bool, run.Nodes), log: slog.New(slog.DiscardHandler), prev: time.Now(), driver: json.NewEncoder(df), metrics: mm}
	for i := range run.Nodes {
		if err := m.add(&Record{Node: i, Round: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.flush(time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if m.next != 2 {
		t.Fatalf("rounds written: %d, want 2 (round 0 with nobody, round 1 complete)", m.next)
	}
	_, _ = rd.Close(context.Canceled) // flushes the files (a stopped run: no summary)
	prom := scrape(t, mm)
	if prom["trellis_monitor_missing_records_total"] != float64(run.Nodes) || prom["trellis_monitor_rounds_written_total"] != 2 {
		t.Errorf("metrics: %v missing records, %v rounds written; want %d and 2", prom["trellis_monitor_missing_records_total"], prom["trellis_monitor_rounds_written_total"], run.Nodes)
	}
	b, _ := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if n := strings.Count(string(b), `"missing":true`); n != run.Nodes {
		t.Errorf("%d node records marked missing, want %d:\n%s", n, run.Nodes, b)
	}
}
