// Package config is an experiment as a TOML file describes it: the schema
// (Config and its sections), the defaults (Default, printed by `trellis
// config defaults`), strict decoding (Parse, Load: an unknown key names
// the nearest valid one, a value of the wrong type names the key and the
// line), validation of the file (Validate: every key's range and the
// combinations of keys, all problems at once; a key counts as set when
// the file names it, except in a copy of the defaults; CheckSet for keys
// set with `--set`), sweeps (Expand, Set) and run labels, and resolving a command
// line's argument against the built-in presets (Resolve, package configs).
//
// It also derives what the config's keys mean to the packages below it
// without building a node: the model's nn.Spec, the strategy's and the
// rule's parameters (checked by strategy.New), the attack, the trust
// layer's configuration, the topology (Graph) and how many nodes are
// Byzantine. It imports nothing of the node or its drivers: which nodes are
// Byzantine is adversary.Choose's to say (experiment.ByzantineIDs), the
// claim attack is experiment.ClaimAttack, and config's copies of what
// those packages define (the liar names, the count of the Byzantine set,
// Evaluations against metrics.Evaluated) are held equal by experiment's
// tests.
//
// What needs more than the file stays in package experiment, which builds
// nodes and simulations from a Config: the checks that need the built
// graph against the rule (experiment.Check, experiment.Warnings), the
// data set's own sizes, the DP noise calibration, the memory estimate.
package config
