#!/usr/bin/env python3
"""Tabulates the audits of a sweep for docs/results/privacy.md.

    docs/results/privacy_audit.py runs/audit     # trellis audit's audit.json files
    docs/results/privacy_audit.py runs/lira      # [privacy.audit] attack = "lira"

One row per variant (the sweep directory's variant=NAME), over its seeds
and honest nodes: per-node AUC mean ± std (min–max) and the largest
certified ε lower bound of each attack, and the pooled attack (every honest
node's samples in one ROC) averaged over seeds: AUC, TPR at 1 % and 0.1 %
FPR. Honest local accuracy is the run's final_honest_local_acc.
"""
import csv
import glob
import json
import os
import statistics
import sys


def mean_std(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def main(root):
    runs = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "audit.json"), recursive=True)):
        variant = next((p.split("=", 1)[1] for p in path.split(os.sep) if p.startswith("variant=")), "run")
        with open(path) as f:
            rep = json.load(f)
        with open(os.path.join(os.path.dirname(path), "summary.csv")) as f:
            acc = float(next(csv.DictReader(f))["final_honest_local_acc"])
        runs.setdefault(variant, []).append((rep, acc))
    attacks = [("loss threshold", None, "threshold"), ("reference model", "reference", None), ("LiRA", "lira", "lira")]
    head = "| variant | accountant ε | honest local acc. |"
    for name, node_key, pool_key in attacks:
        if not any(n.get(node_key) if node_key else True for reps in runs.values() for rep, _ in reps for n in rep["nodes"]):
            continue
        head += f" {name}: AUC per node | certified ε ≥ (max) |"
        if pool_key:
            head += f" pooled AUC | pooled TPR at 1 % FPR | pooled TPR at 0.1 % FPR |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for variant, reps in runs.items():
        accts = [n["accountant_epsilon"] for rep, _ in reps for n in rep["nodes"] if "accountant_epsilon" in n]
        acct = f"{max(accts):.2f}" if accts else "∞"
        m, s = mean_std([a for _, a in reps])
        row = f"| {variant} | {acct} | {m:.3f} ± {s:.3f} |"
        for name, node_key, pool_key in attacks:
            res = [n.get(node_key) if node_key else n for rep, _ in reps for n in rep["nodes"]]
            res = [r for r in res if r]
            if not res:
                continue
            aucs = [r["AUC"] for r in res]
            m, s = mean_std(aucs)
            row += f" {m:.3f} ± {s:.3f} ({min(aucs):.3f}–{max(aucs):.3f}) | {max(r['EpsilonLower'] for r in res):.2f} |"
            if pool_key:
                pooled = [rep["pooled"][pool_key] for rep, _ in reps if rep["pooled"].get(pool_key)]
                for k in ("AUC", "TPRAt1FPR", "TPRAt01FPR"):
                    m, s = mean_std([p[k] for p in pooled])
                    row += f" {m:.3f} ± {s:.3f} |" if k == "AUC" else f" {m:.4f} ± {s:.4f} |"
        print(row)
    violations = sum(n.get("violation", False) for reps in runs.values() for rep, _ in reps for n in rep["nodes"])
    violations += sum(rep["pooled"].get("violation", False) for reps in runs.values() for rep, _ in reps)
    print(f"\n{sum(len(r) for r in runs.values())} runs; certified lower bounds above the accountant's ε: {violations}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/audit")
