// Package experiment turns an experiment's config (package config: the
// schema, its defaults, decoding and validation) into running nodes and a
// simulator configuration: one node of a deployment (BuildNode), or a
// whole simulation (SetupOf, then Setup.Build; Setup is also the Go API
// without a config). On top of that: runs into run directories, sweeps
// and shards, the memory estimate, and the checks that need the topology
// built (Check, Warnings, FRecordOf).
//
// Choices recorded here:
//   - All nodes start from the same initial parameters, drawn from the
//     experiment seed ("Initialization").
//   - Each client splits its samples 0.7 / 0.1 / 0.2 into train, validation
//     and test (partition.split); the dataset's global test set stays
//     apart. A feature shift (partition.shift: a fixed rotation or pixel
//     permutation per client, "Partitions") applies to all three splits of
//     a client, never to the global test set.
//   - A sweep grid may vary a whole table (strategy = [{ name = "robust",
//     rule = "krum" }, ...]); a run's label is its strategy with its score
//     and options, so those never count as swept keys in reports.
//   - A sweep's shard I of N (Shard) runs the runs k with k mod N = I, in
//     Expand order: the assignment depends on the config alone, so any
//     shard can be rerun alone; MergeSweep writes the summary an unsharded
//     sweep writes, byte for byte, once every run is finished.
//   - Every random stream derives from the seed (internal/seed): partition,
//     initialization, shuffling, attack noise, Byzantine set, drops, keys.
//   - RunToDir, sweeps and shards write their run directories through
//     package rundir, which owns the files and their formats; this package
//     gives it the config's text, hash and resolved f. The audit
//     (AuditWith) gets a run's final models — at the end of the run, from
//     its saved checkpoints, or by re-running it — and package
//     privacy/audit attacks them.
package experiment
