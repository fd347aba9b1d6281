package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/trellis-fl/trellis/strategy"
)

// Config is an experiment as a TOML file describes it. Every field has a
// default (Default, printed by `trellis config defaults`); a file
// only says what differs.
type Config struct {
	Name string `toml:"name"`
	// Label names the run's method in tables and plots; empty means one
	// made from the strategy (Config.Label). Sweep variants set it.
	RunLabel  string `toml:"label,omitempty"`
	Seed      uint64 `toml:"seed"`
	Rounds    int    `toml:"rounds"`
	EvalEvery int    `toml:"eval_every"`
	// FinalRounds is k of the final_* metrics: the mean over the last k
	// evaluated rounds.
	FinalRounds int `toml:"final_rounds"`
	Nodes       int `toml:"nodes"`
	// Init is "same" (every node starts from the same parameters, as every
	// averaging method assumes) or "per_node" (each node its own draw), to
	// study that effect.
	Init string `toml:"init"`

	Data       Data       `toml:"data"`
	Partition  Partition  `toml:"partition"`
	Model      Model      `toml:"model"`
	Training   Training   `toml:"training"`
	Topology   Topology   `toml:"topology"`
	Adversary  Adversary  `toml:"adversary"`
	Strategy   Strategy   `toml:"strategy"`
	Trust      Trust      `toml:"trust"`
	Privacy    Privacy    `toml:"privacy"`
	SecAgg     SecAgg     `toml:"secagg"`
	Evaluation Evaluation `toml:"evaluation"`
	Run        Run        `toml:"run"`
	Sweep      Sweep      `toml:"sweep"`
	// WorstCase is `trellis worst-case`'s search (WorstCase); nil, and
	// left out of the TOML, in every other config, so a config without it
	// keeps its hash.
	WorstCase *WorstCase `toml:"worst_case,omitempty"`
	// Consensus makes the run task type consensus (Consensus): private
	// average consensus instead of learning. Nil, and left out of the
	// TOML, in every other config, so a config without it keeps its hash.
	Consensus *Consensus `toml:"consensus,omitempty"`
	// Timing is the [timing] section (Timing): mode = "async" runs the
	// simulation in asynchronous timing. Nil, and left out of the TOML, in
	// every other config, so a config without it keeps its hash.
	Timing *Timing `toml:"timing,omitempty"`
}

// Data names the dataset.
type Data struct {
	Dataset string `toml:"dataset"` // mnist (embedded) | fashion_mnist | cifar10 | har | femnist | pamap2 (no global test set)
	Dir     string `toml:"dir"`     // where the files are; "" = the standard place
	Samples int    `toml:"samples"` // use only the first N training samples (0 = all)
}

// Partition says how samples are split across nodes.
type Partition struct {
	Method           string  `toml:"method"` // iid | dirichlet | shards | natural (by writer / subject) | sampled
	Alpha            float64 `toml:"alpha"`
	ClassesPerClient int     `toml:"classes_per_client"`
	// PerNode is, with method = "sampled", how many distinct training
	// samples each node draws, uniformly and independently of the other
	// nodes (data.Sampled): nodes may share samples, so there may be more
	// nodes than samples. Zero is left out of the resolved TOML, so
	// existing configs keep their hash.
	PerNode int `toml:"per_node,omitzero"`
	// Shift is a fixed per-client feature shift: "" none, "rotate" (client i rotates its images by
	// i·shift_degrees/nodes degrees) or "permute" (a pixel permutation per
	// client); it applies to the client's train, validation and test
	// samples, not to the global test set.
	Shift        string  `toml:"shift"`
	ShiftDegrees float64 `toml:"shift_degrees"` // rotate: the spread of angles; 0 means 360
	// Split is every client's train / validation / test fractions.
	Split []float64 `toml:"split"`
}

// Model declares the model (nn.Spec).
type Model struct {
	Kind      string  `toml:"kind"` // logreg | mlp | femnist_cnn | lenet5
	Hidden    []int   `toml:"hidden"`
	Dropout   float64 `toml:"dropout"`
	BatchNorm bool    `toml:"batchnorm"`
	Head      string  `toml:"head"` // softmax | evidential
}

