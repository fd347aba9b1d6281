// Package aggregate holds robust aggregation rules: pure functions that
// combine n vectors of one length into one, written for the rules of
// spec/robust-rules.md ("Aggregation rules") and used by strategies.
//
// # Choices
//
//   - Inputs arrive in sender-id order and every sum is accumulated in
//     float64. Mean sums in input order. Median and trimmed mean are
//     bit-identical under any permutation of the inputs: they select each
//     coordinate's middle values by rank, and the trimmed mean sums the kept
//     values either exactly (when their exponents span few enough binades
//     that float64 cannot round) or sorted in ascending order.
//   - Per coordinate, a value and its input index are packed into one uint64
//     key (order-preserving bits of the float32 above, index below), so one
//     integer comparison orders values and breaks ties by input index: the
//     choice of which input "was used" (Selector) is deterministic too.
//   - Every rule remembers its last call for Selector, and Median and
//     TrimmedMean keep their scratch, in the rule value: rules are used
//     through pointers (New returns them) and a rule value serves one
//     goroutine at a time. Once its scratch is sized, a call allocates
//     nothing; Weights returns a new slice.
//   - A rule that cannot run returns an error wrapping one of the Err
//     sentinels and saying why, with n and f (spec: "a rule that cannot run
//     ... returns an error that says why and what n and f were"). Non-finite
//     inputs are an error for now (the wire layer drops them before a
//     strategy sees them); dropping and counting them in the rules is the
//     Byzantine toolbox issue's.
//   - Work is single-threaded: the simulator already runs one node per core.
package aggregate
