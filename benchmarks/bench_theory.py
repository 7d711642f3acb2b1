"""Benchmark of the replica-theory numerics (prints ratios measured in this run).

* ``alpha_c_finite`` at p = 1e3, 1e6, 1e15 at 1e-3 relative standard error
  (target: < 2 s each), and its speed-up over the naive method that draws all p
  normals per sample and takes a plain mean (where the naive one is feasible);
* ``energy_G`` at p = 1e6.

Run: ``python benchmarks/bench_theory.py`` (single thread recommended:
``OMP_NUM_THREADS=1``).
"""
from __future__ import annotations

import math
import time

import numpy as np

from replica import alpha_c_finite, energy_G
from replica.finite_capacity import v_p_from_gaps

TARGET_REL = 1e-3


def _naive_v(p, samples, rng, block=200):
    """Naive: all p normals per sample, full sort, plain mean."""
    out = []
    for s0 in range(0, samples, block):
        n = min(block, samples - s0)
        eta = rng.standard_normal((n, p))
        g = -np.sort(-eta[:, 1:], axis=1) - eta[:, :1]
        out.append(v_p_from_gaps(g, complete=True)[0])
    return np.concatenate(out)


def _timed(f):
    t0 = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t0


def main():
    print(f"alpha_c_finite at {TARGET_REL:g} relative standard error")
    for p in [10**3, 10**6, 10**15]:
        # pilot run to size the sample, then the timed run
        pilot = alpha_c_finite(p, samples=2000, rng=1)
        n = max(2000, int(math.ceil(2000 * (pilot.rel_stderr / TARGET_REL) ** 2 * 1.1)))
        est, dt = _timed(lambda: alpha_c_finite(p, samples=n, rng=2))
        line = (f"  p={p:.0e}: alpha_c={est.value:.6f} ± {est.stderr:.1e} "
                f"(rel {est.rel_stderr:.1e}, {n} samples) in {dt:.3f} s "
                f"[{'OK' if dt < 2 else 'SLOW'} vs 2 s target]")
        # naive: all p normals, plain mean; samples needed for the same stderr
        if p <= 10**3:
            m = 2000
            V, dtn = _timed(lambda: _naive_v(p, m, np.random.default_rng(3)))
            rel = V.std(ddof=1) / math.sqrt(m) / V.mean()
            need = m * (rel / TARGET_REL) ** 2
            t_naive = dtn * need / m
            line += f"; naive: {need:.0f} samples, est. {t_naive:.1f} s -> speed-up {t_naive / dt:.0f}x"
        else:
            m = 20
            _, dtn = _timed(lambda: _naive_v(min(p, 10**6), m, np.random.default_rng(3), block=1))
            if p == 10**6:
                plain = alpha_c_finite(p, samples=4000, rng=4, control_variates=False)
                need = 4000 * (plain.rel_stderr / TARGET_REL) ** 2
                t_naive = dtn / m * need
                line += (f"; naive: {need:.0f} samples x {dtn / m * 1e3:.0f} ms = est. {t_naive:.0f} s "
                         f"-> speed-up {t_naive / dt:.0f}x")
            else:
                line += "; naive infeasible (1e15 normals per sample)"
        print(line, flush=True)
    # control variates alone (same order-statistics sampler)
    p = 10**6
    a = alpha_c_finite(p, samples=20000, rng=5)
    b = alpha_c_finite(p, samples=20000, rng=5, control_variates=False)
    print(f"control variates at p=1e6: stderr {a.stderr:.2e} vs plain {b.stderr:.2e} "
          f"(sample saving {(b.stderr / a.stderr) ** 2:.0f}x)")
    for S in (200, 1000):
        e, dt = _timed(lambda: energy_G(0.5, 10**6, samples=S, rng=6))
        print(f"energy_G(t=0.5, p=1e6, samples={S}): {e} in {dt:.2f} s "
              f"(bulk bias bound {e.info['bulk_bias_bound']:.1e})")
    e, dt = _timed(lambda: energy_G(np.array([0.3, 0.6, 0.9]), 10**6, samples=200, rng=6))
    print(f"energy_G(t=[0.3,0.6,0.9], p=1e6, samples=200): {np.round(e.value, 4)} "
          f"± {np.array(e.stderr).round(4)} in {dt:.2f} s")


if __name__ == "__main__":
    main()
