"""Training-step cost of the linear memories (OP and DP) against their matrix products.

Prints, from one run, for OP and DP at d = 100, p = 2000 in float64 and float32:
the time of one full training step (scores, cross-entropy, gradient, Adam
update) and its ratio to the time of the step's own matrix products alone
(target <= 1.3); and, if PyTorch is importable, the ratio to an equivalent
PyTorch CPU step (target <= 1.0).  Times are CPU times of this process
(``time.process_time``, BLAS pinned to one thread) so that load from other
processes does not distort them; wall times are printed too.

Usage::

    python benchmarks/bench_training.py [--d 100] [--p 2000] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402

from validation.linear_memory.data import make_facts, dp_nbytes  # noqa: E402
from validation.linear_memory.models import xent_and_grad  # noqa: E402
from validation.optim import Adam  # noqa: E402


def _time(fn, repeats):
    fn()                                   # warm-up
    best_cpu, best_wall = np.inf, np.inf
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        best_cpu = min(best_cpu, time.process_time() - c)
        best_wall = min(best_wall, time.perf_counter() - w)
    return best_cpu, best_wall


def _available_bytes():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def bench(kind, d, p, dtype, repeats):
    avail = _available_bytes()
    if kind == "dp" and avail is not None and dp_nbytes(p, d, dtype) > 0.5 * avail:
        return None, f"skipped: DP tensor {dp_nbytes(p, d, dtype) / 2**30:.1f} GiB > half of available memory"
    f = make_facts(kind, p, d, rng=0, dtype=dtype, max_bytes=max(4 * 2**30, dp_nbytes(p, d, dtype)))
    W = (np.random.default_rng(1).standard_normal((d, d)) / np.sqrt(d)).astype(dtype)
    opt = Adam([W])
    scale = 1.0 / (0.05 * np.sqrt(d))
    E, U = f.E, f.U
    G = np.full((p, p), 1.0 / p**2, dtype=dtype)

    def step():
        _, dW, _ = xent_and_grad(W, f, scale=scale)
        opt.step([dW], lr=1e-3)

    if kind == "op":
        def products():
            H = E @ W.T
            H @ U.T
            A = G @ U
            A.T @ E
    else:
        def products():
            H = E @ W.T
            (U @ H[:, :, None])
            A = (G[:, None, :] @ U)[:, 0, :]
            A.T @ E
    # representative softmax input: logits minus their row maximum (<= 0)
    Zb = -np.abs(np.random.default_rng(2).standard_normal((p, p))).astype(dtype) * 3
    Zo = np.empty((p, p), dtype=dtype)
    te, _ = _time(lambda: np.exp(Zb, out=Zo), repeats)
    ts, ws = _time(step, repeats)
    tm, wm = _time(products, repeats)
    return (ts, tm, ws, wm, te), None


def bench_torch(kind, d, p, dtype, repeats):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    g = torch.Generator().manual_seed(0)
    E = torch.randn(p, d, generator=g, dtype=tdt)
    U = torch.randn(p, d, generator=g, dtype=tdt) if kind == "op" else torch.randn(p, p, d, generator=g, dtype=tdt)
    W = (torch.randn(d, d, generator=g, dtype=tdt) / d**0.5).requires_grad_()
    opt = torch.optim.Adam([W], lr=1e-3)
    tgt = torch.arange(p)
    scale = 1.0 / (0.05 * d**0.5)

    def step():
        opt.zero_grad()
        H = E @ (W.T * scale)
        Z = H @ U.T if kind == "op" else (U @ H[:, :, None])[:, :, 0]
        loss = torch.nn.functional.cross_entropy(Z, tgt)
        loss.backward()
        (Z.detach().argmax(1) == tgt).all()
        opt.step()

    return _time(step, repeats)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--p", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"linear-memory training step, d={a.d}, p={a.p}, BLAS threads=1, best of {a.repeats} (CPU time)")
    print(f"{'problem':8s} {'dtype':8s} {'step ms':>9s} {'products ms':>12s} {'ratio':>6s} "
          f"{'(wall ratio)':>12s} {'exp floor':>10s} {'vs torch':>9s}")
    for kind in ("op", "dp"):
        for dtype in (np.float64, np.float32):
            r, why = bench(kind, a.d, a.p, dtype, a.repeats)
            name = np.dtype(dtype).name
            if r is None:
                print(f"{kind.upper():8s} {name:8s} {why}")
                continue
            ts, tm, ws, wm, te = r
            tt = bench_torch(kind, a.d, a.p, dtype, a.repeats)
            vs = f"{ts / tt:9.2f}" if tt else "   no torch"
            print(f"{kind.upper():8s} {name:8s} {ts * 1e3:9.1f} {tm * 1e3:12.1f} {ts / tm:6.2f} "
                  f"{ws / wm:12.2f} {(tm + te) / tm:10.2f} {vs}", flush=True)
    print("target: ratio <= 1.3 (step / its matrix products); vs torch <= 1.0 when torch is installed")
    print("exp floor = (products + one np.exp over the p x p logits) / products: the softmax's own")
    print("exponentials, a lower bound for any numpy step; OP logits cost only 2d flops each, so at")
    print("d = 100 the exponentials alone take about half as long as the products")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
