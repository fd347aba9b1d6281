//go:build linux

// Command dpsgd compares a DP-SGD training step (nn.DPSGD, clip 1, noise
// multiplier 1.1) with the plain step of the same model and batch, by the
// thread CPU time of each (the best of 12 rounds of 10 steps), so that a
// machine shared with other work still gives a stable ratio. Issue 16,
// acceptance item 3: within 2× of the plain step, no allocation.
//
//	go run ./bench/dpsgd
//
// "dp-no-noise" is the per-sample machinery alone (norms and clipped sum,
// noise multiplier 0); the difference to "dp-seeded" is the Gaussian draw,
// one per parameter per step. The wall-clock benchmarks are in
// dpsgd_test.go (go test ./bench/dpsgd -bench .).
package main

import (
	"fmt"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
)

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func main() {
	runtime.LockOSThread()
	for _, s := range settings {
		m, opt, x, y := build(s)
		d0, _ := nn.NewDPSGD(m, nn.DPConfig{Clip: 1}, nil)
		ds, _ := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: 1.1}, privacy.NewSeededSource(1, 2))
		dc, _ := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: 1.1}, privacy.NewCryptoSource())
		steps := []struct {
			name string
			run  func()
		}{
			{"plain", func() { _, _ = m.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }},
			{"dp-no-noise", func() { _, _ = d0.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }},
			{"dp-seeded", func() { _, _ = ds.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }},
			{"dp-crypto", func() { _, _ = dc.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }},
		}
		best := make([]time.Duration, len(steps))
		for range 12 {
			for k, st := range steps {
				t0 := threadCPU()
				for range 10 {
					st.run()
				}
				if d := (threadCPU() - t0) / 10; best[k] == 0 || d < best[k] {
					best[k] = d
				}
			}
		}
		fmt.Printf("%-15s %7d params:", s.name, m.NumParams())
		for k, st := range steps {
			fmt.Printf("  %s %v (%.2f×)", st.name, best[k].Round(time.Microsecond), float64(best[k])/float64(best[0]))
		}
		fmt.Println()
		m.Close()
	}
}
