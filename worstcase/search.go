package worstcase

import (
	"cmp"
	"math"
	"slices"
)

// Defence is one defence's attack space: the settings usable with it and
// the placements.
type Defence struct {
	Name       string
	Settings   []Setting
	Placements []string
	// Skipped names the attacks the defence cannot run with, and why.
	Skipped map[string]string
}

// Space is everything a search explores, and how hard.
type Space struct {
	Defences []Defence
	// Grid is the number of grid values of a continuous parameter;
	// Tolerance the refinement's stopping width, as a fraction of the
	// parameter's range in u.
	Grid      int
	Tolerance float64
	// Refine is how many families per defence are refined, Confirm how
	// many families' worst points are confirmed.
	Refine, Confirm           int
	SearchSeeds, ConfirmSeeds []uint64
}

// Point is one attack configuration against one defence: a setting (an
// index into the defence's Settings; -1 for the run without attack), its
// parameter's value (0 without one) and a placement.
type Point struct {
	Defence   int
	Setting   int
	Value     float64
	Placement string
}

// NoAttack is the setting index of the run without attack.
const NoAttack = -1

// Run is one evaluation: a point, one seed, and whether it is a search
// run (the search rounds) or a confirmation (the full rounds).
type Run struct {
	Point Point
	Seed  uint64
	Full  bool
}

// Outcome is what a finished run measured: the honest nodes' mean
// accuracy (the objective), δ_max, and the accuracy of the worst honest
// node.
type Outcome struct {
	Acc       float64 `json:"acc"`
	DeltaMax  float64 `json:"delta_max"`
	WorstNode float64 `json:"worst_node_acc"`
}

// Lookup gives a finished run's outcome; false for a run not finished.
type Lookup func(Run) (Outcome, bool)

// Evaluated is a point with its outcome averaged over the seeds it ran.
type Evaluated struct {
	Point   Point
	Outcome Outcome
}

// FamilyResult is an attack family's worst point against a defence: its
// search objective and, where it was confirmed, the confirmed outcome.
type FamilyResult struct {
	Family    string
	Worst     Evaluated // search runs
	Confirmed *Outcome  // full runs, or nil
	Refined   bool
}

// DefenceResult is one defence's search.
type DefenceResult struct {
	Name     string
	NoAttack Outcome // full runs
	// Worst is the worst confirmed point and its confirmed outcome.
	Worst    Evaluated
	Families []FamilyResult // worst first (by the search objective)
	Runs     int            // distinct runs the search took, the runs without attack included
	Skipped  map[string]string
}

// Result is a finished search.
type Result struct {
	Defences []DefenceResult
}

// Plan computes the search as far as the finished runs allow (look): the
// runs of the first stage that is not finished, or, when every stage is,
// the result. The stages are: 0, the coarse grid of every defence with
// its runs without attack; then the golden-section refinements, one
// evaluation per refinement per stage (two in the first); last, the
// confirmations. Every stage's runs depend on the outcomes of earlier
// stages alone, so any process that sees the same finished runs plans the
// same stage, in the same order: what lets shards split a stage's runs
// by index (see Stage).
func (s *Space) Plan(look Lookup) (stage int, runs []Run, res *Result) {
	p := planner{s: s, look: look}
	return p.plan()
}

type planner struct {
	s    *Space
	look Lookup
	// all collects the runs of the stage being planned, seen the same
	// as a set.
	all  []Run
	seen map[Run]bool
}

// need adds the runs of a point to the stage being planned and returns
// its mean outcome over seeds, or false when some are missing.
func (p *planner) need(pt Point, full bool) (Outcome, bool) {
	seeds := p.s.SearchSeeds
	if full {
		seeds = p.s.ConfirmSeeds
	}
	var sum Outcome
	ok := true
	for _, sd := range seeds {
		r := Run{Point: pt, Seed: sd, Full: full}
		if !p.seen[r] {
			p.seen[r] = true
			p.all = append(p.all, r)
		}
		o, done := p.look(r)
		if !done {
			ok = false
			continue
		}
		sum.Acc += o.Acc
		sum.DeltaMax += o.DeltaMax
		sum.WorstNode += o.WorstNode
	}
	if !ok {
		return Outcome{}, false
	}
	n := float64(len(seeds))
	return Outcome{sum.Acc / n, sum.DeltaMax / n, sum.WorstNode / n}, true
}

