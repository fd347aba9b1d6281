// Package experiment turns a description of an experiment (data, partition,
// model, training, topology, adversary, strategy, rounds, seed) into
// running nodes and a simulator configuration. This is its Go API; TOML
// configs, sweeps and run directories build on it.
//
// Choices recorded here (spec/experiments.md):
//   - All nodes start from the same initial parameters, drawn from the
//     experiment seed ("Initialization").
//   - Each client splits its samples 0.7 / 0.1 / 0.2 into train, validation
//     and test; the dataset's global test set stays apart.
//   - Every random stream derives from the seed (internal/seed): partition,
//     initialization, shuffling, attack noise, Byzantine set, drops, keys.
package experiment
