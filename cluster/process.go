package cluster

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trellis-fl/trellis/adversary"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/node"
	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/wire"
)

// Mode is how a node closes its exchange phases.
type Mode string

const (
	// Lockstep closes a phase when every in-neighbour's phase marker
	// arrived (or after Timing.PhaseTimeout): the simulator's rounds, so
	// that simulation and deployment give the same metrics.
	Lockstep Mode = "lockstep"
	// Wallclock runs round k in [t0 + kΔ, t0 + (k+1)Δ) (the DMTT paper,
	// Eq. 18): training until its share of the window, then the phases,
	// each closing early when every marker arrived or at its sub-deadline;
	// a node that misses a deadline ends the round with what it has.
	Wallclock Mode = "wallclock"
)

// Timing says when rounds and phases close.
type Timing struct {
	Mode Mode
	// PhaseTimeout (lock-step) is the longest a phase waits for its
	// markers (default 2 minutes: generous, for a peer that died).
	PhaseTimeout time.Duration
	// Epoch is t0 and Delta is Δ (wall-clock; in asynchronous timing
	// Epoch, if set, is when every node begins its first step). Grace is
	// kept free at the end of each window for End and the record (default
	// Δ/10), and TrainShare is the fraction of the window training may
	// take (default 0.5; training stops between batches at that
	// deadline).
	Epoch      time.Time
	Delta      time.Duration
	Grace      time.Duration
	TrainShare float64
	// Clock is what the node reads the time from (nil: the system's).
	// Every window, deadline and timeout of the node is on it, so a
	// skewed clock (SkewedClock) makes a node as early or late as a
	// machine whose clock is off.
	Clock Clock
	// Horizon (asynchronous timing), if positive, is how long after its
	// first step a node begins no more steps (otherwise it takes
	// Run.Rounds steps).
	Horizon time.Duration
}

// Clock tells a node the time.
type Clock interface{ Now() time.Time }

// systemClock is the machine's clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SkewedClock is the system clock off by Offset (positive: ahead, as on a
// machine whose clock runs fast). It injects clock skew in tests.
type SkewedClock struct{ Offset time.Duration }

func (c SkewedClock) Now() time.Time { return time.Now().Add(c.Offset) }

func (t Timing) withDefaults() (Timing, error) {
	if t.Clock == nil {
		t.Clock = systemClock{}
	}
	switch t.Mode {
	case Lockstep:
		if t.PhaseTimeout <= 0 {
			t.PhaseTimeout = 2 * time.Minute
		}
	case Wallclock:
		if t.Delta <= 0 || t.Epoch.IsZero() {
			return t, errors.New("wall-clock mode needs an epoch t0 and a round length Δ > 0")
		}
		if t.Grace <= 0 {
			t.Grace = t.Delta / 10
		}
		if t.TrainShare <= 0 || t.TrainShare >= 1 {
			t.TrainShare = 0.5
		}
		if t.Grace >= t.Delta {
			return t, fmt.Errorf("grace %v must be shorter than Δ = %v", t.Grace, t.Delta)
		}
	case Async:
		if t.Horizon < 0 {
			return t, fmt.Errorf("asynchronous horizon %v: need ≥ 0", t.Horizon)
		}
	default:
		return t, fmt.Errorf("timing mode %q: want %q, %q or %q", t.Mode, Lockstep, Wallclock, Async)
	}
	return t, nil
}

// Run is what every process of a deployed run knows of it (the monitor
// too): the cluster's own view of the experiment, which the CLI fills from
// the config as the simulator is filled, so both drivers run the same
// rounds on the same graph against the same Byzantine set.
type Run struct {
	Nodes, Rounds int
	// EvalEvery evaluates every k-th round and the last
	// (metrics.Evaluated).
	EvalEvery int
	// Graph is the round graphs; Drops cuts links per round (the
	// simulator's, from the seed).
	Graph topology.Dynamic
	Drops topology.Drops
	// Byzantine is the Byzantine set (adversary.Choose), sorted: the
	// ground truth of the monitor's records.
	Byzantine []int
	// ByzantineIdle: Byzantine nodes neither train nor combine
	// (sim.Config.ByzantineIdle).
	ByzantineIdle bool
	// Async: the nodes run in asynchronous timing (Timing.Mode Async),
	// Rounds steps each; a round is a step index, and a run whose nodes
	// all stopped early (Timing.Horizon) is complete.
	Async bool
	// Stale is, in asynchronous timing, the Byzantine nodes' attack of
	// resending an old step's vectors (adversary.Stale).
	Stale adversary.Stale
}

