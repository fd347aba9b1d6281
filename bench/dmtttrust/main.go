// Command dmtttrust measures how well DMTT's topology-trust layer separates
// liars from honest nodes: N nodes on the spec's
// mobility graph (A = 100, r_c = 40, v_max = 8, with the connectivity
// guarantee), a fraction of them topology liars (omission: they claim only
// the coalition; inflation: their true neighbours plus the coalition, as
// package sim's adversary does), the trust layer alone (no models) driven
// the way a node drives it: each round a node's claim and the forwards it
// chose at the end of the previous round go to its neighbours of the round.
// After the last round it prints, per liar kind and fraction:
//
//   - byz≤0.05: the fraction of (honest node, Byzantine peer it was ever a
//     neighbour of) pairs with T_topo ≤ 0.05, and their mean T_topo;
//
//   - hon≥0.8: the fraction of (honest, honest ever-met) pairs with
//     T_topo ≥ 0.8, and their mean;
//
//   - pass: the fraction of (honest node, Byzantine neighbour of the last
//     round) pairs that pass the topology screen (trust.State.Screened).
//
//   - bytes: the claim traffic per node per round, in bytes on the links
//     (every message counted once per recipient, header and signature
//     included).
//
// With -claims events the layer runs the paper's claim form (package trust,
// "Signed edge events"): each round a node emits signed events for the
// edges it gained or lost, proposes each to the other endpoint, which
// countersigns it when it saw the same change (phase 2), then broadcasts
// its events, attested or one-sided, with the digest (its whole-list
// claim) every -digest rounds and the claims and events it forwards.
// Liars act in that form too: omission liars never emit or countersign an
// event about an honest node, inflation liars countersign their true edges
// honestly, and both emit, at round 1, addition events for every coalition
// member, countersigned by it (the coalition holds each other's keys'
// cooperation).
//
//	go run ./bench/dmtttrust -n 100 -rounds 15 -rules paper
//	go run ./bench/dmtttrust -n 100 -rounds 15 -rules screen
//	go run ./bench/dmtttrust -n 100 -rounds 15 -rules screen -claims events
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/topology"
	"github.com/trellis-fl/trellis/trust"
	"github.com/trellis-fl/trellis/wire"
)

var debug = flag.Bool("debug", false, "print the evidence behind honest pairs below 0.8")