// Training is the local training of every round.
type Training struct {
	Optimizer   string  `toml:"optimizer"` // sgd | adam | adamw
	LR          float64 `toml:"lr"`
	Momentum    float64 `toml:"momentum"`
	Nesterov    bool    `toml:"nesterov"`
	WeightDecay float64 `toml:"weight_decay"`
	Batch       int     `toml:"batch"`
	Epochs      int     `toml:"epochs"`
	Steps       int     `toml:"steps"` // when > 0, exact steps per round instead of epochs
	ClipNorm    float64 `toml:"clip_norm"`
}

// Topology is the communication graph.
type Topology struct {
	Kind    string  `toml:"kind"` // complete | ring | kregular | erdos_renyi | small_world | star | mobility | edge_list | trace
	K       int     `toml:"k"`
	P       float64 `toml:"p"`
	Beta    float64 `toml:"beta"`
	File    string  `toml:"file"`
	Connect bool    `toml:"connect"` // mobility: link isolated nodes to their nearest peer
	Drop    float64 `toml:"drop"`    // per-link message drop probability
}

// Adversary is who lies and how.
type Adversary struct {
	Fraction float64 `toml:"fraction"`
	IDs      []int   `toml:"ids"`
	Attack   string  `toml:"attack"`
	Sigma    float64 `toml:"sigma"`   // gaussian: noise σ
	Replace  bool    `toml:"replace"` // gaussian: send the noise alone
	Scale    float64 `toml:"scale"`   // scaling: factor s
	Percent  float64 `toml:"percent"` // ana_proportional: s
	Z        float64 `toml:"z"`       // alie: fixed z (0: z_max)
	Minus    bool    `toml:"minus"`   // alie: μ − zσ
	Epsilon  float64 `toml:"epsilon"` // ipm: ε; adaptive: e
	// Perturbation is min_max / min_sum's direction: unit_vec, std or sign.
	Perturbation string  `toml:"perturbation"`
	GammaInit    float64 `toml:"gamma_init"` // min_max, min_sum: γ_init
	B            float64 `toml:"b"`          // fang_trim: b
	// SameForAll makes each Byzantine node send one crafted vector to all
	// its neighbors each round (LIGHTYEAR's malfunctions) instead of one
	// per recipient.
	SameForAll bool `toml:"same_for_all"`
	// StartRound is the attack schedule: Byzantine nodes send honest
	// payloads in rounds 0 … start_round−1 and attack from start_round on
	// (attack.Scheduled). Topology lies (liar, claim_*) are not scheduled.
	StartRound int `toml:"start_round,omitempty"`
	// Idle: Byzantine nodes neither train nor aggregate (the DMTT paper,
	// §V-E); they send their initial model as the attack crafts it.
	Idle bool `toml:"idle"`
	// Liar is the topology liar (nodes with a trust layer): "" (none),
	// "omission" (claims only the Byzantine coalition) or "inflation"
	// (its true neighbors plus the coalition).
	Liar string `toml:"liar"`
	// ClaimForgery, ClaimReplay and ClaimFlood add, every round, a claim
	// forged in an honest neighbor's name, a replay of the previous
	// round's claim, and three claims beyond the per-source budget.
	ClaimForgery bool `toml:"claim_forgery"`
	ClaimReplay  bool `toml:"claim_replay"`
	ClaimFlood   bool `toml:"claim_flood"`
}

