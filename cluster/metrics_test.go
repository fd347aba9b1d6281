package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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
	out, err := parsePrometheus(strings.NewReader(string(body)))
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
	wantSamples(t, "monitor", mon, map[string]float64{
		"trellis_monitor_round":                           2,
		"trellis_monitor_rounds_written_total":            3,
		"trellis_monitor_records_total":                   8, // 3 rounds × 2 nodes, and each node's last
		"trellis_monitor_records_refused_total":           0,
		"trellis_monitor_missing_records_total":           0,
		"trellis_monitor_missing_nodes":                   0,
		"trellis_monitor_round_seconds_count":             3,
		`trellis_monitor_round_seconds_bucket{le="+Inf"}`: 3,
	})
	if mon["trellis_monitor_bytes_received_total"] <= 0 {
		t.Error("the monitor received no bytes")
	}
	node := scrape(t, nm[1])
	wantSamples(t, "node", node, map[string]float64{
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
	})
	// Node 0's three vectors and three markers, and its leave marker if it
	// came before node 1 stopped listening.
	if got := node[`trellis_node_frames_received_total{node="1"}`]; got != 6 && got != 7 {
		t.Errorf("node 1 received %v frames, want 6 or 7", got)
	}
	if node[`trellis_node_bytes_sent_total{node="1"}`] <= 0 || node[`trellis_node_bytes_received_total{node="1"}`] <= 0 {
		t.Error("node 1 counted no bytes")
	}
}

// A node's and the monitor's /metrics carry every trellis metric under its
// name and labels, updated by what the node records, and the client
// library's process and Go runtime metrics.
func TestMetricsNamesAndStandardCollectors(t *testing.T) {
	nm := NewNodeMetrics(3)
	nm.sent(100, true, true)
	nm.sent(10, false, true)
	nm.sent(50, true, false)
	nm.received(70)
	nm.record(&Record{Round: 4, Late: 2, Missing: []int{1}, RoundSeconds: 0.3, TrainSeconds: 0.1, Refused: map[string]int{"garbage": 5}})
	node := scrape(t, nm)
	wantSamples(t, "node", node, map[string]float64{
		`trellis_node_round{node="3"}`:                             4,
		`trellis_node_rounds_total{node="3"}`:                      1,
		`trellis_node_messages_sent_total{node="3"}`:               1,
		`trellis_node_frames_sent_total{node="3"}`:                 2,
		`trellis_node_bytes_sent_total{node="3"}`:                  110,
		`trellis_node_frames_dropped_total{node="3"}`:              1,
		`trellis_node_frames_received_total{node="3"}`:             1,
		`trellis_node_bytes_received_total{node="3"}`:              70,
		`trellis_node_refused_total{node="3",reason="garbage"}`:    5,
		`trellis_node_late_total{node="3"}`:                        2,
		`trellis_node_missing_markers_total{node="3"}`:             1,
		`trellis_node_missing_peers{node="3"}`:                     1,
		`trellis_node_round_seconds_bucket{node="3",le="0.25"}`:    0,
		`trellis_node_round_seconds_bucket{node="3",le="0.5"}`:     1,
		`trellis_node_round_seconds_sum{node="3"}`:                 0.3,
		`trellis_node_train_seconds_bucket{node="3",le="0.1"}`:     1,
		`trellis_node_exchange_seconds_count{node="3"}`:            1,
		`trellis_node_exchange_seconds_bucket{node="3",le="0.25"}`: 1,
		`trellis_node_exchange_seconds_bucket{node="3",le="0.1"}`:  0,
		`trellis_node_round_seconds_bucket{node="3",le="+Inf"}`:    1,
	})
	if got := scrape(t, NewNodeMetrics(0))[`trellis_node_round{node="0"}`]; got != -1 {
		t.Errorf("a fresh node's round is %v, want -1", got)
	}
	mon := scrape(t, NewMonitorMetrics())
	for name, want := range map[string]float64{"trellis_monitor_round": -1, "trellis_monitor_rounds_written_total": 0, "trellis_monitor_records_total": 0} {
		if got, ok := mon[name]; !ok || got != want {
			t.Errorf("monitor %s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, m := range []map[string]float64{node, mon} {
		for _, name := range []string{"process_resident_memory_bytes", "process_open_fds", "go_goroutines", "go_memstats_heap_alloc_bytes"} {
			if m[name] <= 0 {
				t.Errorf("%s = %v, want > 0", name, m[name])
			}
		}
		for _, name := range []string{"process_cpu_seconds_total", "go_gc_duration_seconds_count", `go_info{version="` + runtime.Version() + `"}`} {
			if _, ok := m[name]; !ok {
				t.Errorf("no %s", name)
			}
		}
	}
}

// wantSamples checks scraped samples against their wanted values.
func wantSamples(t *testing.T, who string, got, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s %s = %v (present %v), want %v", who, name, g, ok, w)
		}
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
		if _, err := parsePrometheus(strings.NewReader(text)); err == nil {
			t.Errorf("accepted %q", text)
		}
	}
	m, err := parsePrometheus(strings.NewReader("# HELP h a histogram\n# TYPE h histogram\nh_bucket{n=\"0\",le=\"1\"} 1\nh_bucket{n=\"0\",le=\"+Inf\"} 2\nh_sum{n=\"0\"} 3.5\nh_count{n=\"0\"} 2\n"))
	if err != nil || m[`h_sum{n="0"}`] != 3.5 {
		t.Errorf("a valid histogram: %v %v", m, err)
	}
}

