"""Registered trials of the factual-recall studies (one JSON record in, one plain dict out).

Four trial functions, each module level and registered under a stable name
(:func:`validation.engine.trial`), so they run under
:func:`validation.engine.run_sweep` with a JSONL store and can move without
changing a store key:

* :func:`linear_recall_trial` (``factual_recall.linear_recall``): the linear
  associative memory of :mod:`~validation.factual_recall.memories` trained at a
  constant Adam rate from ``W = 0`` until every fact is recalled;
* :func:`mlp_recall_trial` (``factual_recall.mlp_recall``): the same for the
  two-class MLP memory;
* :func:`escape_trial` (``factual_recall.escape``): escape steps from the two
  plateaus of the sequential-learning model
  (:mod:`~validation.factual_recall.sequential`);
* :func:`transformer_budget_trial` (``factual_recall.transformer_budget``): the
  one-layer transformer trained with fresh batches, accuracy on every fact
  evaluated along the way, stopped at >= 99 % recalled;
* :func:`paper_protocol_trial` (``factual_recall.paper_run``): one training run
  of the paper's protocol (fresh batches of 1024, a fixed test set of 1024
  fresh sequences checked every 128 steps, stop above 99 %).

Every trainer is :func:`validation.optim.adam_loop`.  The studies that plan
these trials live in :mod:`validation.studies` (``python -m validation study
--list``); docs/factual_recall.md#memories-against-theory.
"""
from __future__ import annotations

import math
import time

import numpy as np

from hcizz.checks import check_int, check_real
from validation.engine.trials import trial
from validation.optim import adam_loop, warmup_cosine
from .memories import init_mlp_memory, linear_memory_loss, mlp_memory_loss
from .sequential import train_sequential
from .task import make_task, split_facts
from .transformer import build_transformer
from validation._docparams import fill_doc

__all__ = ["embeddings", "linear_recall_trial", "mlp_recall_trial", "escape_trial",
           "transformer_budget_trial", "paper_protocol_trial", "COSINE_WARMUP", "COSINE_FINAL",
           "RECALL_LEVEL"]

_KINDS = ("sphere", "gaussian")

#: Warm-up fraction and final fraction of the peak rate of the cosine schedule of
#: :func:`transformer_budget_trial` (and of the report's training runs).
COSINE_WARMUP, COSINE_FINAL = 0.05, 0.01

#: Fraction of the facts a transformer must recall for a success (>= 99 %).
RECALL_LEVEL = 0.99


