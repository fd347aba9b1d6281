package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Prometheus metrics of a node process and of the monitor (`--metrics
// ADDR`), served at /metrics in the Prometheus text exposition format
// (version 0.0.4: "# HELP", "# TYPE", then `name{label="value"} number`
// lines; histograms as cumulative _bucket{le=...}, _sum and _count). The
// format is written here, without a client library: about a hundred
// lines, and the binary stays free of a dependency tree for a few
// counters. Every metric is named trellis_node_… or trellis_monitor_….

// roundBuckets are the histogram bounds of round and phase durations, in
// seconds: from a lock-step round on a small model to a slow wall-clock
// window.
var roundBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// histogram is a Prometheus histogram with fixed buckets.
type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func (h *histogram) observe(v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(roundBuckets)+1)
	}
	k, _ := slices.BinarySearch(roundBuckets, v)
	h.counts[k]++
	h.sum += v
	h.n++
}

// expo writes the text format.
type expo struct {
	w      *bufio.Writer
	labels string // the labels every sample of the process carries
}

func (e *expo) family(name, typ, help string) {
	fmt.Fprintf(e.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// sample writes one sample; extra labels are name, value pairs.
func (e *expo) sample(name string, v float64, extra ...string) {
	e.w.WriteString(name)
	labels := e.labels
	for k := 0; k+1 < len(extra); k += 2 {
		if labels != "" {
			labels += ","
		}
		labels += extra[k] + "=" + strconv.Quote(extra[k+1])
	}
	if labels != "" {
		e.w.WriteString("{" + labels + "}")
	}
	e.w.WriteByte(' ')
	e.w.WriteString(formatValue(v))
	e.w.WriteByte('\n')
}

func (e *expo) metric(name, typ, help string, v float64) {
	e.family(name, typ, help)
	e.sample(name, v)
}

func (e *expo) histogram(name, help string, h *histogram) {
	e.family(name, "histogram", help)
	var cum uint64
	for k, b := range roundBuckets {
		if h.counts != nil {
			cum += h.counts[k]
		}
		e.sample(name+"_bucket", float64(cum), "le", formatValue(b))
	}
	e.sample(name+"_bucket", float64(h.n), "le", "+Inf")
	e.sample(name+"_sum", h.sum)
	e.sample(name+"_count", float64(h.n))
}

// counters writes a family of counters by one label, in label order.
func (e *expo) counters(name, help, label string, m map[string]uint64) {
	e.family(name, "counter", help)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e.sample(name, float64(m[k]), label, k)
	}
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// NodeMetrics is what a node process exposes: updated by RunNode, read by
// the /metrics handler.
type NodeMetrics struct {
	// Per frame, from the connections' goroutines.
	framesIn, bytesIn     atomic.Uint64
	framesOut, bytesOut   atomic.Uint64
	messagesOut, dropped  atomic.Uint64
	mu                    sync.Mutex
	node                  int
	round                 int
	rounds, late, missing uint64
	missingNow            int
	refused               map[string]uint64
	roundSec, trainSec    histogram
	exchangeSec           histogram
}

// NewNodeMetrics returns the metrics of node id.
func NewNodeMetrics(id int) *NodeMetrics {
	return &NodeMetrics{node: id, round: -1, refused: map[string]uint64{}}
}

func (m *NodeMetrics) received(n int) {
	if m != nil {
		m.framesIn.Add(1)
		m.bytesIn.Add(uint64(n))
	}
}

// sent counts a frame handed to a peer's queue (ok) or dropped there.
func (m *NodeMetrics) sent(n int, message, ok bool) {
	switch {
	case m == nil:
	case !ok:
		m.dropped.Add(1)
	default:
		m.framesOut.Add(1)
		m.bytesOut.Add(uint64(n))
		if message {
			m.messagesOut.Add(1)
		}
	}
}

// record takes a record the node pushes (its refusals are in it); the
// last ("done") one has nothing else.
func (m *NodeMetrics) record(rec *Record) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range rec.Refused {
		m.refused[k] += uint64(v)
	}
	if rec.Done {
		return
	}
	m.round = rec.Round
	m.rounds++
	m.late += uint64(rec.Late)
	m.missing += uint64(len(rec.Missing))
	m.missingNow = len(rec.Missing)
	for _, r := range rec.Ready.Rejections {
		m.refused["node_"+r.Reason] += uint64(r.Count)
	}
	m.roundSec.observe(rec.RoundSeconds)
	m.trainSec.observe(rec.TrainSeconds)
	m.exchangeSec.observe(max(rec.RoundSeconds-rec.TrainSeconds, 0))
}

// WritePrometheus writes the metrics in the text exposition format.
func (m *NodeMetrics) WritePrometheus(w io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &expo{w: bufio.NewWriter(w), labels: `node="` + strconv.Itoa(m.node) + `"`}
	e.metric("trellis_node_round", "gauge", "The last round the node finished (-1 before the first).", float64(m.round))
	e.metric("trellis_node_rounds_total", "counter", "Rounds the node finished.", float64(m.rounds))
	e.metric("trellis_node_messages_sent_total", "counter", "Signed wire messages queued for peers (one per recipient).", float64(m.messagesOut.Load()))
	e.metric("trellis_node_frames_sent_total", "counter", "Frames queued for peers: messages and phase markers.", float64(m.framesOut.Load()))
	e.metric("trellis_node_bytes_sent_total", "counter", "Bytes of the frames queued for peers.", float64(m.bytesOut.Load()))
	e.metric("trellis_node_frames_dropped_total", "counter", "Frames dropped because a peer's queue was full.", float64(m.dropped.Load()))
	e.metric("trellis_node_frames_received_total", "counter", "Frames received from peers, before validation.", float64(m.framesIn.Load()))
	e.metric("trellis_node_bytes_received_total", "counter", "Bytes of the frames received from peers.", float64(m.bytesIn.Load()))
	e.counters("trellis_node_refused_total", "What was refused, by reason: the driver's (garbage, bad_signature, ...) and the node's validator's (node_...).", "reason", m.refused)
	e.metric("trellis_node_late_total", "counter", "Messages that arrived after their round closed (dropped and counted).", float64(m.late))
	e.metric("trellis_node_missing_markers_total", "counter", "In-neighbours whose phase marker had not arrived when a phase closed.", float64(m.missing))
	e.metric("trellis_node_missing_peers", "gauge", "In-neighbours missing at the close of the last round.", float64(m.missingNow))
	e.histogram("trellis_node_round_seconds", "Wall-clock duration of a round.", &m.roundSec)
	e.histogram("trellis_node_train_seconds", "Duration of a round's local training.", &m.trainSec)
	e.histogram("trellis_node_exchange_seconds", "Duration of a round's exchange phases and End (round minus training).", &m.exchangeSec)
	return e.w.Flush()
}

// MonitorMetrics is what the monitor exposes.
type MonitorMetrics struct {
	recordsIn, refusedIn, bytesIn atomic.Uint64
	mu                            sync.Mutex
	round                         int
	rounds, missing               uint64
	missingNow                    int
	refused                       map[string]uint64
	late                          uint64
	roundSec                      histogram
}

// NewMonitorMetrics returns the monitor's metrics.
func NewMonitorMetrics() *MonitorMetrics {
	return &MonitorMetrics{round: -1, refused: map[string]uint64{}}
}

func (m *MonitorMetrics) received(n int, ok bool) {
	if m == nil {
		return
	}
	m.bytesIn.Add(uint64(n))
	if ok {
		m.recordsIn.Add(1)
	} else {
		m.refusedIn.Add(1)
	}
}

// written takes a round the monitor wrote: its period and what its
// records say.
func (m *MonitorMetrics) written(r int, p *pending, seconds float64, nodes int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.round = r
	m.rounds++
	m.missingNow = nodes - p.n
	m.missing += uint64(nodes - p.n)
	for _, x := range p.records {
		if x == nil {
			continue
		}
		m.late += uint64(x.Late)
		for k, v := range x.Refused {
			m.refused[k] += uint64(v)
		}
	}
	m.roundSec.observe(seconds)
}

// WritePrometheus writes the metrics in the text exposition format.
func (m *MonitorMetrics) WritePrometheus(w io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &expo{w: bufio.NewWriter(w)}
	e.metric("trellis_monitor_round", "gauge", "The last round written to the run directory (-1 before the first).", float64(m.round))
	e.metric("trellis_monitor_rounds_written_total", "counter", "Rounds written.", float64(m.rounds))
	e.metric("trellis_monitor_records_total", "counter", "Node records received whose signature verified.", float64(m.recordsIn.Load()))
	e.metric("trellis_monitor_records_refused_total", "counter", "Frames refused: not a record, a bad signature, an unknown node or round.", float64(m.refusedIn.Load()))
	e.metric("trellis_monitor_bytes_received_total", "counter", "Bytes of the frames received.", float64(m.bytesIn.Load()))
	e.metric("trellis_monitor_missing_records_total", "counter", "Node rounds written without the node's record (a node that died or was cut off).", float64(m.missing))
	e.metric("trellis_monitor_missing_nodes", "gauge", "Nodes whose record was missing in the last round written.", float64(m.missingNow))
	e.counters("trellis_monitor_node_refused_total", "What the nodes' drivers refused, by reason, summed over the nodes' records.", "reason", m.refused)
	e.metric("trellis_monitor_node_late_total", "counter", "Late messages, summed over the nodes' records.", float64(m.late))
	e.histogram("trellis_monitor_round_seconds", "Period between the last records of consecutive rounds.", &m.roundSec)
	return e.w.Flush()
}

// Prometheus is what ServeMetrics serves: NodeMetrics or MonitorMetrics.
type Prometheus interface {
	WritePrometheus(io.Writer) error
}

// MetricsHandler serves m at /metrics.
func MetricsHandler(m Prometheus) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = m.WritePrometheus(w)
	})
	return mux
}

// ServeMetrics serves m at http://addr/metrics until ctx is done. An
// address without a host (":9100") binds the loopback interface only
// (127.0.0.1:9100); a non-loopback host is bound as given, with a
// warning in the log (anyone who can reach it sees the run's counters).
// It returns the address bound.
func ServeMetrics(ctx context.Context, addr string, m Prometheus, log *slog.Logger) (net.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address %q: want HOST:PORT or :PORT (e.g. 127.0.0.1:9100)", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && log != nil {
		log.Warn("the metrics endpoint is reachable from the network", "addr", net.JoinHostPort(host, port))
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	srv := &http.Server{Handler: MetricsHandler(m), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && log != nil {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	return l.Addr(), nil
}

// ParsePrometheus reads the text exposition format as ServeMetrics writes
// it, strictly: every sample's family declared by # TYPE before it,
// metric and label names valid, label values quoted, values numbers, a
// histogram's buckets cumulative and ending in le="+Inf" equal to its
// _count. It returns each sample by its name and labels as written
// (`name{a="b"}`). For tests and for tools that read a node's metrics.
func ParsePrometheus(r io.Reader) (map[string]float64, error) {
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
			if b, ok := strings.CutSuffix(name, suf); ok && types[b] == "histogram" {
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
