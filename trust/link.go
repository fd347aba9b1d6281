package trust

// Reliability is one step of the link-reliability EMA (the DMTT paper,
// §III-D, Eq. 1): p <- (1-ρ) p + ρ ack, ack = 1 when the expected
// message from the peer arrived this round. It measures communication
// quality, not honesty.
func Reliability(p, rho float64, ack bool) float64 {
	a := 0.0
	if ack {
		a = 1
	}
	return float64((1-rho)*p) + float64(rho*a) // rounded products: no fused multiply-add
}
