package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
)

func TestChooseByzantine(t *testing.T) {
	for _, c := range []struct {
		n    int
		frac float64
		k    int
	}{{10, 0.3, 3}, {100, 0.1, 10}, {10, 0.01, 1}, {10, 0, 0}, {7, 0.5, 4}} {
		ids, err := ChooseByzantine(c.n, c.frac, 42)
		if err != nil || len(ids) != c.k || !slices.IsSorted(ids) {
			t.Errorf("n=%d fraction=%v: %v (%v), want %d sorted ids", c.n, c.frac, ids, err, c.k)
		}
		again, _ := ChooseByzantine(c.n, c.frac, 42)
		if !slices.Equal(ids, again) {
			t.Error("same seed, different Byzantine set")
		}
	}
	a, _ := ChooseByzantine(100, 0.3, 1)
	b, _ := ChooseByzantine(100, 0.3, 2)
	if slices.Equal(a, b) {
		t.Error("different seeds chose the same set")
	}
	for _, f := range []float64{-0.1, 1, math.NaN()} {
		if _, err := ChooseByzantine(10, f, 1); err == nil {
			t.Errorf("fraction %v accepted", f)
		}
	}
}

func TestForEachRunsEachIndexOnceAndReportsLowestError(t *testing.T) {
	for _, workers := range []int{1, 2, 7} {
		var count [50]atomic.Int32
		err := forEach(50, workers, func(i int) error {
			count[i].Add(1)
			if i == 31 || i == 17 {
				return errors.New(string(rune('a' + i%26)))
			}
			return nil
		})
		for i := range count {
			if count[i].Load() != 1 {
				t.Fatalf("workers=%d: index %d ran %d times", workers, i, count[i].Load())
			}
		}
		if err == nil || err.Error() != string(rune('a'+17)) {
			t.Errorf("workers=%d: error %v, want the one of index 17", workers, err)
		}
	}
}

// TestForEachInFollowsTheOrder: items start in the given order (one
// worker shows it), every item runs once with any number of workers, and
// the error is still the lowest index's, whatever the order.
func TestForEachInFollowsTheOrder(t *testing.T) {
	order := []int{4, 0, 3, 1, 2}
	var seen []int
	if err := forEachIn(order, 5, 1, func(i int) error { seen = append(seen, i); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, order) {
		t.Errorf("one worker ran %v, want %v", seen, order)
	}
	for _, workers := range []int{1, 2, 7} {
		var count [5]atomic.Int32
		err := forEachIn(order, 5, workers, func(i int) error {
			count[i].Add(1)
			if i == 3 || i == 1 {
				return fmt.Errorf("item %d", i)
			}
			return nil
		})
		for i := range count {
			if count[i].Load() != 1 {
				t.Fatalf("workers=%d: item %d ran %d times", workers, i, count[i].Load())
			}
		}
		if err == nil || err.Error() != "item 1" {
			t.Errorf("workers=%d: error %v, want item 1's", workers, err)
		}
	}
}

func TestLongestFirst(t *testing.T) {
	got := longestFirst([]float64{3, 9, 3, 0, 12, 9})
	if want := []int{4, 1, 5, 0, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("longestFirst = %v, want %v (decreasing cost, ties by index)", got, want)
	}
}

// TestEvaluationsCountsTheScheduledRounds: Evaluations agrees with the
// rounds the runner marks evaluated.
func TestEvaluationsCountsTheScheduledRounds(t *testing.T) {
	for _, c := range [][2]int{{40, 5}, {41, 5}, {3, 1}, {7, 0}, {10, 20}} {
		r := &runner{cfg: Config{Rounds: c[0], EvalEvery: c[1]}}
		n := 0
		for round := range c[0] {
			if r.evaluated(round) {
				n++
			}
		}
		if got := Evaluations(c[0], c[1]); got != n {
			t.Errorf("rounds %d, eval_every %d: Evaluations = %d, the runner evaluates %d", c[0], c[1], got, n)
		}
	}
}
