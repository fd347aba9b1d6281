// Package trust is DMTT's topology-trust layer (spec/dmtt.md, "Per-node
// state" and "Topology claims"; paper §III-D, §IV-A–D, Algorithms 1–4):
// link reliability, signed neighbor-list claims, witness pools and the
// trusted view, controlled forwarding, the self-inclusion check and Beta
// source trust. It is pure and deterministic: no I/O, no goroutines, no
// clock, no randomness; every loop whose order matters runs in node-id order,
// and products feeding a sum are rounded explicitly (no fused multiply-add,
// as in package topology); math.Exp is the one function whose last bit may
// differ between architectures.
//
// State is one node's layer, driven once per round by the node (see State
// for the call sequence). The formulas are exported as small functions so
// tests pin them to the spec: Reliability (Eq. 1), WitnessWeight (Eq. 2),
// Pools.Confidence (Eq. 5) and Pools.Decide (acceptance), ForwardDecision
// (Algorithm 3), Beta.Update/Reputation/Uncertainty/Trust (Algorithm 4).
//
// # Choices where the spec is silent
//
// Witnesses. A claim is its source's whole neighbor list ("Topology claims"),
// so the only nodes that speak of an edge e = {u, v} first-hand are its
// endpoints: u's current claim supports e if it lists v and opposes it if
// not ("opposition ... if the claim is from an endpoint of e and omits
// it"), and likewise v. The witness buffers W+(e), W-(e) are therefore the
// endpoints with a current claim, each counted once with the weight ψ of
// its latest claim; "m distinct first-hop witnesses" counts distinct
// endpoints, so m = 2 means both endpoints attest the edge (the paper's
// "bilateral attestation", §IV-A) and m > 2 is refused by Config.Validate.
// Counting the neighbors a claim arrived through instead would let one
// liar's claim, relayed by two honest forwarders, pass the rule.
//
// Trusted view. Edges at the node itself are its direct edges (N_dir) and
// are not pooled; the self-inclusion check covers them. Other edges are
// evaluated once per round, in EndRound, after all claims of the round are
// in: Algorithm 2 decides per arriving claim, which would make the view
// depend on arrival order. An edge enters by the spec's addition rule and
// leaves by its removal rule (1 - χ >= τ_add, m opposing witnesses) — or
// when no current witness supports it any more, since with a removal rule
// alone an edge whose endpoint fell silent would stay forever.
//
// Witness weights. ψ = T_topo(source) exp(-ξ hop) uses the source's trust
// when its claim was accepted (Algorithm 2 computes ψ on processing) and the
// smallest hop any identical copy of the claim arrived with, so the result
// does not depend on which path delivered first.
//
// Freshness. A claim carries the round it describes; it is fresh for MaxAge
// rounds (default H = 2: a claim forwarded H times, one round per hop, is
// still usable) and stops counting as a witness after that. A claim for a
// future round is refused. Versions must increase, and an honest source's
// rounds never decrease as its versions increase (Inconsistent otherwise).
//
// Replays and duplicates. The spec charges a q event for every claim whose
// version is not newer than the last seen; with controlled forwarding that
// would charge honest sources every round, since the same claim reaches a
// node along several paths and a forwarded copy can arrive after a newer
// direct one. So: an identical copy of the current claim is a Duplicate and
// an older version forwarded within its freshness window is Superseded,
// neither evidence; an older or different claim the source sends itself
// (hop 0) is a Replay. Evidence is charged to whoever provably did the
// wrong (Reason): the delivering peer for malformed, stale, future, forged
// and replayed claims (an honest forwarder forwards only what it accepted),
// the source for equivocation, inconsistency and over-budget claims (its
// valid signature proves it signed them). Ingest trusts its caller for the
// identity of the delivering peer (the message signature is wire's job).
//
// Budget. "2 claims per round" limits both forwarding (Algorithm 3) and
// ingestion: a source's third new claim for the same round is OverBudget (q
// against the source, which signed it), which is how flooding is caught and
// counted (§IV-C: flooding "contributes negative evidence"). The budget is
// per claim round, so catching up on a source's delayed claims of earlier
// rounds never looks like flooding.
//
// Evidence (Algorithm 4, per source per round, with Rules off):
// d = 1 / x = 1 when the source delivered a message this round and its claim
// for this round lists / omits this node (§V-D; a claim listing the node
// when nothing arrived is no evidence); f, c and z are judged on the
// source's current claim when it was accepted this round, at most one each
// per round: z if it lists an edge rejected this round with χ < 1 - τ_add;
// otherwise, unless the claim also drew x, f for being fresh and internally
// consistent (it passed every check of Ingest) and c if it lists an edge in
// the view after this round whose other endpoint, itself trusted
// (T >= τ_trust), also attests it (paper §IV-D: "corroborated by
// independent trusted witnesses"). A claim contradicted by direct
// observation or in severe conflict earns no positive evidence: it is not
// consistent, and without this rule a coalition of omission liars, which
// attest each other's edges, earns f + c = 0.75 a round against x = 1 and
// settles at T ≈ 0.43, above the gate, even at a node that contradicts
// them every round. One judgment per round keeps the evidence independent
// of the order in which copies and versions of claims arrive, and gives a
// source nothing for sending more claims. q counts every rejection blamed
// on the peer (above), plus claim rejections a wire.Validator reports
// through ObserveRejected. A source with no event keeps its (α, β): the
// update runs "once per round per source with new evidence", so forgetting
// applies only then.
//
// Remote peers. Trust in a peer that never delivers to this node rests on
// its forwarded claims alone (f, c, z, q): an omission liar's claims look
// consistent from afar, so its trust is low where it is a direct neighbor
// — where x fires and where the gate τ_trust is applied (Screened) — and
// can stay higher elsewhere (Example_topologyLiar shows both).
//
// Links. ack_ij is 1 when a message from j arrived this round; it is
// expected from every member of N_dir, so the EMA runs for N_dir members and
// for peers heard this round (which join N_dir). A member silent for Timeout
// rounds leaves N_dir but keeps its p_ij should it return.
//
// Forwarding. Only claims accepted this round are candidates (so bad
// signatures and stale versions are refused at ingest), sources in id
// order, each source's claims in version order, with the source's trust
// after this round's update (Algorithm 1 updates trust before forwarding).
// A forwarded claim keeps the source's signature; the hop, outside it, is
// incremented.
//
// # Evidence rules (Config.Rules)
//
// With the rules as written above, a liars' coalition earns evidence: its
// members attest each other's (fabricated) edges, their claims reach
// distant nodes through the coalition and earn f and c there, and a
// moderately trusted nearby liar, at hop 0, outweighs a distant honest
// endpoint (hop 2, ψ discounted by e^-1) and makes its true edge a severe
// conflict (z against the honest node). Measured with bench/dmtttrust (100
// nodes, mobility graph, 15 rounds): honest nodes hold ≤ 0.05 for only
// 24 % of the omission liars they met, and 30 % of (honest, liar
// neighbour) pairs pass the screen. Rules switches on, separately, the
// paper's conditions that close these doors (ScreenRules: all but the
// high-assurance mode):
//
//   - IndependentPaths (§IV-B: "support comes from at least m distinct
//     first-hop witnesses"; Algorithm 2 line 16, "witness diversity
//     conditions"): a witness counts only with a copy observed directly
//     (sent by the source itself) or forwarded once by a node that is not
//     the edge's other endpoint — a path the claim's source set does not
//     control. A copy that travelled two hops has an unknown first
//     forwarder and counts for forwarding and trust, not as a witness.
//   - Conflict (§IV-D: positive evidence for claims that "remain fresh and
//     internally consistent over time"; issue 22: corroboration from
//     sources in conflict with the node's own observations counts for
//     nothing): a source whose self-inclusion record at this node has more
//     contradictions than confirmations is no witness, corroborates
//     nothing and earns no f or c, wherever its claims come from. The
//     record never decays, so a liar met once cannot regain trust through
//     forwarded claims; an honest peer whose link once dropped a message
//     (one x) is restored by its next confirmation.
//   - Quorum (§IV-D: negative evidence when "a claim from j is
//     contradicted by a trusted quorum"; z): evidence about a third party
//     comes only from verified witnesses — peers this node confirmed
//     directly (d >= 1, d > x) and trusts (T >= τ_trust). c needs a
//     verified corroborator. A claim omitting an edge at its source that a
//     verified witness attests, with χ >= τ_add, is contradicted (z): this
//     is how a node that never met an omission liar learns it lies. A
//     severe conflict (the spec's z) is charged only when a verified
//     endpoint denies the edge. Claims are compared round for round (each
//     source's claims of the last MaxAge+1 rounds are kept): on a mobile
//     graph an edge that formed or broke between two rounds is no
//     contradiction — comparing a forwarded claim of round t-1 with a
//     direct claim of round t charged honest nodes z every round.
//   - Unhopped (a choice the paper leaves open): under Quorum, a dispute
//     between an edge's endpoints is decided by default by the pools' χ,
//     hop discount included; Unhopped decides it by the endpoints' trust
//     alone (a p in conflict weighing nothing). With the discount a
//     verified liar next to the node can frame an honest endpoint farther
//     away; without it a liar the node never met is contradicted only once
//     the witness is 1.5 times more trusted. Rules' judgments take trust as
//     it was when the round ended, so none depends on update order.
//   - DisjointPaths k (§IV-B, the high-assurance mode, after Nesterenko
//     and Tixeuil [6]): an edge enters the view only when its support
//     arrives through at least k+1 internally node-disjoint paths. Only
//     known paths count: a direct copy (no internal node) and each distinct
//     forwarder of one-hop copies (one internal node; a forwarder of both
//     endpoints' claims is one path). Removals keep the spec's rule.
//
// Signed edge events. The paper's claims are edge events (addition or
// removal of (u, v), §III-D, Algorithm 1 lines 12–14) with bilateral
// attestation and a periodic signed digest of the neighbour list (§IV-A).
// This layer keeps the spec's form — every round, a signed claim of the
// whole neighbour list, which is the digest sent every round — and does
// not implement separate edge-event messages: bilateral attestation is the
// m = 2 rule (both endpoints' signed lists name the edge), and an event
// stream would carry the same information as the difference of two
// consecutive signed lists (issue 22: not done for lack of time).
//
// What no rule here can do. An inflation liar claims its true neighbours
// (the self-inclusion check confirms it every round) plus the coalition;
// the fabricated edges join two liars, so no honest node is an endpoint
// and none can contradict them without an oracle (positions, or the shared
// mobility model) — and they cost honest nodes nothing, since the edges
// the liar reports at honest nodes are true. Its topology trust stays high
// under every rule set (bench/dmtttrust: 0.97 at 10–50 %); screening it is
// the model gates' job.
//
// # Cost
//
// One Ed25519 verification per new claim version; duplicates, replays,
// superseded and malformed claims are refused before any verification (a
// forwarded claim that is not newer is dropped unexamined: it cannot change
// anything). EndRound is O(E log E) in the edges the current claims list.
// BenchmarkRound100: 100 nodes on the spec's mobility graph (about 50
// neighbors each) ingest about 375,000 claim copies a round, about 10,000
// of them new, which dominates: 1.14 s a round on 2 cores of the
// development machine, two thirds of it Ed25519 verification. A node that
// also runs wire.Validator.Check on claim messages verifies each claim
// signature twice. Rules add, per source with a new claim, one pass over
// the node's peers (omissions a verified witness attests), O(P² log d) a
// round for P peers of degree d, and keep each source's claims of the
// last MaxAge+1 rounds.
package trust