func (r Run) check() error {
	switch {
	case r.Nodes < 1 || r.Rounds < 1:
		return fmt.Errorf("a run of %d nodes and %d rounds: need at least one of each", r.Nodes, r.Rounds)
	case r.Graph == nil || r.Graph.N() != r.Nodes:
		return fmt.Errorf("the graph must have one vertex per node (%d nodes)", r.Nodes)
	}
	for _, b := range r.Byzantine {
		if b < 0 || b >= r.Nodes {
			return fmt.Errorf("byzantine node %d outside [0, %d)", b, r.Nodes)
		}
	}
	return nil
}

// byzantine is r.Byzantine as a set.
func (r Run) byzantine() []bool {
	byz := make([]bool, r.Nodes)
	for _, b := range r.Byzantine {
		byz[b] = true
	}
	return byz
}

// Checkpointer saves a node's state into a directory and restores it
// (the CLI fills it from the node's snapshot and the checkpoint format);
// SaveCheckpoint and LoadCheckpoint make each replacement atomic.
type Checkpointer interface {
	// Check reports whether the node's state can be saved at all, so that
	// a node fails before its first round rather than after it.
	Check() error
	// Save writes the node's state after round r into the new directory
	// dir.
	Save(dir string, r int) error
	// Load restores the node from the checkpoint in dir and returns the
	// round it was taken after; a missing checkpoint is an error
	// satisfying errors.Is(err, os.ErrNotExist). A Load that fails leaves
	// the node as it was (LoadCheckpoint may then try another copy).
	Load(dir string) (round int, err error)
}

// NodeConfig is one node process: a node built as the simulator builds
// node Node.ID(), with its keys, the run, and, for a Byzantine node, its
// adversary.
type NodeConfig struct {
	Node *node.Node
	// Identity is the node's key (the one its node signs with);
	// Directory holds every node's public key.
	Identity  *wire.Identity
	Directory *wire.Directory
	Run       Run
	// Adversary rewrites a Byzantine node's outbox (adversary.Alone);
	// nil for an honest node.
	Adversary *adversary.Adversary
	// Global: the node evaluates on the global test set too.
	Global bool
	Peers  *Peers
	// Encryption says which links use CURVE (default EncryptAuto: those
	// over TCP). A node's CURVE key is its Identity's; a peer's derives
	// from its Directory entry, and only the Directory's nodes may
	// connect.
	Encryption Encryption
	// MonitorKey is the monitor's public key, for an encrypted link to it
	// (default: the peers file's monitor_key).
	MonitorKey ed25519.PublicKey
	Timing
	// MaxBuffered bounds the bytes held per sender (default 64 MiB plus
	// four of the largest messages the limits allow).
	MaxBuffered int
	// StateDir, when set, is where the node writes its checkpoint after
	// every round (SaveCheckpoint, through Checkpoints). Resume starts
	// from the checkpoint there: the node restores its state and joins
	// the round whose window is open (wall-clock mode only: in lock-step
	// the other nodes would wait for a round it already finished).
	StateDir    string
	Resume      bool
	Checkpoints Checkpointer
	// Export, when set, is the file the node writes its final model to, in
	// the safetensors format (nn.Model.WriteSafetensors: loadable in
	// PyTorch, readable with numpy), after its last round.
	Export string
	// Metrics, when set, is updated as the node runs (ServeMetrics serves
	// it).
	Metrics *NodeMetrics
	Log     *slog.Logger
	// Abort, when closed, stops the node at once (a second signal): the
	// round in progress is dropped, the node still tells its peers it
	// leaves and the monitor it is done, and unbinds its endpoint.
	Abort <-chan struct{}
	// Arrivals (asynchronous timing), when set, is the file the node
	// writes its arrival log to (ArrivalEvent, JSON lines).
	Arrivals string
}

// ErrStopped is what a node, the monitor and a launch stopped by a signal
// before the run's last round return (wrapped): what was finished is
// written, and the run can be told apart from one that failed (the CLI
// exits with ExitStopped).
var ErrStopped = errors.New("stopped before the run's last round")

