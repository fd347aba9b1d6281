package strategy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/trellis-fl/trellis/aggregate"
)

// Params are the settings New may apply. Fields a strategy does not use
// must be left at their zero value (New reports them otherwise).
type Params struct {
	// Weighting is for fedavg, dpsgd, gradient_tracking and clipped_gossip.
	Weighting Weighting
	// Rule names the aggregate rule of robust (aggregate.Names()) and of
	// rdpfl (RDPFLRules).
	Rule string
	// F is the number of faulty inputs tolerated, for robust (passed to
	// aggregate.New), scclip and clipped_gossip; nil means the default
	// (robust 0, scclip 1 as in the spec, clipped_gossip 1).
	F *int
	// Options holds the real-valued parameters by name; an absent key
	// takes the spec default. The valid keys of each strategy, their
	// defaults and ranges are declared once, in the options table below
	// (OptionNames lists them).
	Options map[string]float64
	// NoPrediction and NoClipping are rdpfl's ablations (RDPFL).
	NoPrediction, NoClipping bool
	// Score is lightyear's agreement score, one of ScoreKinds (ntk for "").
	Score string
}

// Names returns the strategy names New accepts.
func Names() []string { return slices.Clone(names) }

var names = []string{"local", "fedavg", "dpsgd", "gradient_tracking", "admm", "robust",
	"balance", "ubar", "scclip", "clipped_gossip", "afa", "asmr", "cfl", "fedprox", "ditto", "rdpfl", "lightyear",
	"murmura", "dmtt"}

// Training-side defaults; the spec names FedProx and Ditto without values,
// so these are the middle of the grids their papers search
// (μ ∈ {0.001, 0.01, 0.1, 1}, λ ∈ {0.01, 0.1, 1}).
const (
	FedProxMu   = 0.01
	DittoLambda = 0.1
)

// options lists each strategy's Options keys with their spec defaults
// (spec/robust-rules.md, "Decentralized and peer-side rules") and ranges.
var options = map[string][]option{
	"balance": {
		{"gamma", BalanceGamma, 0, math.Inf(1), false, true},
		{"kappa", BalanceKappa, 0, math.Inf(1), true, true},
		{"alpha", BalanceAlpha, 0, 1, true, false},
	},
	"ubar": {
		{"rho", UBARRho, 0, 1, false, false},
		{"alpha", UBARAlpha, 0, 1, true, false},
	},
	"fedprox": {{"mu", FedProxMu, 0, math.Inf(1), true, true}},
	"admm":    {{"rho", ADMMRho, 0, math.Inf(1), false, true}},
	"ditto":   {{"lambda", DittoLambda, 0, math.Inf(1), true, true}},
	"rdpfl": {
		{"lambda", RDPFLLambda, 0, math.Inf(1), true, true},
		{"g", RDPFLG, 0, math.Inf(1), false, true},
		{"gd", RDPFLGd, 0, math.Inf(1), false, false}, // inf: no bound
		{"gd_relative", 0, 0, math.Inf(1), true, true},
		{"warmup", RDPFLWarmup, 1, 1e6, true, false},
		{"a", RDPFLA, 0, 1, true, true},
		{"c", RDPFLC, 0, math.Inf(1), true, true},
		{"tau0", RDPFLTau0, 0, math.Inf(1), true, true},
		{"literal", 0, 0, 1, true, false}, // 1: Eq. 16 as printed (RDPFL.Literal)
	},
	// spec/lightyear.md: tau = 0.6, g = 0.95, n_val = 128; include_self
	// 1 is the authors' aggregation, 0 (default) the paper's Eq. 17.
	"lightyear": {
		{"tau", LightyearTau, 0, 1, true, false},
		{"g", LightyearG, 0, 1, false, false},
		{"n_val", LightyearNVal, 1, 1 << 20, true, false},
		{"include_self", 0, 0, 1, true, false},
	},
	// spec/dmtt.md ("Models", "Learning step"); the authors' code where
	// the spec is silent (murmura.go).
	"murmura": {
		{"w_a", MurmuraWA, 0, 1, true, false},
		{"tau_u", MurmuraTauU, 0, 1, true, false},
		{"penalize", 1, 0, 1, true, false},
		{"n_eval", MurmuraNEval, 1, 1 << 20, true, false},
		{"threshold", MurmuraThreshold, 0, 1, true, false},
		{"momentum", MurmuraMomentum, 0, 1, true, false},
		{"gamma", MurmuraGamma, 0, 1, true, false},
		{"kappa", MurmuraKappa, 0, math.Inf(1), false, true},
		{"omega", MurmuraSelfWeight, 0, 1, true, false},
	},
	"dmtt": {
		{"n_eval", DMTTNEval, 1, 1 << 20, true, false},
		{"w_a", MurmuraWA, 0, 1, true, false},
		{"tau_u", MurmuraTauU, 0, 1, true, false},
		{"l1", DMTTL1, 0, math.Inf(1), true, true},
		{"l2", DMTTL2, 0, math.Inf(1), true, true},
		{"l3", DMTTL3, 0, math.Inf(1), true, true},
		{"l4", DMTTL4, 0, math.Inf(1), true, true},
		{"gamma", DMTTGamma, 0, math.Inf(1), true, true},
		{"tau_trust", DMTTTauTrust, 0, 1, true, false},
		{"kappa", DMTTKappa, 0, math.Inf(1), false, true},
		{"b", DMTTBudget, 1, 1 << 20, true, false},
		{"omega", DMTTSelfWeight, 0, 1, true, false},
		{"norm_gate", 1, 0, 1, true, false}, // 0: the norm-gate ablation
	},
	// robust's f from the neighborhood (RobustRule.FFraction): f_fraction
	// is the fraction; f_expected = 1 makes it the run's Byzantine fraction,
	// which the caller that knows the run fills in (experiment): the DMTT
	// paper's "expected number of Byzantine neighbours".
	"robust": {
		{"f_fraction", 0, 0, 1, true, false},
		{"f_expected", 0, 0, 1, true, false},
	},
	"afa": {
		{"xi0", AFAXi0, 0, math.Inf(1), false, true},
		{"delta_xi", AFADeltaXi, 0, math.Inf(1), true, true},
		{"alpha0", AFAPrior, 0, math.Inf(1), false, true},
		{"beta0", AFAPrior, 0, math.Inf(1), false, true},
		{"block_at", AFABlockAt, 0, 1, false, true},
	},
}

