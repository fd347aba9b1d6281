package experiment

import (
	"encoding/json"
	"testing"

	"github.com/trellis-fl/trellis/attack"
	"github.com/trellis-fl/trellis/metrics"
)

// A scheduled attack is the honest run until its start round (metamorphic:
// the same records, bit for bit) and the attacked run after it.
func TestScheduledAttackIsHonestUntilItsRound(t *testing.T) {
	sched, err := attack.NewScheduled(attack.SignFlip{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	base := setup{strategy: fedavg, byzantine: 0.3, rounds: 4, pool: 2000}
	honest := base.run(t)
	base.attack = sched
	later := base.run(t)
	base.attack = attack.SignFlip{}
	always := base.run(t)
	js := func(r *metrics.Round) string {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for r := range 4 {
		same := js(later[r]) == js(honest[r])
		if r < 2 && !same {
			t.Errorf("round %d, before the attack starts: records differ from the honest run", r)
		}
		if r >= 2 && same {
			t.Errorf("round %d, attack started: records equal the honest run's", r)
		}
	}
	if js(later[0]) == js(always[0]) {
		t.Error("round 0: the scheduled run equals the always-attacked one; the test cannot tell them apart")
	}
}
