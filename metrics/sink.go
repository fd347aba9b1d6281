package metrics

import (
	"errors"
	"sync"
)

// Sink receives each round's record, in round order, from one goroutine.
// A record is never modified after it is handed over.
type Sink interface {
	Round(r *Round) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(r *Round) error

// Round implements Sink.
func (f SinkFunc) Round(r *Round) error { return f(r) }

// Delivery says what a sink behind a Fanout is promised.
type Delivery int

const (
	// Every record, in order: the run directory, a reproducible stream.
	// When its queue is full the round waits (back-pressure, never loss),
	// and its first error stops the run.
	Every Delivery = iota
	// Latest: records in order, but a record the sink is too slow to take
	// is skipped (a live viewer). It never makes a round wait, and its
	// errors are counted, not returned.
	Latest
)

// Fanout is a Sink that hands every record to several sinks, each on a
// goroutine of its own behind a bounded queue, so the round that produced
// a record goes on while the sinks work. Close waits for the Every sinks
// to take everything queued.
type Fanout struct {
	outs   []*out
	closed bool
}

type out struct {
	sink     Sink
	delivery Delivery
	queue    chan *Round
	done     chan struct{}
	mu       sync.Mutex
	err      error // the first error (Every) or the last (Latest)
	skipped  int
	failed   int
}

// DefaultQueue is the queue length of a sink added with a length ≤ 0.
const DefaultQueue = 16

// NewFanout returns an empty fan-out.
func NewFanout() *Fanout { return &Fanout{} }

// Add starts a sink with a queue of the given length (≤ 0: DefaultQueue).
// Add sinks before the first record.
func (f *Fanout) Add(s Sink, d Delivery, queue int) {
	if queue <= 0 {
		queue = DefaultQueue
	}
	o := &out{sink: s, delivery: d, queue: make(chan *Round, queue), done: make(chan struct{})}
	f.outs = append(f.outs, o)
	go o.run()
}

func (o *out) run() {
	defer close(o.done)
	for r := range o.queue {
		if o.delivery == Every && o.error() != nil {
			continue // drain without delivering after a failure
		}
		if err := o.sink.Round(r); err != nil {
			o.mu.Lock()
			if o.delivery == Latest {
				o.failed++
				o.err = err
			} else if o.err == nil {
				o.err = err
			}
			o.mu.Unlock()
		}
	}
}

func (o *out) error() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Round queues r for every sink. It waits only for an Every sink whose
// queue is full; it returns the first error an Every sink has reported so
// far (an error surfaces at the next record or at Close).
func (f *Fanout) Round(r *Round) error {
	if f.closed {
		return errors.New("metrics: record after Close")
	}
	for _, o := range f.outs {
		if o.delivery == Every {
			if err := o.error(); err != nil {
				return err
			}
			o.queue <- r
			continue
		}
		select {
		case o.queue <- r:
		default:
			o.mu.Lock()
			o.skipped++
			o.mu.Unlock()
		}
	}
	return nil
}

// Close waits until every Every sink has taken its queued records and
// returns the first error of one. Latest sinks are not waited for beyond
// what they already hold; their goroutines end once their queues drain.
func (f *Fanout) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	var first error
	for _, o := range f.outs {
		close(o.queue)
		if o.delivery == Every {
			<-o.done
			if err := o.error(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// SinkStats is what a Latest sink missed: records skipped because it was
// busy, and records it failed on (with the last error).
type SinkStats struct {
	Skipped, Failed int
	Err             error
}

// Stats returns each sink's SinkStats, in the order added.
func (f *Fanout) Stats() []SinkStats {
	out := make([]SinkStats, len(f.outs))
	for k, o := range f.outs {
		o.mu.Lock()
		out[k] = SinkStats{Skipped: o.skipped, Failed: o.failed, Err: o.err}
		o.mu.Unlock()
	}
	return out
}
