// Package trust is DMTT's topology-trust layer (the DMTT paper,
// §III-D, §IV-A–D, Algorithms 1–4):
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
// tests pin them to the paper: Reliability (Eq. 1), WitnessWeight (Eq. 2),
// Pools.Confidence (Eq. 5) and Pools.Decide (acceptance), ForwardDecision
// (Algorithm 3), Beta.Update/Reputation/Uncertainty/Trust (Algorithm 4).
//
// # Choices where the paper is silent
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
// depend on arrival order. An edge enters by the paper's addition rule and
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
// Replays and duplicates. The paper charges a q event for every claim whose
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
//     internally consistent over time"; corroboration from
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
//     severe conflict (the paper's z) is charged only when a verified
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
//     endpoints' claims is one path). Removals keep the paper's rule.
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
// # Signed edge events (Config.Claims = "events")
//
// The paper's form, the default ("lists"), sends every round a signed claim
// of the whole neighbour list. Config.Claims = "events" runs the paper's
// form instead (§III-D, the claim c = (u, v, σ, ν, τ, π_u); Algorithm 1
// lines 12–14; §IV-A): when node u's neighbour set changes between rounds
// it signs, per edge added or removed, an event (u, v, op, version ν,
// round τ), and every DigestEvery rounds (default D = 5; and at its first
// round, so a late joiner's peers and the joiner itself resynchronise) its
// whole-list claim, which is the "compact signed digest of its current
// neighbor list" (§IV-A) in the wire form claims already have. Versions
// come from one counter for events and digests.
//
// Bilateral attestation (§IV-A: "both endpoints sign the same event when
// possible"). Chosen: a co-signing round trip, not two independent
// signatures joined later — a joined pair needs a third party to collect
// both halves, and until then neither endpoint can prove the other agreed.
// Phase 1, u sends its events to their other endpoints (OwnEvents); phase
// 2, v countersigns u's event iff its own events of the round hold the
// same change about u (Countersign: an honest node attests only what it
// observed) and returns it (AcceptCountersign); phase 3, u broadcasts its
// events, attested or not (OwnAttested), with the digest when due and the
// forwards. v countersigns the bytes u signed (another Ed25519 context), so
// an attested event carries two statements: u's about v and v's about u —
// "both endpoints as witnesses". A removal is always one-sided: the link
// the round trip would run over is gone.
//
// Stances. For each node w and each other node x, the layer keeps w's
// latest signed statement about the edge {w, x} (stance): from w's digest
// (listed or omitted), w's event, or w's countersignature on x's event. A
// later round wins; in the same round a bilateral statement beats a
// one-sided one and an event a digest. A digest that agrees with an
// event's statement leaves it in place, so an attested edge does not decay
// to one-sided at the next digest; one that disagrees replaces it (that is
// the resynchronisation). w's list — what the rest of the layer reads as
// its current claim: the self-inclusion check, candidate edges, f and c —
// is the nodes its stances list; it stays current for MaxAge + DigestEvery
// rounds after w's latest statement, since a node whose edges do not
// change sends nothing between digests.
//
// Weights. A witness of edge e is an endpoint with a stance on e, weighted
// ψ = T exp(-ξ hop) as for claims, times OneSided (default 1/2) unless both
// endpoints signed the statement (§IV-A: "One-sided claims are allowed but
// start with lower confidence"). The paper gives no value; 1/2 counts a
// one-sided statement as one of the two signatures an attested one
// carries, and the same factor applies to both sides of a dispute between
// two one-sided statements (a one-sided addition
// against the other endpoint's digest omitting it: χ = T_u / (T_u + T_v),
// as with lists), so it lowers confidence in unattested support without
// changing how disputes are decided. Acceptance keeps m = 2 witnesses: an
// attested event makes both, a one-sided one one. The hop and the known
// paths of a statement are those of every copy of its event (the smallest
// hop, the direct copy, the one-hop forwarders), so they do not depend on
// arrival order; a countersignature never counts as a direct copy
// (IndependentPaths): it arrives inside the other endpoint's event.
//
// Checks (IngestEvent, charged as for claims: "Replays and duplicates").
// The delivering peer is blamed for form (unknown or equal endpoints, bad
// op, hop 0 from a forwarder, a returned countersignature outside the
// round trip), stale and future events, a signature or countersignature
// that does not verify (Forged), and the source's own re-sending of a held
// event in a later round (Replay); an identical copy is a Duplicate, and
// an attested copy of a held one-sided event upgrades it. The source is
// blamed for two different events under one version (Equivocation), a
// newer version for an older round than a held event (Inconsistent), and a
// second event about the same edge in one round (OverBudget: the budget of
// events is one per edge per round, which bounds a source by the
// directory's size, so no per-source count like the claims' 2 is needed;
// forwarding uses that budget too). A node that signs two contradicting
// statements about one edge in one round (its event and its
// countersignature) is charged Equivocation, and the denial is kept
// whatever the arrival order.
//
// Rules.Quorum compares lists of the same round; between digests a
// source's list is assembled from events that reach a node by different
// paths at different times, and comparing such lists charged honest nodes
// z at every removal (a build that did, bench/dmtttrust at 100 nodes,
// omission liars 10 %, screen rules: 29,589 z among honest pairs, 57 % of
// honest pairs below 0.8). So in the events form Quorum
// compares digests only, in the round one arrives: contradictions by a
// trusted quorum are found D times less often than with lists.
//
// Liars. An omission liar emits no event about its honest neighbours and
// countersigns none of theirs; the honest endpoint's one-sided addition
// then stands against the liar's digest omitting it, and the honest node's
// direct observation (the self-inclusion check: it hears the liar, whose
// list omits it) is the x evidence it is with lists. A coalition's
// fabricated edges between two liars are bilaterally signed by the
// coalition: no event-level rule can refute them, for the reason given
// above for inflation liars. MarshalBinary refuses the events form (its
// stances are not in the snapshot format). Package sim's liars act in the
// events form (sim.eventsOf: an omission liar withholds every event and
// countersignature about its honest edges), but its inflation liar does
// not co-sign fabricated events (bench/dmtttrust's do), and its claim
// forgery, replay and flood attacks are not implemented for it.
//
// # Cost
//
// One Ed25519 verification per new claim version; duplicates, replays,
// superseded and malformed claims are refused before any verification (a
// forwarded claim that is not newer is dropped unexamined: it cannot change
// anything). EndRound is O(E log E) in the edges the current claims list.
// BenchmarkRound100: 100 nodes on the paper's mobility graph (about 50
// neighbors each) ingest about 375,000 claim copies a round, about 10,000
// of them new, which dominates: 1.14 s a round on 2 cores of the
// development machine, two thirds of it Ed25519 verification. A node that
// also runs wire.Validator.Check on claim messages verifies each claim
// signature twice. Rules add, per source with a new claim, one pass over
// the node's peers (omissions a verified witness attests), O(P² log d) a
// round for P peers of degree d, and keep each source's claims of the
// last MaxAge+1 rounds.
package trust