// Trust is DMTT's topology-trust layer (package trust; the DMTT paper,
// §III-D and Algorithms 1–3). It runs when strategy.name =
// "dmtt" or enabled = true; τ_trust is dmtt's option tau_trust (0.25 for
// other strategies). Every value but Rules has the paper's default.
type Trust struct {
	Enabled  bool    `toml:"enabled"`
	Rho      float64 `toml:"rho"`       // link-reliability EMA rate ρ
	Timeout  int     `toml:"timeout"`   // rounds of silence before a neighbor is dropped
	Xi       float64 `toml:"xi"`        // witness-weight decay per hop ξ
	TauAdd   float64 `toml:"tau_add"`   // edge acceptance threshold τ_add
	TauFwd   float64 `toml:"tau_fwd"`   // forwarding trust threshold τ_fwd
	Budget   int     `toml:"budget"`    // claims per source per round
	HopLimit int     `toml:"hop_limit"` // H
	Lambda   float64 `toml:"lambda"`    // Beta forgetting factor λ
	Eta      float64 `toml:"eta"`       // uncertainty penalty η
	TauU     float64 `toml:"tau_u"`     // uncertainty allowance τ_U
	Wd       float64 `toml:"wd"`        // weight w_d of a direct confirmation
	// Rules are the evidence rules: "screen" (the default,
	// trust.ScreenRules: no evidence for a coalition), "spec" (the DMTT
	// paper's protocol as written, which omission liars pass; the presets
	// that reproduce the paper's tables set it) or "screen_unhopped" (the
	// screen rules, disputes decided without the hop discount:
	// trust.Rules.Unhopped).
	Rules string `toml:"rules"`
	// DisjointPaths k > 0 is the high-assurance mode: support through
	// k+1 node-disjoint paths (trust.Rules.DisjointPaths).
	DisjointPaths int `toml:"disjoint_paths"`
	// Claims is the claim form: "lists" (the default, also when empty: a
	// signed neighbour list every round) or "events" (signed edge events
	// with bilateral attestation and a periodic digest, trust.ClaimsEvents;
	// paper §III-D, §IV-A). Empty and zero values are left out of the
	// resolved TOML, so existing configs keep their hash.
	Claims string `toml:"claims,omitempty"`
	// DigestEvery is, with claims = "events", how many rounds apart a
	// node sends its whole-list digest (0: trust's default, 5).
	DigestEvery int `toml:"digest_every,omitzero"`
}

// Strategy is how honest nodes collaborate.
type Strategy struct {
	// Name is one of strategy.Names(); each strategy's registry row
	// (strategy.Registry) says which of the keys below it takes.
	Name      string `toml:"name"`
	Weighting string `toml:"weighting"` // fedavg, dpsgd, gradient_tracking, clipped_gossip: uniform | mh
	// Rule is robust's aggregate rule (aggregate.Names()), optionally behind
	// pre-aggregators joined by "+" (aggregate.PreNames()): "nnm+krum", as
	// aggregate.ParseSpec reads it; rdpfl's is one of strategy.RDPFLRules.
	Rule string `toml:"rule"`
	// Exchange is what robust's nodes send: "model" (the default) or
	// "update" (the round's update w~ − w_start, aggregated and applied
	// from the start of the round).
	Exchange string `toml:"exchange,omitempty"`
	// Rule parameters (robust; 0 = the rule's default): multi_krum's m,
	// centered_clipping's tau, iterations and from_previous, bucketing's
	// bucket size, the clip pre-aggregator's bound.
	M            int     `toml:"m"`
	Tau          float64 `toml:"tau"`
	Iterations   int     `toml:"iterations"`
	FromPrevious bool    `toml:"from_previous"`
	Bucket       int     `toml:"bucket"`
	Clip         float64 `toml:"clip"`
	// F is the number of faulty inputs tolerated (robust's rules that take
	// one, scclip, clipped_gossip, rdpfl's trimmed_mean): a count, or
	// "auto" (the default): robust then derives it from the declared
	// Byzantine fraction at each aggregation (FSetting), the others take
	// their default.
	F *FSetting `toml:"f,omitempty"`
	// Prediction and Clipping switch rdpfl's history prediction and
	// adaptive deviation clip off for the paper's ablation (absent: on).
	Prediction *bool `toml:"prediction,omitempty"`
	Clipping   *bool `toml:"clipping,omitempty"`
	// Options are the strategy's real-valued parameters by name; absent
	// ones take the defaults. Each strategy's keys, defaults and ranges
	// are declared once, in its registry row (strategy.Registry).
	Options map[string]float64 `toml:"options,omitempty"`
	// Score is lightyear's agreement score: ntk | calibration | cosine |
	// ntk_logits | ntk_uncentered | ntk_classwise ("" = ntk).
	Score string `toml:"score"`
}

