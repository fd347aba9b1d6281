package sim

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
)

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