// Exit codes of `trellis launch`, `trellis node` and `trellis monitor`
// (the CLI's; 1 is any error).
const (
	// ExitStopped: stopped by SIGINT or SIGTERM before the last round;
	// every finished round is written (the monitor: with the records that
	// never came marked missing, and the summary of the rounds written).
	ExitStopped = 3
)

// errAborted is a round cut short by NodeConfig.Abort.
var errAborted = errors.New("aborted")

// driver runs one node.
type driver struct {
	cfg   NodeConfig
	run   Run
	id    int
	n     *node.Node
	ident *wire.Identity
	idle  bool // a Byzantine node of a run whose Byzantine nodes idle
	adv   *adversary.Adversary
	in    *inbox
	ln    *Listener
	peers []*Pusher
	mon   *Pusher
	log   *slog.Logger
	// abortCtx is cancelled when NodeConfig.Abort closes (or the driver
	// closes): training stops between batches.
	abortCtx   context.Context
	closeAbort context.CancelFunc
}

// Limits of the transport.
const (
	queueFrames = 4096
	queueBytes  = 512 << 20
	linger      = 10 * time.Second
	peerLinger  = 2 * time.Second
	abortLinger = time.Second
)

// RunNode runs node cfg.ID for the experiment's rounds: it binds its
// endpoint, and each round Begins, Trains (idle Byzantine nodes do not),
// sends each phase's Outbox to the round's out-neighbours (a Byzantine
// node's as its adversary rewrites it, adversary.Adversary), Steps what arrived,
// Ends, and pushes its Record to the monitor. Cancelling ctx stops it after
// the current round (a graceful stop).
func RunNode(ctx context.Context, cfg NodeConfig) error {
	d, err := newDriver(cfg)
	if err != nil {
		return err
	}
	defer d.close()
	if cfg.Mode == Async {
		return d.runAsync(ctx)
	}
	rounds := d.run.Rounds
	last, first := -1, 0
	if cfg.Resume {
		if first, err = d.resume(); err != nil {
			return err
		}
		last = first - 1
	}
	defer func() { d.leave(last) }()
	stopped := false
	for r := first; r < rounds; r++ {
		if ctx.Err() != nil || d.aborted() {
			stopped = true
			break
		}
		if d.cfg.Mode == Wallclock {
			var ok bool
			if r, ok = d.waitRound(ctx, r); !ok {
				stopped = true
				break
			}
			if r >= rounds {
				break
			}
		}
		if cfg.Resume && last == first-1 {
			d.join(r) // peers it left wait for it again
		}
		rec, err := d.round(ctx, r)
		if errors.Is(err, errAborted) {
			d.log.Warn("stopped at once: round dropped", "round", r)
			stopped = true
			break
		}
		if err != nil {
			return fmt.Errorf("node %d round %d: %w", d.id, r, err)
		}
		if cfg.Resume && last == first-1 {
			rec.ResumedAfter = first // the checkpoint's round + 1
		}
		if err := d.push(rec); err != nil {
			return err
		}
		last = r
		if d.cfg.StateDir != "" {
			if err := d.checkpoint(r); err != nil {
				return fmt.Errorf("node %d round %d: checkpoint: %w", d.id, r, err)
			}
		}
	}
	if d.cfg.Export != "" && !d.aborted() { // an aborted round left the model half-updated
		if err := d.export(); err != nil {
			return fmt.Errorf("node %d: exporting the model: %w", d.id, err)
		}
	}
	if err := d.push(&Record{Node: d.id, Round: -1, Done: true}); err != nil {
		return err
	}
	if stopped {
		d.log.Info("stopped: left the run", "after_round", last)
		return fmt.Errorf("node %d: %w (after round %d)", d.id, ErrStopped, last)
	}
	return nil
}

// aborted reports whether NodeConfig.Abort is closed.
func (d *driver) aborted() bool {
	select {
	case <-d.cfg.Abort:
		return true
	default:
		return false
	}
}

// export writes the node's model to cfg.Export (a temporary file renamed
// into place, so a reader never sees half a model).
func (d *driver) export() error {
	var b bytes.Buffer
	meta := map[string]string{"node": strconv.Itoa(d.id), "rounds": strconv.Itoa(d.run.Rounds), "model": d.n.Model().Describe()}
	if err := d.n.Model().WriteSafetensors(&b, meta); err != nil {
		return err
	}
	tmp := d.cfg.Export + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, d.cfg.Export)
}

