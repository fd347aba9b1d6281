#!/usr/bin/env python3
"""Robust aggregation rules written in PyTorch the way common libraries
write them (torch.median(dim=0), sort-based trimmed mean, torch.cdist-based
Krum, Weiszfeld with tensor ops), timed on n vectors of d float32. The
PyTorch side of bench/rules_compare.sh; the Go side is BenchmarkRules in
package aggregate, with the same definitions (docs/methods/toolbox.md) and
f = (n - 1) // 10.

    python3 bench/torch_rules.py --threads 2 [--n 100] [--d 1000000] [--reps 3] [--rules median,krum]

Prints one line per rule: its name and the best time in seconds over
--reps runs after one warm-up run. krum_gram is an extra: Krum from one
Gram matrix x @ x.T (not how libraries write it), for reference.
"""
import argparse
import time

import torch


def mean(x, f):
    return x.mean(dim=0)


def median(x, f):
    # The lower median for even n, as torch defines it.
    return torch.median(x, dim=0).values


def trimmed_mean(x, f):
    n = x.shape[0]
    s = torch.sort(x, dim=0).values
    return s[f:n - f].mean(dim=0)


def krum_scores(x, f):
    n = x.shape[0]
    d2 = torch.cdist(x, x) ** 2
    # n - f - 2 nearest others, plus the zero distance to itself.
    return torch.topk(d2, n - f - 1, dim=1, largest=False).values.sum(dim=1)


def krum(x, f):
    return x[torch.argmin(krum_scores(x, f))]


def krum_gram(x, f):
    # Not how libraries write it: Krum from one Gram matrix x @ x.T, norms
    # from its diagonal, as trellis does; the strongest PyTorch Krum here.
    n = x.shape[0]
    g = x @ x.T
    sq = torch.diagonal(g)
    d2 = torch.clamp(sq[:, None] + sq[None, :] - 2 * g, min=0)
    scores = torch.topk(d2, n - f - 1, dim=1, largest=False).values.sum(dim=1)
    return x[torch.argmin(scores)]


def multi_krum(x, f):
    m = x.shape[0] - f
    idx = torch.topk(krum_scores(x, f), m, largest=False).indices
    return x[idx].mean(dim=0)


def geometric_median(x, f, nu=1e-6, tol=1e-6, iters=100):
    z = torch.median(x, dim=0).values
    for _ in range(iters):
        beta = torch.clamp(torch.linalg.vector_norm(x - z, dim=1), min=nu)
        w = 1 / beta
        zn = (w[:, None] * x).sum(dim=0) / w.sum()
        change = torch.linalg.vector_norm(zn - z)
        norm = torch.linalg.vector_norm(z)
        z = zn
        if change <= tol * norm:
            break
    return z


def centered_clipping(x, f, iters=3):
    # From the coordinate-wise median, radius the (f+1)-th largest distance
    # (the Go rule's defaults).
    n = x.shape[0]
    v = torch.median(x, dim=0).values
    for _ in range(iters):
        diff = x - v
        dist = torch.linalg.vector_norm(diff, dim=1)
        tau = torch.sort(dist).values[n - 1 - f]
        c = torch.clamp(tau / torch.clamp(dist, min=1e-30), max=1.0)
        v = v + (c[:, None] * diff).sum(dim=0) / n
    return v


def bulyan(x, f):
    n = x.shape[0]
    theta, beta = n - 2 * f, n - 4 * f
    d2 = torch.cdist(x, x) ** 2
    rest = list(range(n))
    picked = []
    for _ in range(theta):
        sub = d2[rest][:, rest]
        k = max(0, len(rest) - f - 2)
        scores = torch.topk(sub, k + 1, dim=1, largest=False).values.sum(dim=1)
        i = rest[int(torch.argmin(scores))]
        picked.append(i)
        rest.remove(i)
    sel = x[picked]
    med = torch.median(sel, dim=0).values
    idx = torch.argsort(torch.abs(sel - med), dim=0)[:beta]
    return torch.gather(sel, 0, idx).mean(dim=0)


RULES = {
    "mean": mean,
    "median": median,
    "trimmed_mean": trimmed_mean,
    "krum": krum,
    "krum_gram": krum_gram,
    "multi_krum": multi_krum,
    "geometric_median": geometric_median,
    "centered_clipping": centered_clipping,
    "bulyan": bulyan,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--d", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rules", default=",".join(RULES))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    f = (a.n - 1) // 10
    x = torch.randn(a.n, a.d, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    with torch.no_grad():
        for name in a.rules.split(","):
            fn = RULES[name]
            fn(x, f)
            best = float("inf")
            for _ in range(a.reps):
                t0 = time.perf_counter()
                fn(x, f)
                best = min(best, time.perf_counter() - t0)
            print(name, f"{best:.6f}", flush=True)


if __name__ == "__main__":
    main()
