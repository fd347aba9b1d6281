package metrics

import (
	"errors"
	"testing"
	"time"
)

// within fails the test if fn does not return in a minute: a stalled fan-out
// would otherwise hang the suite (a deadlock check, not a timing claim).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s: still blocked after a minute", what)
	}
}

// An Every sink receives every record in order; a Latest sink that blocks
// forever never stalls the producer, and misses records instead.
func TestFanoutBlockedViewerNeverStalls(t *testing.T) {
	var got []int
	release := make(chan struct{})
	defer close(release)
	f := NewFanout()
	f.Add(SinkFunc(func(r *Round) error { got = append(got, r.Round); return nil }), Every, 4)
	f.Add(SinkFunc(func(*Round) error { <-release; return nil }), Latest, 2)
	const n = 500
	within(t, "producing records", func() {
		for i := range n {
			if err := f.Round(&Round{Round: i}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	within(t, "Close", func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	if len(got) != n {
		t.Fatalf("the Every sink got %d records, want %d", len(got), n)
	}
	for i, r := range got {
		if r != i {
			t.Fatalf("record %d is round %d: out of order", i, r)
		}
	}
	st := f.Stats()
	if st[0].Skipped != 0 || st[1].Skipped < n-3 {
		t.Fatalf("stats %+v: the blocked viewer should have missed all but the ≤ 3 it holds", st)
	}
}

// An Every sink's error stops the producer at the next record or at
// Close; a Latest sink's errors are counted and never returned.
func TestFanoutErrors(t *testing.T) {
	boom := errors.New("disk full")
	f := NewFanout()
	f.Add(SinkFunc(func(r *Round) error {
		if r.Round == 1 {
			return boom
		}
		return nil
	}), Every, 1)
	f.Add(SinkFunc(func(*Round) error { return errors.New("viewer gone") }), Latest, 100)
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = f.Round(&Round{Round: i})
	}
	if cerr := f.Close(); !errors.Is(err, boom) && !errors.Is(cerr, boom) {
		t.Fatalf("the Every sink's error was not returned: %v, %v", err, cerr)
	}
	// The viewer fails on its own goroutine, which Close does not wait
	// for (a Latest sink never holds the run up): wait until it has
	// taken a record and counted the failure.
	within(t, "the viewer's first failure", func() {
		for st := f.Stats(); st[1].Failed == 0; st = f.Stats() {
			time.Sleep(time.Millisecond)
		}
	})
	if st := f.Stats(); st[1].Err == nil {
		t.Fatalf("viewer stats %+v: want its last error kept", st[1])
	}
	if err := f.Round(&Round{}); err == nil {
		t.Fatal("a record after Close accepted")
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
