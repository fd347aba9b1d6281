#!/usr/bin/env bash
# Times trellis's robust aggregation rules (BenchmarkRules in package
# aggregate) and the same rules written in PyTorch the way common libraries
# write them (bench/torch_rules.py: torch.median(dim=0), sort-based trimmed
# mean, torch.cdist-based Krum, Weiszfeld with tensor ops), side by side in
# one invocation, on the same cores, for n = 100 vectors of d = 1,000,000
# float32 with f = 9, and prints both timings and the ratio.
#
#   bench/rules_compare.sh [CORES] [REPS]     (defaults: 2, 3)
#
# trellis runs with GOMAXPROCS=CORES and Threads=CORES; PyTorch with
# torch.set_num_threads(CORES) and OPENBLAS_NUM_THREADS=1 when CORES > 1
# (OpenBLAS threads under torch's OpenMP threads would oversubscribe the
# cores). trellis reports the mean of REPS runs (go test -benchtime REPSx)
# after a warm-up call, PyTorch the best of REPS runs after a warm-up run
# (which favors PyTorch); the two sides run one after the other, never at
# the same time. The inputs are standard normal on both sides (different
# generators). The extra row "krum (PyTorch Gram)" times Krum written in
# PyTorch from one Gram matrix x @ x.T, as trellis computes it, rather than
# with torch.cdist.
#
# Needs Debian's python3-torch (apt-get install python3-torch
# libopenblas0-pthread) and about 3 GB of free memory. Run it on an
# otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cores=${1:-2}
reps=${2:-3}
rules=mean,median,trimmed_mean,krum,multi_krum,geometric_median,centered_clipping,bulyan

. bench/peer_env.sh

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; budget: $cores cores"
echo "go: $(go version | cut -d' ' -f3); torch: $("$py" -c 'import torch; print(torch.__version__)')"
echo "peer: $peer_env_note"
echo "n = 100, d = 1,000,000 float32, f = 9; trellis: mean of $reps runs, PyTorch: best of $reps"
echo

results=$(mktemp)
trap 'rm -f "$results"' EXIT

# trellis: one go test run over the rules at threads=CORES.
pattern="^BenchmarkRules\$/^($(echo "$rules" | tr , '|'))\$/n=100/d=1000000/threads=$cores\$"
GOMAXPROCS=$cores go test ./aggregate -run '^$' -bench "$pattern" -benchtime "${reps}x" -count 1 |
	awk '/^BenchmarkRules\// {
		split($1, p, "/")
		for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") v = $i
		print "go", p[2], v / 1e9
	}' >>"$results"

# PyTorch.
OMP_NUM_THREADS=$cores OPENBLAS_NUM_THREADS=1 "$py" bench/torch_rules.py --threads "$cores" --reps "$reps" --rules "$rules,krum_gram" |
	awk 'NF == 2 { print "torch", $1, $2 }' >>"$results"

awk -v rules="$rules" '
	{ t[$1, $2] = $3 }
	END {
		printf "| rule | trellis (s) | PyTorch (s) | PyTorch / trellis |\n|---|---:|---:|---:|\n"
		n = split(rules, r, ",")
		for (i = 1; i <= n; i++) {
			g = t["go", r[i]]; p = t["torch", r[i]]
			ratio = (g > 0 && p > 0) ? sprintf("%.1fx", p / g) : "n/a"
			printf "| %s | %s | %s | %s |\n", r[i], g == "" ? "n/a" : sprintf("%.3f", g), p == "" ? "n/a" : sprintf("%.3f", p), ratio
			if (r[i] == "krum" && t["torch", "krum_gram"] != "") {
				p = t["torch", "krum_gram"]
				printf "| krum (PyTorch Gram) | %.3f | %.3f | %.1fx |\n", g, p, p / g
			}
		}
	}' "$results"
