package worstcase

import (
	"math"
	"slices"
	"testing"
)

// synthetic is a defence whose accuracy is a known function of the attack:
// under ALIE it is 0.3 + 0.2·(ln z − ln zStar)², lowest at z = zStar; the
// minus sign, IPM and sign flip do less harm, and a placement other than
// random adds 0.05 (so random is the worst placement).
type synthetic struct {
	s     *Space
	zStar float64
	evals map[Run]int
}

func (y *synthetic) acc(p Point) float64 {
	if p.Setting == NoAttack {
		return 0.9
	}
	set := y.s.Defences[p.Defence].Settings[p.Setting]
	a := 0.0
	switch set.Name {
	case "alie":
		l := math.Log(p.Value / y.zStar)
		a = 0.3 + 0.2*l*l
	case "alie-minus":
		l := math.Log(p.Value / y.zStar)
		a = 0.45 + 0.2*l*l
	case "ipm":
		l := math.Log(p.Value)
		a = 0.5 + 0.1*l*l
	case "sign_flip":
		a = 0.6
	}
	if p.Placement != "random" {
		a += 0.05
	}
	return a
}

// look answers every run as finished, counting how often each is asked
// for, so the test sees which runs the search needed.
func (y *synthetic) look(r Run) (Outcome, bool) {
	y.evals[r]++
	a := y.acc(r.Point)
	return Outcome{Acc: a, DeltaMax: 1 - a, WorstNode: a - 0.1}, true
}

func syntheticSpace(t *testing.T, tol float64) *Space {
	settings, err := Settings([]string{"alie", "ipm", "sign_flip"}, false)
	if err != nil {
		t.Fatal(err)
	}
	return &Space{
		Defences:  []Defence{{Name: "synthetic", Settings: settings, Placements: []string{"random", "highest_degree"}}},
		Grid:      5,
		Tolerance: tol,
		Refine:    1, Confirm: 2,
		SearchSeeds: []uint64{1}, ConfirmSeeds: []uint64{1, 2, 3},
	}
}

// TestFindsKnownMinimum: on a defence whose accuracy under ALIE is a known
// function of z with its minimum at z* (not a grid value), the search
// finds z* within the refinement's tolerance (in ln z, the coordinate it
// refines), at the worst placement, and confirms it with every confirm
// seed.
func TestFindsKnownMinimum(t *testing.T) {
	for _, zStar := range []float64{1.7, 0.23, 6.1} {
		for _, tol := range []float64{0.05, 0.01} {
			s := syntheticSpace(t, tol)
			y := &synthetic{s: s, zStar: zStar, evals: map[Run]int{}}
			_, runs, res := s.Plan(y.look)
			if res == nil {
				t.Fatalf("z* = %v: the search did not finish with every run on file (pending %v)", zStar, runs)
			}
			dr := res.Defences[0]
			set := s.Defences[0].Settings[dr.Worst.Point.Setting]
			if set.Name != "alie" || dr.Worst.Point.Placement != "random" {
				t.Fatalf("z* = %v: worst point %+v (%s), want alie at the random placement", zStar, dr.Worst.Point, set.Name)
			}
			lo, hi := set.Param.span()
			got := dr.Worst.Point.Value
			if d := math.Abs(math.Log(got) - math.Log(zStar)); d > tol*(hi-lo) {
				t.Errorf("z* = %v, tolerance %v: found z = %v, |ln z − ln z*| = %.4f > %.4f", zStar, tol, got, d, tol*(hi-lo))
			}
			// The grid alone is further off than the tolerance: the
			// refinement, not luck of the grid, found it.
			best := math.Inf(1)
			for _, v := range set.Param.grid(s.Grid) {
				best = min(best, math.Abs(math.Log(v)-math.Log(zStar)))
			}
			if tol == 0.01 && best <= tol*(hi-lo) {
				t.Errorf("z* = %v is within the tolerance of a grid value: the test does not exercise the refinement", zStar)
			}
			want := 0.3 + 0.2*math.Pow(math.Log(got/zStar), 2)
			if dr.Worst.Outcome.Acc != want || dr.NoAttack.Acc != 0.9 {
				t.Errorf("worst accuracy %v, no attack %v; want %v, 0.9", dr.Worst.Outcome.Acc, dr.NoAttack.Acc, want)
			}
			for _, sd := range s.ConfirmSeeds {
				if y.evals[Run{Point: dr.Worst.Point, Seed: sd, Full: true}] == 0 {
					t.Errorf("the worst point was not confirmed with seed %d", sd)
				}
			}
			// Families worst first, each at its own worst point.
			var names []string
			for _, f := range dr.Families {
				names = append(names, f.Family)
			}
			if !slices.Equal(names, []string{"alie", "ipm", "sign_flip"}) {
				t.Errorf("families %v, want alie, ipm, sign_flip (worst first)", names)
			}
			if f := dr.Families[1]; f.Worst.Point.Value != 1 || f.Confirmed == nil || dr.Families[2].Confirmed != nil {
				t.Errorf("ipm's worst point %+v (confirmed %v), want ε = 1 (a grid value, not refined) confirmed, and sign_flip not (confirm = 2)", f.Worst.Point, f.Confirmed)
			}
		}
	}
}