// resume restores the node from its checkpoint and returns the first
// round to run.
func (d *driver) resume() (int, error) {
	switch {
	case d.cfg.StateDir == "":
		return 0, errors.New("resume needs the checkpoint directory")
	case d.cfg.Mode != Wallclock && d.cfg.Mode != Async:
		return 0, errors.New("resume joins the wall-clock round that is open, or goes on with its next asynchronous step: it needs wall-clock or asynchronous timing (in lock-step the others wait for the rounds it missed)")
	}
	r, err := LoadCheckpoint(d.cfg.StateDir, d.cfg.Checkpoints)
	if err != nil {
		return 0, fmt.Errorf("node %d: resume from %s: %w", d.id, d.cfg.StateDir, err)
	}
	if r < 0 || r >= d.run.Rounds {
		return 0, fmt.Errorf("node %d: resume: the checkpoint is of round %d of a %d-round run", d.id, r, d.run.Rounds)
	}
	d.log.Info("resumed from the checkpoint", "round", r)
	return r + 1, nil
}

// checkpoint writes the node's state after round r.
func (d *driver) checkpoint(r int) error {
	return SaveCheckpoint(d.cfg.StateDir, func(dir string) error { return d.cfg.Checkpoints.Save(dir, r) })
}

// leave tells every peer that this node takes part in no round after
// last, so that none waits for it (the graph may make any peer a
// neighbour later).
func (d *driver) leave(last int) { d.announce(uint64(last+1), leavePhase) }

// join tells every peer that this node, restarted, takes part again from
// round r on, so that a peer it left (a leave marker) waits for it again.
func (d *driver) join(r int) { d.announce(uint64(r), joinPhase) }

// announce sends a marker of round r and phase leavePhase or joinPhase to
// every peer that could wait for this node from round r on: its
// out-neighbours of the rounds left.
func (d *driver) announce(r uint64, phase uint32) {
	for _, j := range d.outFrom(int(r)) {
		if mk, err := encodeMarker(Marker{From: uint32(d.id), To: uint32(j), Round: r, Phase: phase}, d.ident); err == nil {
			if p := d.peer(j); p != nil {
				p.Send(mk)
			}
		}
	}
}

