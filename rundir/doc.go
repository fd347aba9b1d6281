// Package rundir is the one reader and writer of a run directory: every
// driver writes its records through it (the simulator's runs and sweeps,
// the cluster's monitor), and every tool reads them back through it (the
// report, the dashboard, a resumed run, a merged sweep, the audit), so
// the file formats live in this package alone.
//
// A run directory holds
//
//	config.toml    the config as resolved (text given by the caller)
//	manifest.json  name, seed, versions and commit (or why none), machine, start and end,
//	               the config's hash, and once finished the record files' SHA-256
//	metrics.jsonl  one line per round per node (NodeLine), reproducible
//	rounds.jsonl   one line per round: the aggregates over nodes (task type
//	               consensus: the error per iteration, metrics.jsonl empty)
//	timings.jsonl  wall-clock seconds per round, never reproducible
//	edges.jsonl    per round, the weight each receiver gave each sender (EdgeRound)
//	steps.jsonl    an asynchronous run's node steps (metrics.Step), its rounds windows of
//	               virtual time (Manifest.Async)
//	summary.csv    the final metrics, written last: it marks a finished run
//	audit.json     the membership-inference audit, when asked
//	models/node-I  the final models, when asked (checkpoints)
//
// Files are written so that an interruption never leaves a half file
// where a reader would take it for a whole one: config, manifest,
// summary and audit through a temporary file synced and renamed into place
// (WriteAtomic); the record files a whole round at a time, node lines
// before the round's aggregate line, so the complete lines of
// rounds.jsonl count the complete rounds. Readers stop at a torn last line;
// since they would stop as quietly at a line cut or edited later, a tool
// that reads a run back checks it first (Verify: every line whole, the
// rounds complete and in order, each round's aggregates those of its node
// lines, the summary the mean of the last rounds, the manifest decoding),
// as the report and trellis serve do.
//
// Resuming (Previous, Spec.Resume): a directory whose manifest holds the
// same config hash continues after its last complete round; the driver
// recomputes the rounds on file and the Writer checks that each one's
// lines are byte for byte those on file before appending the rest, so
// the files end identical to an uninterrupted run's. A finished run is
// kept only when its record files are still those it wrote
// (VerifyFinished: their SHA-256 against the manifest's). A directory
// holding another config's run is refused (ErrOtherConfig).
//
// Checkpoints are encoded by experiment (a node's Snapshot on disk);
// this package only says where they are in a run directory (ModelDir,
// Checkpoints).
//
// The package knows nothing of the config's types: the caller gives the
// config's text, its hash and its resolved f (Manifest.F, as JSON), and
// the run's number of rounds and of final rounds.
package rundir