// Evaluation says what is measured.
type Evaluation struct {
	// GlobalTest is how many global test samples every node is evaluated on
	// (-1: all, 0: none).
	GlobalTest int `toml:"global_test"`
	// GlobalSample is which GlobalTest samples: "first" (also when empty,
	// the default) the first ones of the set, the same for every node and
	// round; "rotating" another window of one shuffled order of the set
	// for each node and evaluated round, drawn from (seed, node, round)
	// (data.Rotating). Empty is left out of the resolved TOML, so existing
	// configs keep their hash.
	GlobalSample string `toml:"global_sample,omitempty"`
	// ConvDefault records that GlobalTest is ConvGlobalTest because the
	// file left it out for a convolutional model (Parse), so that the
	// CLI can say so. Not a key: never encoded, never in a config hash.
	ConvDefault bool `toml:"-" json:"-"`
}

// Run is how the simulator runs (never changes results).
type Run struct {
	Workers       int  `toml:"workers"`        // 0 = GOMAXPROCS
	WireRoundTrip bool `toml:"wire_roundtrip"` // encode and decode every message
	// Edges writes edges.jsonl, the weight each receiver gave each sender
	// per round, for trellis serve and report.html to draw (3.8 MB for
	// FedAvg on 100 nodes × 30 rounds of the complete graph, 5 times
	// metrics.jsonl; false leaves it out).
	Edges bool `toml:"edges"`
}

// Sweep lists keys and the values to run each with (a grid), named
// variants (methods that differ in several keys at once), and the seeds;
// an empty sweep is a single run. Every variant runs at every grid point.
type Sweep struct {
	Seeds []uint64         `toml:"seeds"`
	Grid  map[string][]any `toml:"grid"`
	// Variants maps a variant's name to the dotted keys it sets; the name
	// becomes the runs' label unless the variant sets "label" itself.
	Variants map[string]map[string]any `toml:"variants"`
}

// Default is the one place defaults live.
func Default() Config {
	return Config{
		Name: "experiment", Seed: 1, Rounds: 20, EvalEvery: 1, FinalRounds: 10, Nodes: 10, Init: "same",
		Data:       Data{Dataset: "mnist"},
		Partition:  Partition{Method: "dirichlet", Alpha: 0.5, ClassesPerClient: 2, Split: []float64{0.7, 0.1, 0.2}},
		Model:      Model{Kind: "mlp", Hidden: []int{256, 128}, Head: "softmax"},
		Training:   Training{Optimizer: "sgd", LR: 0.01, Batch: 32, Epochs: 1},
		Topology:   Topology{Kind: "complete", K: 5, P: 0.3, Beta: 0.1},
		Adversary:  Adversary{Attack: "none", Sigma: 10, Scale: 10},
		Strategy:   Strategy{Name: "fedavg", Weighting: "uniform", Rule: "median", F: AutoF()},
		Trust:      defaultTrust(),
		Privacy:    defaultPrivacy(),
		SecAgg:     defaultSecAgg(),
		Evaluation: Evaluation{GlobalTest: -1},
		Run:        Run{Edges: true},
	}
}

