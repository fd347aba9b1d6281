package gemm

import "sync"

// pool is the set of helper goroutines of one Engine. A call sends one job
// per extra part and waits on wg; a job is a plain value, so dispatch
// allocates nothing. The pool holds no reference to its Engine, which lets
// the Engine be collected (and the pool stopped by a cleanup) when the owner
// forgets Close.
type pool struct {
	jobs chan job
	wg   sync.WaitGroup
	once sync.Once
}

// job is one part of a call: a rectangle [m0,m1)×[n0,n1) of C, computed
// with the workspace ws, which no other part of the call uses.
type job struct {
	p              problem
	kern           *kernel
	ws             *workspace
	m0, m1, n0, n1 int
}

func startPool(helpers int) *pool {
	p := &pool{jobs: make(chan job, helpers)}
	for range helpers {
		go p.work()
	}
	return p
}

func (p *pool) work() {
	for j := range p.jobs {
		j.ws.run(j.kern, &j.p, j.m0, j.m1, j.n0, j.n1)
		p.wg.Done()
	}
}

// stop ends the helper goroutines; it may be called more than once.
func (p *pool) stop() { p.once.Do(func() { close(p.jobs) }) }
