"""Adaptive threshold design vs fixed grid on a synthetic logistic (no training).

Outcomes are Bernoulli with ``P(success | x) = 1 / (1 + exp((x - a) / w))``,
``a = 0.85`` and widths ``w`` in {0.01, 0.02, 0.04} (the transition widths of
trained memories at d = 20-150 fall in this range).  Both designs stop at the
first fit whose 95% CI half-width is <= 0.03:

* grid: 8 loads ``a * linspace(0.75, 1.15, 8)`` (the report's grid), one more
  seed per load per round;
* adaptive: :func:`validation.adaptive.adaptive_threshold` with the settings of
  the d = 100/150 runs (4 start loads ``a * (0.97, 1.01, 1.05, 1.09)`` —
  note: centred on the truth here, as the finite-p theory is within a few
  percent of the measured thresholds — batches of 4, walk step ``0.1 a``).

Prints, per width, the mean number of trials (standard error) and the
fraction of runs whose interval covers ``a`` (binomial standard error),
for docs/sweeps.md#adaptive-threshold-design.  Run::

    nice -n 10 python benchmarks/bench_adaptive.py [replicates]
"""
import math
import sys
import time

import numpy as np

from validation.adaptive import adaptive_threshold
from validation.logistic import fit_threshold

A, TARGET = 0.85, 0.03


def grid_run(rng, w, s_max=40):
    x0 = A * np.linspace(0.75, 1.15, 8)
    xs, ys = [], []
    for _ in range(s_max):
        xs += list(x0)
        ys += list(rng.random(8) < 1 / (1 + np.exp((x0 - A) / w)))
        f = fit_threshold(xs, ys)
        if (f.ci_high - f.ci_low) / 2 <= TARGET:
            break
    return len(xs), f.ci_low <= A <= f.ci_high


def adaptive_run(rng, w):
    def run(loads, seeds):
        x = np.asarray(loads)
        return loads, list(rng.random(x.size) < 1 / (1 + np.exp((x - A) / w)))

    r = adaptive_threshold(run, fit_threshold, [A * f for f in (0.97, 1.01, 1.05, 1.09)],
                           target_halfwidth=TARGET, max_trials=320, batch=4, step=0.1 * A)
    return r.trials, r.ci_low <= A <= r.ci_high


def main(reps):
    for w in (0.01, 0.02, 0.04):
        for name, fn in (("grid", grid_run), ("adaptive", adaptive_run)):
            t0 = time.process_time()
            out = [fn(np.random.default_rng(1000 * i + 7), w) for i in range(reps)]
            n = np.array([o[0] for o in out], float)
            c = np.mean([o[1] for o in out])
            print(f"w={w:.2f} {name:8s}: trials {n.mean():5.1f} ± {n.std(ddof=1) / math.sqrt(reps):.1f}, "
                  f"coverage {c:.2f} ± {math.sqrt(c * (1 - c) / reps):.2f} ({reps} runs, "
                  f"{time.process_time() - t0:.0f} s CPU)", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