// OptionNames returns the options strategy name takes, in the order of its
// table (none for a strategy without options or an unknown name).
func OptionNames(name string) []string {
	var out []string
	for _, o := range options[name] {
		out = append(out, o.name)
	}
	return out
}

// AllOptionNames returns every option name some strategy takes, sorted.
func AllOptionNames() []string {
	var out []string
	for _, opts := range options {
		for _, o := range opts {
			out = append(out, o.name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// option is a named real parameter with its default and its range from lo
// to hi, each end included unless marked open.
type option struct {
	name         string
	def          float64
	lo, hi       float64
	loIn, hiOpen bool
}

// New builds a fresh strategy value (each node needs its own) from its
// config name and parameters. Unknown names, options the strategy does
// not take, and values out of range are errors naming the valid choices.
func New(name string, p Params) (Strategy, error) {
	if !slices.Contains(names, name) {
		return nil, fmt.Errorf("strategy: unknown name %q (valid: %s)", name, strings.Join(names, ", "))
	}
	usesWeighting := map[string]bool{"fedavg": true, "dpsgd": true, "gradient_tracking": true, "clipped_gossip": true, "fedprox": true, "ditto": true}
	usesF := map[string]bool{"robust": true, "scclip": true, "clipped_gossip": true, "rdpfl": true}
	if p.Weighting != Uniform && !usesWeighting[name] {
		return nil, fmt.Errorf("strategy %s: weighting %s not used (only fedavg, dpsgd, gradient_tracking, clipped_gossip take a weighting)", name, p.Weighting)
	}
	if p.Rule != "" && name != "robust" && name != "rdpfl" {
		return nil, fmt.Errorf("strategy %s: rule %q not used (only robust and rdpfl take a rule)", name, p.Rule)
	}
	if (p.NoPrediction || p.NoClipping) && name != "rdpfl" {
		return nil, fmt.Errorf("strategy %s: the prediction and clipping switches are rdpfl's", name)
	}
	if p.Score != "" && name != "lightyear" {
		return nil, fmt.Errorf("strategy %s: score %q not used (only lightyear takes a score)", name, p.Score)
	}
	if p.F != nil && !usesF[name] {
		return nil, fmt.Errorf("strategy %s: f not used (only robust, scclip, clipped_gossip, rdpfl take f)", name)
	}
	f := 0
	if name == "scclip" || name == "clipped_gossip" {
		f = SCClipF
	}
	if p.F != nil {
		f = *p.F
		if f < 0 {
			return nil, fmt.Errorf("strategy %s: f = %d, allowed range [0, ∞)", name, f)
		}
	}
	o, err := resolve(name, p.Options)
	if err != nil {
		return nil, err
	}
	switch name {
	case "local":
		return Local{}, nil
	case "fedavg":
		return &FedAvg{Weighting: p.Weighting}, nil
	case "dpsgd":
		return &DPSGD{Weighting: p.Weighting}, nil
	case "gradient_tracking":
		return &GradientTracking{Weighting: p.Weighting}, nil
	case "admm":
		return &ADMM{Rho: o["rho"]}, nil
	case "robust":
		if p.Rule == "" {
			return nil, fmt.Errorf("strategy robust: rule missing (valid: %s)", strings.Join(aggregate.Names(), ", "))
		}
		r, err := aggregate.New(p.Rule, f)
		if err != nil {
			return nil, fmt.Errorf("strategy robust: %w", err)
		}
		if err := checkFFraction(p, o); err != nil {
			return nil, err
		}
		return &RobustRule{Rule: r, FFraction: o["f_fraction"]}, nil
	case "balance":
		return &BALANCE{Gamma: o["gamma"], Kappa: o["kappa"], Alpha: o["alpha"]}, nil
	case "ubar":
		return &UBAR{Rho: o["rho"], Alpha: o["alpha"]}, nil
	case "scclip":
		return &SCClip{F: f}, nil
	case "clipped_gossip":
		return &ClippedGossip{F: f, Weighting: p.Weighting}, nil
	case "afa":
		return &AFA{Xi0: o["xi0"], DeltaXi: o["delta_xi"], Alpha0: o["alpha0"], Beta0: o["beta0"], BlockAt: o["block_at"]}, nil
	case "asmr":
		return &ASMR{}, nil
	case "fedprox":
		return &FedProx{FedAvg: FedAvg{Weighting: p.Weighting}, Mu: o["mu"]}, nil
	case "ditto":
		return &Ditto{FedAvg: FedAvg{Weighting: p.Weighting}, Lambda: o["lambda"]}, nil
	case "rdpfl":
		rule := p.Rule
		if rule == "" {
			rule = "trimmed_mean"
		}
		s, err := NewRDPFL(rule)
		if err != nil {
			return nil, err
		}
		if o["warmup"] != math.Trunc(o["warmup"]) {
			return nil, fmt.Errorf("strategy rdpfl: warmup = %v, need a whole number of rounds", o["warmup"])
		}
		if p.F != nil && rule != "trimmed_mean" {
			return nil, fmt.Errorf("strategy rdpfl: f is trimmed_mean's; rule %q takes none", rule)
		}
		s.F = p.F
		s.Lambda, s.G, s.Gd, s.GdRelative = o["lambda"], o["g"], o["gd"], o["gd_relative"]
		s.Warmup, s.A, s.C, s.Tau0 = int(o["warmup"]), o["a"], o["c"], o["tau0"]
		s.NoPrediction, s.NoClipping = p.NoPrediction, p.NoClipping
		if o["literal"] != math.Trunc(o["literal"]) {
			return nil, fmt.Errorf("strategy rdpfl: literal = %v, want 0 (descent form) or 1 (Eq. 16 as printed)", o["literal"])
		}
		s.Literal = o["literal"] == 1
		return s, nil
	case "lightyear":
		score := cmp.Or(p.Score, ScoreNTK)
		if !slices.Contains(ScoreKinds, score) {
			return nil, fmt.Errorf("strategy lightyear: score %q, want one of %s", p.Score, strings.Join(ScoreKinds, ", "))
		}
		for _, k := range []string{"n_val", "include_self"} {
			if o[k] != math.Trunc(o[k]) {
				return nil, fmt.Errorf("strategy lightyear: %s = %v, want a whole number", k, o[k])
			}
		}
		return &Lightyear{Tau: o["tau"], G: o["g"], NVal: int(o["n_val"]), Score: score, IncludeSelf: o["include_self"] == 1}, nil
	case "murmura":
		for _, k := range []string{"n_eval", "penalize"} {
			if o[k] != math.Trunc(o[k]) {
				return nil, fmt.Errorf("strategy murmura: %s = %v, want a whole number", k, o[k])
			}
		}
		m := NewMurmura()
		m.WA, m.TauU, m.Penalize, m.NEval = o["w_a"], o["tau_u"], o["penalize"] == 1, int(o["n_eval"])
		m.Threshold, m.Momentum, m.Gamma, m.Kappa, m.SelfWeight = o["threshold"], o["momentum"], o["gamma"], o["kappa"], o["omega"]
		return m, nil
	case "dmtt":
		for _, k := range []string{"n_eval", "b", "norm_gate"} {
			if o[k] != math.Trunc(o[k]) {
				return nil, fmt.Errorf("strategy dmtt: %s = %v, want a whole number", k, o[k])
			}
		}
		d := NewDMTT()
		d.NEval, d.WA, d.TauU = int(o["n_eval"]), o["w_a"], o["tau_u"]
		d.L = [4]float64{o["l1"], o["l2"], o["l3"], o["l4"]}
		d.Gamma, d.TauTrust, d.Kappa, d.Budget, d.SelfWeight = o["gamma"], o["tau_trust"], o["kappa"], int(o["b"]), o["omega"]
		d.NormGate = o["norm_gate"] == 1
		return d, nil
	default: // "cfl"
		return &CFL{}, nil
	}
}

// checkFFraction checks robust's f_fraction and f_expected against its rule
// and f.
func checkFFraction(p Params, o map[string]float64) error {
	if o["f_fraction"] == 0 && o["f_expected"] == 0 {
		return nil
	}
	if p.Rule != "krum" && p.Rule != "multi_krum" {
		return fmt.Errorf("strategy robust: f_fraction and f_expected set f per round for krum and multi_krum, not for rule %q", p.Rule)
	}
	if p.F != nil {
		return fmt.Errorf("strategy robust: f = %d and f_fraction/f_expected both set f; give one", *p.F)
	}
	if e := o["f_expected"]; e != 0 && e != 1 {
		return fmt.Errorf("strategy robust: f_expected = %v, want 0 or 1", e)
	}
	if o["f_fraction"] != 0 && o["f_expected"] != 0 {
		return fmt.Errorf("strategy robust: f_fraction = %v and f_expected = 1 both give the fraction; give one", o["f_fraction"])
	}
	return nil
}

// resolve checks opts against the strategy's option list and fills in the
// defaults.
func resolve(name string, opts map[string]float64) (map[string]float64, error) {
	known := options[name]
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the first unknown key deterministically
	valid := make([]string, len(known))
	for i, o := range known {
		valid[i] = o.name
	}
	for _, k := range keys {
		if !slices.Contains(valid, k) {
			if len(valid) == 0 {
				return nil, fmt.Errorf("strategy %s: unknown option %q (%s takes no options)", name, k, name)
			}
			return nil, fmt.Errorf("strategy %s: unknown option %q (valid: %s)", name, k, strings.Join(valid, ", "))
		}
	}
	out := make(map[string]float64, len(known))
	for _, o := range known {
		v, ok := opts[o.name]
		if !ok {
			v = o.def
		}
		okLo := v > o.lo || (o.loIn && v == o.lo)
		okHi := v < o.hi || (!o.hiOpen && v == o.hi)
		if math.IsNaN(v) || !okLo || !okHi {
			lb, rb := "(", "]"
			if o.loIn {
				lb = "["
			}
			if o.hiOpen {
				rb = ")"
			}
			return nil, fmt.Errorf("strategy %s: %s = %v, allowed range %s%v, %v%s", name, o.name, v, lb, o.lo, o.hi, rb)
		}
		out[o.name] = v
	}
	return out, nil
}
