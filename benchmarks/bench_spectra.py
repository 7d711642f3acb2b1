"""Benchmark: alpha_c(kappa) vectorised vs per-kappa quad + brentq; mp_product pdf/cdf/ppf.

Run: ``python benchmarks/bench_spectra.py`` (prints timings and ratios measured in this run).
"""
from __future__ import annotations

import math
import time

import numpy as np


def _best(fn, repeat=3):
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    from hcizz import mp_product
    from replica.rank_capacity import alpha_c, alpha_c_quad

    rng = np.random.default_rng(0)
    kappa = rng.uniform(1e-6, 1.0, 10 ** 6)
    alpha_c(kappa[:10])  # warm-up (builds the Chebyshev start once)
    t_vec = _best(lambda: alpha_c(kappa))
    print(f"alpha_c on 1e6 kappa (closed form, vectorised): {t_vec:.3f} s  "
          f"({t_vec / 1e6 * 1e9:.0f} ns/kappa; target < 0.5 s: {'met' if t_vec < 0.5 else 'NOT met'})")
    n_quad = 200
    ks = kappa[:n_quad]
    t0 = time.perf_counter()
    ref = np.array([alpha_c_quad(k) for k in ks])
    t_quad = (time.perf_counter() - t0) / n_quad
    err = np.max(np.abs(alpha_c(ks) / ref - 1))
    print(f"per-kappa quad + brentq: {t_quad * 1e6:.0f} us/kappa (measured on {n_quad}); "
          f"speed-up of the vectorised closed form: {t_quad / (t_vec / 1e6):.0f}x; max rel. diff {err:.1e}")
    for k in (1.0, 0.5, 0.25):
        t_build = _best(lambda: mp_product(k), repeat=2)
        law = mp_product(k)
        xm, xp = law.edges
        x = np.linspace(xm, xp, 10 ** 5)
        t_pdf = _best(lambda: law.pdf(x))
        t_cdf = _best(lambda: law.cdf(x))
        u = rng.random(10 ** 5)
        t_ppf = _best(lambda: law.ppf(u), repeat=1)
        print(f"mp_product({k}): build {t_build * 1e3:.0f} ms; on 1e5 points pdf {t_pdf * 1e3:.1f} ms, "
              f"cdf {t_cdf * 1e3:.0f} ms, ppf {t_ppf * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
