// Package strategy holds how a node collaborates: what it sends after local
// training (Share) and how it combines what arrived (Combine). A strategy is
// the only place that knows a paper's protocol; it never learns who is
// Byzantine and never does I/O.
//
// Each node owns its own strategy value (strategies keep per-node state such
// as trackers and scratch buffers). Combine reports the weight it gave each
// sender, so drivers can measure how much influence Byzantine peers kept
// (delta_max) without the strategy knowing who they are.
//
// The peer-side defenses of docs/methods/toolbox.md ("Peer-side
// peer-side rules") are BALANCE, UBAR, SCClip, ClippedGossip, AFA, ASMR and
// CFL; New builds any strategy from its config name.
//
// Each strategy declares one registry Row in its own file: its name, what
// it takes besides its options (a weighting, a rule, f, a score, ablation
// switches), its options with defaults and ranges, and how it is built.
// New checks every parameter against the row (refusals are *ParamError,
// naming the config key), and the config validation, `trellis config
// defaults` and the table in docs/methods/toolbox.md are made from the
// rows (Registry, MarkdownTable; a test keeps the docs equal to them).
// robust's rule string is parsed by package aggregate (aggregate.Spec),
// and its f is the rule's: explicit, or resolved per aggregation from a
// fraction (aggregate.Auto). Rules on cosines
// (AFA, ASMR, CFL) measure them on x − View.Start, i.e. on updates.
//
// LIGHTYEAR (the LIGHTYEAR paper) scores peers' models on the node's own
// validation data through View.Validate (filled by the node) with the
// agreement package, and reports every score it computed (ScoreReporter)
// so the driver can record them beside who was Byzantine.
//
// Asynchronous inputs (timing mode "async", docs/methods/async.md): a row
// with Async is defined for inputs of different ages, each with its
// Incoming.Staleness (0 in synchronous rounds): local, robust (its option
// staleness_bound leaves staler inputs out before the rule) and
// async_mean (FedAsync's staleness-discounted mean). Every other strategy
// assumes a synchronous round and is refused in asynchronous timing.
//
// Choices recorded here:
//   - Messages a neighbor was expected to send but that never arrived
//     (dropped, or rejected by validation) simply do not take part: uniform
//     weights renormalize over what arrived, Metropolis–Hastings weights give
//     the missing share to the node itself (the usual convention, which keeps
//     the mixing matrix row-stochastic).
//   - D-PSGD and gradient tracking (survey §2.3) run on the round structure
//     train → share → combine with the local update d = w_start − w_trained
//     standing for η·∇f: D-PSGD sends w_start and sets
//     w ← Σ_j W_ij w_start_j − d_i; gradient tracking sends (w_start, y) and
//     sets w ← Σ_j W_ij w_start_j − y_i, y ← Σ_j W_ij y_j + d_i^{t+1} − d_i^t.
//     Both are gradient methods: run them with a few local steps per round
//     (nn.TrainConfig.Steps). With a whole local epoch per round they
//     oscillate on non-IID MNIST (measured in sim's tests).
//   - R-DPFL's choices are recorded with its type (RDPFL, rdpfl.go).
//   - The two secret-sharing strategies of the survey's §3.4.2 (Table 6),
//     GradientTrackingSD (ref. [122]) and FunctionSharing (ref. [171]),
//     keep the optimum of Σ_i f_i and hide the linear part of a node's
//     objective from honest-but-curious coalitions that miss one of its
//     neighbours; they draw every secret from View.RNG and send the
//     per-edge secrets to one neighbour each (Outgoing.To). Their update
//     rules and choices are in docs/methods/p2p-consensus.md.
//   - RobustRule with Updates exchanges w~ − w_start and applies the
//     aggregate from w_start: the server-style setting of the survey's
//     update attacks, per node.
package strategy
