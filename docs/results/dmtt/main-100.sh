#!/usr/bin/env bash
# DMTT at the paper's N: configs/dmtt/main-100.toml on
# MNIST, then the same sweep on Fashion-MNIST, one run per process
# (--shard k/64) in order of priority: seed 42 before seed 43, and within a
# seed DMTT, local-only and FedAvg before the other baselines, so that an
# interrupted call leaves the most useful runs finished. Calling it again
# resumes (finished runs are kept, an interrupted one resumes after its
# last complete round). Once every run of a dataset is done, its summary
# and plots are merged into the output directory.
#
#   docs/results/dmtt/main-100.sh [OUT] [mnist|fmnist]   (default runs/main-100, both)
#
# One simulated run keeps about 1.7 of 2 cores busy (the steps between its
# parallel phases run on one goroutine), so the two datasets may run as two
# calls at once, one each.
set -u
cd "$(dirname "$0")/../../.."
T=${TRELLIS:-trellis}
OUT=${1:-runs/main-100}
mkdir -p "$OUT"
cfg=configs/dmtt/main-100.toml
sed 's/^dataset = "mnist"/dataset = "fashion_mnist"/; s/^name = "dmtt-main-100"/name = "dmtt-main-100-fmnist"/' \
	"$cfg" > "$OUT/main-100-fmnist.toml"
# Expand order: variants sorted (balance dmtt fedavg-dynamic fedavg-static
# krum local murmura ubar), then fractions (0.1 0.3 0.5 0.8), then seeds
# (42 43): run k = 8·variant + 2·fraction + seed.
order=""
for s in 0 1; do
	for v in 1 5 2 3 4 0 7 6; do
		for f in 0 1 2 3; do
			order="$order $((8 * v + 2 * f + s))"
		done
	done
done
only=${2:-}
for c in "$cfg:$OUT/mnist" "$OUT/main-100-fmnist.toml:$OUT/fmnist"; do
	case "$only" in "" | "$(basename "${c#*:}")") ;; *) continue ;; esac
	conf=${c%%:*} dir=${c#*:}
	for k in $order; do
		$T run "$conf" -o "$dir" --shard "$k/64" -q --keep-going >/dev/null 2>>"$OUT/errors.log"
		echo "$(date -u +%H:%M:%S) $dir run $k done" >> "$OUT/progress.log"
	done
	$T run "$conf" -o "$dir" --merge > "$dir.merge.log" 2>&1
done
