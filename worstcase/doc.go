// Package worstcase searches, for each defence of a config's
// [worst_case] section, the attack that hurts its honest nodes most on
// the config's graph, and reports the worst outcome found.
//
// The attack space of a defence is every attack of the catalogue it can
// run with (the topology liars too where it has a trust layer), each
// discrete choice of an attack as its own setting (ALIE's sign, min-max's
// direction, Gaussian noise added or alone), each continuous parameter
// over a meaningful range (space.go), and four placements of the
// Byzantine nodes (placement.go): random, highest degree, around the
// honest node of lowest degree, and the placement that makes the rules'
// robustness coefficient κ largest over the honest neighbourhoods.
//
// The search (Space.Plan) is a coarse grid over all of it on short runs
// (worst_case.search_rounds); then, for the worst families, a
// golden-section search of the continuous parameter in the bracket of
// grid values around the family's worst grid point, at that point's
// placement, until the bracket is narrower than worst_case.tolerance of
// the parameter's range; then the worst point of each of the
// worst_case.confirm worst families, and the run without attack, are
// confirmed with the full rounds and worst_case.confirm_seeds. The
// objective is the honest nodes' mean final accuracy — local for a
// personalized method (strategy.Row.Personalized), global otherwise —
// with δ_max and the worst honest node's accuracy beside it.
//
// Every evaluation is a normal run directory (experiment.RunToDirWith),
// named by the point it evaluates, so a search resumes after an
// interrupt (finished runs are kept, an interrupted one continues after
// its last round) and a point two phases share runs once.
//
// Sharding. A golden-section step depends on the step before, so the
// search runs in stages: stage 0 is the whole grid (and the runs without
// attack), each later stage one step of every refinement still open,
// the last the confirmations. A stage's runs are a function of the
// outcomes of earlier stages alone; Plan lists them in a fixed order and
// shard I of N runs those at positions k with k mod N = I, exactly as a
// sharded sweep splits its runs. A shard that finishes its share goes on
// to the next stage only when the other shards' runs of the stage are
// finished in its output directory (shards sharing one directory, the
// usual Slurm or Kubernetes set-up); otherwise it stops, and running the
// shards again (after Merge, when they wrote to directories of their own)
// continues with the next stage. The result depends on the runs alone,
// never on which process ran them, so a sharded search gives the same
// tables as an unsharded one.
package worstcase
