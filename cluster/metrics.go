package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Prometheus metrics of a node process and of the monitor (`--metrics
// ADDR`), served at /metrics through prometheus/client_golang: trellis's
// own, named trellis_node_… (each sample labelled node="I") or
// trellis_monitor_…, and the client library's standard process_… (CPU,
// resident memory, open file descriptors) and go_… (goroutines, heap, GC)
// collectors.

// roundBuckets are the histogram bounds of round and phase durations, in
// seconds: from a lock-step round on a small model to a slow wall-clock
// window.
var roundBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// newRegistry is a registry with the process and Go runtime collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return reg
}

// family registers metrics of one process, every one with the labels.
type family struct {
	reg    *prometheus.Registry
	labels prometheus.Labels
}

func (f family) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: f.labels})
	f.reg.MustRegister(c)
	return c
}

func (f family) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: f.labels})
	f.reg.MustRegister(g)
	return g
}

func (f family) histogram(name, help string) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, ConstLabels: f.labels, Buckets: roundBuckets})
	f.reg.MustRegister(h)
	return h
}

func (f family) counters(name, help, label string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: f.labels}, []string{label})
	f.reg.MustRegister(c)
	return c
}

// NodeMetrics is what a node process exposes: updated by RunNode (from
// the connections' goroutines too; the client library's metrics are safe
// for concurrent use), read by the /metrics handler.
type NodeMetrics struct {
	reg                         *prometheus.Registry
	framesIn, bytesIn           prometheus.Counter
	framesOut, bytesOut         prometheus.Counter
	messagesOut, dropped        prometheus.Counter
	round                       prometheus.Gauge
	rounds, late, missing       prometheus.Counter
	missingNow                  prometheus.Gauge
	refused                     *prometheus.CounterVec
	roundSec, trainSec, exchSec prometheus.Histogram
}

// NewNodeMetrics returns the metrics of node id.
func NewNodeMetrics(id int) *NodeMetrics {
	f := family{reg: newRegistry(), labels: prometheus.Labels{"node": strconv.Itoa(id)}}
	m := &NodeMetrics{reg: f.reg,
		round:       f.gauge("trellis_node_round", "The last round the node finished (-1 before the first)."),
		rounds:      f.counter("trellis_node_rounds_total", "Rounds the node finished."),
		messagesOut: f.counter("trellis_node_messages_sent_total", "Signed wire messages queued for peers (one per recipient)."),
		framesOut:   f.counter("trellis_node_frames_sent_total", "Frames queued for peers: messages and phase markers."),
		bytesOut:    f.counter("trellis_node_bytes_sent_total", "Bytes of the frames queued for peers."),
		dropped:     f.counter("trellis_node_frames_dropped_total", "Frames dropped because a peer's queue was full."),
		framesIn:    f.counter("trellis_node_frames_received_total", "Frames received from peers, before validation."),
		bytesIn:     f.counter("trellis_node_bytes_received_total", "Bytes of the frames received from peers."),
		refused:     f.counters("trellis_node_refused_total", "What was refused, by reason: the driver's (garbage, bad_signature, ...) and the node's validator's (node_...).", "reason"),
		late:        f.counter("trellis_node_late_total", "Messages that arrived after their round closed (dropped and counted)."),
		missing:     f.counter("trellis_node_missing_markers_total", "In-neighbours whose phase marker had not arrived when a phase closed."),
		missingNow:  f.gauge("trellis_node_missing_peers", "In-neighbours missing at the close of the last round."),
		roundSec:    f.histogram("trellis_node_round_seconds", "Wall-clock duration of a round."),
		trainSec:    f.histogram("trellis_node_train_seconds", "Duration of a round's local training."),
		exchSec:     f.histogram("trellis_node_exchange_seconds", "Duration of a round's exchange phases and End (round minus training)."),
	}
	m.round.Set(-1)
	return m
}

func (m *NodeMetrics) received(n int) {
	if m != nil {
		m.framesIn.Inc()
		m.bytesIn.Add(float64(n))
	}
}

// sent counts a frame handed to a peer's queue (ok) or dropped there.
func (m *NodeMetrics) sent(n int, message, ok bool) {
	switch {
	case m == nil:
	case !ok:
		m.dropped.Inc()
	default:
		m.framesOut.Inc()
		m.bytesOut.Add(float64(n))
		if message {
			m.messagesOut.Inc()
		}
	}
}