// outFrom is every peer that is this node's out-neighbour in a round from
// r on, in id order.
func (d *driver) outFrom(r int) []int {
	seen := make([]bool, d.run.Nodes)
	var out []int
	var last *topology.Graph
	for k := max(r, 0); k < d.run.Rounds; k++ {
		g := d.run.Graph.At(k)
		if g == last {
			continue // a static graph: the same every round
		}
		last = g
		for _, j := range g.Out(d.id) {
			if j != d.id && !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkPeer checks that peer j can be dialled: its endpoint, and its key
// where the link is encrypted.
func (d *driver) checkPeer(j int) error {
	ep := d.cfg.Peers.Endpoint(j)
	if _, _, err := splitEndpoint(ep); err != nil {
		return err
	}
	pub, _ := d.cfg.Directory.Key(uint32(j))
	_, _, err := serverCurveKey(d.cfg.Encryption, ep, pub)
	return err
}

// peer is the connection to peer j, dialled the first time it is needed
// (checkPeer passed for every peer), or nil if dialling failed.
func (d *driver) peer(j int) *Pusher {
	if d.peers[j] == nil {
		pub, _ := d.cfg.Directory.Key(uint32(j))
		p, err := dialSecured(d.cfg.Encryption, d.cfg.Peers.Endpoint(j), d.ident, pub, d.log)
		if err != nil {
			d.log.Warn("cannot connect", "peer", j, "err", err)
			return nil
		}
		d.peers[j] = p
	}
	return d.peers[j]
}

func newDriver(cfg NodeConfig) (*driver, error) {
	var err error
	if cfg.Timing, err = cfg.Timing.withDefaults(); err != nil {
		return nil, err
	}
	run := cfg.Run
	if err := run.check(); err != nil {
		return nil, err
	}
	switch {
	case cfg.Node == nil || cfg.Identity == nil || cfg.Directory == nil:
		return nil, errors.New("a node process needs its node, its key and the key directory")
	case cfg.Node.ID() < 0 || cfg.Node.ID() >= run.Nodes || int(cfg.Identity.ID()) != cfg.Node.ID():
		return nil, fmt.Errorf("node %d with the key of node %d in a run of %d nodes", cfg.Node.ID(), cfg.Identity.ID(), run.Nodes)
	case cfg.Peers == nil || len(cfg.Peers.Nodes) != run.Nodes:
		return nil, fmt.Errorf("the peers file must list the run's %d nodes", run.Nodes)
	case cfg.StateDir != "" && cfg.Checkpoints == nil:
		return nil, errors.New("a checkpoint directory needs a Checkpointer")
	}
	d := &driver{cfg: cfg, run: run, id: cfg.Node.ID(), n: cfg.Node, ident: cfg.Identity, adv: cfg.Adversary, log: cfg.Log}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	byz := run.byzantine()
	if byz[d.id] != (d.adv != nil) {
		return nil, fmt.Errorf("node %d: Byzantine %v, but an adversary given %v (a Byzantine node needs adversary.Alone, an honest one none)", d.id, byz[d.id], d.adv != nil)
	}
	d.idle = byz[d.id] && run.ByzantineIdle
	switch {
	case (cfg.Mode == Async) != run.Async:
		return nil, fmt.Errorf("node %d: timing mode %q for a run whose nodes are asynchronous: %v (the config's [timing] mode decides)", d.id, cfg.Mode, run.Async)
	case cfg.Mode == Async && run.ByzantineIdle:
		return nil, fmt.Errorf("node %d: idle Byzantine nodes have no steps of their own in asynchronous timing", d.id)
	case cfg.Mode != Async && cfg.Arrivals != "":
		return nil, fmt.Errorf("node %d: an arrival log is written in asynchronous timing only", d.id)
	}
	if cfg.StateDir != "" && !cfg.Resume {
		if err := cfg.Checkpoints.Check(); err != nil {
			return nil, fmt.Errorf("node %d: %w (run it without a checkpoint directory)", d.id, err)
		}
	}
	limits := wire.DefaultLimits()
	maxBuf := cfg.MaxBuffered
	if maxBuf <= 0 {
		maxBuf = 64<<20 + 4*limits.MaxMessageBytes
	}
	d.in = newInbox(d.id, run.Nodes, cfg.Directory, limits, maxBuf)
	d.in.async = cfg.Mode == Async
	adm, err := d.n.Admission()
	if err != nil {
		return nil, err
	}
	d.in.admission = adm
	handle := func(frame []byte) bool {
		cfg.Metrics.received(len(frame))
		return d.in.handle(frame)
	}
	// Frames no longer than the node's largest message (markers and
	// handshakes are far smaller).
	maxFrame := max(adm.MaxMessageBytes(), 1<<16)
	if err := cfg.Encryption.Check(); err != nil {
		return nil, err
	}
	monitorKey := cfg.MonitorKey
	if monitorKey == nil {
		if monitorKey, err = cfg.Peers.monitorPublic(); err != nil {
			return nil, err
		}
	}
	if d.ln, err = listenSecured(cfg.Encryption, cfg.Peers.Endpoint(d.id), maxFrame, 4*run.Nodes+16, d.ident, cfg.Directory, d.log, handle); err != nil {
		return nil, err
	}
	// A node connects only to the peers it sends to: its round-0
	// out-neighbours now, any other the first time the graph makes it one
	// (peer). Every endpoint is checked now, so a bad one fails here.
	for j := range run.Nodes {
		if j != d.id {
			if err := d.checkPeer(j); err != nil {
				d.close()
				return nil, fmt.Errorf("node %d: %w", j, err)
			}
		}
	}
	d.peers = make([]*Pusher, run.Nodes)
	for _, j := range run.Graph.At(0).Out(d.id) {
		if j != d.id && d.peer(j) == nil {
			d.close()
			return nil, fmt.Errorf("node %d: could not connect", j)
		}
	}
	if d.mon, err = dialSecured(cfg.Encryption, cfg.Peers.Monitor, d.ident, monitorKey, d.log); err != nil {
		d.close()
		return nil, fmt.Errorf("the monitor: %w", err)
	}
	d.abortCtx, d.closeAbort = context.WithCancel(context.Background())
	if cfg.Abort != nil {
		go func() {
			select {
			case <-cfg.Abort:
				d.closeAbort()
			case <-d.abortCtx.Done():
			}
		}()
	}
	return d, nil
}

// close sends what is queued (a peer that is gone gets peerLinger, the
// monitor linger; abortLinger each after an abort), all connections at
// once, and unbinds.
func (d *driver) close() {
	peerWait, monWait := peerLinger, linger
	if d.aborted() {
		peerWait, monWait = abortLinger, abortLinger
	}
	var wg sync.WaitGroup
	for _, p := range d.peers {
		if p != nil {
			wg.Go(func() { p.Close(peerWait) })
		}
	}
	if d.mon != nil {
		wg.Go(func() { d.mon.Close(monWait) })
	}
	wg.Wait()
	if d.ln != nil {
		d.ln.Close()
	}
	if d.closeAbort != nil {
		d.closeAbort()
	}
}

// now is the time on the node's clock; until is how long from now, on
// it, to t (a timer's duration: timers run on the machine's monotonic
// time, which no clock offset changes).
func (d *driver) now() time.Time                  { return d.cfg.Clock.Now() }
func (d *driver) until(t time.Time) time.Duration { return t.Sub(d.cfg.Clock.Now()) }

// window is round r's wall-clock window.
func (d *driver) window(r int) (start, end time.Time) {
	start = d.cfg.Epoch.Add(time.Duration(r) * d.cfg.Delta)
	return start, start.Add(d.cfg.Delta)
}

// waitRound waits for round r's window; a node that is past it (it started
// late, or a round overran) joins the round whose window is open.
func (d *driver) waitRound(ctx context.Context, r int) (int, bool) {
	now := d.now()
	if now.After(d.cfg.Epoch) {
		cur := int(now.Sub(d.cfg.Epoch) / d.cfg.Delta)
		if _, end := d.window(cur); end.Sub(now) < d.cfg.Grace+d.cfg.Delta/4 {
			cur++ // too little of the window left to take part
		}
		if cur > r {
			d.log.Warn("missed rounds", "from", r, "to", cur-1)
			r = cur
		}
	}
	start, _ := d.window(r)
	timer := time.NewTimer(d.until(start))
	defer timer.Stop()
	select {
	case <-timer.C:
		return r, true
	case <-ctx.Done():
		return r, false
	case <-d.cfg.Abort:
		return r, false
	}
}

// round runs round r.
func (d *driver) round(ctx context.Context, r int) (*Record, error) {
	t0 := time.Now()
	g := d.run.Graph.At(r)
	in := g.In(d.id)
	deg := make([]int, len(in))
	for k, j := range in {
		deg[k] = g.Degree(j)
	}
	rec := &Record{Node: d.id, Round: r}
	d.in.open(uint64(r))
	if err := d.n.Begin(r, node.Neighborhood{In: in, InDegree: deg, Degree: g.Degree(d.id)}); err != nil {
		return nil, err
	}
	idle := d.idle
	roundEnd := time.Time{}
	if !idle {
		tctx := d.abortCtx // a round, once begun, finishes, unless aborted
		if d.cfg.Mode == Wallclock {
			start, end := d.window(r)
			roundEnd = end.Add(-d.cfg.Grace)
			var cancel context.CancelFunc
			tctx, cancel = context.WithTimeout(tctx, d.until(start.Add(time.Duration(d.cfg.TrainShare*float64(d.cfg.Delta)))))
			defer cancel()
		}
		// Training stopped at its wall-clock deadline is a round that goes
		// on with what it has (lock-step training has no deadline).
		if _, err := d.n.Train(tctx); err != nil && !errors.Is(err, nn.ErrStopped) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return nil, err
		}
		if d.aborted() {
			return nil, errAborted
		}
	} else if d.cfg.Mode == Wallclock {
		_, end := d.window(r)
		roundEnd = end.Add(-d.cfg.Grace)
	}
	rec.TrainSeconds = time.Since(t0).Seconds()
	for phase := 0; ; phase++ {
		out, more, err := d.n.Outbox()
		if err != nil {
			return nil, err
		}
		if d.adv != nil {
			if out, err = d.adv.RewriteOne(r, g, d.id, out); err != nil {
				return nil, err
			}
		}
		b, cb, err := metrics.Traffic(g, d.id, out)
		if err != nil {
			return nil, err
		}
		rec.BytesSent += b
		rec.ClaimBytes += cb
		if err := d.send(r, phase, g, out, !more); err != nil {
			return nil, err
		}
		deadline := d.now().Add(d.cfg.PhaseTimeout)
		if d.cfg.Mode == Wallclock {
			deadline = roundEnd
			if more { // later phases get the rest: half of what is left each
				deadline = d.now().Add(d.until(roundEnd) / 2)
			}
		}
		sl := slot{uint64(r), uint32(phase)}
		missing, ok := d.wait(in, sl, deadline)
		if !ok {
			return nil, errAborted
		}
		rec.Missing = append(rec.Missing, missing...)
		msgs, late := d.in.take(in, sl)
		rec.Late += len(late)
		for _, m := range late {
			_ = d.n.Step(m) // dropped and counted by the node
		}
		for _, m := range msgs {
			_ = d.n.Step(m) // a refusal is counted in Ready
		}
		if !more {
			break
		}
	}
	rd, err := d.n.End(node.EndOptions{Keep: idle, Evaluate: metrics.Evaluated(r, d.run.Rounds, d.run.EvalEvery), Global: d.cfg.Global})
	if err != nil {
		return nil, err
	}
	rec.Ready = rd
	slices.Sort(rec.Missing)
	rec.Missing = slices.Compact(rec.Missing)
	rec.RoundSeconds = time.Since(t0).Seconds()
	return rec, nil
}

// send puts the phase's messages on the round's out-links (a broadcast on
// every one, a message to one peer on its link if it is one), each encoded
// once, skipping the links the drops cut, then a marker on every out-link
// with the count sent on it.
func (d *driver) send(r, phase int, g *topology.Graph, out []*wire.Message, last bool) error {
	outs := g.Out(d.id)
	counts := make(map[int]uint32, len(outs))
	for _, m := range out {
		b, err := wire.AppendEncode(nil, m)
		if err != nil {
			return err
		}
		targets := outs
		if m.To != wire.Broadcast {
			if !slices.Contains(outs, int(m.To)) {
				continue // not a link of this round: the simulator delivers nothing either
			}
			targets = []int{int(m.To)}
		}
		for _, to := range targets {
			if to == d.id || d.run.Drops.Dropped(r, d.id, to) {
				continue
			}
			p := d.peer(to)
			ok := p != nil && p.Send(b) // a full queue drops (counted by the Pusher)
			d.cfg.Metrics.sent(len(b), true, ok)
			counts[to]++
		}
	}
	for _, to := range outs {
		if to == d.id {
			continue
		}
		mk, err := encodeMarker(Marker{From: uint32(d.id), To: uint32(to), Round: uint64(r), Phase: uint32(phase),
			Count: counts[to], Last: last}, d.ident)
		if err != nil {
			return err
		}
		p := d.peer(to)
		d.cfg.Metrics.sent(len(mk), false, p != nil && p.Send(mk))
	}
	return nil
}

// wait waits until every in-neighbour's marker for sl arrived (or the
// neighbour left), or the deadline; it returns those missing, and false
// if NodeConfig.Abort closed first.
func (d *driver) wait(from []int, sl slot, deadline time.Time) ([]int, bool) {
	timer := time.NewTimer(d.until(deadline))
	defer timer.Stop()
	for {
		awaited, gone := d.in.missing(from, sl)
		if len(awaited) == 0 {
			return gone, true
		}
		select {
		case <-d.in.wake:
		case <-d.cfg.Abort:
			return nil, false
		case <-timer.C:
			d.log.Warn("phase closed without every marker", "round", sl.round, "phase", sl.phase, "missing", awaited)
			return append(awaited, gone...), true
		}
	}
}

// push signs the record and queues it for the monitor.
func (d *driver) push(rec *Record) error {
	rec.Refused = d.in.takeRefused()
	s := &d.ln.Stats
	if v := s.Oversized.Swap(0); v > 0 {
		rec.Refused["oversized"] += int(v)
	}
	if v := s.Handshakes.Swap(0); v > 0 {
		rec.Refused["handshake"] += int(v)
	}
	if v := s.Closed.Swap(0); v > 0 {
		rec.Refused["closed"] += int(v) // connections closed after an unacceptable frame
	}
	if v := s.Undecryptable.Swap(0); v > 0 {
		rec.Refused["undecryptable"] += int(v) // CURVE frames that did not authenticate
	}
	d.cfg.Metrics.record(rec)
	b, err := encodeRecord(rec, d.ident)
	if err != nil {
		return err
	}
	if !d.mon.Send(b) {
		d.log.Warn("monitor queue full: record dropped", "round", rec.Round)
	}
	return nil
}
