// Package metrics holds the records every driver emits — one per node and
// one per round, with the ground truth (who is Byzantine) only a driver
// knows — their summaries (delta_max, honest accuracy, trust diagnostics,
// the honest nodes' ε under DP), and the sinks records flow to, fanned out
// asynchronously so that a slow viewer never stalls a round.
//
// A driver assembles a Round from its nodes' node.Ready values and its own
// knowledge, calls Summarize, and hands it to a Sink. Records are never
// modified after they are handed over, so sinks may keep them.
package metrics
