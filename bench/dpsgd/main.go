//go:build linux

// Command dpsgd compares a DP-SGD training step (nn.DPSGD, clip 1, noise
// multiplier 1.1) with the plain step of the same model and batch, by the
// thread CPU time of each (the best of -rounds rounds of 10 steps, the
// variants interleaved within each round), so that a machine shared with
// other work still gives a stable ratio. The target:
// within 2× of the plain step, no allocation.
//
//	go run ./bench/dpsgd [-kernels avx512,avx2,portable] [-rounds 12]
//
// Variants: "dp-no-noise" is the per-sample machinery alone (norms and
// clipped sum, noise multiplier 0); "dp-legacy" the noise generator of
// before the bulk float32 ziggurat (legacy.go: float64 ziggurat, one
// SplitMix64 word per normal); "dp-seeded/K" and "dp-crypto/K" the
// privacy package's seeded and crypto/rand-keyed streams with the noise
// kernel K forced (privacy.UseNoiseKernel; every kernel draws the same
// noise). First, the generator alone: ns per normal of each. The
// wall-clock benchmarks are in dpsgd_test.go (go test ./bench/dpsgd
// -bench .).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/trellis-fl/trellis/internal/cpu"
	"github.com/trellis-fl/trellis/nn"
	"github.com/trellis-fl/trellis/privacy"
)

// threadCPU is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
func threadCPU() time.Duration {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// machine is the CPU model and the load average, for the record.
func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%s, %d CPUs, load average %s", cpu.ModelName(), runtime.NumCPU(), strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}

type variant struct {
	name   string
	kernel string // noise kernel to force ("" none)
	run    func()
}

func main() {
	kernels := flag.String("kernels", strings.Join(privacy.NoiseKernels(), ","), "noise kernels to measure, comma-separated (this machine: "+strings.Join(privacy.NoiseKernels(), ", ")+")")
	rounds := flag.Int("rounds", 12, "rounds of 10 steps per variant (the best is reported)")
	flag.Parse()
	ks := strings.Split(*kernels, ",")
	for _, k := range ks {
		if !slices.Contains(privacy.NoiseKernels(), k) {
			fmt.Fprintf(os.Stderr, "dpsgd: no noise kernel %q on this machine (%v)\n", k, privacy.NoiseKernels())
			os.Exit(2)
		}
	}
	runtime.LockOSThread()
	fmt.Printf("%s; noise kernels %v (default %s)\n", machine(), privacy.NoiseKernels(), privacy.NoiseKernels()[len(privacy.NoiseKernels())-1])
	noise(ks, *rounds)
	for _, s := range settings {
		m, opt, x, y := build(s)
		step := func(d *nn.DPSGD) func() {
			return func() { _, _ = d.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }
		}
		dp := func(src nn.NoiseSource) *nn.DPSGD {
			d, err := nn.NewDPSGD(m, nn.DPConfig{Clip: 1, Multiplier: 1.1}, src)
			if err != nil {
				panic(err)
			}
			return d
		}
		d0, _ := nn.NewDPSGD(m, nn.DPConfig{Clip: 1}, nil)
		vs := []variant{
			{"plain", "", func() { _, _ = m.Step(x, y, s.batch, opt, nn.TrainConfig{}, nil) }},
			{"dp-no-noise", "", step(d0)},
			{"dp-legacy", "", step(dp(&legacyStream{state: 1}))},
		}
		for _, src := range []string{"seeded", "crypto"} {
			for _, k := range ks {
				ns := privacy.NewSeededSource(1, 2)
				if src == "crypto" {
					ns = privacy.NewCryptoSource()
				}
				vs = append(vs, variant{"dp-" + src + "/" + k, k, step(dp(ns))})
			}
		}
		best := make([]time.Duration, len(vs))
		for range *rounds {
			for i, v := range vs {
				if v.kernel != "" {
					if _, err := privacy.UseNoiseKernel(v.kernel); err != nil {
						panic(err)
					}
				}
				t0 := threadCPU()
				for range 10 {
					v.run()
				}
				if d := (threadCPU() - t0) / 10; best[i] == 0 || d < best[i] {
					best[i] = d
				}
			}
		}
		fmt.Printf("%s, %d params:\n", s.name, m.NumParams())
		for i, v := range vs {
			fmt.Printf("  %-20s %9v  %5.2f×\n", v.name, best[i].Round(time.Microsecond), float64(best[i])/float64(best[0]))
		}
		m.Close()
	}
	fmt.Printf("after: %s\n", machine())
}

// noise times the generator alone: one draw of the MLP's 235,146 normals
// (DP-SGD's vector) per call, as ns per normal, the best of 10·rounds
// calls per variant, the variants interleaved.
func noise(ks []string, rounds int) {
	v := make([]float32, 235_146)
	type gen struct {
		name, kernel string
		draw         func()
	}
	legacy := &legacyStream{state: 1}
	gs := []gen{{"legacy (float64 ziggurat)", "", func() { legacy.AddNormal(v, 1e-3) }}}
	for _, src := range []string{"seeded", "crypto"} {
		for _, k := range ks {
			s := privacy.NewSeededSource(1, 2)
			if src == "crypto" {
				s = privacy.NewCryptoSource()
			}
			gs = append(gs, gen{src + "/" + k, k, func() { s.ScaleAddNormal(v, 0.999, 1e-3) }})
		}
	}
	best := make([]time.Duration, len(gs))
	for range 10 * rounds {
		for i, g := range gs {
			if g.kernel != "" {
				if _, err := privacy.UseNoiseKernel(g.kernel); err != nil {
					panic(err)
				}
			}
			t0 := threadCPU()
			g.draw()
			if d := threadCPU() - t0; best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	fmt.Printf("noise generator, %d normals per call:\n", len(v))
	for i, g := range gs {
		fmt.Printf("  %-26s %6.3f ns/normal  %5.2f× faster than legacy\n", g.name, float64(best[i])/float64(len(v)), float64(best[0])/float64(best[i]))
	}
}