// stageDone starts the next stage: it reports whether the stage just
// planned had every run finished.
func (p *planner) stageDone() bool {
	for _, r := range p.all {
		if _, ok := p.look(r); !ok {
			return false
		}
	}
	p.all, p.seen = nil, map[Run]bool{}
	return true
}

// gridPoints lists a defence's grid, in a fixed order: settings, then
// values, then placements.
func (s *Space) gridPoints(d int) []Point {
	def := s.Defences[d]
	var pts []Point
	for si, st := range def.Settings {
		vals := []float64{0}
		if st.Param != nil {
			vals = st.Param.grid(s.Grid)
		}
		for _, v := range vals {
			for _, pl := range def.Placements {
				pts = append(pts, Point{Defence: d, Setting: si, Value: v, Placement: pl})
			}
		}
	}
	return pts
}

// noAttack is the point of a defence's run without attack: the random
// placement's Byzantine nodes send what honest nodes would.
func noAttack(d int) Point { return Point{Defence: d, Setting: NoAttack, Placement: "random"} }

// refinement is a golden-section search of one setting's parameter at
// one placement, replayed from the outcomes on file.
type refinement struct {
	d, setting int
	placement  string
	param      Param
	a, b       float64 // the bracket, in u
	tol        float64
	evals      []Evaluated
	c, dd      float64 // interior points
	fc, fd     float64
	step       int // 0: interior points not yet evaluated
	done       bool
}

// goldenRatio is 1/φ = (√5 − 1)/2: each step keeps this share of the
// bracket, and one interior point of the last.
var goldenRatio = (math.Sqrt(5) - 1) / 2

func (p *planner) plan() (int, []Run, *Result) {
	s := p.s
	p.seen = map[Run]bool{}
	type defState struct {
		grid    []Evaluated
		none    Outcome
		refines []*refinement
	}
	st := make([]defState, len(s.Defences))
	// Stage 0: the grids, and the runs without attack.
	for d := range s.Defences {
		if o, ok := p.need(noAttack(d), true); ok {
			st[d].none = o
		}
		for _, pt := range s.gridPoints(d) {
			if o, ok := p.need(pt, false); ok {
				st[d].grid = append(st[d].grid, Evaluated{pt, o})
			}
		}
	}
	stage := 0
	if !p.stageDone() {
		return stage, p.stageRuns(), nil
	}
	// The refinements: each family's worst grid point, the Refine worst
	// families with a continuous parameter.
	for d := range s.Defences {
		fams := s.familyWorst(d, st[d].grid)
		n := 0
		for _, f := range fams {
			set := s.Defences[d].Settings[f.Point.Setting]
			if n == s.Refine || set.Param == nil {
				continue
			}
			n++
			st[d].refines = append(st[d].refines, s.bracket(f.Point))
		}
	}
	for {
		active := false
		for d := range s.Defences {
			for _, r := range st[d].refines {
				if !r.done {
					if !active {
						stage++
					}
					active = true
					p.advance(r)
				}
			}
		}
		if !active {
			break
		}
		if !p.stageDone() {
			return stage, p.stageRuns(), nil
		}
	}
	// The confirmations.
	stage++
	res := &Result{}
	for d, def := range s.Defences {
		evals := slices.Clone(st[d].grid)
		refined := map[int]bool{}
		for _, r := range st[d].refines {
			evals = append(evals, r.evals...)
			refined[r.setting] = true
		}
		fams := s.familyWorst(d, evals)
		dr := DefenceResult{Name: def.Name, NoAttack: st[d].none, Skipped: def.Skipped}
		for i, f := range fams {
			fr := FamilyResult{Family: def.Settings[f.Point.Setting].Family, Worst: f}
			for si := range refined {
				fr.Refined = fr.Refined || def.Settings[si].Family == fr.Family
			}
			if i < s.Confirm {
				if o, ok := p.need(f.Point, true); ok {
					fr.Confirmed = &o
				}
			}
			dr.Families = append(dr.Families, fr)
		}
		res.Defences = append(res.Defences, dr)
	}
	if !p.stageDone() {
		return stage, p.stageRuns(), nil
	}
	for d := range res.Defences {
		dr := &res.Defences[d]
		first := true
		for _, f := range dr.Families {
			if f.Confirmed != nil && (first || f.Confirmed.Acc < dr.Worst.Outcome.Acc) {
				dr.Worst, first = Evaluated{f.Worst.Point, *f.Confirmed}, false
			}
		}
		if first {
			// Nothing confirmed (no attack usable): the worst is no attack.
			dr.Worst = Evaluated{noAttack(d), dr.NoAttack}
		}
		dr.Runs = p.countRuns(d, st[d].grid, st[d].refines, dr.Families)
	}
	return stage, nil, res
}

