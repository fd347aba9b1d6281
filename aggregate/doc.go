// Package aggregate holds robust aggregation rules and pre-aggregators:
// pure functions that combine n vectors of one length into one, written for
// (the survey, Table 7, "Pre-aggregators") and used by
// strategies.
//
// # Rules and names
//
// mean, median, trimmed_mean, krum, multi_krum, geometric_median,
// centered_clipping, bulyan, msr, ios (iterative outlier scissor) and rtc
// (remove-then-clip) are Rules (Names); the
// pre-aggregators bucketing, nnm, clip and arc (PreNames) compose in front
// of any rule through Chain ("nnm+krum"). New(name, f) and NewWith(name,
// Params) build them from config names and parameters, rejecting unknown
// names and parameters that are out of range or do not apply.
// CenteredClipping, MSR, IOS and RTC are also Centered: AggregateAround
// uses the node's own vector as the start or reference. Centerpoint (the
// Tukey-depth centerpoint, d <= 2) is a type but not a config name:
// NewWith refuses "centerpoint" with the reason (it has no usable form on
// models). safe_area (SafeArea: a point in the intersection of the hulls
// of every n − f inputs, by linear programming), centerpoint_lp
// (CenterpointLP: Tukey depth ⌈n/(d+1)⌉ by the same programs, any d) and
// tverberg (TverbergPoint: a point shared by the hulls of a partition into
// f + 1 parts, exact search) and radon (RadonPoint: the iterated Radon
// point, an approximate Tverberg partition into 2^⌈log₂(f+1)⌉ parts of
// (d+2)^⌈log₂(f+1)⌉ inputs, no search) are config names for
// low-dimensional vectors only (LowDimNames, not Names): they refuse
// d > SafeAreaMaxDim.
//
// # Rule strings
//
// ParseSpec is the one parser of a rule string ("nnm+krum"): the rule, its
// pre-aggregators, whether it has an f (Spec.TakesF), whether a node runs
// it around its own vector (Spec.AroundOwn: msr, ios, rtc), and the
// largest f it tolerates with n inputs (Spec.MaxF, found by asking the
// rule). Nothing outside this package splits a rule string. Auto is a rule
// whose f is resolved at every aggregation from a fraction of the inputs
// (FFor): f = "auto" from the declared Byzantine fraction, rounded up, or a
// strategy's fraction rounded to nearest.
//
// # Choices
//
//   - Inputs arrive in sender-id order and every sum is accumulated in
//     float64. The mean sums in input order. Every other rule is
//     bit-identical under any permutation of its inputs (bucketing, whose
//     seeded permutation applies to the input order, excepted): median,
//     trimmed mean, MSR and Bulyan select values by rank and sum kept
//     values exactly or in ascending order; the safe area puts its inputs
//     in lexicographic order before its linear programs; Krum, Multi-Krum, Bulyan, NNM,
//     the geometric median and centered clipping order inputs by a score
//     (distance), ties broken by the inputs' contents, then index, and sum
//     in that order.
//   - Per coordinate, a value and its input index are packed into one uint64
//     key (order-preserving bits of the float32 above, index below), so one
//     integer comparison orders values and breaks ties by input index: the
//     choice of which input "was used" (Selector) is deterministic too.
//   - Pairwise distances (Krum, Multi-Krum, Bulyan, NNM) come from one
//     Gram-matrix product through internal/gemm: float32 chunks of 256
//     coordinates, added in float64, each input's chunk scaled by a power
//     of two when its magnitude would overflow or underflow float32, and a
//     second product around a central input when the inputs are clustered
//     far from the origin (see gram for the error bounds). The iterative rules (geometric median,
//     centered clipping) make one float64 pass over the inputs per
//     iteration, measuring from their starting point (see around).
//   - Non-finite input vectors are dropped before aggregation and counted
//     (Dropper), as defense in depth behind the wire layer; a rule whose
//     remaining inputs are too few (or none) returns an error. f stays as
//     configured: a dropped input is not assumed to be one of the f faulty
//     ones. Dropped inputs get weight 0 (Selector).
//   - Every rule remembers its last call for Selector and keeps its scratch
//     in the rule value: rules are used through pointers (New returns
//     them) and a rule value serves one goroutine at a time. Once its
//     scratch is sized, a single-threaded call of a rule allocates nothing;
//     Weights returns a new slice.
//   - A rule that cannot run returns an error wrapping one of the Err
//     sentinels and saying why, with n and f (spec: "a rule that cannot run
//     ... returns an error that says why and what n and f were"). No input
//     vectors (empty, ragged, non-finite, at float32's limits) make a rule
//     panic, and a rule that returns no error writes finite values.
//   - Work is single-threaded by default (the simulator already runs one
//     node per core). A rule's Threads field (Params.Threads) splits large
//     inputs by coordinate blocks across goroutines; the blocks are fixed by
//     the vector length and partial sums are added in block order, so the
//     output is bit-identical for every thread count.
//   - Spec.Scratch is what a rule string's rules keep between aggregations
//     for n inputs of a given length, each rule counting its own next to
//     its allocations (TestScratchMatchesTheHeap holds them to the heap);
//     the memory estimate of a run asks it.
//
// # Definitions checked against the papers
//
//   - rtc steps by (1/(n+1))·Σ over the kept inputs' clipped differences,
//     n the number of inputs: the remove-then-clip paper's Eq. 9 (Yang and
//     Ghaderi, AAAI 2024) puts a removed neighbour's weight w_ij on the
//     node's own vector, so removal shrinks the step instead of handing
//     the removed weight to the kept inputs (RTC).
//   - arc clips the k = ⌊2·(f/n)·(n − f)⌋ largest inputs to the (k+1)-th
//     largest norm, the ARC paper's Algorithm 2 (Allouah et al., ICLR
//     2025), not the f largest (AdaptiveClip).
//   - centerpoint searches the exact region of the promised depth, built
//     in rational arithmetic from the half-planes through two inputs, for
//     a float32 point, and refuses only when that region holds none
//     (Centerpoint).
package aggregate
