"""One d = 150 OP capacity threshold to a 95% CI half-width <= 0.03 (speed target: <= 30 min wall, 2 cores).

Prints:

* the CPU time of one OP training step at d = 150 (p at the finite-p
  prediction, float32) and of one DP step at d = 150 for p = 300, 600, 900,
  extrapolated as ``p^2 d`` to the p of the prediction (the DP candidate
  tensor ``U`` has ``p^2 d`` entries; the step is memory-bound);
* with ``--run``: the threshold of the group "op d=150" of the study
  ``linear_memory.d150`` (:mod:`validation.studies.linear_memory_d150`)
  measured by the adaptive design on a fresh store (``--store``, default a
  temporary file; pass a copy of the committed store to reuse its trials),
  with the trials used and the wall time.

Usage::

    nice -n 10 python benchmarks/bench_d150.py [--run] [--workers 2] [--store PATH]
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from replica.load import p_from_load

from validation.linear_memory.data import dp_nbytes, make_facts  # noqa: E402
from validation.linear_memory.models import xent_and_grad  # noqa: E402


def step_cpu(kind, p, d, repeats=3):
    f = make_facts(kind, p, d, rng=0, dtype=np.float32)
    W = (np.random.default_rng(1).standard_normal((d, d)) / np.sqrt(d)).astype(np.float32)
    xent_and_grad(W, f, scale=1.0)
    c = time.process_time()
    for _ in range(repeats):
        xent_and_grad(W, f, scale=1.0)
    return (time.process_time() - c) / repeats


def main(argv=None):
    from validation.studies import get_study
    from validation.studies import linear_memory_d150 as d150

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="measure the threshold (about 15-30 min on 2 idle cores)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store", default=None)
    a = ap.parse_args(argv)
    d = 150
    th = d150.group_theory("op", None, d)["value"]
    p = p_from_load(th, d)
    op = step_cpu("op", p, d)
    print(f"OP  d={d} p={p}: {op:.4f} s CPU per step (scores, loss, gradient; Adam excluded)", flush=True)
    fits = []
    for q in (300, 600, 900):
        t = step_cpu("dp", q, d, repeats=2)
        fits.append((q, t))
        print(f"DP  d={d} p={q}: {t:.3f} s CPU per step, candidate tensor {dp_nbytes(q, d) / 2**20:.0f} MiB",
              flush=True)
    c = np.mean([t / (q * q * d) for q, t in fits])
    print(f"DP  d={d} p={p} (extrapolated as p^2 d): {c * p * p * d:.1f} s CPU per step, "
          f"tensor {dp_nbytes(p, d) / 2**30:.1f} GiB; a failing trial (4096 steps) "
          f"{c * p * p * d * 4096 / 3600:.1f} h CPU, {c * p * p * d / op:.0f}x an OP step", flush=True)
    if a.run:
        store = a.store or os.path.join(tempfile.mkdtemp(), "bench_d150.jsonl")
        t0 = time.perf_counter()
        g = ("op", None, d, d150.LR)
        run = get_study("linear_memory.d150").run(compute=True, store=store, workers=a.workers, progress=False,
                                                   groups=(list(d150.PLAN).index(g),), lr_check=False)
        wall = time.perf_counter() - t0
        r = run.outcome.rows[d150.group_key(*g)]
        print(f"op d={d}: threshold {r.threshold:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] "
              f"(half-width {r.halfwidth:.4f}), {r.trials} trials, done {r.done}, "
              f"wall {wall:.0f} s ({wall / 60:.1f} min; target <= 30 min), "
              f"training CPU {r.cpu_seconds:.0f} s", flush=True)


if __name__ == "__main__":
    main()
