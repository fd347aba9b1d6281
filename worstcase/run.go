package worstcase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
	"github.com/trellis-fl/trellis/strategy"
)

// Search is a worst-case search of a config with a [worst_case] section:
// its attack space, and how each of its runs is made and where it lives.
type Search struct {
	Space Space
	cfg   config.Config
	bases []config.Config // per defence, without [worst_case]
	// Metric is each defence's objective: honest_local_acc for a
	// personalized method or a run without global test set,
	// honest_global_acc otherwise.
	Metric []string

	mu    sync.Mutex
	found map[string]Outcome // finished runs' outcomes, by directory
	// made caches RunConfig: a placement is a search on the graph, and
	// every planning pass looks up every run of the stages so far.
	made map[Run]made
}

type made struct {
	c   config.Config
	rel string
	err error
}

// loaded are the datasets loaded, by dataset and directory: every run of
// a search reads the same one, and runs only read it.
var loaded struct {
	sync.Mutex
	m map[[2]string]*data.TrainTest
}

// dataOf loads c's dataset once per process.
func dataOf(c config.Config) (*data.TrainTest, error) {
	loaded.Lock()
	defer loaded.Unlock()
	key := [2]string{c.Data.Dataset, c.Data.Dir}
	if d, ok := loaded.m[key]; ok {
		return d, nil
	}
	tt, err := experiment.LoadData(c)
	if err != nil {
		return nil, err
	}
	if loaded.m == nil {
		loaded.m = map[[2]string]*data.TrainTest{}
	}
	loaded.m[key] = &tt
	return &tt, nil
}