// TestStagesAreIncremental drives the search as the runner does — only
// the runs of the stage it asks for get finished — and checks that each
// stage asks for runs not seen before (a finished run is never asked
// again as new), that the refinement takes the number of steps the
// golden section needs, and that the result equals the one-shot search's.
func TestStagesAreIncremental(t *testing.T) {
	s := syntheticSpace(t, 0.02)
	y := &synthetic{s: s, zStar: 1.7, evals: map[Run]int{}}
	done := map[Run]bool{}
	look := func(r Run) (Outcome, bool) {
		if !done[r] {
			return Outcome{}, false
		}
		return y.look(r)
	}
	var res *Result
	stages := 0
	for {
		stage, runs, r := s.Plan(look)
		if r != nil {
			res = r
			break
		}
		if stage != stages {
			t.Fatalf("stage %d after %d stages", stage, stages)
		}
		stages++
		fresh := 0
		for _, run := range runs {
			if !done[run] {
				fresh++
				done[run] = true
			}
		}
		if fresh == 0 {
			t.Fatalf("stage %d asks for no new run: the search would never end", stage)
		}
		if stages > 100 {
			t.Fatal("more than 100 stages")
		}
	}
	// Grid, two interior points, one point a step, confirmation.
	lo, hi := s.Defences[0].Settings[0].Param.span()
	width := 2 * (hi - lo) / float64(s.Grid-1)
	steps := 0
	for w := width; w > s.Tolerance*(hi-lo); w *= goldenRatio {
		steps++
	}
	if want := 1 + 1 + steps + 1; stages != want {
		t.Errorf("%d stages, want %d (grid, first refinement step, %d more, confirmation)", stages, want, steps)
	}
	y2 := &synthetic{s: s, zStar: 1.7, evals: map[Run]int{}}
	_, _, once := s.Plan(y2.look)
	if res.Defences[0].Worst != once.Defences[0].Worst || res.Defences[0].Runs != once.Defences[0].Runs {
		t.Errorf("staged search %+v, one-shot %+v", res.Defences[0].Worst, once.Defences[0].Worst)
	}
	if res.Defences[0].Runs != len(done) {
		t.Errorf("the result counts %d runs, the search took %d", res.Defences[0].Runs, len(done))
	}
}

// TestGridValues: the grid spreads values evenly in ln for a scale
// parameter, ends included, rounded to 4 significant digits; a negative
// scale mirrors a positive one.
func TestGridValues(t *testing.T) {
	p := Param{Key: "z", Lo: 0.1, Hi: 10, Log: true}
	if got := p.grid(5); !slices.Equal(got, []float64{0.1, 0.3162, 1, 3.162, 10}) {
		t.Errorf("grid %v", got)
	}
	n := Param{Key: "scale", Lo: -0.1, Hi: -100, Log: true, Negative: true}
	if got := n.grid(4); !slices.Equal(got, []float64{-0.1, -1, -10, -100}) {
		t.Errorf("negative grid %v", got)
	}
	l := Param{Key: "x", Lo: -1, Hi: 1}
	if got := l.grid(3); !slices.Equal(got, []float64{-1, 0, 1}) {
		t.Errorf("linear grid %v", got)
	}
}
