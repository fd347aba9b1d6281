// Package data holds datasets as one shared, read-only copy of float32 rows
// and labels, loads them from their standard on-disk formats (MNIST embedded),
// and splits them reproducibly across federated clients as index lists.
//
// Recorded choices (datasets and partitions):
//
//   - Memory: a Dataset is the only copy of the samples; partitions, client
//     splits and batchers hold int32 indices. Client splits are windows of the
//     partition's lists, which SplitClients reorders in place. Evaluation
//     batchers (no shuffling) share their list instead of copying it
//     (NewEvalBatcher), and the first n samples of a set need no list
//     (NewPrefixBatcher), so a million nodes evaluating on one global test
//     set hold one list of it, or none.
//   - Sampled partitions: each client draws its own m distinct samples
//     (Floyd's algorithm, one stream per client), clients may share
//     samples, and there may be more clients than samples; the exact
//     partitions (iid, dirichlet, shards, natural) give every sample to
//     one client.
//   - Rotating evaluation samples: a window of one shuffled order of the
//     test set (EvalOrder) at an offset drawn per (seed, node, round):
//     no per-node list, the same samples however often a round evaluates.
//   - One copy for many processes: WriteShared writes a decoded TrainTest
//     (with checksums, each client's samples stored together when given an
//     order; Dataset.Rows maps a sample to its row) and OpenShared maps it
//     read-only, so the node processes of a launch on one machine share
//     the samples in the page cache and each maps only the pages it reads.
//   - A node's shard: a node on its own device holds every sample's label
//     and group (the partition is computed from them alike everywhere) and
//     the values of its own samples only (Dataset.Only; Row refuses any
//     other, naming it). The MNIST-family Shard loaders decode the labels,
//     ask a Selector for the samples, and stream the images keeping those
//     samples' pixels as bytes (Dataset.Codes: the same float32 values
//     through a 256-entry table, a quarter of the memory); other formats
//     decode whole, then Shard compacts.
//   - Normalization, applied by the loaders and recorded in Dataset.Norm:
//     MNIST x/255 then (x-0.1307)/0.3081; Fashion-MNIST x/255 then
//     (x-0.2860)/0.3530 (its training set's statistics); CIFAR-10 x/255 then
//     per channel (x-mean)/std with mean (0.4914, 0.4822, 0.4465) and std
//     (0.2470, 0.2435, 0.2616); UCI HAR as provided (already in [-1, 1]);
//     PAMAP2 NaN → subject column mean, then a global z-score per channel;
//     FEMNIST (LEAF) as given, in [0, 1] with a white (1.0) background; CSV
//     as given, or a per-column z-score on request.
//   - Randomness: every function takes a seed; streams for each purpose and
//     client derive from it by SplitMix64 into a PCG (math/rand/v2). No global
//     RNG, no map iteration where order matters.
//   - Global test sets (MNIST's t10k, CIFAR's test_batch, HAR's test split) stay
//     in TrainTest.Test, apart from every partition; HoldOut makes one for
//     datasets without.
//   - Feature shift (rotation, permutation) is a per-client Transform applied
//     when a batch is filled, so the shared copy is never duplicated.
//   - Errors: a missing dataset is a *NotFoundError listing the paths tried and
//     how to get the files; a corrupt file is a *FormatError naming the file,
//     the offset or line, and what was wrong. No input makes a decoder panic
//     (fuzz targets in fuzz_test.go).
package data