// stageRuns is the stage's runs in planning order, finished ones
// included: a shard's share is fixed by position in this list.
func (p *planner) stageRuns() []Run { return p.all }

// countRuns counts the distinct runs of defence d: its grid, its
// refinements (a value the grid or an earlier step already ran counts
// once), its confirmations and its runs without attack.
func (p *planner) countRuns(d int, grid []Evaluated, refines []*refinement, fams []FamilyResult) int {
	pts := map[Point]bool{}
	for _, e := range grid {
		pts[e.Point] = true
	}
	for _, r := range refines {
		for _, e := range r.evals {
			pts[e.Point] = true
		}
	}
	n := len(pts) * len(p.s.SearchSeeds)
	confirmed := map[Point]bool{noAttack(d): true}
	for _, f := range fams {
		if f.Confirmed != nil {
			confirmed[f.Worst.Point] = true
		}
	}
	return n + len(confirmed)*len(p.s.ConfirmSeeds)
}

// familyWorst is each family's worst point among evals (lowest accuracy;
// a tie goes to the earlier point), the worst family first.
func (s *Space) familyWorst(d int, evals []Evaluated) []Evaluated {
	best := map[string]int{}
	var order []string
	for i, e := range evals {
		f := s.Defences[d].Settings[e.Point.Setting].Family
		j, ok := best[f]
		if !ok {
			order = append(order, f)
		}
		if !ok || e.Outcome.Acc < evals[j].Outcome.Acc {
			best[f] = i
		}
	}
	out := make([]Evaluated, len(order))
	for i, f := range order {
		out[i] = evals[best[f]]
	}
	slices.SortStableFunc(out, func(a, b Evaluated) int { return cmp.Compare(a.Outcome.Acc, b.Outcome.Acc) })
	return out
}

// bracket starts the refinement of the setting of a worst grid point:
// the bracket between the grid values either side of it (one side at an
// end of the range).
func (s *Space) bracket(pt Point) *refinement {
	set := s.Defences[pt.Defence].Settings[pt.Setting]
	par := *set.Param
	lo, hi := par.span()
	h := (hi - lo) / float64(s.Grid-1)
	u := par.u(pt.Value)
	return &refinement{d: pt.Defence, setting: pt.Setting, placement: pt.Placement, param: par,
		a: max(lo, u-h), b: min(hi, u+h), tol: s.Tolerance * (hi - lo)}
}

// advance replays one step of a golden-section search: it asks for the
// step's points (p.need) and, when their outcomes are on file, narrows
// the bracket. The minimum of the objective lies in the kept part of the
// bracket when the objective is unimodal there; the search reports the
// lowest value it saw in any case.
func (p *planner) advance(r *refinement) {
	eval := func(u float64) (float64, bool) {
		pt := Point{Defence: r.d, Setting: r.setting, Value: r.param.value(u), Placement: r.placement}
		o, ok := p.need(pt, false)
		if ok && !slices.ContainsFunc(r.evals, func(e Evaluated) bool { return e.Point == pt }) {
			r.evals = append(r.evals, Evaluated{pt, o})
		}
		return o.Acc, ok
	}
	if r.step == 0 {
		r.c = r.b - goldenRatio*(r.b-r.a)
		r.dd = r.a + goldenRatio*(r.b-r.a)
		fc, ok1 := eval(r.c)
		fd, ok2 := eval(r.dd)
		if !ok1 || !ok2 {
			return
		}
		r.fc, r.fd, r.step = fc, fd, 1
		r.done = r.b-r.a <= r.tol
		return
	}
	// The step's new point: the bracket keeps the side of the lower
	// interior value, whose other interior point is the one to evaluate.
	var u float64
	if r.fc < r.fd {
		u = r.dd - goldenRatio*(r.dd-r.a) // bracket [a, d]: its lower point
	} else {
		u = r.c + goldenRatio*(r.b-r.c) // bracket [c, b]: its upper point
	}
	f, ok := eval(u)
	if !ok {
		return
	}
	if r.fc < r.fd {
		r.b, r.dd, r.fd = r.dd, r.c, r.fc
		r.c, r.fc = u, f
	} else {
		r.a, r.c, r.fc = r.c, r.dd, r.fd
		r.dd, r.fd = u, f
	}
	r.step++
	r.done = r.b-r.a <= r.tol
}