// record takes a record the node pushes (its refusals are in it); the
// last ("done") one has nothing else.
func (m *NodeMetrics) record(rec *Record) {
	if m == nil {
		return
	}
	for k, v := range rec.Refused {
		m.refused.WithLabelValues(k).Add(float64(v))
	}
	if rec.Done {
		return
	}
	m.round.Set(float64(rec.Round))
	m.rounds.Inc()
	m.late.Add(float64(rec.Late))
	m.missing.Add(float64(len(rec.Missing)))
	m.missingNow.Set(float64(len(rec.Missing)))
	for _, r := range rec.Ready.Rejections {
		m.refused.WithLabelValues("node_" + r.Reason).Add(float64(r.Count))
	}
	m.roundSec.Observe(rec.RoundSeconds)
	m.trainSec.Observe(rec.TrainSeconds)
	m.exchSec.Observe(max(rec.RoundSeconds-rec.TrainSeconds, 0))
}

// Gatherer implements Prometheus.
func (m *NodeMetrics) Gatherer() prometheus.Gatherer { return m.reg }

// MonitorMetrics is what the monitor exposes.
type MonitorMetrics struct {
	reg                           *prometheus.Registry
	recordsIn, refusedIn, bytesIn prometheus.Counter
	round                         prometheus.Gauge
	rounds, missing, late         prometheus.Counter
	missingNow                    prometheus.Gauge
	refused                       *prometheus.CounterVec
	roundSec                      prometheus.Histogram
}

// NewMonitorMetrics returns the monitor's metrics.
func NewMonitorMetrics() *MonitorMetrics {
	f := family{reg: newRegistry()}
	m := &MonitorMetrics{reg: f.reg,
		round:      f.gauge("trellis_monitor_round", "The last round written to the run directory (-1 before the first)."),
		rounds:     f.counter("trellis_monitor_rounds_written_total", "Rounds written."),
		recordsIn:  f.counter("trellis_monitor_records_total", "Node records received whose signature verified."),
		refusedIn:  f.counter("trellis_monitor_records_refused_total", "Frames refused: not a record, a bad signature, an unknown node or round."),
		bytesIn:    f.counter("trellis_monitor_bytes_received_total", "Bytes of the frames received."),
		missing:    f.counter("trellis_monitor_missing_records_total", "Node rounds written without the node's record (a node that died or was cut off)."),
		missingNow: f.gauge("trellis_monitor_missing_nodes", "Nodes whose record was missing in the last round written."),
		refused:    f.counters("trellis_monitor_node_refused_total", "What the nodes' drivers refused, by reason, summed over the nodes' records.", "reason"),
		late:       f.counter("trellis_monitor_node_late_total", "Late messages, summed over the nodes' records."),
		roundSec:   f.histogram("trellis_monitor_round_seconds", "Period between the last records of consecutive rounds."),
	}
	m.round.Set(-1)
	return m
}

func (m *MonitorMetrics) received(n int, ok bool) {
	if m == nil {
		return
	}
	m.bytesIn.Add(float64(n))
	if ok {
		m.recordsIn.Inc()
	} else {
		m.refusedIn.Inc()
	}
}

// written takes a round the monitor wrote: its period and what its
// records say.
func (m *MonitorMetrics) written(r int, p *pending, seconds float64, nodes int) {
	if m == nil {
		return
	}
	m.round.Set(float64(r))
	m.rounds.Inc()
	m.missingNow.Set(float64(nodes - p.n))
	m.missing.Add(float64(nodes - p.n))
	for _, x := range p.records {
		if x == nil {
			continue
		}
		m.late.Add(float64(x.Late))
		for k, v := range x.Refused {
			m.refused.WithLabelValues(k).Add(float64(v))
		}
	}
	m.roundSec.Observe(seconds)
}

// Gatherer implements Prometheus.
func (m *MonitorMetrics) Gatherer() prometheus.Gatherer { return m.reg }

// Prometheus is what ServeMetrics serves: NodeMetrics or MonitorMetrics.
type Prometheus interface {
	Gatherer() prometheus.Gatherer
}

// MetricsHandler serves m at /metrics (the exposition format the scraper
// asks for; the text format by default).
func MetricsHandler(m Prometheus) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Gatherer(), promhttp.HandlerOpts{}))
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