def embeddings(kind, G):
    r"""Turn the rows of ``G`` (i.i.d. :math:`\mathcal{N}(0, 1)`) into sphere or scaled Gaussian embeddings.

    Parameters
    ----------
    kind : {"sphere", "gaussian"}
        ``"sphere"``: :math:`g / \|g\|` (uniform on the unit sphere, as
        :func:`validation.factual_recall.memories.sphere_embeddings`);
        ``"gaussian"``: :math:`g / \sqrt{d}` (i.i.d. :math:`\mathcal{N}(0, I/d)`, the OP data of
        arXiv:2605.10795 up to a global scale, which changes no argmax).
    G : ndarray (n, d)
        Standard Gaussian draws.

    Returns
    -------
    ndarray (n, d)
        Same draw in both cases, so ``sphere`` and ``gaussian`` runs with
        equal seeds are paired (only the row norms differ).

    See Also
    --------
    validation.factual_recall.memories.sphere_embeddings : Draws sphere embeddings directly.

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#the-linear-memory-is-the-op-of-the-linear-memory-paper

    Examples
    --------
    >>> G = np.array([[3.0, 4.0]])
    >>> embeddings("sphere", G), embeddings("gaussian", G)
    (array([[0.6, 0.8]]), array([[2.12132034, 2.82842712]]))
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    G = np.asarray(G)
    if kind == "sphere":
        return G / np.linalg.norm(G, axis=1, keepdims=True)
    return G / math.sqrt(G.shape[1])


def _trial_rng(seed, *key):
    return np.random.default_rng(np.random.SeedSequence(entropy=int(seed),
                                                        spawn_key=tuple(int(k) for k in key)))


class _RecallClock:
    """Stop rule of :func:`_train_until_recalled`: notes the first step with ``need99``
    facts recalled and stops at the first with all ``n``."""

    def __init__(self, n, need99):
        self.n, self.need99 = n, need99
        self.t_99 = self.t_all = None
        self.k = 0

    def __call__(self, t, loss, correct):
        self.k = int(correct.sum())
        if self.t_99 is None and self.k >= self.need99:
            self.t_99 = t
        if self.k == self.n:
            self.t_all = t
            return True
        return False


def _train_until_recalled(lossfn, params, n, steps, lr):
    r"""Constant-rate Adam (:func:`~validation.optim.adam_loop`) on ``params`` until all ``n``
    facts are recalled or ``steps`` updates are made; ``lossfn(grad) -> (loss, grads,
    correct)``.  Returns ``(t_all, t_99, final accuracy, updates made)``: the first step
    with every fact recalled (None if never), the first with :math:`\lceil 0.99 n \rceil`."""
    clock = _RecallClock(n, math.ceil(0.99 * n - 1e-9))
    r = adam_loop(params, lambda t: lossfn(t < steps), steps=steps, lr=lr, stop=clock)
    if not r.stopped:
        clock(steps, r.loss, r.info)           # the final evaluation after the last update
    return clock.t_all, clock.t_99, clock.k / n, r.steps


@trial("factual_recall.linear_recall", aliases=("validation.factual_recall.theory_check:linear_recall_trial",))
def linear_recall_trial(params):
    r"""One training run of the factual-recall linear memory (trial for ``run_sweep``).

    Parameters
    ----------
    params : dict
        ``d`` (>= 2), ``n`` (facts, >= 2), ``seed``; optional ``steps``
        (budget, default 4096), ``lr`` (constant Adam rate, default 0.05),
        ``inputs`` / ``outputs`` in {"sphere", "gaussian"} (default sphere,
        as in ``memories.py``), ``dtype`` (default "float32").

    Returns
    -------
    dict
        ``n``, ``d``, ``load`` (:math:`n \ln n / d^2`), ``t_all`` and ``t_99``: first
        step (number of updates made) at which all facts, resp. at least
        :math:`\lceil 0.99 n \rceil` of them, are recalled (None if never within the
        budget), ``final_accuracy`` (at the stop), ``steps`` (updates made),
        ``cpu_seconds``.

    See Also
    --------
    validation.factual_recall.trials.mlp_recall_trial : The same run for the MLP memory.
    validation.factual_recall.fits.capacity_fits : Fits the capacity from these trials.

    Notes
    -----
    Facts :math:`x_i \mapsto u_i` with ``x, u`` from :func:`embeddings` of one Gaussian
    draw fixed by ``(seed, d, n)``; scores :math:`X W^T U^T`, loss and gradient of
    :func:`validation.factual_recall.memories.linear_memory_loss`; Adam at a
    constant rate from ``W = 0``.  The run stops at the first step where all
    facts are recalled (strict argmax).  With a constant rate a run with budget
    ``B`` is exactly the first ``B`` steps of a longer one, so success within
    every smaller budget is ``t_all <= B`` (budget study from one run).

    References
    ----------
    arXiv:2412.06538 (the memory); arXiv:2605.10795 (the OP);
    docs/factual_recall.md#memories-against-theory.

    Examples
    --------
    >>> r = linear_recall_trial({"d": 16, "n": 8, "seed": 0, "steps": 200})
    >>> r["t_all"] is not None and r["t_99"] == r["t_all"]   # n < 100: 99% means all
    True
    """
    d = check_int("d", params["d"], low=2)
    n = check_int("n", params["n"], low=2)
    steps = check_int("steps", params.get("steps", 4096), low=1)
    lr = check_real("lr", params.get("lr", 0.05), low=0, low_open=True, allow_array=False)
    dtype = np.dtype(params.get("dtype", "float32"))
    rng = _trial_rng(params["seed"], d, n)
    Gx, Gu = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    X = embeddings(params.get("inputs", "sphere"), Gx).astype(dtype)
    U = embeddings(params.get("outputs", "sphere"), Gu).astype(dtype)
    targets = np.arange(n)
    W = np.zeros((d, d), dtype)
    c0 = time.process_time()

    def lossfn(grad):
        loss, dW, corr = linear_memory_loss(W, X, U, targets, grad=grad)
        return loss, [dW], corr

    t_all, t_99, acc, t = _train_until_recalled(lossfn, [W], n, steps, lr)
    return {"n": n, "d": d, "load": n * math.log(n) / d**2, "t_all": t_all,
            "t_99": t_99, "final_accuracy": acc, "steps": t,
            "cpu_seconds": time.process_time() - c0}


@trial("factual_recall.mlp_recall", aliases=("validation.factual_recall.theory_check:mlp_recall_trial",))
def mlp_recall_trial(params):
    """One training run of the two-class MLP memory (trial for ``run_sweep``).

    Parameters
    ----------
    params : dict
        ``d``, ``m`` (width), ``n`` (facts), ``seed``; optional ``classes``
        (default 2), ``steps`` (default 8192), ``lr`` (constant Adam rate,
        default 0.01, the peak rate of ``memories.py``), ``dtype``.

    Returns
    -------
    dict
        As :func:`linear_recall_trial` (``t_all``, ``t_99``, ...) plus ``m``,
        ``classes``.

    See Also
    --------
    validation.factual_recall.trials.linear_recall_trial : The same run for the linear memory.
    validation.factual_recall.theory.counting_bounds : The counting bounds of the MLP memory.

    Notes
    -----
    The model, loss and initialisation of
    :func:`validation.factual_recall.memories.mlp_memory_loss` /
    ``init_mlp_memory``; sphere inputs and output embeddings, uniform random
    classes; constant-rate Adam, stop at the first step with all facts
    recalled.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#mlp-memory-against-counting-bounds.

    Examples
    --------
    >>> r = mlp_recall_trial({"d": 8, "m": 8, "n": 16, "seed": 0, "steps": 500})
    >>> r["t_all"] is not None
    True
    """
    d = check_int("d", params["d"], low=2)
    m = check_int("m", params["m"], low=1)
    n = check_int("n", params["n"], low=2)
    k = check_int("classes", params.get("classes", 2), low=2)
    steps = check_int("steps", params.get("steps", 8192), low=1)
    lr = check_real("lr", params.get("lr", 0.01), low=0, low_open=True, allow_array=False)
    dtype = np.dtype(params.get("dtype", "float32"))
    rng = _trial_rng(params["seed"], d, m, n, k)
    X = embeddings("sphere", rng.standard_normal((n, d))).astype(dtype)
    U = embeddings("sphere", rng.standard_normal((k, d))).astype(dtype)
    targets = rng.integers(0, k, size=n)
    p = init_mlp_memory(d, m, rng, dtype)
    c0 = time.process_time()
    t_all, t_99, acc, t = _train_until_recalled(
        lambda grad: mlp_memory_loss(p, X, U, targets, grad=grad), p, n, steps, lr)
    return {"n": n, "d": d, "m": m, "classes": k, "load": n / (m * d), "t_all": t_all,
            "t_99": t_99, "final_accuracy": acc, "steps": t,
            "cpu_seconds": time.process_time() - c0}


def _crossing(step, curve, level):
    """First recorded step with ``curve < level`` (linear interpolation), None if never."""
    below = np.flatnonzero(curve < level)
    if below.size == 0:
        return None
    i = int(below[0])
    if i == 0:
        return float(step[0])
    x0, x1, y0, y1 = step[i - 1], step[i], curve[i - 1], curve[i]
    return float(x0 + (x1 - x0) * (y0 - level) / (y0 - y1))


@fill_doc
@trial("factual_recall.escape", aliases=("validation.factual_recall.theory_check:escape_trial",))
def escape_trial(params):
    r"""Escape steps of the two plateaus of the sequential-learning model (trial).

    Parameters
    ----------
    params : dict
        ``S``, ``R``, ``D``, ``T``, ``lr``, ``init``, ``seed``, ``steps``;
        optional ``eval_every`` (default 1).

    Returns
    -------
    dict
        ``t_relation`` / ``t_subject``: first step at which the relation
        (subject) loss falls below half its initial value :math:`\ln R` (:math:`\ln D`),
        interpolated between recorded steps (None if never); ``final_total``;
        ``cpu_seconds``.

    See Also
    --------
    validation.factual_recall.fits.fit_escape_slopes : Fits the escape steps of these trials.

    %(ref_escape_times_paper)s

    Examples
    --------
    >>> r = escape_trial({"S": 16, "R": 2, "D": 4, "T": 4, "lr": 4.0, "init": 1e-3,
    ...                   "seed": 0, "steps": 300})
    >>> r["t_relation"] < r["t_subject"]
    True
    """
    c0 = time.process_time()
    out = train_sequential(int(params["S"]), int(params["R"]), int(params["D"]),
                           T=int(params["T"]), steps=int(params["steps"]),
                           lr=float(params["lr"]), init=float(params["init"]),
                           eval_every=int(params.get("eval_every", 1)),
                           rng=_trial_rng(params["seed"], params["S"], params["R"], params["D"]))
    st = np.asarray(out["step"], float)
    rel, sub = np.asarray(out["relation"]), np.asarray(out["subject"])
    return {"t_relation": _crossing(st, rel, 0.5 * rel[0]),
            "t_subject": _crossing(st, sub, 0.5 * sub[0]),
            "final_total": float(out["total"][-1]), "cpu_seconds": time.process_time() - c0}


@trial("factual_recall.transformer_budget", aliases=("validation.factual_recall.theory_check:transformer_budget_trial",))
def transformer_budget_trial(params):
    """Transformer trained at a constant rate, accuracy recorded along the way (trial).

    Parameters
    ----------
    params : dict
        ``d``, ``H``, ``d_h``, ``m`` (model), ``facts`` (:math:`S R` with the square
        split of :func:`~validation.factual_recall.task.split_facts`),
        ``D``, ``T``, ``seed``, ``steps``, ``batch``, ``lr`` (Adam rate),
        ``schedule`` ("constant", default, or "cosine": warm-up over
        :data:`COSINE_WARMUP` of the steps, then cosine decay to
        :data:`COSINE_FINAL` of ``lr`` over ``steps``, the schedule of
        :func:`validation.factual_recall.experiments.train_transformer`),
        ``eval_every`` (steps between evaluations; the run stops at the first
        evaluation with >= 99% recalled), ``eval_repeats``; optional
        ``variant`` (``"ours"``, the default when the key is absent, or
        ``"paper"``: :class:`~validation.factual_recall.transformer.OneLayerTransformer`).

    Returns
    -------
    dict
        ``facts`` (actual :math:`S R`), ``params`` (count), ``eval_steps`` and
        ``accuracy`` (fraction of (fact, sequence) pairs recalled at each
        evaluation, on fresh sequences from a separate stream, so evaluating
        does not change training), ``t_99`` (first evaluated step with accuracy
        >= 0.99, None if none), ``cpu_seconds``.

    See Also
    --------
    validation.factual_recall.fits.fit_capacity : Fits the capacity within a budget.
    validation.factual_recall.transformer.build_transformer : The model it trains.

    Notes
    -----
    With a constant rate, the run with budget ``B`` is the first ``B`` steps of
    this run, so success within ``B`` is ``t_99 <= B`` (up to the evaluation
    grid ``eval_every``); a cosine run is one budget only.  The model is built
    by :func:`~validation.factual_recall.transformer.build_transformer`.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#transformer-budget-study-small-size

    Examples
    --------
    >>> r = transformer_budget_trial({"d": 8, "H": 1, "d_h": 8, "m": 8, "facts": 4, "D": 2,
    ...                               "T": 4, "seed": 0, "steps": 300, "batch": 32,
    ...                               "lr": 0.02, "eval_every": 50})
    >>> r["facts"], r["t_99"] is not None and r["accuracy"][-1] >= 0.99
    (4, True)
    """
    d, H, d_h, m = (int(params[k]) for k in ("d", "H", "d_h", "m"))
    S, R = split_facts(int(params["facts"]))
    D, T = int(params["D"]), int(params["T"])
    steps, batch = int(params["steps"]), int(params["batch"])
    lr = float(params["lr"])
    every, reps = int(params["eval_every"]), int(params.get("eval_repeats", 2))
    schedule = params.get("schedule", "constant")
    if schedule not in ("constant", "cosine"):
        raise ValueError(f"schedule must be 'constant' or 'cosine', got {schedule!r}")
    rng = _trial_rng(params["seed"], d, H, d_h, m, S, R)
    task = make_task(S, R, D, T=T, rng=rng)
    net = build_transformer(d, H, d_h, m, task=task, rng=rng, dtype=np.float32,
                            variant=params.get("variant", "ours"))
    erng = _trial_rng(params["seed"], 7, d, S, R)
    fs, fr = task.all_facts()
    fs, fr = np.tile(fs, reps), np.tile(fr, reps)
    ev_steps, accs = [], []

    def evaluate(t):
        # accuracy on every fact (fresh sequences of the evaluation stream) every
        # ``every`` steps, then the gradient of a fresh training batch
        if t % every == 0:
            tok, y, _, _ = task.sample(0, erng, subjects=fs, relations=fr)
            ev_steps.append(t)
            accs.append(float(net.loss(tok, y, grad=False)[2].mean()))
            if accs[-1] >= RECALL_LEVEL:
                return math.nan, None, True          # stop before the update
        if t == steps:
            return math.nan, None, False
        tok, y, _, _ = task.sample(batch, rng)
        loss, g, _ = net.loss(tok, y)
        return loss, g, False

    c0 = time.process_time()
    rate = lr if schedule == "constant" else \
        (lambda t: warmup_cosine(t, steps, lr=lr, warmup=COSINE_WARMUP, final=COSINE_FINAL))
    r = adam_loop(net.params, evaluate, steps=steps, lr=rate, stop=lambda t, loss, hit: hit)
    t99 = r.steps if r.stopped or r.info else None
    return {"facts": S * R, "params": net.param_count, "eval_steps": ev_steps,
            "accuracy": accs, "t_99": t99, "t_all": None, "cpu_seconds": time.process_time() - c0}


@fill_doc
@trial("factual_recall.paper_run")
def paper_protocol_trial(params):
    """One training run of the paper's protocol at one size and one learning rate (trial).

    Parameters
    ----------
    params : dict
        ``d``, ``H``, ``d_h``, ``m`` (model), ``S``, ``R``, ``D``, ``T`` (task),
        ``seed``, ``lr`` (constant Adam rate), ``variant`` (``"paper"`` or
        ``"ours"``, :class:`~validation.factual_recall.transformer.OneLayerTransformer`);
        optional ``steps`` (budget, default 16384), ``batch`` (default 1024),
        ``eval_every`` (default 128), ``n_test`` (default 1024).

    Returns
    -------
    dict
        ``facts`` (:math:`S R`), ``params`` (count :math:`4 H d_h d + 2 m d`),
        ``eval_steps`` and ``accuracy`` (test accuracy at every check),
        ``max_accuracy``, ``passed`` (``max_accuracy >= 0.99``),
        ``pass_step`` (step of the first check at 0.99 or more, None if none),
        ``steps`` (updates made), ``all_facts_accuracy`` (final parameters,
        every fact twice in fresh contexts of a separate stream),
        ``cpu_seconds``.

    See Also
    --------
    validation.factual_recall.search.next_paper_trial : Schedules these trials.
    validation.factual_recall.search.largest_passed : The criterion read from them.

    Notes
    -----
    The protocol of the paper's code (arXiv:2412.06538): a test set of
    ``n_test`` fresh sequences is drawn once; before update ``t`` with
    ``t % eval_every == 0`` its accuracy is measured and the run stops when it
    exceeds 0.99; after the last update (or the stop) it is measured once
    more.  The run *passes* when the largest measured accuracy is at least
    0.99 (with 1024 test sequences, "above" and "at least" both mean 1014 or
    more correct).  Every step draws ``batch`` fresh sequences; Adam
    (``betas = (0.9, 0.999)``, ``eps = 1e-8``, no weight decay) at the
    constant rate ``lr`` on ``Q, K, V, O, W1, b, W2``; embeddings frozen.

    The task, the initialisation, the training batches and the test set
    depend on ``(seed, d, H, d_h, m, S, R)`` only, so the learning rates of one
    size are paired (as in the paper's code, where one seed fixes them all).
    A run that passes at ``pass_step`` passes under every budget ``>= pass_step``
    and, being a prefix, fails under every smaller one.

    %(ref_papers_protocol_paper)s

    Examples
    --------
    >>> r = paper_protocol_trial({"d": 8, "H": 2, "d_h": 4, "m": 8, "S": 2, "R": 2, "D": 2,
    ...                           "T": 4, "seed": 0, "lr": 0.01, "variant": "paper",
    ...                           "steps": 512, "batch": 64, "eval_every": 32, "n_test": 256})
    >>> r["passed"], r["pass_step"] == r["steps"], r["max_accuracy"] > 0.99
    (True, True, True)
    """
    d, H, d_h, m = (check_int(k, params[k], low=0) for k in ("d", "H", "d_h", "m"))
    S, R = check_int("S", params["S"], low=1), check_int("R", params["R"], low=1)
    D, T = int(params["D"]), int(params["T"])
    lr = check_real("lr", params["lr"], low=0, low_open=True, allow_array=False)
    steps = check_int("steps", params.get("steps", 16384), low=1)
    batch = check_int("batch", params.get("batch", 1024), low=1)
    every = check_int("eval_every", params.get("eval_every", 128), low=1)
    n_test = check_int("n_test", params.get("n_test", 1024), low=1)
    variant = params.get("variant", "paper")
    rng = _trial_rng(params["seed"], 11, d, H, d_h, m, S, R)
    task = make_task(S, R, D, T=T, rng=rng)
    net = build_transformer(d, H, d_h, m, task=task, rng=rng, dtype=np.float32, variant=variant)
    trng = _trial_rng(params["seed"], 12, d, H, d_h, m, S, R)
    test_tok, test_y, _, _ = task.sample(n_test, trng)
    ev_steps, accs = [], []

    def test_accuracy(t):
        ev_steps.append(int(t))
        accs.append(float(net.loss(test_tok, test_y, grad=False)[2].mean()))
        return accs[-1]

    def evaluate(t):
        if t == steps:                                   # the check after the last update
            test_accuracy(t)
            return math.nan, None, False
        if t % every == 0 and test_accuracy(t) > RECALL_LEVEL:
            return math.nan, None, True                  # stop before the update
        tok, y, _, _ = task.sample(batch, rng)
        loss, g, _ = net.loss(tok, y)
        return loss, g, False

    c0 = time.process_time()
    r = adam_loop(net.params, evaluate, steps=steps, lr=lr, stop=lambda t, loss, hit: hit)
    best = max(accs)
    above = [t for t, a in zip(ev_steps, accs) if a >= RECALL_LEVEL]
    fs, fr = task.all_facts()
    erng = _trial_rng(params["seed"], 13, d, S, R)
    tok, y, _, _ = task.sample(0, erng, subjects=np.tile(fs, 2), relations=np.tile(fr, 2))
    return {"facts": S * R, "params": net.param_count, "eval_steps": ev_steps, "accuracy": accs,
            "max_accuracy": best, "passed": bool(best >= RECALL_LEVEL),
            "pass_step": above[0] if above else None, "steps": int(r.steps),
            "all_facts_accuracy": float(net.loss(tok, y, grad=False)[2].mean()),
            "cpu_seconds": time.process_time() - c0}