// A round no node reported (they all started after its window) is
// written with every node missing once the next round is complete,
// instead of holding back every later round.
func TestMonitorWritesARoundNobodyReported(t *testing.T) {
	m, rd, mm, dir := testMonitor(t)
	run := m.s
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

// testMonitor is a monitor of the two-node run (three rounds, lock-step:
// no gap), writing into a fresh run directory, fed by the test.
func testMonitor(t *testing.T) (*monitor, *rundir.Writer, *MonitorMetrics, string) {
	t.Helper()
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
	t.Cleanup(func() { df.Close() })
	mm := NewMonitorMetrics()
	m := &monitor{s: run, graph: run.Graph, byz: run.byzantine(), rd: rd, pend: map[int]*pending{}, gaveUp: []int{-1, -1},
		done: make([]bool, run.Nodes), log: slog.New(slog.DiscardHandler), prev: time.Now(), driver: json.NewEncoder(df), metrics: mm, wait: 2 * time.Minute}
	return m, rd, mm, dir
}

// Lock-step: a node that died in the last round after its peer had its
// markers (so no record lists it missing) but before its record reached
// the monitor. Once the peer is done the monitor waits Wait, then writes
// the round with the dead node missing, instead of waiting forever.
func TestMonitorWritesTheLastRoundOfANodeThatDied(t *testing.T) {
	m, rd, _, dir := testMonitor(t)
	m.wait = 10 * time.Millisecond
	for r := range m.s.Rounds {
		for i := range m.s.Nodes {
			if r < m.s.Rounds-1 || i == 0 {
				if err := m.add(&Record{Node: i, Round: r}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := m.flush(0, false); err != nil {
		t.Fatal(err)
	}
	if m.next != m.s.Rounds-1 {
		t.Fatalf("%d rounds written before the last, want %d", m.next, m.s.Rounds-1)
	}
	// Node 0 is not done yet: node 1 may still be one phase timeout behind.
	time.Sleep(2 * m.wait) // the wait under test
	if err := m.flush(0, false); err != nil || m.next != m.s.Rounds-1 {
		t.Fatalf("the last round was written (%v) while node 0, which reported it, was not done", err)
	}
	if err := m.add(&Record{Node: 0, Round: m.s.Rounds - 1, Done: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // a hang guard
	for m.next < m.s.Rounds && time.Now().Before(deadline) {
		if err := m.flush(0, false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(m.wait)
	}
	if m.next != m.s.Rounds {
		t.Fatalf("the last round is still waited for: %d of %d rounds written", m.next, m.s.Rounds)
	}
	if _, err := rd.Close(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if n := strings.Count(string(b), `"missing":true`); n != 1 {
		t.Errorf("%d node records marked missing, want 1 (node 1's last):\n%s", n, b)
	}
}

// parsePrometheus reads the text exposition format strictly, independently
// of the client library that writes it: every sample's family declared by
// # TYPE before it, metric and label names valid, label values quoted,
// values numbers, a histogram's buckets cumulative and ending in
// le="+Inf" equal to its _count. It returns each sample by its name and
// labels as written (`name{a="b"}`).
func parsePrometheus(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	types := map[string]string{}
	lastBucket := map[string]float64{}
	infBucket := map[string]float64{} // by the _count sample that must equal it
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			f := strings.SplitN(line, " ", 4)
			if len(f) < 3 || (f[1] != "HELP" && f[1] != "TYPE") || !validName(f[2]) {
				return nil, fmt.Errorf("line %d: bad comment %q", ln, line)
			}
			if f[1] == "TYPE" {
				if len(f) != 4 || !slices.Contains([]string{"counter", "gauge", "histogram", "summary", "untyped"}, f[3]) {
					return nil, fmt.Errorf("line %d: bad type %q", ln, line)
				}
				if _, dup := types[f[2]]; dup {
					return nil, fmt.Errorf("line %d: %s declared twice", ln, f[2])
				}
				types[f[2]] = f[3]
			}
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("line %d: no value: %q", ln, line)
		}
		key, val := line[:sp], line[sp+1:]
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: value %q: %w", ln, val, err)
		}
		name, labels := key, ""
		if i := strings.IndexByte(key, '{'); i >= 0 {
			if !strings.HasSuffix(key, "}") {
				return nil, fmt.Errorf("line %d: unclosed labels: %q", ln, key)
			}
			name, labels = key[:i], key[i+1:len(key)-1]
			if err := checkLabels(labels); err != nil {
				return nil, fmt.Errorf("line %d: %w", ln, err)
			}
		}
		if !validName(name) {
			return nil, fmt.Errorf("line %d: bad metric name %q", ln, name)
		}
		family := name
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suf); ok && (types[b] == "histogram" || types[b] == "summary" && suf != "_bucket") {
				family = b
			}
		}
		if _, ok := types[family]; !ok {
			return nil, fmt.Errorf("line %d: %s has no # TYPE before it", ln, name)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("line %d: %s twice", ln, key)
		}
		out[key] = v
		if family != name && strings.HasSuffix(name, "_bucket") {
			series := bucketSeries(labels)
			if prev, ok := lastBucket[family+series]; ok && v < prev {
				return nil, fmt.Errorf("line %d: %s buckets not cumulative", ln, family)
			}
			lastBucket[family+series] = v
			if strings.Contains(labels, `le="+Inf"`) {
				count := family + "_count"
				if series != "" {
					count += "{" + series + "}"
				}
				infBucket[count] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for series, v := range infBucket {
		if c, ok := out[series]; !ok || c != v {
			return nil, fmt.Errorf("%s: the +Inf bucket is %v, the count %v", series, v, c)
		}
	}
	return out, nil
}

// bucketSeries is a bucket's labels without le.
func bucketSeries(labels string) string {
	var keep []string
	for _, l := range strings.Split(labels, ",") {
		if !strings.HasPrefix(l, "le=") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, ",")
}

func checkLabels(labels string) error {
	for labels != "" {
		eq := strings.IndexByte(labels, '=')
		if eq <= 0 || !validName(labels[:eq]) || len(labels) < eq+2 || labels[eq+1] != '"' {
			return fmt.Errorf("bad label in %q", labels)
		}
		rest := labels[eq+1:]
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return fmt.Errorf("bad label value in %q", labels)
		}
		labels = strings.TrimPrefix(rest[len(q):], ",")
	}
	return nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
