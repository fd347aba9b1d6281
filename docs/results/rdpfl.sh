#!/usr/bin/env bash
# Regenerates the tables of docs/results/rdpfl.md: runs the four quick
# R-DPFL presets (resuming any that stopped), then prints each table with
# `trellis report --rows/--cols`. About 30 minutes on 2 cores.
#
#   docs/results/rdpfl.sh [OUT]      (default runs/rdpfl)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/rdpfl}
go build -o "$out/trellis" ./cmd/trellis
t="$out/trellis"
for p in table1-clean-lambda table2-attacks table3-ablation table4-lambda-attacks; do
  "$t" sweep "rdpfl/$p-quick" -o "$out/$p" --quiet >/dev/null
  "$t" report "$out/$p" --curve honest_local_acc >/dev/null   # plots of personalized accuracy
done
for m in honest_local_acc honest_global_acc; do
  echo "## Table I ($m)"
  "$t" report "$out/table1-clean-lambda" --rows strategy.options.lambda --cols label --metric $m
  for l in 0.01 1; do
    echo "## Table II, lambda = $l ($m)"
    "$t" report "$out/table2-attacks" --rows adversary.attack --cols label --where strategy.options.lambda=$l --metric $m
    echo "## Table III, lambda = $l ($m)"
    "$t" report "$out/table3-ablation" --rows adversary.attack --cols label --where strategy.options.lambda=$l --metric $m
  done
  for a in sign_flip min_sum; do
    echo "## Table IV, $a ($m)"
    "$t" report "$out/table4-lambda-attacks" --rows strategy.options.lambda --cols label --where adversary.attack=$a --metric $m
  done
done
echo "## delta_max, Table II, lambda = 1"
"$t" report "$out/table2-attacks" --rows adversary.attack --cols label --where strategy.options.lambda=1 --metric delta_max
