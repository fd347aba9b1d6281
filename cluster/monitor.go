package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// RunWriter is where the monitor writes the run's records (the run
// directory a simulated run writes; the CLI opens it and closes it after
// RunMonitor returns).
type RunWriter interface {
	Round(*metrics.Round) error
	Timing(metrics.Timing)
}

// MonitorConfig is the passive monitor of a deployed run.
type MonitorConfig struct {
	// Run is the run (the monitor needs the graph and the Byzantine
	// nodes, not the data).
	Run Run
	// Out receives every round's record and timing.
	Out RunWriter
	// Endpoint is where the monitor's PULL socket binds (the peers file's
	// monitor).
	Endpoint string
	// Directory holds the nodes' public keys: a record is decoded only
	// once its signature verifies.
	Directory *wire.Directory
	// Encryption says whether the monitor's socket uses CURVE (as for a
	// node, NodeConfig.Encryption), with Identity's key (MonitorKeyFile,
	// or SeedMonitorIdentity); only the Directory's nodes may connect.
	Encryption Encryption
	Identity   *wire.Identity
	// Dir is the run directory: the monitor adds DriverFile to it.
	Dir string
	// Gap, when positive, writes a round that some nodes have not reported
	// Gap after its first record arrived, with those nodes marked missing
	// (wall-clock mode: a node died). 0 (lock-step) waits for every
	// node's record, except those a peer gave up on: a node whose phase
	// marker a peer's record of that round or a later one lists as missing
	// (it missed the phase timeout: it died, or left), or that said it is
	// done, once the round waited Wait after its last record (or the
	// last such report) for those records; and, once every node that
	// reported a round is done, a node whose record of it never came (it
	// died after its peers had its last markers) after Wait.
	Gap time.Duration
	// Wait (lock-step) is how long the monitor still waits for a record
	// of a node a peer gave up on (it may be alive, one phase timeout
	// behind): the nodes' phase timeout (default 2 minutes). In
	// asynchronous timing it is how long a node may send no record before
	// the steps it has not reported are written without it (it died, or a
	// step takes it longer than that): its peers' records list nobody
	// missing.
	Wait time.Duration
	// Metrics, when set, is updated as records arrive and rounds are
	// written (ServeMetrics serves it).
	Metrics *MonitorMetrics
	Log     *slog.Logger
	// Live, when set, also gets every round's record as it is written, as
	// a metrics.Latest sink (a live viewer such as the dashboard: it may
	// skip records and never holds the monitor up).
	Live metrics.Sink
	// Abort, when closed, stops the monitor at once (a second signal): it
	// writes what it has as a stop does, without waiting for the nodes.
	Abort <-chan struct{}
}

// stopWait is how long a stopped monitor waits for the nodes to finish
// their current round (the launch kills what still runs after a minute).
const stopWait = 45 * time.Second

// pending is a round whose records are arriving.
type pending struct {
	ready   []node.Ready
	got     []bool
	n       int
	first   time.Time
	last    time.Time // the last record's arrival
	records []*Record
}

