"""Training-step time of the one-layer factual-recall transformer.

Configuration: d = 64, H = 8 heads of size d_h = 8, MLP width m = 64, batch
1024, T = 32 (S = R = 32 facts, D = 8 answers per relation), float32.

Prints the time of one training step (fresh batch + forward + backward + Adam)
and its ratio to the time of the step's own matrix products: every product of
the forward and backward pass goes through ``transformer._mm``; the benchmark
records the operands of one step and replays exactly those calls.  A ratio
close to 1 means the step is matmul-bound; the excess is the elementwise work
(softmax, ReLU, embedding gather, batch sampling, Adam) and Python overhead.

Run: ``python benchmarks/bench_transformer.py [--repeat N]`` (uses whatever BLAS
threads the environment allows; the ratio is measured in one run).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from validation.factual_recall import transformer as tr
from validation.factual_recall.task import make_task
from validation.optim import Adam


def _best(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    d, H, d_h, m, B, T = 64, 8, 8, 64, 1024, 32
    task = make_task(32, 32, 8, T=T, rng=0)
    net = tr.OneLayerTransformer(d, H, d_h, m, vocab=task.vocab, n_answers=task.n_answers,
                                 rng=0, dtype=np.float32)
    opt = Adam(net.params)
    rng = np.random.default_rng(1)

    def step():
        tok, y, _, _ = task.sample(B, rng)
        _, g, _ = net.loss(tok, y)
        opt.step(g, lr=1e-3)

    # record the operands of one step's matrix products
    calls = []

    def recording(a, b):
        # copy with the same memory layout (order="K"): transposed views stay column-major
        calls.append((a.copy(order="K"), b.copy(order="K")))
        return np.matmul(a, b)

    tr._mm = recording
    try:
        tok, y, _, _ = task.sample(B, rng)
        net.loss(tok, y)
    finally:
        tr._mm = np.matmul
    ops = calls

    def products():
        for a, b in ops:
            np.matmul(a, b)

    flops = sum(2 * np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) or (1,))
                * a.shape[-2] * a.shape[-1] * b.shape[-1] for a, b in ops)
    t_step, t_step_med = _best(step, args.repeat)
    t_mm, t_mm_med = _best(products, args.repeat)
    print(f"one-layer transformer training step: d={d} H={H} d_h={d_h} m={m} batch={B} T={T} "
          f"float32, {net.param_count} params")
    print(f"step time        : {t_step * 1e3:8.2f} ms (best of {args.repeat}; median "
          f"{t_step_med * 1e3:.2f} ms)")
    print(f"matrix products  : {t_mm * 1e3:8.2f} ms ({len(ops)} products, "
          f"{flops / 1e9:.3f} GFLOP, {flops / t_mm / 1e9:.1f} GFLOP/s; median {t_mm_med * 1e3:.2f} ms)")
    print(f"ratio step / products: {t_step / t_mm:.2f}")
    per = []
    for a, b in ops:
        t, _ = _best(lambda: np.matmul(a, b), max(3, args.repeat // 2))
        per.append((t, a.shape, b.shape))
    per.sort(key=lambda r: -r[0])
    print("slowest products (share of product time):")
    for t, sa, sb in per[:4]:
        print(f"  {str(sa):>16} @ {str(sb):<16} {t * 1e3:7.2f} ms  {t / t_mm:5.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