func main() {
	n := flag.Int("n", 100, "nodes")
	rounds := flag.Int("rounds", 15, "rounds")
	seed := flag.Uint64("seed", 42, "seed (mobility, identities, who is Byzantine)")
	fracs := flag.String("fractions", "0.1,0.2,0.3,0.4,0.5", "Byzantine fractions")
	liars := flag.String("liars", "omission,inflation", "liar kinds: omission, inflation, framing")
	rules := flag.String("rules", "paper", "evidence rules: paper (the spec's), screen (trust.ScreenRules) or unhopped (screen with Rules.Unhopped)")
	lambda := flag.Float64("lambda", 0, "forgetting factor λ (0: the default)")
	wd := flag.Float64("wd", 0, "w_d (0: the default)")
	assurance := flag.Int("k", 0, "high-assurance mode: support through k+1 node-disjoint paths (0: off)")
	claims := flag.String("claims", trust.ClaimsLists, "claim form: lists (a signed neighbour list every round) or events (signed edge events and a periodic digest)")
	digest := flag.Int("digest", 0, "events: a digest every D rounds (0: the default)")
	flag.Parse()

	cfg := trust.DefaultConfig()
	switch *rules {
	case "paper":
	case "screen":
		cfg.Rules = trust.ScreenRules()
	case "unhopped":
		cfg.Rules = trust.ScreenRules()
		cfg.Rules.Unhopped = true
	default:
		fail(fmt.Errorf("-rules %q, want paper, screen or unhopped", *rules))
	}
	if *lambda != 0 {
		cfg.Lambda = *lambda
	}
	if *wd != 0 {
		cfg.Wd = *wd
	}
	cfg.Rules.DisjointPaths = *assurance
	cfg.Claims = *claims
	if *digest != 0 {
		cfg.DigestEvery = *digest
	}
	cfg.Cache = wire.NewVerifyCache(1 << 16)
	if err := cfg.Validate(); err != nil {
		fail(err)
	}
	fmt.Printf("n=%d rounds=%d seed=%d rules=%s λ=%v w_d=%v k=%d claims=%s", *n, *rounds, *seed, *rules, cfg.Lambda, cfg.Wd, *assurance, cfg.Claims)
	if cfg.Claims == trust.ClaimsEvents {
		fmt.Printf(" digest=%d one-sided=%v", cfg.DigestEvery, cfg.OneSided)
	}
	fmt.Println()
	fmt.Printf("%-9s %5s %4s | %9s %8s | %9s %8s | %6s %5s | %8s\n", "liar", "frac", "byz", "byz≤0.05", "mean", "hon≥0.8", "mean", "pass", "pairs", "bytes")
	for _, liar := range strings.Split(*liars, ",") {
		if !slices.Contains([]string{"omission", "inflation", "framing"}, liar) {
			fail(fmt.Errorf("-liars: %q, want omission, inflation or framing", liar))
		}
		for _, fs := range strings.Split(*fracs, ",") {
			f, err := strconv.ParseFloat(fs, 64)
			if err != nil {
				fail(err)
			}
			r, err := run(*n, *rounds, *seed, f, liar, cfg)
			if err != nil {
				fail(err)
			}
			fmt.Printf("%-9s %5.2f %4d | %9.3f %8.3f | %9.3f %8.3f | %6.3f %5d | %8.0f\n", liar, f, r.byz,
				r.byzLow, r.byzMean, r.honHigh, r.honMean, r.pass, r.passPairs, r.bytes)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dmtttrust:", err)
	os.Exit(1)
}

type result struct {
	byz              int
	byzLow, byzMean  float64
	honHigh, honMean float64
	pass             float64
	passPairs        int
	bytes            float64 // claim bytes per node per round
}

func run(n, rounds int, seed uint64, frac float64, liar string, cfg trust.Config) (result, error) {
	mc := topology.DefaultMobility(n, seed)
	mc.Connect = true
	dyn, err := topology.NewMobility(mc)
	if err != nil {
		return result{}, err
	}
	k := max(1, int(float64(n)*frac+0.5))
	perm := rand.New(rand.NewPCG(seed, 0x22)).Perm(n)
	byz := make([]bool, n)
	var coalition []uint32
	for _, b := range perm[:k] {
		byz[b] = true
	}
	for i := range n {
		if byz[i] {
			coalition = append(coalition, uint32(i))
		}
	}
	ids, dir := wire.SimIdentities(seed, n)
	states := make([]*trust.State, n)
	g0 := dyn.At(0)
	for i := range n {
		if states[i], err = trust.New(ids[i], dir, u32(g0.Out(i)), cfg); err != nil {
			return result{}, err
		}
	}
	met := make([][]bool, n)
	for i := range met {
		met[i] = make([]bool, n)
	}
	pending := make([][]wire.Claim, n)
	var g *topology.Graph
	var sent int // claim bytes on the links
	for r := range rounds {
		g = dyn.At(r)
		if cfg.Claims == trust.ClaimsEvents {
			if sent, err = eventRound(r, g, states, byz, coalition, liar, pending, met, sent); err != nil {
				return result{}, err
			}
			continue
		}
		claims := make([]wire.Claim, n)
		for i, s := range states {
			if err := s.BeginRound(uint64(r)); err != nil {
				return result{}, err
			}
			nb := u32(g.Out(i))
			if byz[i] {
				nb = lie(liar, nb, coalition, uint32(i), byz)
			}
			if claims[i], err = s.OwnClaim(nb); err != nil {
				return result{}, err
			}
			for _, j := range g.Out(i) {
				met[i][j] = true
			}
		}
		for i := range n {
			for _, j := range g.Out(i) {
				rcv := states[j]
				if err := rcv.Heard(uint32(i)); err != nil {
					return result{}, err
				}
				rcv.Ingest(uint32(i), &claims[i])
				sent += claimBytes(&claims[i])
				for c := range pending[i] {
					rcv.Ingest(uint32(i), &pending[i][c])
					sent += claimBytes(&pending[i][c])
				}
			}
		}
		for i, s := range states {
			if _, err := s.EndRound(); err != nil {
				return result{}, err
			}
			pending[i] = s.Forwards()
		}
	}
	var res result
	res.bytes = float64(sent) / float64(n*rounds)
	res.byz = k
	if *debug {
		var lowE, allE trust.Evidence
		var nlow, nall int
		hist := map[string]int{}
		for i, s := range states {
			for j := range n {
				if byz[i] || byz[j] || i == j || !met[i][j] {
					continue
				}
				pi := s.Peer(uint32(j))
				allE = allE.Add(pi.Evidence)
				nall++
				if pi.Trust < 0.8 {
					lowE = lowE.Add(pi.Evidence)
					nlow++
					hist[fmt.Sprintf("%.1f", pi.Trust)]++
				}
			}
		}
		var bE trust.Evidence
		var nb int
		for i, s := range states {
			for j := range n {
				if byz[i] || !byz[j] || !met[i][j] {
					continue
				}
				if pi := s.Peer(uint32(j)); pi.Trust > 0.05 {
					bE = bE.Add(pi.Evidence)
					nb++
					if nb <= 8 {
						fmt.Printf("  byz pair %d→%d T=%.3f ev %+v beta %+v\n", i, j, pi.Trust, pi.Evidence, pi.Beta)
					}
				}
			}
		}
		fmt.Printf("  byz pairs above 0.05: %d, evidence %+v\n", nb, bE)
		fmt.Printf("  honest pairs %d, below 0.8: %d; evidence totals all %+v low %+v; low trust histogram %v\n", nall, nlow, allE, lowE, hist)
	}
	var nb, nh, nbLow, nhHigh, pass int
	for i, s := range states {
		if byz[i] {
			continue
		}
		for j := range n {
			if j == i || !met[i][j] {
				continue
			}
			t := s.Trust(uint32(j))
			if byz[j] {
				nb++
				res.byzMean += t
				if t <= 0.05 {
					nbLow++
				}
			} else {
				nh++
				res.honMean += t
				if t >= 0.8 {
					nhHigh++
				}
			}
		}
		screened := s.Screened()
		for _, j := range g.Out(i) {
			if byz[j] {
				res.passPairs++
				if _, ok := slices.BinarySearch(screened, uint32(j)); ok {
					pass++
				}
			}
		}
	}
	res.byzLow, res.byzMean = ratio(nbLow, nb), res.byzMean/float64(max(nb, 1))
	res.honHigh, res.honMean = ratio(nhHigh, nh), res.honMean/float64(max(nh, 1))
	res.pass = ratio(pass, res.passPairs)
	return res, nil
}

func ratio(a, b int) float64 { return float64(a) / float64(max(b, 1)) }

// lie is what liar b claims when its true neighbours are nb (sim's
// ClaimAttack: omission claims the coalition only, inflation its true
// neighbours plus the coalition) or, framing (not in sim), its true
// neighbours plus the coalition without its honest neighbours of odd id:
// it confirms most nodes it meets, so it is verified there, and denies
// true edges of honest nodes to frame them with a severe conflict.
func lie(kind string, nb, coalition []uint32, b uint32, byz []bool) []uint32 {
	var out []uint32
	switch kind {
	case "omission":
	case "inflation":
		out = slices.Clone(nb)
	case "framing":
		for _, j := range nb {
			if byz[j] || j%2 == 0 {
				out = append(out, j)
			}
		}
	}
	for _, c := range coalition {
		if c != b {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func u32(xs []int) []uint32 {
	out := make([]uint32, len(xs))
	for k, x := range xs {
		out[k] = uint32(x)
	}
	return out
}

// claimBytes is the encoded size of a claim message (one per claim, as
// trustlayer.Layer sends them).
func claimBytes(c *wire.Claim) int {
	n, _ := wire.EncodedSize(&wire.Message{Header: wire.Header{Kind: wire.KindClaim}, Claim: *c})
	return n
}

// eventBytes is the encoded size of one KindEvent message carrying k
// events (0: no message).
func eventBytes(k int) int {
	if k == 0 {
		return 0
	}
	return wire.HeaderSize + 8 + k*wire.EventSize + wire.SignatureSize // 8: the blob prefix with an empty tag
}

// eventForwards holds, per node, the events chosen for forwarding at the
// end of the previous round (package-level: run drives one network at a
// time).
var eventForwards [][]wire.Event

// eventRound runs round r in the events form and returns sent plus the
// round's claim bytes. Phases as a node runs them: (1) every node's own
// events (and digest when due), the proposals going to the other endpoint
// when it is a neighbour this round; (2) countersignatures back; (3) own
// events, digest and forwards to every neighbour.
func eventRound(r int, g *topology.Graph, states []*trust.State, byz []bool, coalition []uint32, liar string,
	pending [][]wire.Claim, met [][]bool, sent int) (int, error) {
	n := len(states)
	if r == 0 || eventForwards == nil || len(eventForwards) != n {
		eventForwards = make([][]wire.Event, n)
	}
	digests := make([]*wire.Claim, n)
	own := make([][]wire.Event, n)
	for i, s := range states {
		if err := s.BeginRound(uint64(r)); err != nil {
			return sent, err
		}
		truth := u32(g.Out(i))
		nb := truth
		evNb := truth
		if byz[i] {
			nb = lie(liar, truth, coalition, uint32(i), byz)
			evNb = nb
			if r == 0 {
				// The coalition's fabricated edges appear as co-signed
				// addition events at round 1 (the first OwnEvents only
				// records the list).
				evNb = lie(liar, truth, nil, uint32(i), byz)
			}
		}
		if s.DigestDue() {
			c, err := s.OwnClaim(nb)
			if err != nil {
				return sent, err
			}
			digests[i] = &c
		}
		var err error
		if own[i], err = s.OwnEvents(evNb); err != nil {
			return sent, err
		}
		for _, j := range g.Out(i) {
			met[i][j] = true
		}
	}
	// Phases 1–2: proposals to the other endpoint, countersignatures back.
	// An honest node countersigns what it observed itself
	// (State.Countersign); an omission liar refuses every honest node; the
	// coalition countersigns each other whether or not they are neighbours.
	for i := range n {
		perPeer := map[uint32]int{}
		for k := range own[i] {
			e := &own[i][k]
			j := e.Peer
			neighbour := slices.Contains(g.Out(i), int(j))
			if !neighbour && !(byz[i] && byz[j]) {
				continue // a removal: the link is gone, the event stays one-sided
			}
			perPeer[j]++
			if byz[j] && !byz[i] && liar == "omission" {
				continue
			}
			c, ok := states[j].Countersign(e)
			if !ok {
				continue
			}
			if neighbour {
				sent += eventBytes(1) // the countersignature's return message
			}
			if err := states[i].AcceptCountersign(j, &c); err != nil {
				return sent, err
			}
		}
		for j, k := range perPeer {
			if slices.Contains(g.Out(i), int(j)) {
				sent += eventBytes(k)
			}
		}
	}
	// Phase 3.
	for i := range n {
		batch := append(states[i].OwnAttested(), eventForwards[i]...)
		for _, j := range g.Out(i) {
			rcv := states[j]
			if err := rcv.Heard(uint32(i)); err != nil {
				return sent, err
			}
			if d := digests[i]; d != nil {
				rcv.Ingest(uint32(i), d)
				sent += claimBytes(d)
			}
			for c := range pending[i] {
				rcv.Ingest(uint32(i), &pending[i][c])
				sent += claimBytes(&pending[i][c])
			}
			for k := range batch {
				rcv.IngestEvent(uint32(i), &batch[k])
			}
			sent += eventBytes(len(batch))
		}
	}
	for i, s := range states {
		if _, err := s.EndRound(); err != nil {
			return sent, err
		}
		pending[i] = s.Forwards()
		eventForwards[i] = s.EventForwards()
	}
	return sent, nil
}
