package experiment

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/sim"
)

// ProbeResult is a run's first round, measured: what `--probe` reports.
type ProbeResult struct {
	// LoadSeconds is loading the dataset, BuildSeconds building the nodes
	// (splits, models, keys).
	LoadSeconds  float64 `json:"load_seconds"`
	BuildSeconds float64 `json:"build_seconds"`
	// RoundSeconds is round 0 (evaluated), TrainSeconds its training.
	RoundSeconds float64 `json:"round_seconds"`
	TrainSeconds float64 `json:"train_seconds"`
	// Rounds is the config's; ProjectedSeconds is load + build + Rounds ×
	// RoundSeconds: an upper bound when not every round is evaluated.
	Rounds           int     `json:"rounds"`
	ProjectedSeconds float64 `json:"projected_seconds"`
	// PeakRSS is this process's peak resident set after the round
	// (/proc/self/status VmHWM; 0: unknown), to compare with the estimate.
	PeakRSS int64 `json:"peak_rss_bytes"`
}

// Probe builds c's run and runs its first round, writing nothing: the
// measured round time of a dry run. It allocates what the run does, so
// check the estimate first (CheckMemory).
func Probe(ctx context.Context, c config.Config) (ProbeResult, error) {
	res := ProbeResult{Rounds: c.Rounds}
	t0 := time.Now()
	tt, err := LoadData(c)
	if err != nil {
		return res, err
	}
	res.LoadSeconds = time.Since(t0).Seconds()
	t1 := time.Now()
	s, err := SetupOf(c, tt)
	if err != nil {
		return res, err
	}
	var timing metrics.Timing
	s.Timings = func(t metrics.Timing) { timing = t }
	b, err := s.Build()
	if err != nil {
		return res, err
	}
	res.BuildSeconds = time.Since(t1).Seconds()
	cfg := b.Config
	cfg.Rounds = 1 // the nodes keep the whole run's schedule; round 0 is evaluated
	if err := sim.Run(ctx, cfg, b.Nodes, discard{}); err != nil {
		return res, err
	}
	res.RoundSeconds, res.TrainSeconds = timing.Seconds, timing.TrainSeconds
	res.ProjectedSeconds = res.LoadSeconds + res.BuildSeconds + float64(c.Rounds)*res.RoundSeconds
	res.PeakRSS = PeakRSS()
	return res, nil
}

type discard struct{}

func (discard) Round(*metrics.Round) error { return nil }

// PeakRSS is this process's peak resident set so far (VmHWM), 0 where
// /proc/self/status does not say.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
