package main

import "math"

// legacyStream is the noise generator DP-SGD used before the bulk float32
// ziggurat (privacy/ziggurat.go at 0ee1ee8): Marsaglia and Tsang's
// 128-strip ziggurat in float64, one SplitMix64 word per normal, its fast
// path inline in AddNormal. It is kept here only so that one invocation of
// this benchmark measures the old and the new generator side by side on
// the same load; NewDPSGD takes it through its AddNormal (a vec.Scale
// pass, then the noise), exactly the old step.
type legacyStream struct{ state uint64 }

const (
	legacyR = 3.442619855899
	legacyV = 9.91256303526217e-3
)

var legacyZig = func() (t struct {
	kn [128]uint32
	wn [128]float64
	fn [128]float64
}) {
	const m1 = 1 << 31
	dn, tn := legacyR, legacyR
	q := legacyV / math.Exp(-0.5*dn*dn)
	t.kn[0] = uint32(dn / q * m1)
	t.wn[0] = q / m1
	t.wn[127] = dn / m1
	t.fn[0] = 1
	t.fn[127] = math.Exp(-0.5 * dn * dn)
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * math.Log(legacyV/dn+math.Exp(-0.5*dn*dn)))
		t.kn[i+1] = uint32(dn / tn * m1)
		tn = dn
		t.fn[i] = math.Exp(-0.5 * dn * dn)
		t.wn[i] = dn / m1
	}
	return t
}()

func legacySplitMix(st *uint64) uint64 {
	*st += 0x9e3779b97f4a7c15
	z := *st
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func legacyAbs(j int32) uint32 {
	m := j >> 31
	return uint32(j^m) - uint32(m)
}

func (s *legacyStream) uniform() float64 {
	return (float64(legacySplitMix(&s.state)>>11) + 0.5) * (1.0 / (1 << 53))
}

func (s *legacyStream) ExpFloat64() float64 { return -math.Log(s.uniform()) }

func (s *legacyStream) NormFloat64() float64 {
	w := legacySplitMix(&s.state)
	j, i := int32(w), (w>>32)&127
	if legacyAbs(j) < legacyZig.kn[i] {
		return float64(j) * legacyZig.wn[i]
	}
	return s.slow(j, i)
}

func (s *legacyStream) AddNormal(dst []float32, sd float32) {
	st := s.state
	for k := range dst {
		w := legacySplitMix(&st)
		j, i := int32(w), (w>>32)&127
		x := float64(j) * legacyZig.wn[i]
		if legacyAbs(j) >= legacyZig.kn[i] {
			s.state = st
			x = s.slow(j, i)
			st = s.state
		}
		dst[k] += sd * float32(x)
	}
	s.state = st
}

func (s *legacyStream) slow(j int32, i uint64) float64 {
	for {
		x := float64(j) * legacyZig.wn[i]
		if i == 0 {
			for {
				x = -math.Log(s.uniform()) / legacyR
				y := -math.Log(s.uniform())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return legacyR + x
			}
			return -legacyR - x
		}
		if legacyZig.fn[i]+s.uniform()*(legacyZig.fn[i-1]-legacyZig.fn[i]) < math.Exp(-0.5*x*x) {
			return x
		}
		w := legacySplitMix(&s.state)
		j, i = int32(w), (w>>32)&127
		if legacyAbs(j) < legacyZig.kn[i] {
			return float64(j) * legacyZig.wn[i]
		}
	}
}
