package adversary

import (
	"fmt"
	"math"
	"slices"

	"github.com/trellis-fl/trellis/internal/seed"
)

// Choose returns the Byzantine nodes of an n-node run, sorted, each once:
// the one place a run's Byzantine set is computed (the simulator, every
// node process, the monitor and the config's checks all call it).
//
// ids, when non-empty, are the set: each must be in [0, n), a repeated id
// counts once, and fraction must be 0 (naming the nodes and giving their
// share are two ways of saying the same thing; both at once is refused).
// Otherwise fraction, in [0, 1), picks k = max(1, round(n·fraction))
// nodes (none when fraction is 0): the first k of a permutation of
// [0, n) drawn from the seed's Byzantine stream (a random placement, as
// in DMTT's experiments, the same for every driver of the run).
func Choose(n int, ids []int, fraction float64, s uint64) ([]int, error) {
	if !(fraction >= 0 && fraction < 1) {
		return nil, fmt.Errorf("byzantine fraction %v outside [0, 1)", fraction)
	}
	if len(ids) > 0 {
		if fraction != 0 {
			return nil, fmt.Errorf("byzantine nodes given both by id %v and by fraction %v: give one", ids, fraction)
		}
		for _, b := range ids {
			if b < 0 || b >= n {
				return nil, fmt.Errorf("byzantine node %d outside [0, %d)", b, n)
			}
		}
		return slices.Compact(slices.Sorted(slices.Values(ids))), nil
	}
	if fraction == 0 {
		return nil, nil
	}
	k := max(1, int(math.Round(float64(n)*fraction)))
	set := seed.Stream(s, seed.Byzantine).Perm(n)[:k]
	slices.Sort(set)
	return set, nil
}
