package data

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// SyntheticConfig describes a Gaussian-mixture classification task split
// across clients, for fast unit tests:
// class c has mean mu_c ~ N(0, Separation²·I); client i has its own class
// proportions pi_i ~ Dir(LabelAlpha·1) (label shift) and its own offset
// delta_i ~ N(0, FeatureShift²·I) (feature shift); a sample of client i is
// y ~ pi_i, x = mu_y + delta_i + Noise·N(0, I).
type SyntheticConfig struct {
	Clients          int
	SamplesPerClient int
	TestSamples      int     // global test set: balanced classes, no client offset; 0 for none
	Dim              int     // features per sample
	Classes          int     // ≥ 2
	Separation       float64 // std of the class means; 0 means 1
	Noise            float64 // std of each sample around its mean; 0 means 1
	LabelAlpha       float64 // Dirichlet concentration of client class proportions; 0 means uniform
	FeatureShift     float64 // std of the per-client offset; 0 means none
	Seed             uint64
}

// NewSynthetic generates the dataset and its natural partition: client i
// holds samples i·SamplesPerClient … (i+1)·SamplesPerClient-1, which are
// also group i. Client i's samples depend only on (Seed, i) and the class
// means, so adding clients leaves earlier clients unchanged.
func NewSynthetic(cfg SyntheticConfig) (TrainTest, *Partition, error) {
	if cfg.Clients < 1 || cfg.SamplesPerClient < 1 || cfg.Dim < 1 || cfg.Classes < 2 || cfg.TestSamples < 0 {
		return TrainTest{}, nil, fmt.Errorf("data: synthetic: need Clients, SamplesPerClient, Dim ≥ 1, Classes ≥ 2, TestSamples ≥ 0; got %+v", cfg)
	}
	if cfg.LabelAlpha < 0 || cfg.FeatureShift < 0 || cfg.Separation < 0 || cfg.Noise < 0 {
		return TrainTest{}, nil, fmt.Errorf("data: synthetic: negative parameter in %+v", cfg)
	}
	n := cfg.Clients * cfg.SamplesPerClient
	if n > 1<<31-1 {
		return TrainTest{}, nil, fmt.Errorf("data: synthetic: %d samples exceed the int32 index range", n)
	}
	sep, noise := cfg.Separation, cfg.Noise
	if sep == 0 {
		sep = 1
	}
	if noise == 0 {
		noise = 1
	}
	k, dim := cfg.Classes, cfg.Dim
	r := stream(cfg.Seed, purposeSynthetic, 0)
	means := make([]float64, k*dim)
	for i := range means {
		means[i] = sep * r.NormFloat64()
	}
	classes := make([]string, k)
	for c := range classes {
		classes[c] = "class " + strconv.Itoa(c)
	}
	norm := Normalization{Desc: "none (generated)"}
	train := &Dataset{
		Name: "synthetic", Shape: []int{dim}, Classes: classes, Norm: norm,
		X: make([]float32, n*dim), Y: make([]int, n),
		Groups: make([]int32, n), GroupNames: make([]string, cfg.Clients),
	}
	probs := make([]float64, k)
	offset := make([]float64, dim)
	for i := range cfg.Clients {
		rc := stream(cfg.Seed, purposeSynthetic, 1+uint64(i))
		train.GroupNames[i] = "client " + strconv.Itoa(i)
		if cfg.LabelAlpha > 0 {
			dirichletDraw(rc, cfg.LabelAlpha, probs)
		} else {
			for c := range probs {
				probs[c] = 1 / float64(k)
			}
		}
		for j := range offset {
			offset[j] = cfg.FeatureShift * rc.NormFloat64()
		}
		for s := range cfg.SamplesPerClient {
			at := i*cfg.SamplesPerClient + s
			y := categorical(rc, probs)
			train.Y[at] = y
			train.Groups[at] = int32(i)
			sample(rc, train.X[at*dim:(at+1)*dim], means[y*dim:(y+1)*dim], offset, noise)
		}
	}
	sizes := make([]int, cfg.Clients)
	for i := range sizes {
		sizes[i] = cfg.SamplesPerClient
	}
	part := &Partition{Clients: layout(train.All(), sizes)}

	out := TrainTest{Train: train}
	if cfg.TestSamples > 0 {
		rt := stream(cfg.Seed, purposeSynthetic, 1<<40)
		test := &Dataset{
			Name: "synthetic/test", Shape: []int{dim}, Classes: classes, Norm: norm,
			X: make([]float32, cfg.TestSamples*dim), Y: make([]int, cfg.TestSamples),
		}
		zero := make([]float64, dim)
		for s := range cfg.TestSamples {
			y := s % k
			test.Y[s] = y
			sample(rt, test.X[s*dim:(s+1)*dim], means[y*dim:(y+1)*dim], zero, noise)
		}
		out.Test = test
	}
	return out, part, nil
}

func categorical(r *rand.Rand, p []float64) int {
	u := r.Float64()
	for c, pc := range p {
		if u < pc {
			return c
		}
		u -= pc
	}
	return len(p) - 1
}

func sample(r *rand.Rand, dst []float32, mean, offset []float64, noise float64) {
	for j := range dst {
		dst[j] = float32(mean[j] + offset[j] + noise*r.NormFloat64())
	}
}
