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

With jax installed (the optional ``bench`` extra: ``pip install -e .[bench]``;
nothing else in the package imports jax), it also times an equivalent jax step
on CPU: the same model, loss and Adam update written in ``jax.numpy``,
gradients by ``jax.value_and_grad``, the whole step under ``jax.jit``, the
same fresh numpy batch each step, float32.  Before timing, the jax loss and
gradients are checked against ours at the same parameters and batch.  The
printed ratio is ours / jax (target <= 1.5).  Times are process CPU time by
default (``--clock wall`` for wall time): on a shared machine CPU time does not
count the time other processes hold the cores, so single-threaded timings stay
comparable under load.  ``--threads 1`` (default) pins
both to one thread (BLAS through the environment variables, XLA through
``XLA_FLAGS``); they must be set before numpy and jax are imported, so the
script re-executes itself once with them set.

Allocator: glibc returns large freed blocks to the kernel (``mmap`` above a threshold,
heap trimming), so every step's ~18 MB of temporaries are fresh pages that the
kernel maps and zeroes again: about 4600 minor page faults per step, which
doubled the step's CPU time in our measurements.  Unless ``--default-malloc``
is given, the re-executed run sets ``MALLOC_MMAP_THRESHOLD_`` (1 GiB) and
``MALLOC_TRIM_THRESHOLD_`` (4 GiB) so freed blocks are reused; the same
variables speed up long training sweeps (they change nothing numerically).

Run: ``python benchmarks/bench_transformer.py [--repeat N] [--threads K] [--no-jax]
[--default-malloc] [--clock cpu|wall]``
(docs/factual_recall.md#speed-against-jax).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from validation.factual_recall import transformer as tr
from validation.factual_recall.task import make_task
from validation.optim import Adam


#: Clock of every timing: process CPU time by default (all threads of this process; on a
#: shared machine it does not count the time other processes hold the cores), or wall
#: time with ``--clock wall``.
_clock = time.process_time


def _best(fn, repeat):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = _clock()
        fn()
        ts.append(_clock() - t0)
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
            t0 = _clock()
            fn()
            t.append(_clock() - t0)
    return [(min(t), float(np.median(t))) for t in ts]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1,
                    help="threads for BLAS and XLA (0: leave the environment alone)")
    ap.add_argument("--no-jax", action="store_true", help="skip the jax comparison")
    ap.add_argument("--default-malloc", action="store_true",
                    help="keep glibc's default mmap / trim thresholds (see the module notes)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="process CPU time (default; robust to other load) or wall time")
    args = ap.parse_args(argv)
    global _clock
    _clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.threads < 0:
        print(f"bench_transformer: error: --threads must be >= 0, got {args.threads}",
              file=sys.stderr)
        return 2
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
          f"float32, {net.param_count} params; clock: {args.clock} time; threads: "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', 'unset')!r}, "
          f"MALLOC_MMAP_THRESHOLD_={os.environ.get('MALLOC_MMAP_THRESHOLD_', 'unset')}")
    import resource

    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    print(f"minor page faults per step: "
          f"{(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 5:.0f} "
          f"(4 KiB each: fresh memory the kernel maps and zeroes for the step's temporaries)")
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
    if not args.no_jax:
        _compare_jax(net, task, B, args.repeat, t_step, t_mm)
    return 0


def _jax_step_fn(net, jax, jnp):
    """Jitted ``(params, m, v, t, tokens, targets) -> (params, m, v, loss)``: the model,
    mean cross-entropy and Adam update of ours, written in jax.numpy."""
    H, d_h = net.H, net.d_h
    E, U = jnp.asarray(net.E), jnp.asarray(net.U)
    scale = 1.0 / np.sqrt(d_h)
    b1, b2, eps = 0.9, 0.999, 1e-8

    def loss_fn(params, tok, y):
        Q, K, V, O, W1, b, W2 = params
        X = E[tok]                                              # (B, T, d)
        xT = X[:, -1]
        q = jnp.einsum("bd,hde->hbe", xT, Q)
        qk = jnp.einsum("hbe,hde->hbd", q, K)                   # K_h Q_h^T x_T
        s = jnp.einsum("btd,hbd->bht", X, qk) * scale
        A = jax.nn.softmax(s, axis=-1)
        xbar = jnp.einsum("bht,btd->bhd", A, X)
        o = jnp.einsum("bhd,hde->bhe", xbar, V)
        z = xT + jnp.einsum("bhe,hef->bf", o, O)
        yv = z + jax.nn.relu(z @ W1 + b) @ W2
        logits = yv @ U.T
        lse = jax.nn.logsumexp(logits, axis=1)
        return jnp.mean(lse - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0])

    def step(params, m, v, t, tok, y, lr):
        loss, g = jax.value_and_grad(loss_fn)(params, tok, y)
        c1, c2 = 1.0 - b1 ** t, 1.0 - b2 ** t
        st, ep = lr * jnp.sqrt(c2) / c1, eps * jnp.sqrt(c2)
        m = [b1 * mi + (1 - b1) * gi for mi, gi in zip(m, g)]
        v = [b2 * vi + (1 - b2) * gi * gi for vi, gi in zip(v, g)]
        params = [p - st * mi / (jnp.sqrt(vi) + ep) for p, mi, vi in zip(params, m, v)]
        return params, m, v, loss

    return jax.jit(step, donate_argnums=(0, 1, 2)), jax.jit(jax.value_and_grad(loss_fn))


