#!/usr/bin/env bash
# DMTT's appendix check that the deployed runtime
# reproduces the simulator's curves. DMTT and FedAvg-dynamic
# (bench/cluster/*-10.toml: 10 nodes, the mobility graph, Gaussian σ = 10
# attackers, idle, DMTT with the omission liar), 10 / 30 / 50 % Byzantine,
# seeds 1 and 2, 20 rounds; each config once in the simulator (`trellis
# run`) and once deployed (`trellis launch --mode wallclock --delta 10s`:
# a monitor and one process per node over IPC, rounds on the wall-clock
# epoch, fresh keys). PAR deployed runs at a time (default 2: a wall-clock
# run mostly waits for its windows), the simulator runs one after another
# beside them, all under nice. Then bench/cluster_appendix draws the
# overlays and the table into docs/results/cluster.md.
#
#   bench/cluster_appendix.sh          # OUT=runs/cluster-appendix PAR=2
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-runs/cluster-appendix}
par=${PAR:-2}
delta=${DELTA:-10s}
mkdir -p "$out/configs" "$out/sim" "$out/cluster"
bin="$out/trellis"
go build -o "$bin" ./cmd/trellis
names=()
for strat in dmtt fedavg-dynamic; do
	for f in 0.1 0.3 0.5; do
		for seed in 1 2; do
			name="$strat-f${f#0.}-s$seed"
			sed -e "0,/^name = .*/s//name = \"$name\"/" -e "s/^rounds = .*/rounds = 20/" \
				-e "s/^final_rounds = .*/final_rounds = 1/" -e "s/^seed = .*/seed = $seed/" \
				-e "s/^fraction = .*/fraction = $f/" "bench/cluster/$strat-10.toml" > "$out/configs/$name.toml"
			names+=("$name")
		done
	done
done

sims() {
	for name in "${names[@]}"; do
		[ -f "$out/sim/$name/summary.csv" ] && continue
		nice "$bin" run "$out/configs/$name.toml" -o "$out/sim/$name" -q
		echo "sim $name done $(date -u +%T)"
	done
}
deployed() {
	local name=$1
	[ -f "$out/cluster/$name/summary.csv" ] && return 0
	rm -rf "$out/cluster/$name"
	nice "$bin" launch "$out/configs/$name.toml" -o "$out/cluster/$name" -q --mode wallclock --delta "$delta" --start-delay 30s
	echo "cluster $name done $(date -u +%T)"
}
sims &
simpid=$!
running=0
for name in "${names[@]}"; do
	while [ "$running" -ge "$par" ]; do
		done_pid=
		wait -n -p done_pid || true
		[ "$done_pid" = "$simpid" ] || running=$((running - 1))
	done
	deployed "$name" &
	running=$((running + 1))
done
wait
go run ./bench/cluster_appendix "$out" docs/results
