// Package cluster is driver 2 of the round protocol: one OS process per
// node over ZeroMQ, rounds in lock-step or on a wall-clock epoch, a passive
// monitor that writes the run directory a simulated run writes, and a
// launcher that runs it all on one machine.
//
// The package knows nothing of configs or of the simulator: a node
// process (RunNode) is handed a built *node.Node, its keys, the Run (the
// round graphs, link drops, Byzantine set) and, for a Byzantine node, its
// adversary (package adversary, the pipeline the simulator runs too); the
// CLI builds them from the experiment config as the simulator is built
// (experiment.Deployment: same split, graph, adversary, all from the
// seed). Each round the node process calls Begin, Train (idle Byzantine
// nodes do not), then per exchange phase Outbox — a Byzantine node's
// messages rewritten by its own adversary (adversary.Alone), from what it
// has — sends them along the round's out-links (per-link drops from the seed),
// Steps what arrived in the simulator's order (sender order along the
// round's in-links, each sender's in arrival order), and End; it pushes a
// signed Record (its Ready, bytes sent, what it refused, what was late or
// missing) to the monitor. The monitor (RunMonitor) adds the ground truth
// it knows from the Run (who is Byzantine, the round's graph), builds each
// round's metrics.Round with metrics.Record and writes it to its
// RunWriter (the run directory, opened and closed by the CLI), so in
// lock-step mode metrics.jsonl is the simulator's bit for bit (a test). It
// only binds a PULL socket: it never sends to a node. Checkpoints go
// through a Checkpointer the CLI fills from the node's snapshot.
//
// # Timing
//
// Lockstep: a phase closes when every in-neighbour's phase marker arrived,
// or after a generous timeout (Timing.PhaseTimeout). Wallclock (the DMTT paper,
// Eq. 18): round k runs in [t0 + kΔ, t0 + (k+1)Δ); training stops between
// batches at t0 + kΔ + TrainShare·Δ; a phase closes early when every marker
// arrived, else at its sub-deadline (the last phase at the window's end
// minus Grace; an earlier phase at half the time left), and the node ends
// the round with what it has. A node that is past a window (it started
// late) joins the window that is open. Early messages (up to two rounds
// ahead) are held; late ones are handed to the node, which drops and counts
// them, and counted in the Record.
//
// Async (the config's [timing] mode = "async"; async.go): no epoch, no
// barrier, no markers. From a common start (Timing.Epoch) each node loops
// over its own steps — Begin, Train, Step what arrived (in arrival order),
// Outbox to the step's out-neighbours, End — and pushes each step's
// Record (Round = the step); the node checks senders, steps and
// staleness itself. A node stops after Run.Rounds steps or Timing.Horizon.
// With NodeConfig.Arrivals it writes its arrival log (ArrivalEvent, JSON
// lines), which sim.Replay replays bit for bit. Nobody's record lists a
// dead asynchronous node missing, so the monitor goes by silence: a node
// that sent no record for MonitorConfig.Wait is written missing from the
// steps it has not reported.
//
// # Stopping, failures and exit codes
//
// SIGINT and SIGTERM mean the same to `trellis launch`, `trellis node` and
// `trellis monitor` (NodeConfig.Abort, MonitorConfig.Abort and
// LaunchConfig.Abort carry the second one). A node stops after its current
// round and tells every peer it leaves (a leave marker), so no phase waits
// for it; the monitor takes the records of the nodes' current rounds (until
// every node is done or a peer gave up on it, at most 45 s), then writes
// every round of which a record arrived, the records that never came
// marked missing, and the summary of those rounds; the launch passes the
// signal on to every process and removes its sockets' temporary directory.
// A second signal stops at once: a node drops the round in progress but
// still sends its leave marker, the monitor writes what it has. Exit codes:
// 0, the run completed (every round written; a record may be marked
// missing); ExitStopped (3), stopped by a signal before the last round;
// 1, an error. A node that fails (it cannot start, or exits with an
// error) makes the launch stop every other process and exit 1 with that
// node's error; a node killed by a signal does not: the launch says so and
// the run goes on without it (in wall-clock mode it can be restarted with
// --resume, and the launch of the completed run still exits 0).
//
// A node that misses its phase timeout is marked missing for that round in
// either mode: in wall-clock mode the monitor writes a round Gap after its
// first record; in lock-step (Gap 0) it waits for every node's record
// except those of a node that a peer's record of that round or a later
// one lists as missing (it died, or left) or that said it is done, so a
// dead node hangs neither its peers nor the monitor. A node restarted
// with --resume after it left sends every peer a join marker before its
// first round, and is waited for again (by its peers and the monitor).
//
// # Checkpoints and --resume
//
// With NodeConfig.StateDir (`trellis node --checkpoint DIR`; `trellis
// launch --checkpoints` gives every wall-clock or asynchronous node one
// under cluster/) a node writes its state
// after every round, once its record is queued: its node.Snapshot
// (parameters, model-local and optimizer state, the strategy's state,
// every layer's — the trust state, DP's accountant, keys that live across
// rounds — and its training data's position; checkpoint.go: replaced
// whole, never half-written). A node killed and restarted with --resume
// restores it and joins the window that is open: the rounds it missed are
// missing in the run (the monitor writes them without its record,
// marked), its first record says which checkpoint it restored
// (driver.jsonl's resumed_after), and the other nodes lose nothing (they
// close their phases without it); a DP node's ε goes on from the saved
// accountant. An asynchronous node checkpoints after every step and,
// resumed, goes on with the next (async.go says what its checkpoint does
// not keep). Resuming needs wall-clock or asynchronous timing (in
// lock-step the others would wait for the rounds it missed).
//
// # Metrics
//
// NodeMetrics and MonitorMetrics (metrics.go) count what a node process
// and the monitor do; ServeMetrics serves them at /metrics through
// prometheus/client_golang, with its standard process_… and go_…
// collectors beside trellis's own. The tests scrape over HTTP and parse the
// text format strictly with a parser of their own.
//
// # Transport: why our own ZMTP
//
// The paper's runtime uses ZeroMQ; so does this one, on the wire: ZMTP 3.1
// with the NULL or the CURVE mechanism, PUSH → PULL, over tcp:// and
// ipc:// (zmtp.go, curve.go).
// A peer on real libzmq talks to a trellis node (the Python interop test).
// The implementation is our own, about 400 lines of Go, because the pure-Go
// library (github.com/go-zeromq/zmq4 v0.17.0, the version the module proxy
// serves) allocates whatever length a peer's frame header announces before
// reading the frame (conn.go: make([]byte, size) with size up to 2^63):
// one 10-byte frame header from a hostile peer killed a test process with
// "fatal error: runtime: out of memory", which no recover catches; it has
// no maximum message size option. The cgo binding (github.com/pebbe/zmq4)
// has ZMQ_MAXMSGSIZE but needs libzmq and cgo, so `go install` would no
// longer give a static binary. Ours keeps the binary static and is built
// for the fault tests: a frame above the size limit closes its connection
// before anything is allocated, and a frame's buffer grows only as its
// bytes arrive (within a deadline); the handshake has a deadline; a
// Listener serves a bounded number of connections; each peer has its own
// PUSH connection with a bounded queue (frames and bytes), so Send never
// blocks and a slow or dead peer costs only its own queue (full: dropped
// and counted); a Pusher reconnects with backoff after an error and sends
// the interrupted frame again (a duplicate is dropped by the receiver).
// Multi-part messages are refused (trellis sends single frames) and ZMTP
// commands after the handshake (PING) are ignored. A connection that
// delivers a frame no honest peer sends (garbage, an unknown sender, a bad
// signature) is closed, and one that is idle for 10 minutes too (a Pusher
// reconnects when it next sends). What NULL does not stop: it
// authenticates no connection, so a peer that opens connections up to the
// Listener's limit (4 per node plus 16) and keeps them busy with
// valid-looking traffic can keep an honest peer from connecting; CURVE
// closes that gap, as only the peers file's nodes complete its handshake.
//
// # Encrypted links: CURVE
//
// Links to tcp:// endpoints use ZMTP's CURVE mechanism by default
// (Encryption: auto; curve also encrypts ipc://, none nothing), as libzmq
// implements CurveZMQ: the client sends HELLO from a fresh short-term key
// C′ to the server's long-term key S; the server answers WELCOME with its
// fresh short-term key S′ and a cookie (C′ and its short-term secret,
// sealed with a per-connection key, so it holds nothing until the client
// proves itself); the client sends INITIATE, holding the cookie, its
// long-term key C and a vouch (C′ and S boxed from C to S′), and its
// socket type; the server checks the vouch and that C is a node of the
// peers file (else it answers ERROR and closes), and answers READY. Every
// frame after that is a MESSAGE: the frame and its flags in a NaCl box
// (XSalsa20-Poly1305) between the short-term keys, under a counter nonce
// that must grow (a replayed or altered frame closes the connection,
// counted as "undecryptable"). The boxes, secretboxes and key generation
// are golang.org/x/crypto's. A server that refuses a client counts it
// (Stats.Handshakes, a round record's refused "handshake") and logs at
// most one a second; a client that fails the handshake (the server holds
// another key) retries with backoff, as for a server that is down, and
// logs each new error once. Neither blocks anything but that connection.
//
// Keys: a node's CURVE key is its Ed25519 key carried over to X25519, as
// libsodium's crypto_sign_ed25519_sk_to_curve25519 and
// crypto_sign_ed25519_pk_to_curve25519 do (wire.Identity.CurveSecret,
// wire.CurvePublic: the clamped scalar Ed25519 signs with, and the
// Edwards point's birational image u = (1 + y)/(1 − y)). We derive rather
// than list a second, signed key in the peers file because the peers file
// already authenticates the Ed25519 key: there is nothing new to
// distribute, to sign or to get out of step, and a pyzmq peer computes the
// same key with libsodium (the interop test does). Using one key pair for
// both Ed25519 signatures and X25519 agreement is the construction
// libsodium provides for this and has been shown secure for this pair of
// schemes. The monitor, which signs nothing, has its own key
// (MonitorKeyFile; the peers file's monitor_key), from the seed with
// seed keys (SeedMonitorIdentity). Over Unix sockets on one machine
// encryption is off unless asked: only the machine's own users can reach
// them (the socket directory is private to the launch), and the cost of
// CURVE (BENCHMARKS.md) buys nothing there.
//
// # Frames
//
// Every ZMTP message trellis sends is one frame (ZMTP's 0x00 short or 0x02
// long flags, then the length, big-endian), and its first byte says what
// it holds:
//
//	0x01  a wire message: the signed encoding of package wire, unchanged
//	      (format version 1; see wire's doc for the layout and signature)
//	0xC1  a cluster control frame; its second byte is its type:
//
// Phase marker, 'P' (91 bytes; little-endian like wire):
//
//	offset  size  field
//	     0     1  0xC1
//	     1     1  'P'
//	     2     4  from
//	     6     4  to
//	    10     8  round
//	    18     4  phase (0xFFFFFFFF: "I take part in no round from `round` on";
//	              0xFFFFFFFE: "I take part again from `round` on")
//	    22     4  count: messages sent on this link in the phase
//	    26     1  1 if this was the round's last phase, else 0
//	    27    64  Ed25519ctx signature by `from`, context
//	              "trellis/cluster/v1 phase marker", over bytes 0–26
//
// A sender's messages after its marker for phase p of round r belong to
// phase p+1 (its connection keeps them in order); a marker is accepted
// only if it advances its sender's (round, phase).
//
// Record, 'R' (node → monitor):
//
//	offset  size  field
//	     0     1  0xC1
//	     1     1  'R'
//	     2     4  node
//	     6     8  round (0xFFFF…FF: the node's last, "done" record)
//	    14     4  L: body length
//	    18     L  body: a Record, encoding/gob
//	  18+L    64  Ed25519ctx signature by the node, context
//	              "trellis/cluster/v1 record", over bytes 0 to 18+L−1
//
// The monitor verifies a record's signature before it decodes anything.
//
// # Validation before the node
//
// On a connection's goroutine, before anything reaches the node: a frame
// that is not one of the above, a message whose kind or declared size the
// node does not take (node.Admission: read from the header and the length
// fields, before anything is decoded or allocated; frames are at most the
// node's largest message), or one that does not decode within wire's
// limits, is garbage; a sender not in the peers file is refused;
// the message signature is verified (so a forger cannot fill an honest
// sender's buffer); an exact duplicate within a phase, a message more than
// two rounds ahead, and anything beyond a sender's buffer bounds (4096
// messages, 64 MiB plus four maximal messages) are dropped. Each is
// counted by reason in the round's Record. A message of a round already
// closed is kept as its header only, for the node to count. Then the node
// checks it as in simulation (its in-neighbours, duplicates, kind and size
// by phase, then wire.Validator). So a relay, a process that forwards
// another node's correctly signed message to a node that is not its
// out-neighbour, gets past the driver but not the node: the node refuses
// it (not_in_neighbor), gives its sender no weight, and counts it in its
// Ready (the "rejected" of its line in metrics.jsonl), as
// TestRelayedMessageRefusedInCluster checks on a five-node ring.
//
// Keys: a node holds its private key file and the peers file (endpoints
// and every node's public key, `trellis keys`), and verifies only the keys
// listed there; without key files (SeedKeys, for tests and lock-step
// comparisons) they derive from the seed, as in simulation.
package cluster
