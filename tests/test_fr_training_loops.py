"""Every factual-recall trainer runs on the one training loop (validation.optim.adam_loop).

Oracle: each trainer written out as an explicit loop over the optimiser (the order
"evaluate, maybe stop, update" by hand, with :class:`validation.optim.Adam` or plain
gradient descent), on the same draws.  The loop is a re-ordering of the same floating-point
operations, so the results must agree bit for bit (``==``, no tolerance).
"""
import math

import numpy as np
import pytest

from validation.factual_recall import experiments, memories, sequential, trials
from validation.factual_recall.memories import (init_mlp_memory, linear_memory_loss,
                                                mlp_memory_loss, sphere_embeddings)
from validation.factual_recall.task import FactTask, make_task, split_facts, structured_answers
from validation.factual_recall.transformer import OneLayerTransformer
from validation.optim import Adam, warmup_cosine


def _ref_train_memory(kind, n, d, *, m=None, steps, rng, lr):
    rng = np.random.default_rng(rng)
    dt = np.float32
    X = sphere_embeddings(n, d, rng, dt)
    if kind == "linear":
        U = sphere_embeddings(n, d, rng, dt)
        targets, params = np.arange(n), [np.zeros((d, d), dt)]
        f = lambda p, grad=True: (lambda o: (o[0], None if o[1] is None else [o[1]], o[2]))(
            linear_memory_loss(p[0], X, U, targets, grad))
    else:
        U = sphere_embeddings(2, d, rng, dt)
        targets = rng.integers(0, 2, size=n)
        params = init_mlp_memory(d, m, rng, dt)
        f = lambda p, grad=True: mlp_memory_loss(p, X, U, targets, grad)
    opt = Adam(params)
    for s in range(steps):
        _, g, _ = f(params)
        opt.step(g, lr=warmup_cosine(s, steps, lr=lr, warmup=0.05, final=0.01))
    loss, _, correct = f(params, grad=False)
    return float(correct.mean()), loss


@pytest.mark.parametrize("kind,kw", [("linear", dict(n=30, d=6, steps=120, lr=0.05)),
                                     ("mlp", dict(n=40, d=6, m=8, steps=150, lr=0.01))])
def test_train_memory_is_the_explicit_loop(kind, kw):
    r = memories.train_memory(kind, kw["n"], kw["d"], m=kw.get("m"), steps=kw["steps"], lr=kw["lr"],
                              rng=3)
    acc, loss = _ref_train_memory(kind, kw["n"], kw["d"], m=kw.get("m"), steps=kw["steps"], rng=3,
                                  lr=kw["lr"])
    assert (r.accuracy, r.loss) == (acc, loss)


def _ref_recall_loop(lossfn, params, n, steps, lr):
    opt = Adam(params)
    need = math.ceil(0.99 * n - 1e-9)
    t_all = t_99 = None
    acc, t = 0.0, 0
    for t in range(steps + 1):
        _, g, corr = lossfn(t < steps)
        k = int(corr.sum())
        acc = k / n
        if t_99 is None and k >= need:
            t_99 = t
        if k == n:
            t_all = t
            break
        if t == steps:
            break
        opt.step(g, lr=lr)
    return t_all, t_99, acc, t


@pytest.mark.parametrize("steps", [40, 400])      # a run that stops and one that spends its budget
def test_linear_recall_trial_is_the_explicit_loop(steps):
    p = {"d": 10, "n": 30, "seed": 2, "steps": steps, "lr": 0.5}
    r = trials.linear_recall_trial(p)
    rng = trials._trial_rng(2, 10, 30)
    X = trials.embeddings("sphere", rng.standard_normal((30, 10))).astype(np.float32)
    U = trials.embeddings("sphere", rng.standard_normal((30, 10))).astype(np.float32)
    W = np.zeros((10, 10), np.float32)
    ref = _ref_recall_loop(lambda grad: (lambda o: (o[0], [o[1]], o[2]))(
        linear_memory_loss(W, X, U, np.arange(30), grad=grad)), [W], 30, steps, 0.5)
    assert (r["t_all"], r["t_99"], r["final_accuracy"], r["steps"]) == ref
    assert (r["t_all"] is None) == (steps == 40)


def test_mlp_recall_trial_is_the_explicit_loop():
    p = {"d": 8, "m": 8, "n": 40, "seed": 1, "steps": 300}
    r = trials.mlp_recall_trial(p)
    rng = trials._trial_rng(1, 8, 8, 40, 2)
    X = trials.embeddings("sphere", rng.standard_normal((40, 8))).astype(np.float32)
    U = trials.embeddings("sphere", rng.standard_normal((2, 8))).astype(np.float32)
    targets = rng.integers(0, 2, size=40)
    q = init_mlp_memory(8, 8, rng, np.float32)
    ref = _ref_recall_loop(lambda grad: mlp_memory_loss(q, X, U, targets, grad=grad), q, 40, 300, 0.01)
    assert (r["t_all"], r["t_99"], r["final_accuracy"], r["steps"]) == ref


