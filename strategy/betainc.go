package strategy

import "github.com/trellis-fl/trellis/internal/special"

// betaCDF is the regularized incomplete beta function I_x(a, b), the CDF at
// x of a Beta(a, b) distribution (special.BetaCDF). AFA blocks a sender
// when betaCDF(0.5; α, β) > 0.95.
func betaCDF(x, a, b float64) float64 { return special.BetaCDF(x, a, b) }
