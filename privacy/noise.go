package privacy

// Source draws the noise a mechanism adds: NewSeededSource for simulation,
// NewCryptoSource for deployment (ziggurat.go); *rand.Rand from
// math/rand/v2 satisfies it too. Gaussian noise is NormFloat64; Laplace
// noise is the difference of two ExpFloat64 draws.
type Source interface {
	// NormFloat64 is a standard normal draw, N(0, 1).
	NormFloat64() float64
	// ExpFloat64 is a standard exponential draw (rate 1).
	ExpFloat64() float64
}
