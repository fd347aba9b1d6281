#!/usr/bin/env python3
"""Independent reference values for privacy/rdp_test.go.

A_alpha of the sampled Gaussian mechanism is computed here by direct
numerical integration of its definition (Mironov, Talwar, Zhang 2019, Sec. 3):

    A_alpha = integral mu0(z) * ((1-q) + q * exp((2z-1)/(2 sigma^2)))^alpha dz,
    mu0 = N(0, sigma^2),

with scipy.integrate.quad on the log-shifted integrand -- not by the series
the Go code uses -- so agreement checks the series and its fractional
extension. Run with: /usr/bin/python3 rdp_reference.py (numpy, scipy).
"""
import math

import numpy as np
from scipy import integrate


def log_a(q, sigma, alpha):
    def logf(z):
        log_mu0 = -z * z / (2 * sigma**2) - math.log(sigma * math.sqrt(2 * math.pi))
        inner = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * sigma**2))
        return log_mu0 + alpha * inner

    # The integrand is log-concave-ish and unimodal; find its peak on a grid.
    zs = np.linspace(-40 * sigma, 40 * sigma + alpha, 400001)
    lf = np.array([logf(z) for z in zs[::100]])
    m = lf.max()
    zpk = zs[::100][lf.argmax()]
    f = lambda z: math.exp(logf(z) - m)
    pts = sorted({zpk, 0.0, 0.5, zpk - 5 * sigma, zpk + 5 * sigma})
    lo, hi = zs[0], zs[-1]
    total = 0.0
    edges = [lo] + [p for p in pts if lo < p < hi] + [hi]
    for a, b in zip(edges[:-1], edges[1:]):
        v, _ = integrate.quad(f, a, b, limit=500, epsabs=0, epsrel=1e-12)
        total += v
    return m + math.log(total)


def rdp(q, sigma, alpha):
    return log_a(q, sigma, alpha) / (alpha - 1)


def eps_balle(orders, rdps, delta):
    best = math.inf
    for a, r in zip(orders, rdps):
        e = r + math.log1p(-1 / a) - math.log(delta * a) / (a - 1)
        best = min(best, e)
    return max(best, 0.0)


if __name__ == "__main__":
    cases = [
        (0.01, 1.1, 1.5), (0.01, 1.1, 2.75), (0.01, 1.1, 8.0), (0.01, 1.1, 17.5),
        (0.01, 1.1, 32.0), (0.0025, 1.3, 19.0), (0.2, 0.8, 3.3), (0.5, 2.0, 10.5),
        (0.04, 1.5, 3.9), (0.001, 0.7, 6.25),
        # Small sigma and large q, where the fractional series alternates
        # with large terms:
        (0.5, 0.5, 9.75), (0.9, 1.0, 5.5), (0.99, 0.3, 2.5), (0.2, 0.4, 7.25),
        (0.05, 0.6, 9.5), (0.001, 0.3, 3.75), (0.3, 5.0, 1.25),
        # Large orders (integer sums of up to 257 terms, and one fractional):
        (0.01, 2.0, 64.0), (0.004, 1.1, 128.0), (0.1, 4.0, 256.0), (0.01, 0.8, 40.5),
    ]
    for q, s, a in cases:
        print(f"{{{q!r}, {s!r}, {a!r}, {rdp(q, s, a)!r}}},")