def _compare_jax(net, task, B, repeat, t_step, t_mm):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("jax: not installed (pip install -e .[bench]); comparison skipped")
        return
    step, vg = _jax_step_fn(net, jax, jnp)
    rng = np.random.default_rng(2)
    tok, y, _, _ = task.sample(B, rng)
    # equivalence at the same parameters and batch: loss and gradients of ours vs jax
    loss, grads, _ = net.loss(tok, y)
    jl, jg = vg([jnp.asarray(p) for p in net.params], jnp.asarray(tok), jnp.asarray(y))
    err = max(float(np.max(np.abs(np.asarray(a) - b)) / (np.max(np.abs(b)) + 1e-30))
              for a, b in zip(jg, grads) if b.size)
    # float32: both sum O(B T d) terms; relative differences of a few 1e-6 .. 1e-5 expected
    assert abs(float(jl) - loss) <= 1e-4 * abs(loss) and err < 1e-3, (float(jl), loss, err)
    print(f"jax {jax.__version__} ({jax.devices()[0].platform}): loss {float(jl):.6f} vs ours "
          f"{loss:.6f}; largest gradient difference {err:.1e} of the gradient's max")
    state = {"p": [jnp.asarray(p) for p in net.params],
             "m": [jnp.zeros_like(jnp.asarray(p)) for p in net.params],
             "v": [jnp.zeros_like(jnp.asarray(p)) for p in net.params], "t": 0}
    opt = Adam([p.copy() for p in net.params])

    def ours():
        tk, yy, _, _ = task.sample(B, rng)
        _, g, _ = net.loss(tk, yy)
        opt.step(g, lr=1e-3)

    def theirs():
        tk, yy, _, _ = task.sample(B, rng)
        state["t"] += 1
        state["p"], state["m"], state["v"], lo = step(state["p"], state["m"], state["v"],
                                                      float(state["t"]), tk, yy, 1e-3)
        lo.block_until_ready()

    theirs()  # compile
    (t_o, t_o_med), (t_j, t_j_med) = _interleaved([ours, theirs], repeat)
    print(f"jax step (jit, same batch sampling): {t_j * 1e3:8.2f} ms (best of {repeat}; "
          f"median {t_j_med * 1e3:.2f} ms)")
    print(f"ours in the same run               : {t_o * 1e3:8.2f} ms (median {t_o_med * 1e3:.2f} ms)")
    print(f"ratio ours / jax: {t_o / t_j:.2f} (best times; ratio of medians "
          f"{t_o_med / t_j_med:.2f}); ours / own products earlier {t_step / t_mm:.2f}")


def _pinned(threads, malloc=True):
    """Environment with BLAS and XLA limited to ``threads`` threads and (``malloc``) glibc's
    mmap / trim thresholds raised so that freed temporaries are reused, not unmapped."""
    env = dict(os.environ)
    if malloc:
        env.setdefault("MALLOC_MMAP_THRESHOLD_", str(2 ** 30))
        env.setdefault("MALLOC_TRIM_THRESHOLD_", str(2 ** 32))
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(threads)
    flags = env.get("XLA_FLAGS", "")
    if threads == 1 and "multi_thread_eigen" not in flags:
        flags += " --xla_cpu_multi_thread_eigen=false"
    env["XLA_FLAGS"] = flags.strip()
    env["_BENCH_TRANSFORMER_PINNED"] = "1"
    return env


if __name__ == "__main__":
    _args = sys.argv[1:]
    _t = 1
    for _i, _a in enumerate(_args):
        if _a.startswith("--threads"):
            _v = _a.split("=", 1)[1] if "=" in _a else (_args[_i + 1] if _i + 1 < len(_args)
                                                       else "1")
            _t = int(_v) if _v.isdigit() else 1
    if _t > 0 and not os.environ.get("_BENCH_TRANSFORMER_PINNED"):
        import subprocess

        raise SystemExit(subprocess.call([sys.executable] + sys.argv,
                                         env=_pinned(_t, "--default-malloc" not in _args)))
    raise SystemExit(main())
