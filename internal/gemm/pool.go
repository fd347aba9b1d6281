package gemm

import (
	"sync"
	"sync/atomic"
	"time"
)

// pool is the set of helper goroutines of one Engine.
//
// Handing work over through a channel or a WaitGroup costs more than a
// batch-32 product: a goroutine readied by a channel send goes to the
// sender's own run queue and another core steals it only after a few
// microseconds, and waking a parked thread costs more again; measured, a
// split 128³ product then ran slower on two threads than on one. So both
// sides spin on atomics before parking: a helper keeps polling its slot for
// spinFor after a part (back-to-back calls of a training step find it
// awake), and the caller polls for the helpers' completion. Parking uses a
// one-slot channel per waiter, with the usual store-flag-then-recheck
// handshake so that a wake-up is never lost.
//
// A part is claimed before it is run, and the caller, once done with its
// own part, runs any part no helper has claimed yet. So a helper that the
// OS has descheduled (the cores are shared) delays a call by at most what
// it is already running, never by its wake-up.
//
// A job is a plain value written into the helper's slot, so dispatch
// allocates nothing. The pool holds no reference to its Engine, which lets
// the Engine be collected (and the pool stopped by a cleanup) when the owner
// forgets Close.
type pool struct {
	helpers []helper
	exited  sync.WaitGroup // helper goroutines that have not returned
	left    atomic.Int32   // helper parts of the current call not yet done
	caller  waiter
	quit    atomic.Bool
}

// helper is one helper goroutine's mailbox: the caller writes job, clears
// taken, then bumps seq; whoever sets taken runs the job.
type helper struct {
	job   job
	taken atomic.Bool
	seq   atomic.Uint32
	waiter
}

// waiter is the parking half of a spin-then-park wait.
type waiter struct {
	parked atomic.Bool
	wake   chan struct{} // capacity 1: a token left over from a race is harmless
}

// job is one part of a call: a rectangle [m0,m1)×[n0,n1) of C, computed
// with the workspace ws, which no other part of the call uses; or, when fn
// is set (Engine.Each), the call fn(worker, m0, m1).
type job struct {
	p              problem
	kern           *kernel
	ws             *workspace
	m0, m1, n0, n1 int
	fn             func(worker, lo, hi int)
	worker         int
}

// betweenWakeReads, when set by a test, runs between a woken helper's two
// reads, to hold open the window a stop can fall into. Atomic, because
// helpers of other engines may be waking while a test sets it.
var betweenWakeReads atomic.Pointer[func()]

// spinFor bounds a busy wait before parking. It has to outlast the gaps
// between the parallel calls of a training step and the waits inside one,
// or every call pays a wake-up: on a 2-core VM (KVM) a parked helper's part
// of a 512³ product started 50–500 µs after its dispatch in 90 % of calls
// (120 µs on average, against the 1.5 ms the part ran), with the spin
// bounded at 1<<14 polls, which took 5 µs there. Spinning up to 300 µs,
// 99.8 % started within 5 µs, and the two-thread training steps (MLP,
// FEMNIST CNN, LeNet-5 3×32×32; AVX2, three alternations) ran 1.1–1.7×
// faster. A helper that finds no work burns at most this much CPU before
// it parks.
const spinFor = 300 * time.Microsecond

// spinCheck is how many polls a spin makes between two readings of the
// clock (a few hundred nanoseconds).
const spinCheck = 1024

func startPool(n int) *pool {
	p := &pool{helpers: make([]helper, n)}
	p.caller.wake = make(chan struct{}, 1)
	p.exited.Add(n)
	for i := range p.helpers {
		p.helpers[i].wake = make(chan struct{}, 1)
		go p.work(&p.helpers[i])
	}
	return p
}

// run executes jobs on the helpers and own on the calling goroutine, and
// returns when all are done.
func (p *pool) run(jobs []job, own job) {
	p.left.Store(int32(len(jobs)))
	for i := range jobs {
		h := &p.helpers[i]
		h.job = jobs[i]
		h.taken.Store(false)
		h.seq.Add(1)
		h.unpark()
	}
	own.run()
	for i := range jobs {
		if h := &p.helpers[i]; h.taken.CompareAndSwap(false, true) {
			jobs[i].run()
			h.job.p, h.job.fn = problem{}, nil // drop the caller's slices; the slot is ours now
			p.left.Add(-1)
		}
	}
	p.caller.await(func() bool { return p.left.Load() == 0 })
}

func (j *job) run() {
	if j.fn != nil {
		j.fn(j.worker, j.m0, j.m1)
		return
	}
	j.ws.run(j.kern, &j.p, j.m0, j.m1, j.n0, j.n1)
}

func (p *pool) work(h *helper) {
	defer p.exited.Done()
	var seen uint32
	for {
		h.await(func() bool { return h.seq.Load() != seen })
		// Read the sequence number before quit: stop sets quit before it
		// bumps seq, so a bump this read misses is seen by the next await.
		// Read after quit, it could swallow the stop's bump (the caller
		// having run this call's part meanwhile) and park for good.
		s := h.seq.Load()
		if hook := betweenWakeReads.Load(); hook != nil {
			(*hook)()
		}
		if p.quit.Load() {
			return
		}
		seen = s
		if !h.taken.CompareAndSwap(false, true) {
			continue // the caller ran it
		}
		h.job.run()
		h.job.p, h.job.fn = problem{}, nil // drop the caller's slices
		if p.left.Add(-1) == 0 {
			p.caller.unpark()
		}
	}
}

// await returns once done() holds, spinning first and then parking. The
// waker makes done() true before calling unpark; since both sides use
// sequentially consistent atomics, either await's re-check after setting
// parked sees done() or unpark sees parked and leaves a token.
func (w *waiter) await(done func() bool) {
	for !spin(done) {
		w.parked.Store(true)
		if done() {
			w.parked.Store(false)
			return
		}
		<-w.wake
		w.parked.Store(false)
	}
}

// spin polls done for up to spinFor and reports whether it held. It must
// not yield (runtime.Gosched): a yielding waiter can hand its P to the
// goroutine it waits for or wakes, and the two then share one core while
// the other idles, which measured slower than one thread.
func spin(done func() bool) bool {
	if done() {
		return true
	}
	start := time.Now()
	for i := 1; ; i++ {
		if done() {
			return true
		}
		if i%spinCheck == 0 && time.Since(start) > spinFor {
			return false
		}
	}
}

func (w *waiter) unpark() {
	if w.parked.Load() {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// stop ends the helper goroutines and waits for them to return; it may be
// called more than once.
func (p *pool) stop() {
	if !p.quit.Swap(true) {
		for i := range p.helpers {
			h := &p.helpers[i]
			h.seq.Add(1)
			h.unpark()
		}
	}
	p.exited.Wait()
}
