package wire

import "testing"

// TestVerifyCacheGivesTheSameAnswers: validators sharing a cache accept
// and refuse exactly what validators without one do — a tampered message
// and a forged claim included — and repeated verifications are answered
// from the cache.
func TestVerifyCacheGivesTheSameAnswers(t *testing.T) {
	small, cache := NewVerifyCache(3), NewVerifyCache(0) // forgetting must not change answers either
	good := claimMsg(t, 2, 1)
	forged := claimMsg(t, 2, 1)
	forged.Claim.Neighbors = []uint32{0, 3} // the source did not sign this
	mustSign(t, forged, 1)
	tampered := vectorMsg(t, 1)
	tampered.Payload.Data = append([]float32(nil), tampered.Payload.Data...)
	tampered.Payload.Data[0]++
	for round := range 3 {
		for _, c := range []struct {
			m    *Message
			want Reason
		}{{good, None}, {forged, BadClaimSignature}, {tampered, BadSignature}, {vectorMsg(t, 2), None}} {
			for _, vc := range []*VerifyCache{nil, small, cache} {
				cfg := ValidatorConfig{Self: 0, Directory: testDir, Round: testRound, PayloadLen: testLen, Cache: vc}
				v, err := NewValidator(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := ReasonOf(v.Check(c.m))
				if got != c.want {
					t.Errorf("round %d, cache %p: %v, want %v", round, vc, got, c.want)
				}
			}
		}
	}
	if hits, misses := cache.Stats(); hits == 0 || misses == 0 {
		t.Errorf("cache hits %d, misses %d: want both", hits, misses)
	}
	if !cache.VerifyClaim(&good.Claim, testIDs[2].Public()) || cache.VerifyClaim(&forged.Claim, testIDs[2].Public()) {
		t.Error("VerifyClaim through the cache disagrees with the signatures")
	}
	var none *VerifyCache
	if !none.VerifyClaim(&good.Claim, testIDs[2].Public()) || none.VerifyClaim(nil, testIDs[2].Public()) {
		t.Error("a nil cache must verify directly")
	}
}
