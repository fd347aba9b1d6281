#!/usr/bin/env python3
"""Tables of docs/results/dmtt.md's 100-node section from the run
directories of docs/results/dmtt/main-100.sh, finished or not: per seed,
final honest local accuracy (mean of the last `final_rounds` rounds, as
trellis summarises) ± the spread across honest nodes (the same mean of
each round's std), and the largest δ_max in any round. Missing runs are
'—'.

    docs/results/dmtt/main100_table.py runs/main-100/mnist [FINAL_ROUNDS]
"""
import json
import os
import sys

root = sys.argv[1]
final = int(sys.argv[2]) if len(sys.argv) > 2 else 3
methods = ["dmtt", "local", "fedavg-static", "fedavg-dynamic", "krum", "balance", "ubar", "murmura"]
fractions = ["0.1", "0.3", "0.5", "0.8"]


def run(method, fraction, seed):
    d = os.path.join(root, f"variant={method}", f"adversary.fraction={fraction}", f"seed-{seed}")
    if not os.path.exists(os.path.join(d, "summary.csv")):
        return None
    rounds = [json.loads(l) for l in open(os.path.join(d, "rounds.jsonl"))]
    last = [r for r in rounds if r.get("evaluated")][-final:]
    acc = sum(r["honest_local_acc"] for r in last) / len(last)
    std = sum(r["honest_local_acc_std"] for r in last) / len(last)
    dmax = max(r.get("delta_max", 0) for r in rounds)
    return acc, std, dmax


for seed in (42, 43):
    rows, deltas = [], []
    for m in methods:
        cells, dm = [], []
        for f in fractions:
            r = run(m, f, seed)
            cells.append("—" if r is None else f"{r[0]:.3f} ± {r[1]:.3f}")
            dm.append("—" if r is None else f"{r[2]:.2f}")
        if any(c != "—" for c in cells):
            rows.append(f"| {m} | " + " | ".join(cells) + " |")
            deltas.append(f"{m}: " + "/".join(dm))
    if not rows:
        continue
    print(f"seed {seed}, final honest local accuracy ± spread across honest nodes (last {final} rounds):\n")
    print("| method | 10 % | 30 % | 50 % | 80 % |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    print("\nLargest δ_max in any round (10 / 30 / 50 / 80 %): " + "; ".join(deltas) + ".\n")