// RunMonitor receives the nodes' records on a PULL socket (it never sends
// anything to a node) and writes each round's record to cfg.Out, built as
// the simulator builds it (metrics.Record) from the nodes' Ready values
// and the ground truth the monitor knows from the run. It returns nil when
// every round is written. Cancelling ctx stops it as it stops the nodes:
// it takes the records of their current rounds until every node is done
// (at most stopWait), writes every round of which a record arrived (the
// records that never came marked missing) and returns an error wrapping
// ErrStopped; so does every node saying it is done before the last round.
func RunMonitor(ctx context.Context, cfg MonitorConfig) error {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := cfg.Run
	if err := s.check(); err != nil {
		return err
	}
	if cfg.Out == nil {
		return errors.New("the monitor needs a RunWriter")
	}
	records := make(chan *Record, 4*s.Nodes)
	quit := make(chan struct{})
	if err := cfg.Encryption.Check(); err != nil {
		return err
	}
	ln, err := listenSecured(cfg.Encryption, cfg.Endpoint, maxRecordBytes+recordHeader+wire.SignatureSize, 4*s.Nodes+16, cfg.Identity, cfg.Directory, log, func(frame []byte) bool {
		rec, err := decodeRecord(frame, cfg.Directory)
		if err != nil || rec.Node < 0 || rec.Node >= s.Nodes || rec.Round < -1 || rec.Round >= s.Rounds {
			log.Warn("record refused", "err", err)
			cfg.Metrics.received(len(frame), false)
			return false
		}
		cfg.Metrics.received(len(frame), true)
		select {
		case records <- rec:
		case <-quit:
		}
		return true
	})
	if err != nil {
		return err
	}
	defer ln.Close()
	defer close(quit) // before Close: no handler stays blocked
	df, err := os.Create(filepath.Join(cfg.Dir, DriverFile))
	if err != nil {
		return err
	}
	defer df.Close()
	m := &monitor{s: s, graph: s.Graph, byz: s.byzantine(), rd: cfg.Out, pend: map[int]*pending{}, done: make([]bool, s.Nodes), log: log,
		prev: time.Now(), driver: json.NewEncoder(df), metrics: cfg.Metrics, gaveUp: make([]int, s.Nodes)}
	for j := range m.gaveUp {
		m.gaveUp[j] = -1
	}
	m.wait = cfg.Wait
	if cfg.Gap > 0 {
		m.wait = cfg.Gap
	} else if m.wait <= 0 {
		m.wait = 2 * time.Minute
	}
	if cfg.Live != nil {
		m.live = metrics.NewFanout()
		m.live.Add(cfg.Live, metrics.Latest, 0)
		defer m.live.Close()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// A stop (ctx) lets the nodes finish their current round: the monitor
	// takes records until every node is done, for at most stopWait; an
	// abort, not at all.
	var runErr error
	ctxDone, stopTimer := ctx.Done(), (<-chan time.Time)(nil)
loop:
	for m.next < s.Rounds && !m.allGone() {
		select {
		case rec := <-records:
			if err := m.add(rec); err != nil {
				runErr = err
				break loop
			}
		case <-tick.C:
		case <-ctxDone:
			log.Info("stopping: waiting for the nodes' current rounds")
			ctxDone, stopTimer = nil, time.After(stopWait)
		case <-stopTimer:
			break loop
		case <-cfg.Abort:
			for len(records) > 0 { // what arrived is kept
				if err := m.add(<-records); err != nil {
					runErr = err
				}
			}
			break loop
		}
		if err := m.flush(cfg.Gap, false); err != nil {
			runErr = err
			break
		}
		if stopTimer != nil && m.settled() {
			break // stopping, and no node has a round in progress
		}
	}
	// Every round is written: give the nodes a moment to say they are done
	// (their last frames then leave their queues without waiting for a
	// monitor that is gone).
	end := time.After(5 * time.Second)
moment:
	for runErr == nil && m.next == s.Rounds && !m.settled() {
		select {
		case rec := <-records:
			_ = m.add(rec)
		case <-end:
			break moment
		case <-ctx.Done():
			break moment
		case <-cfg.Abort:
			break moment
		}
	}
	if runErr == nil && m.next < s.Rounds {
		// Stopped, or every node is done, some early (stopped on their
		// own): write what arrived, the missing records marked.
		if err := m.flush(0, true); err != nil {
			runErr = err
		}
		// Asynchronous nodes that all stopped on their own (their horizon)
		// or went silent (died) completed the run: the steps some took and
		// others did not are written with those missing marked.
		if runErr == nil && m.next < s.Rounds && !(s.Async && m.allGone() && ctx.Err() == nil) {
			runErr = fmt.Errorf("%w: %d of %d rounds written", ErrStopped, m.next, s.Rounds)
		}
	}
	return runErr
}

type monitor struct {
	s     Run
	graph topology.Dynamic
	byz   []bool
	rd    RunWriter
	pend  map[int]*pending
	next  int
	done  []bool
	ndone int
	log   *slog.Logger
	// prev is when the previous round's last record arrived (the
	// monitor's start for round 0).
	prev    time.Time
	driver  *json.Encoder
	metrics *MonitorMetrics
	live    *metrics.Fanout // nil without MonitorConfig.Live
	// gaveUp is, per node, the last round of which a peer's record lists
	// it as missing (-1: none): in lock-step (no gap) the monitor waits
	// for no record of it up to that round.
	gaveUp []int
	// latest is the latest round of which a record arrived.
	latest int
	// gaveUpAt is when the last record listing a missing node arrived;
	// wait is how long to wait since then (MonitorConfig.Wait, or Gap).
	gaveUpAt time.Time
	wait     time.Duration
	// heard is, per node, when its latest record arrived, and started
	// when the first record of any node did (asynchronous timing: a node
	// silent for wait since then is gone, silent).
	heard   []time.Time
	started time.Time
}

// silent reports whether node j, in asynchronous timing, has sent no
// record for m.wait since the run started (its first record from any
// node) or since its own latest: it died, or is slower than a phase
// timeout, and the steps it did not report are written without it. A
// lock-step node is never silent: its peers' missing markers say when it
// is gone.
func (m *monitor) silent(j int) bool {
	if !m.s.Async || m.started.IsZero() {
		return false
	}
	return time.Since(maxTime(m.heard[j], m.started)) > m.wait
}

// gone reports whether no more records of node j are expected: it is
// done, or silent.
func (m *monitor) gone(j int) bool { return m.done[j] || m.silent(j) }

// allGone reports whether every node is gone.
func (m *monitor) allGone() bool {
	if m.ndone == m.s.Nodes {
		return true
	}
	for j := range m.done {
		if !m.gone(j) {
			return false
		}
	}
	return true
}

// absentGone reports whether every node with no record in p is gone
// (asynchronous timing: its record of that step will not come, since a
// node's records arrive in the order of its steps).
func (m *monitor) absentGone(p *pending) bool {
	for j, got := range p.got {
		if !got && !m.gone(j) {
			return false
		}
	}
	return true
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// settled reports whether no node has a round in progress that the
// monitor could still get a record of: every node is done, or a peer's
// record of the latest round lists it as missing (it died, or left).
func (m *monitor) settled() bool {
	if !m.quiet(time.Time{}) {
		return m.ndone == m.s.Nodes
	}
	for j, done := range m.done {
		if !done && m.gaveUp[j] < m.latest && !m.silent(j) {
			return false
		}
	}
	return true
}

// DriverFile is the file of a deployed run's directory with what the
// node processes' drivers measured besides the metrics: one line per
// round per reporting node.
const DriverFile = "driver.jsonl"

// driverLine is one line of DriverFile.
type driverLine struct {
	Round        int            `json:"round"`
	Node         int            `json:"node"`
	Late         int            `json:"late"`
	Missing      []int          `json:"missing_markers,omitempty"`
	Refused      map[string]int `json:"refused,omitempty"`
	RoundSeconds float64        `json:"round_seconds"`
	TrainSeconds float64        `json:"train_seconds"`
	// ResumedAfter is the checkpoint's round, on the first record of a
	// node restarted with --resume.
	ResumedAfter *int `json:"resumed_after,omitempty"`
	// Wall (asynchronous timing: the round is the node's step) is when
	// the step ended, in seconds since the node's first step began.
	Wall float64 `json:"wall,omitempty"`
}

func (m *monitor) add(rec *Record) error {
	now := time.Now()
	if m.started.IsZero() {
		m.started, m.heard = now, make([]time.Time, m.s.Nodes)
	}
	m.heard[rec.Node] = now
	if rec.Done {
		if !m.done[rec.Node] {
			m.done[rec.Node] = true
			m.ndone++
		}
		return nil
	}
	if m.done[rec.Node] {
		// A node that stopped came back (--resume): waited for again.
		m.done[rec.Node] = false
		m.ndone--
	}
	m.latest = max(m.latest, rec.Round)
	for _, j := range rec.Missing {
		if j >= 0 && j < len(m.gaveUp) {
			m.gaveUp[j] = max(m.gaveUp[j], rec.Round)
			m.gaveUpAt = time.Now()
		}
	}
	if rec.Round < m.next {
		m.log.Warn("record of a round already written", "node", rec.Node, "round", rec.Round)
		return nil
	}
	p := m.pend[rec.Round]
	if p == nil {
		p = m.newPending()
		m.pend[rec.Round] = p
	}
	if p.got[rec.Node] {
		return nil // a duplicate (a Pusher resent it after a reconnect)
	}
	p.got[rec.Node], p.ready[rec.Node], p.records[rec.Node] = true, rec.Ready, rec
	p.n++
	p.last = time.Now()
	return nil
}

func (m *monitor) newPending() *pending {
	return &pending{ready: make([]node.Ready, m.s.Nodes), got: make([]bool, m.s.Nodes), first: time.Now(),
		records: make([]*Record, m.s.Nodes)}
}

// flush writes the rounds that are complete, in order; with gap > 0 also
// a round that waited gap, and with all every round up to the last that
// has a record. A round of which no record came (every node missed it:
// they all started late) is written, every node missing, once a later
// round could be written.
func (m *monitor) flush(gap time.Duration, all bool) error {
	for m.next < m.s.Rounds {
		p := m.pend[m.next]
		switch {
		case p != nil && p.n == m.s.Nodes:
		case p != nil && gap == 0 && m.quiet(p.last) && (m.givenUp(m.next, p) || m.reportersDone(p)):
		case p != nil && gap > 0 && time.Since(p.first) > gap:
		case p != nil && m.s.Async && gap == 0 && m.absentGone(p):
		case all && p != nil:
		case p == nil && m.later(gap, all):
			p = m.newPending()
			p.first = time.Time{}
		default:
			return nil
		}
		if err := m.write(m.next, p); err != nil {
			return err
		}
		delete(m.pend, m.next)
		m.next++
	}
	return nil
}

// quiet reports whether the monitor waited m.wait since t and since the
// last report of a node that a peer gave up on.
func (m *monitor) quiet(t time.Time) bool {
	return time.Since(t) > m.wait && time.Since(m.gaveUpAt) > m.wait
}

// givenUp reports whether every record of round r that has not arrived
// (p) is of a node a peer gave up on in round r or later, or of a node
// that is done.
func (m *monitor) givenUp(r int, p *pending) bool {
	for j, got := range p.got {
		if !got && !m.done[j] && m.gaveUp[j] < r {
			return false
		}
	}
	return true
}

// reportersDone reports whether every node that reported round p is
// done: no later record can then list a node missing from p as given up
// on (a node that died in the last round after its peers had its markers
// but before its record reached the monitor), so after the wait the round
// is written without it.
func (m *monitor) reportersDone(p *pending) bool {
	for j, got := range p.got {
		if got && !m.done[j] {
			return false
		}
	}
	return p.n > 0
}

// later reports whether a round after m.next has records and could be
// written (it waited gap, or all).
func (m *monitor) later(gap time.Duration, all bool) bool {
	for r, p := range m.pend {
		if r > m.next && (all || p.n == m.s.Nodes || gap > 0 && time.Since(p.first) > gap) {
			return true
		}
	}
	return false
}

// write builds round r's record as the simulator does and writes it. Its
// timing's round_seconds is the time from the last record of the previous
// round to the last of this one (from the monitor's start for round 0,
// which so includes the nodes' start-up): the period at which the cluster
// finishes rounds.
func (m *monitor) write(r int, p *pending) error {
	n := m.s.Nodes
	rec := &metrics.Round{Round: r, Evaluated: metrics.Evaluated(r, m.s.Rounds, m.s.EvalEvery), Nodes: make([]metrics.NodeRound, n)}
	t := metrics.Timing{Round: r, Seconds: max(p.last.Sub(m.prev), 0).Seconds()}
	if !p.last.IsZero() {
		m.prev = p.last
	}
	for i := range n {
		rec.Nodes[i] = metrics.NodeRound{Node: i, Byzantine: m.byz[i], Missing: !p.got[i]}
		if x := p.records[i]; x != nil {
			rec.Nodes[i].BytesSent, rec.Nodes[i].ClaimBytes = x.BytesSent, x.ClaimBytes
			dl := driverLine{Round: r, Node: i, Late: x.Late, Missing: x.Missing, Refused: x.Refused,
				RoundSeconds: x.RoundSeconds, TrainSeconds: x.TrainSeconds, Wall: x.Wall}
			if x.ResumedAfter > 0 {
				dl.ResumedAfter = new(x.ResumedAfter - 1)
			}
			if err := m.driver.Encode(dl); err != nil {
				return err
			}
			t.TrainSeconds = max(t.TrainSeconds, x.TrainSeconds)
			t.TrainNodeSeconds += x.TrainSeconds
		}
	}
	if missing := n - p.n; missing > 0 {
		m.log.Warn("round written without some nodes' records", "round", r, "missing", missing)
	}
	metrics.Record(rec, m.graph.At(r), m.byz, p.ready)
	m.metrics.written(r, p, t.Seconds, n)
	m.rd.Timing(t)
	if err := m.rd.Round(rec); err != nil {
		return err
	}
	if m.live != nil {
		_ = m.live.Round(rec) // a Latest sink: it never fails the run
	}
	return nil
}