def _ref_budget_trial(p):
    d, H, d_h, m = p["d"], p["H"], p["d_h"], p["m"]
    S, R = split_facts(p["facts"])
    rng = trials._trial_rng(p["seed"], d, H, d_h, m, S, R)
    task = make_task(S, R, p["D"], T=p["T"], rng=rng)
    net = OneLayerTransformer(d, H, d_h, m, vocab=task.vocab, n_answers=task.n_answers, rng=rng,
                              dtype=np.float32)
    erng = trials._trial_rng(p["seed"], 7, d, S, R)
    fs, fr = task.all_facts()
    fs, fr = np.tile(fs, 2), np.tile(fr, 2)
    opt = Adam(net.params)
    steps, every, accs, t99 = p["steps"], p["eval_every"], [], None
    for t in range(steps + 1):
        if t % every == 0:
            tok, y, _, _ = task.sample(0, erng, subjects=fs, relations=fr)
            accs.append(float(net.loss(tok, y, grad=False)[2].mean()))
            if accs[-1] >= 0.99:
                t99 = t
                break
        if t == steps:
            break
        tok, y, _, _ = task.sample(p["batch"], rng)
        _, g, _ = net.loss(tok, y)
        opt.step(g, lr=p["lr"] if p.get("schedule", "constant") == "constant" else
                 warmup_cosine(t, steps, lr=p["lr"], warmup=0.05, final=0.01))
    return accs, t99


@pytest.mark.parametrize("extra", [{}, {"schedule": "cosine"}, {"facts": 36, "D": 8, "steps": 120},
                                   {"steps": 75}])
def test_transformer_budget_trial_is_the_explicit_loop(extra):
    p = dict({"d": 8, "H": 1, "d_h": 8, "m": 8, "facts": 4, "D": 4, "T": 4, "seed": 0,
              "steps": 300, "batch": 32, "lr": 0.02, "eval_every": 50}, **extra)
    r = trials.transformer_budget_trial(p)
    accs, t99 = _ref_budget_trial(p)
    assert (r["accuracy"], r["t_99"]) == (accs, t99)


def test_train_transformer_is_the_explicit_loop():
    task = make_task(6, 5, 4, T=6, rng=1)
    r = experiments.train_transformer(task, 16, 2, 4, 16, steps=60, batch=32, lr=1e-2, rng=4,
                                      eval_repeats=2)
    rng = np.random.default_rng(4)
    net = OneLayerTransformer(16, 2, 4, 16, vocab=task.vocab, n_answers=task.n_answers, rng=rng)
    opt = Adam(net.params)
    for s in range(60):
        tok, y, _, _ = task.sample(32, rng)
        loss, g, _ = net.loss(tok, y)
        opt.step(g, lr=warmup_cosine(s, 60, lr=1e-2, warmup=0.05, final=0.01))
    fs, fr = task.all_facts()
    tok, y, _, _ = task.sample(0, rng, subjects=np.tile(fs, 2), relations=np.tile(fr, 2))
    acc = float(net.loss(tok, y, grad=False)[2].mean())
    assert (r.loss, r.accuracy) == (loss, acc)


@pytest.mark.parametrize("batch,every", [(None, 7), (10, 1)])
def test_train_sequential_is_plain_gradient_descent(batch, every):
    S, R, D, T, steps, lr = 16, 2, 4, 4, 90, 3.0
    out = sequential.train_sequential(S, R, D, T=T, steps=steps, lr=lr, rng=5, batch=batch,
                                      eval_every=every)
    rng = np.random.default_rng(5)
    task = FactTask(S, R, D, T, structured_answers(S, R, D))
    V, A = task.vocab, task.n_answers
    k = 1e-3 * rng.standard_normal(V)
    W = 1e-3 * rng.standard_normal((A, V))
    fs, fr = task.all_facts()
    ev_tok, ev_y, _, _ = task.sample(0, rng, subjects=np.tile(fs, 2), relations=np.tile(fr, 2))
    ev_C = sequential._counts(ev_tok, V, float)
    total = []
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            total.append(sequential.block_losses(
                sequential.linear_attention_loss(k, W, ev_C, ev_y, grad=False)[2], ev_y, D)[0])
        if step == steps:
            break
        tok, y, _, _ = (task.sample(0, rng, subjects=fs, relations=fr) if batch is None
                        else task.sample(batch, rng))
        _, (dk, dW), _ = sequential.linear_attention_loss(k, W, sequential._counts(tok, V, float), y)
        k -= lr * dk
        W -= lr * dW
    assert out["total"].tolist() == total
