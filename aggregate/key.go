package aggregate

import (
	"math"
	"math/bits"
	"slices"
)

// A key packs one coordinate's value and the index of the input it came
// from into a uint64 whose integer order is the order of the values, ties
// broken by input index. Keys of one coordinate are therefore distinct, and
// sorting or selecting them is deterministic whatever the input order.

// key returns the key of value v from input i.
func key(v float32, i int) uint64 {
	b := math.Float32bits(v)
	// Flip negatives entirely and set the sign bit of positives, so that
	// unsigned order is float order (-0 just below +0).
	b ^= uint32(int32(b)>>31) | 0x80000000
	return uint64(b)<<32 | uint64(uint32(i))
}

// keyValue returns the value a key holds.
func keyValue(k uint64) float32 {
	b := uint32(k >> 32)
	b ^= uint32(int32(^b)>>31) | 0x80000000
	return math.Float32frombits(b)
}

// keyInput returns the input index a key holds.
func keyInput(k uint64) int { return int(uint32(k)) }

// selectRank returns the key of rank k among keys (distinct, at least k+1
// of them) and, when there is one, the key of rank k+1. keys is not
// modified; a and b are scratch of len(keys) each.
//
// It is quickselect with a median-of-three pivot whose partition does not
// branch on comparisons (every element is written to both ends of the
// output and the end that keeps it advances), because per-coordinate
// values are in random order and a branch on them mispredicts half the
// time. Past a budget of partitions (inputs crafted against the pivot
// rule) it sorts what is left, so the worst case stays O(n log n).
func selectRank(keys, a, b []uint64, k int) (kth, next uint64, hasNext bool) {
	src, dst, other := keys, a, b
	budget := 2*bits.Len(uint(len(keys))) + 2
	for len(src) > smallWindow && budget > 0 {
		budget--
		n := len(src)
		p := median3(src[0], src[n/2], src[n-1])
		out := dst[:n]
		l, r := 0, n-1
		for _, x := range src {
			out[l] = x
			out[r] = x
			c := b2i(x < p)
			l += c
			r += c - 1
		}
		// out[:l] < p <= out[l:]: p has rank l within src.
		switch {
		case k < l:
			// p is the smallest key above the new window.
			src, next, hasNext = out[:l], p, true
		case k == l:
			kth = p
			right := out[l:]
			if len(right) > 1 {
				nx := uint64(math.MaxUint64)
				for _, x := range right {
					if x > p {
						nx = min(nx, x)
					}
				}
				return kth, nx, true
			}
			return kth, next, hasNext
		default:
			src, k = out[l:], k-l
		}
		dst, other = other, dst
	}
	if len(src) > smallWindow {
		// Out of budget: sort what is left.
		w := dst[:len(src)]
		copy(w, src)
		slices.Sort(w)
		if k+1 < len(w) {
			return w[k], w[k+1], true
		}
		return w[k], next, hasNext
	}
	// A small window: rank every key by counting the keys below it, and
	// keep those of rank k and k+1, all without branching on the keys.
	var nx uint64
	for _, x := range src {
		r := 0
		for _, y := range src {
			r += b2i(y < x)
		}
		kth |= x & -uint64(b2i(r == k))
		nx |= x & -uint64(b2i(r == k+1))
	}
	if k+1 < len(src) {
		return kth, nx, true
	}
	return kth, next, hasNext
}

// smallWindow is the window below which selectRank ranks keys by counting
// (quadratic, branch-free) instead of partitioning further.
const smallWindow = 8

// median3 returns the middle one of three distinct keys.
func median3(x, y, z uint64) uint64 {
	return max(min(x, y), min(max(x, y), z))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