// Parse decodes a TOML config over the defaults, strictly: an unknown
// key is an error naming it and the nearest valid key, a value of the wrong
// type names the key and the type wanted, and every value is range-checked
// (Validate) before any work starts. name is used in messages.
func Parse(text []byte, name string) (Config, error) {
	cfg := Default()
	md, err := toml.NewDecoder(bytes.NewReader(text)).Decode(&cfg)
	if err != nil {
		return cfg, decodeError(name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var msgs []string
		for _, k := range und {
			key := k.String()
			if strings.HasPrefix(key, "sweep.grid.") || strings.HasPrefix(key, "strategy.options.") {
				continue // checked by Validate (grid keys) and strategy.New (options)
			}
			msgs = append(msgs, unknownKey(key))
		}
		if len(msgs) > 0 {
			return cfg, fmt.Errorf("%s: %s", name, strings.Join(msgs, "; "))
		}
	}
	cfg.fillWorstCase(md)
	cfg.fillConsensus(md)
	cfg.fillTiming(md)
	if !md.IsDefined("evaluation", "global_test") && slices.Contains(convModels, cfg.Model.Kind) {
		// A convolutional model on every node × the whole global test set
		// takes minutes per evaluated round; a file asks for all with -1.
		cfg.Evaluation.GlobalTest = ConvGlobalTest
		cfg.Evaluation.ConvDefault = true
	}
	if len(md.Keys()) == 0 {
		return cfg, fmt.Errorf("%s: the file sets no key (it is empty, or only comments): say at least what differs from the defaults, e.g. name = \"my-run\"; `trellis config defaults` prints every key, `trellis presets show quickstart` a whole example", name)
	}
	fileErr := cfg.validateFile(md, bytes.HasPrefix(text, []byte(DefaultsHeader)) || namesEveryKey(md))
	if bytes.HasPrefix(text, []byte(ResolvedHeader)) {
		fileErr = nil // a run's config.toml names every key, applicable or not
	}
	if err := errors.Join(cfg.Validate(), fileErr); err != nil {
		return cfg, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

// convModels are the convolutional models, and ConvGlobalTest the global
// test samples they are evaluated on unless a file sets
// evaluation.global_test.
var convModels = []string{"femnist_cnn", "lenet5"}

const ConvGlobalTest = 1000

// ResolvedHeader starts the config.toml of a run directory: the config as
// resolved, with every key, so the checks of keys a file sets but the run
// ignores do not apply to it.
const ResolvedHeader = "# trellis: the resolved config of this run (every key, defaults included)\n"

// namesEveryKey reports whether a file names every key the defaults
// encode: a copy of `trellis config defaults`, or a config as resolved and
// encoded whole (the file a launch gives its processes).
func namesEveryKey(md toml.MetaData) bool {
	for k := range flatten(Default()) {
		if !md.IsDefined(strings.Split(k, ".")...) {
			return false
		}
	}
	return true
}

// DefaultsHeader starts `trellis config defaults` (Defaults): a copy of
// it names every key, so Parse counts a key of it as set only where it
// differs from its default.
const DefaultsHeader = "# trellis experiment defaults: a config file only needs what differs.\n"

// Load reads and parses a TOML config file.
func Load(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("reading config: %w", err)
	}
	return Parse(b, path)
}

func decodeError(name string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = fmt.Sprintf("key %q: %s", pe.LastKey, msg)
		}
		return fmt.Errorf("%s: line %d: %s", name, pe.Position.Line, msg)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// unknownKey names an unknown key and the nearest valid one.
func unknownKey(key string) string {
	best, bestD := "", 1<<30
	for _, k := range configKeys() {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" && bestD <= max(2, len(key)/3) {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", key, best)
	}
	return fmt.Sprintf("unknown key %q (run `trellis config defaults` for every valid key)", key)
}

// configKeys lists every valid dotted key, from the schema itself: the
// keys of the flattened defaults, plus those the defaults leave empty.
func configKeys() []string {
	d := Default()
	d.Sweep = Sweep{Seeds: []uint64{1}}
	flat := flatten(d)
	optionKeys := strategy.AllOptionNames()
	keys := make([]string, 0, len(flat)+len(optionKeys)+8)
	for k := range flat {
		keys = append(keys, k)
	}
	keys = append(keys, "adversary.ids", "sweep.grid", "sweep.variants", "strategy.f", "strategy.prediction", "strategy.clipping", "strategy.exchange", "label",
		"partition.per_node", "evaluation.global_sample", "privacy.noise_scale", "privacy.noise_decay", "privacy.step_decay", "privacy.level")
	for k := range flatten(struct {
		W WorstCase `toml:"worst_case"`
	}{WorstCase{SearchSeeds: []uint64{1}, ConfirmSeeds: []uint64{1}, Attacks: []string{""}, Placements: []string{""}}}) {
		keys = append(keys, k)
	}
	keys = append(keys, "worst_case.defences")
	keys = append(keys, sectionKeys[Consensus]("consensus")...)
	keys = append(keys, sectionKeys[Timing]("timing")...)
	for _, k := range optionKeys {
		keys = append(keys, "strategy.options."+k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// flatten maps every dotted key of v's TOML encoding to its value as text.
func flatten(v any) map[string]string {
	var buf bytes.Buffer
	_ = toml.NewEncoder(&buf).Encode(v)
	var m map[string]any
	_, _ = toml.Decode(buf.String(), &m)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		mm, ok := v.(map[string]any)
		if !ok {
			out[prefix] = fmt.Sprint(v)
			return
		}
		for k, sub := range mm {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, sub)
		}
	}
	walk("", m)
	return out
}

// editDistance is the Levenshtein distance.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Defaults renders Default as commented TOML.
func Defaults() string {
	var buf bytes.Buffer
	buf.WriteString(DefaultsHeader)
	_ = toml.NewEncoder(&buf).Encode(Default())
	buf.WriteString(`
# Keys without a value by default:
# [adversary]
# ids = []               # the Byzantine nodes by id, instead of fraction
# [partition]
# per_node = 100         # method = "sampled": the distinct training samples each
#                        # node draws, uniformly and independently per node
#                        # (nodes may share samples; more nodes than samples
#                        # is fine); partition.split applies to each node's
# [evaluation]
# global_sample = "first" # which global_test samples: "first" (the default:
#                        # the first global_test, the same for every node and
#                        # round) or "rotating" (global_test samples per node
#                        # and evaluated round, another window of one shuffled
#                        # order each time, from (seed, node, round))
# [strategy]
# exchange = "model"     # robust: what nodes send, "model" or "update"
# prediction = true      # rdpfl: history prediction (false: the ablation)
# clipping = true        # rdpfl: adaptive deviation clipping (false: the ablation)
# f = "auto" resolves robust's f per aggregation of n inputs as
# min(ceil(declared fraction * (n - 1)), the most the rule tolerates with n).
# [strategy.options]     # the strategy's real-valued options, name = value:
` + strategyOptionsText() + `
# [sweep]
# seeds = [1, 2, 3]
# [sweep.grid]
# "adversary.fraction" = [0.1, 0.3, 0.5]
# "strategy.name" = ["fedavg", "robust"]

# [consensus]            # task type consensus: private average consensus
#                        # instead of learning (docs/methods/p2p-consensus.md);
#                        # it reads name, seed, nodes, rounds (iterations),
#                        # [topology] and [run]; every other key must keep
#                        # its default. Its keys and their defaults:
` + consensusDefaultsText() + `

# [timing]               # mode = "async": asynchronous timing, no global round
#                        # (docs/methods/async.md); rounds is each node's
#                        # number of steps. Its keys and their defaults:
` + timingDefaultsText() + `

# [trust] rules = "screen", the default, is the DMTT paper's topology trust
# with the evidence rules that screen omission liars; rules = "spec" is the
# paper's protocol as written (omission liars keep trust and pass the
# screen), which the presets reproducing the paper's tables set.
`)
	return buf.String()
}

// strategyOptionsText lists every strategy's [strategy] keys and options
// with defaults and ranges, from the strategy registry, as TOML comments.
func strategyOptionsText() string {
	var b strings.Builder
	for _, r := range strategy.Registry() {
		opts := r.OptionsText()
		if opts == "" {
			opts = "no options"
		}
		fmt.Fprintf(&b, "#   %s: %s", r.Name, opts)
		if t := r.Takes(); len(t) > 0 {
			fmt.Fprintf(&b, " (also takes %s)", strings.Join(t, ", "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// DefaultsMap is Default as nested tables with the config's own
// (snake_case) key names, for JSON output.
func DefaultsMap() map[string]any { return tomlMap(Default()) }

// tomlMap is v as its TOML keys and values.
func tomlMap(v any) map[string]any {
	var buf bytes.Buffer
	_ = toml.NewEncoder(&buf).Encode(v)
	var m map[string]any
	_, _ = toml.Decode(buf.String(), &m)
	return m
}

// Flatten maps every dotted key of c but the sweep to its value as text
// ("strategy.rule" → "median"): how reports tell runs apart.
func Flatten(c Config) map[string]string {
	c.Sweep, c.WorstCase = Sweep{}, nil
	return flatten(c)
}