// New builds the search of c: its defences (sorted by name) and, for
// each, the attack settings it can run with — every setting of the
// attacks named (all the catalogue's by default, the topology liars
// where the defence has a trust layer) whose run passes
// experiment.Check; the others are listed as skipped, with the reason.
func New(c config.Config) (*Search, error) {
	w := c.WorstCase
	if w == nil {
		return nil, errors.New("the config has no [worst_case] section: name the defences to search, e.g. [worst_case.defences.median] with \"strategy.name\" = \"robust\" and \"strategy.rule\" = \"median\" (docs/guides/worst-case.md)")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	search, confirm := c.WorstCaseSeeds()
	s := &Search{cfg: c, found: map[string]Outcome{}, Space: Space{
		Grid: w.Grid, Tolerance: w.Tolerance, Refine: w.Refine, Confirm: w.Confirm,
		SearchSeeds: search, ConfirmSeeds: confirm,
	}}
	attacks := w.Attacks
	if len(attacks) == 0 {
		attacks = config.SearchAttacks()
	}
	placements := w.Placements
	if len(placements) == 0 {
		placements = config.Placements
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(w.Defences)) {
		base, err := c.Defence(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.bases = append(s.bases, base)
		metric := "honest_global_acc"
		if r, ok := strategy.Lookup(base.Strategy.Name); ok && r.Personalized || base.Evaluation.GlobalTest == 0 {
			metric = "honest_local_acc"
		}
		s.Metric = append(s.Metric, metric)
		settings, err := Settings(attacks, base.TrustOn())
		if err != nil {
			return nil, err
		}
		d := Defence{Name: name, Placements: placements, Skipped: map[string]string{}}
		s.Space.Defences = append(s.Space.Defences, d)
		di := len(s.Space.Defences) - 1
		for _, st := range settings {
			// The setting joins if its run at the middle of its range, under
			// every placement, is one the defence can make.
			s.Space.Defences[di].Settings = []Setting{st}
			v := 0.0
			if st.Param != nil {
				v = st.Param.grid(3)[1]
			}
			var bad error
			for _, pl := range placements {
				rc, _, err := s.runConfig(Run{Point: Point{Defence: di, Setting: 0, Value: v, Placement: pl}, Seed: search[0]})
				if err == nil {
					err = experiment.Check(rc)
				}
				if err != nil {
					bad = err
					break
				}
			}
			if bad != nil {
				d.Skipped[st.Name] = firstLine(bad.Error())
				continue
			}
			d.Settings = append(d.Settings, st)
		}
		s.Space.Defences[di] = d
		// The run without attack must run, or there is nothing to compare.
		rc, _, err := s.runConfig(Run{Point: noAttack(di), Seed: confirm[0], Full: true})
		if err == nil {
			err = experiment.Check(rc)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("worst_case.defences.%s: %w", name, err))
		}
	}
	return s, errors.Join(errs...)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Setting is the setting of a point (nil for the run without attack).
func (s *Search) Setting(p Point) *Setting {
	if p.Setting == NoAttack {
		return nil
	}
	return &s.Space.Defences[p.Defence].Settings[p.Setting]
}

// RunConfig is the config of one run and its directory relative to the
// search's output: DEFENCE/search|confirm/SETTING/KEY=VALUE/PLACEMENT/seed-S.
// A search run has the search rounds, and final rounds in the same
// proportion to them as the config's (at least 1);
// a placement other than random names the Byzantine nodes by id, found on
// the run's own graph (it depends on the seed).
func (s *Search) RunConfig(r Run) (config.Config, string, error) {
	s.mu.Lock()
	m, ok := s.made[r]
	s.mu.Unlock()
	if !ok {
		m.c, m.rel, m.err = s.runConfig(r)
		s.mu.Lock()
		if s.made == nil {
			s.made = map[Run]made{}
		}
		s.made[r] = m
		s.mu.Unlock()
	}
	return m.c, m.rel, m.err
}

func (s *Search) runConfig(r Run) (config.Config, string, error) {
	p := r.Point
	c := s.bases[p.Defence]
	c.Seed = r.Seed
	c.RunLabel = s.Space.Defences[p.Defence].Name
	phase := "confirm"
	if !r.Full {
		phase = "search"
		// The final metrics average the same share of the run as the
		// full run's do (at least its last evaluated round): a short run's
		// first rounds say how fast it learns, not where the attack left it.
		full := config.Evaluations(c.Rounds, c.EvalEvery)
		c.Rounds = s.cfg.SearchRoundsOf()
		n := config.Evaluations(c.Rounds, c.EvalEvery)
		c.FinalRounds = min(n, max(1, c.FinalRounds*n/full))
	}
	// The attack is the point's alone: the defaults, but for the share of
	// Byzantine nodes.
	adv := config.Default().Adversary
	adv.Fraction = c.Adversary.Fraction
	c.Adversary = adv
	parts := []string{s.Space.Defences[p.Defence].Name, phase}
	if set := s.Setting(p); set == nil {
		parts = append(parts, "none")
	} else {
		keys := map[string]any{}
		for k, v := range set.Keys {
			keys["adversary."+k] = v
		}
		parts = append(parts, set.Name)
		if set.Param != nil {
			keys["adversary."+set.Param.Key] = p.Value
			parts = append(parts, set.Param.Key+"="+strconv.FormatFloat(p.Value, 'g', -1, 64))
		}
		if err := c.SetKeys(keys); err != nil {
			return c, "", err
		}
	}
	parts = append(parts, p.Placement, fmt.Sprintf("seed-%d", r.Seed))
	if p.Placement != "random" {
		d, err := c.Graph()
		if err != nil {
			return c, "", err
		}
		k := max(1, int(math.Round(float64(c.Nodes)*c.Adversary.Fraction)))
		ids, err := Place(p.Placement, d.At(0), k)
		if err != nil {
			return c, "", err
		}
		c.Adversary.IDs, c.Adversary.Fraction = ids, 0
	}
	for i := range parts {
		parts[i] = config.SafeName(parts[i])
	}
	return c, filepath.Join(parts...), c.Validate()
}

// outcome reads a finished run's outcome from its directory (false: not
// finished there).
func (s *Search) outcome(out string, r Run) (Outcome, bool, error) {
	c, rel, err := s.RunConfig(r)
	if err != nil {
		return Outcome{}, false, err
	}
	dir := filepath.Join(out, rel)
	s.mu.Lock()
	o, ok := s.found[dir]
	s.mu.Unlock()
	if ok {
		return o, true, nil
	}
	hash, err := experiment.ConfigHash(c)
	if err != nil {
		return Outcome{}, false, err
	}
	fin, ok, err := rundir.FinishedRun(dir, hash)
	if err != nil || !ok {
		return Outcome{}, false, err
	}
	return s.note(dir, r, c, fin)
}

// note records a finished run's outcome.
func (s *Search) note(dir string, r Run, c config.Config, fin rundir.Final) (Outcome, bool, error) {
	metric := s.Metric[r.Point.Defence]
	o := Outcome{Acc: fin.HonestGlobalAcc, DeltaMax: fin.DeltaMax}
	field := "global_acc"
	if metric == "honest_local_acc" {
		o.Acc, field = fin.HonestLocalAcc, "local_acc"
	}
	w, err := worstNode(dir, field, c.FinalRounds)
	if err != nil {
		return Outcome{}, false, err
	}
	o.WorstNode = w
	s.mu.Lock()
	s.found[dir] = o
	s.mu.Unlock()
	return o, true, nil
}

// worstNode is the lowest accuracy of an honest node, each node's accuracy
// being, as the run's final metrics are, its mean over the last k
// evaluated rounds.
func worstNode(dir, field string, k int) (float64, error) {
	acc := map[int][]float64{}
	err := rundir.EachHonestNode(dir, field, func(n *metrics.NodeRound) {
		if !n.Evaluated || n.Missing {
			return
		}
		v := n.GlobalAcc
		if field == "local_acc" {
			v = n.LocalAcc
		}
		acc[n.Node] = append(acc[n.Node], v)
	})
	if err != nil {
		return 0, err
	}
	worst := math.Inf(1)
	for _, a := range acc {
		a = a[max(0, len(a)-k):]
		sum := 0.0
		for _, v := range a {
			sum += v
		}
		worst = min(worst, sum/float64(len(a)))
	}
	if math.IsInf(worst, 1) {
		return 0, fmt.Errorf("%s: no evaluated honest node in %s", dir, rundir.MetricsFile)
	}
	return worst, nil
}

// plan plans the search from the runs finished in out; a run directory
// that cannot be read is an error.
func (s *Search) plan(out string) (int, []Run, *Result, error) {
	var bad error
	stage, runs, res := s.Space.Plan(func(r Run) (Outcome, bool) {
		o, ok, err := s.outcome(out, r)
		if err != nil && bad == nil {
			bad = err
		}
		return o, ok
	})
	return stage, runs, res, bad
}

// Options are Run's options.
type Options struct {
	// Shard runs only the shard's share of each stage: run k of the
	// stage's list (Plan) when k mod Count = Index.
	Shard experiment.Shard
	// Progress is told when a run starts and after each of its rounds.
	Progress func(stage, run, runs int, dir string, round, rounds int)
	// Started is told of every run that starts computing (not one found
	// finished).
	Started func(dir string)
}

// PendingError is Run's error for a shard whose stage has runs of other
// shards not finished, and Merge's when some runs are not in any
// directory: the search stops there until they are.
type PendingError struct {
	Stage   int
	Missing []string // run directories
	Shard   experiment.Shard
}

func (e *PendingError) Error() string {
	var b strings.Builder
	if e.Shard.Sharded() {
		fmt.Fprintf(&b, "shard %s finished its runs of stage %d; %d runs of other shards are not finished yet: rerun the shards once they are (the next stage depends on them)", e.Shard, e.Stage, len(e.Missing))
	} else {
		fmt.Fprintf(&b, "stage %d of the search has %d runs finished in no directory given:", e.Stage, len(e.Missing))
		for i, m := range e.Missing {
			if i == 10 {
				fmt.Fprintf(&b, "\n  … and %d more", len(e.Missing)-10)
				break
			}
			fmt.Fprintf(&b, "\n  %s", m)
		}
		b.WriteString("\n(run the shards again, each its share of this stage, then merge again)")
	}
	return b.String()
}

// Run runs the search into out, stage after stage, each run in its own
// directory (experiment.RunToDirWith: a finished run is kept, an
// interrupted one resumed), so calling it again after an interrupt
// continues where it stopped. With a shard it runs the shard's share of
// each stage and goes on to the next stage only when the other shards'
// runs of this one are finished in out (a shared directory); otherwise it
// returns a *PendingError.
func (s *Search) Run(ctx context.Context, out string, o Options) (*Result, error) {
	for {
		stage, runs, res, err := s.plan(out)
		if err != nil || res != nil {
			return res, err
		}
		var missing []string
		for k, r := range runs {
			c, rel, err := s.RunConfig(r)
			if err != nil {
				return nil, err
			}
			dir := filepath.Join(out, rel)
			if _, ok, err := s.outcome(out, r); err != nil {
				return nil, err
			} else if ok {
				continue
			}
			if !o.Shard.Owns(k) {
				missing = append(missing, rel)
				continue
			}
			if o.Started != nil {
				o.Started(rel)
			}
			tt, err := dataOf(c)
			if err != nil {
				return nil, err
			}
			fin, err := experiment.RunToDirWith(ctx, c, dir, experiment.RunOptions{Data: tt, Progress: func(rd *metrics.Round, rounds int) {
				if o.Progress != nil {
					o.Progress(stage, k, len(runs), rel, rd.Round+1, rounds)
				}
			}})
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", rel, err)
			}
			if _, _, err := s.note(dir, r, c, fin); err != nil {
				return nil, err
			}
		}
		if len(missing) > 0 {
			return nil, &PendingError{Stage: stage, Missing: missing, Shard: o.Shard}
		}
	}
}

// Merge assembles the search in out from finished runs there and in the
// directories from (other shards' outputs), copying those found elsewhere
// into out, stage after stage. When every stage is complete it returns
// the result; else a *PendingError naming the runs of the first
// incomplete stage that no directory holds.
func (s *Search) Merge(out string, from []string) (*Result, error) {
	for {
		stage, runs, res, err := s.plan(out)
		if err != nil || res != nil {
			return res, err
		}
		var missing []string
		for _, r := range runs {
			c, rel, err := s.RunConfig(r)
			if err != nil {
				return nil, err
			}
			if _, ok, err := s.outcome(out, r); err != nil {
				return nil, err
			} else if ok {
				continue
			}
			hash, err := experiment.ConfigHash(c)
			if err != nil {
				return nil, err
			}
			found := false
			for _, d := range from {
				src := filepath.Join(d, rel)
				_, ok, err := rundir.FinishedRun(src, hash)
				if err != nil {
					return nil, err
				}
				if ok {
					if err := rundir.Copy(src, filepath.Join(out, rel)); err != nil {
						return nil, fmt.Errorf("merge run %s from %s: %w", rel, d, err)
					}
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, rel)
			}
		}
		if len(missing) > 0 {
			return nil, &PendingError{Stage: stage, Missing: missing}
		}
	}
}

// Estimate is how many runs the search takes: the grid stage exactly
// (with the runs without attack), the refinements and confirmations at
// most. Points the grid and a refinement share count once in a search,
// so it may take fewer.
type Estimate struct {
	// Confirm counts the runs without attack too.
	Grid, Refine, Confirm int
	// SearchRounds and ConfirmRounds are the rounds of a search run (the
	// grid's, the refinements') and of a confirmation.
	SearchRounds, ConfirmRounds int
}

// Total is the most runs the search takes.
func (e Estimate) Total() int { return e.Grid + e.Refine + e.Confirm }

// Rounds is the most rounds the search computes.
func (e Estimate) Rounds() int {
	return (e.Grid+e.Refine)*e.SearchRounds + e.Confirm*e.ConfirmRounds
}

// Estimate counts the search's runs (Estimate).
func (s *Search) Estimate() Estimate {
	sp := &s.Space
	ns, nc := len(sp.SearchSeeds), len(sp.ConfirmSeeds)
	e := Estimate{SearchRounds: s.cfg.SearchRoundsOf(), ConfirmRounds: s.cfg.Rounds}
	for d, def := range sp.Defences {
		e.Confirm += nc // the run without attack
		e.Grid += len(sp.gridPoints(d)) * ns
		fams := map[string]bool{}
		refinable := map[string]bool{}
		for _, st := range def.Settings {
			fams[st.Family] = true
			if st.Param != nil {
				refinable[st.Family] = true
			}
		}
		e.Confirm += min(sp.Confirm, len(fams)) * nc
		if len(refinable) > 0 {
			// Two interior points, then one a step until the bracket (two
			// grid steps at most) is within the tolerance.
			width := 2.0 / float64(sp.Grid-1)
			steps := 0
			for w := width; w > sp.Tolerance; w *= goldenRatio {
				steps++
			}
			e.Refine += min(sp.Refine, len(refinable)) * (2 + steps) * ns
		}
	}
	return e
}

// Dir is a run's directory relative to the search's output.
func (s *Search) Dir(r Run) string {
	_, rel, _ := s.RunConfig(r)
	return rel
}

// Config is the search's config.
func (s *Search) Config() config.Config { return s.cfg }
