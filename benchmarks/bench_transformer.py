"""Training-step time of the one-layer factual-recall transformer.

Configuration: d = 64, H = 8 heads of size d_h = 8, MLP width m = 64, batch
1024, T = 32 (S = R = 32 facts, D = 8 answers per relation), float32.

Prints the time of one training step (fresh batch + forward + backward + Adam)
and its ratio to the time of the step's own matrix products: every product of
the forward and backward pass goes through ``transformer._mm``; the benchmark
records the operands of one step and replays exactly those calls.  A ratio
close to 1 means the step is matmul-bound; the excess is the elementwise work
(softmax, ReLU, embedding gather, batch sampling, Adam) and Python overhead.

It also times, in the same run, the alternative layout for the EOS-query
scores: keys of all samples and heads as one ``(B T, d) @ (d, H d_h)`` product,
then the per-sample query by an elementwise product and a sum over ``d_h``
(no per-sample GEMMs), against the model's stacked per-sample products
``(B, T, d) @ (B, d, H)``; both give the same scores (checked).

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


def _interleaved(fns, repeat):
    """``[(best, median), ...]`` of each function, timed in alternation so that a
    change of machine load during the run affects all of them alike (the ratios
    are then meaningful on a shared machine)."""
    for fn in fns:
        fn()
    ts = [[] for _ in fns]
    for _ in range(repeat):
        for fn, t in zip(fns, ts):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [(min(t), float(np.median(t))) for t in ts]


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
    (t_step, t_step_med), (t_mm, t_mm_med) = _interleaved([step, products], args.repeat)
    print(f"one-layer transformer training step: d={d} H={H} d_h={d_h} m={m} batch={B} T={T} "
          f"float32, {net.param_count} params")
    print(f"step time        : {t_step * 1e3:8.2f} ms (best of {args.repeat}; median "
          f"{t_step_med * 1e3:.2f} ms)")
    print(f"matrix products  : {t_mm * 1e3:8.2f} ms ({len(ops)} products, "
          f"{flops / 1e9:.3f} GFLOP, {flops / t_mm / 1e9:.1f} GFLOP/s; median {t_mm_med * 1e3:.2f} ms)")
    print(f"ratio step / products: {t_step / t_mm:.2f} (best times, interleaved; ratio of "
          f"medians {t_step_med / t_mm_med:.2f})")
    per = []
    for a, b in ops:
        t, _ = _best(lambda: np.matmul(a, b), max(3, args.repeat // 2))
        per.append((t, a.shape, b.shape))
    per.sort(key=lambda r: -r[0])
    print("slowest products (share of product time):")
    for t, sa, sb in per[:4]:
        print(f"  {str(sa):>16} @ {str(sb):<16} {t * 1e3:7.2f} ms  {t / t_mm:5.1%}")

    # design check: EOS-query scores without per-sample GEMMs
    Q, K = net.params[0], net.params[1]
    X = net.E[tok]
    xT = X[:, -1]
    Kflat = np.ascontiguousarray(K.transpose(1, 0, 2).reshape(d, H * d_h))

    def scores_stacked():            # the model's path: per-sample (T, d) @ (d, H)
        q = np.matmul(xT[None], Q)
        qk = np.matmul(q, K.transpose(0, 2, 1))
        return np.matmul(X, qk.transpose(1, 2, 0))                   # (B, T, H)

    def scores_keys_first():         # one big GEMM for the keys, then reduce over d_h
        q = np.matmul(xT[None], Q).transpose(1, 0, 2)                 # (B, H, d_h)
        keys = np.matmul(X.reshape(B * T, d), Kflat).reshape(B, T, H, d_h)
        return (keys * q[:, None]).sum(axis=3)                        # (B, T, H)

    ref, alt = scores_stacked(), scores_keys_first()
    assert np.allclose(ref, alt, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))
    Xf = np.ascontiguousarray(X.reshape(B * T, d))
    Bk = X.reshape(B, T, d)
    qk = np.ascontiguousarray(np.matmul(np.matmul(xT[None], Q), K.transpose(0, 2, 1))
                              .transpose(1, 2, 0))                     # (B, d, H)
    (t_big, _), (t_small, _) = _interleaved([lambda: np.matmul(Xf, Kflat),
                                              lambda: np.matmul(Bk, qk)], args.repeat)
    print(f"BLAS rate, one large (B T, d) @ (d, H d_h) product : "
          f"{2 * B * T * d * H * d_h / t_big / 1e9:6.1f} GFLOP/s ({t_big * 1e3:.2f} ms)")
    print(f"BLAS rate, stacked per-sample (B, T, d) @ (B, d, H): "
          f"{2 * B * T * d * H / t_small / 1e9:6.1f} GFLOP/s ({t_small * 1e3:.2f} ms)")
    (t_a, _), (t_b, _) = _interleaved([scores_stacked, scores_keys_first], args.repeat)
    f_a = 2 * B * d * H * (2 * d_h + T)
    f_b = 2 * B * T * d * H * d_h + 2 * B * d * H * d_h + 2 * B * T * H * d_h
    print(f"EOS scores, stacked per-sample products : {t_a * 1e3:7.2f} ms ({f_a / 1e6:.0f} MFLOP)")
    print(f"EOS scores, keys-first (B T, d) @ (d, H d_h) + reduce: {t_b * 1e3:7.2f} ms "
          f"({f_b / 1e6:.0f} MFLOP); ratio {t_b / t_a:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
