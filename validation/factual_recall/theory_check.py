"""Factual-recall memories and learning dynamics against theory (docs/factual_recall.md).

Three checks (docs/factual_recall.md#memories-against-theory and the sections after it):

1. **Linear memory vs the finite-p replica capacity.**  The linear associative
   memory of :mod:`validation.factual_recall.memories` (``N`` inputs, ``N``
   outputs, ``W`` in ``R^{d x d}``, cross-entropy) is the original problem (OP)
   of arXiv:2605.10795.  :func:`linear_recall_trial` trains it (constant-rate
   Adam from ``W = 0``, the loss and embeddings of ``memories.py``) and records
   the first step at which all facts, and at which 99% of them, are recalled;
   :func:`capacity_fits` fits the success probability over ``N`` (logistic in
   the load ``N ln N / d^2``) for every step budget, and
   :func:`theory_prediction` gives ``alpha_c_finite`` solved self-consistently
   at ``d`` (``validation.linear_memory.theory.full_rank_threshold``).
2. **MLP memory vs counting bounds.**  :func:`mlp_recall_trial` and
   :func:`mlp_capacity_fits` measure ``N = c m d`` for the two-class MLP memory;
   :func:`counting_bounds` gives Cover's / Gardner's numbers for the same
   parameter count.
3. **Saddle escape times** of the sequential-learning model
   (:mod:`validation.factual_recall.sequential`): :func:`escape_trial`,
   :func:`escape_rates` (linearised growth rates at the saddle, no free
   parameter) and :func:`fit_escape_slopes`.

Every trial function is module level and takes one JSON record, so it runs
under :func:`validation.engine.run_sweep` with a JSONL store; the stored full
runs used by the report's quick mode live in ``validation/factual_recall/stored/``
(regenerate with ``python -m validation.factual_recall.theory_check``).
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hcizz.cli import ArgumentParser
from scipy import stats

from hcizz.checks import check_int, check_real
from validation.logistic import fit_threshold
from validation.optim import Adam, warmup_cosine
from hcizz.results import Result
from replica import p_of_load
from .memories import init_mlp_memory, linear_memory_loss, mlp_memory_loss
from validation.engine.trials import trial

__all__ = ["embeddings", "linear_recall_trial", "mlp_recall_trial", "capacity_fits",
           "theory_prediction", "mlp_capacity_fits", "counting_bounds",
           "escape_rates", "escape_trial", "fit_escape_slopes", "STORE_DIR", "LINEAR_PLAN",
           "MLP_PLAN", "ESCAPE_PLAN", "TRANSFORMER_PLAN", "transformer_budget_trial", "run_plan",
           "summarize_linear", "summarize_mlp", "summarize_transformer", "CapacityPrediction",
           "CountingBounds", "EscapeRates"]

#: Folder of the stored full-mode sweeps (JSONL, :mod:`validation.engine` format).
STORE_DIR = Path(__file__).resolve().parent / "stored"

_KINDS = ("sphere", "gaussian")


def embeddings(kind, G):
    """Turn the rows of ``G`` (i.i.d. ``N(0, 1)``) into sphere or scaled Gaussian embeddings.

    Parameters
    ----------
    kind : {"sphere", "gaussian"}
        ``"sphere"``: ``g / ||g||`` (uniform on the unit sphere, as
        :func:`validation.factual_recall.memories.sphere_embeddings`);
        ``"gaussian"``: ``g / sqrt(d)`` (i.i.d. ``N(0, I/d)``, the OP data of
        arXiv:2605.10795 up to a global scale, which changes no argmax).
    G : ndarray (n, d)
        Standard Gaussian draws.

    Returns
    -------
    ndarray (n, d)
        Same draw in both cases, so ``sphere`` and ``gaussian`` runs with
        equal seeds are paired (only the row norms differ).

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


def _first(flags):
    return None if flags is None else int(flags)


@trial("factual_recall.linear_recall", aliases=("validation.factual_recall.theory_check:linear_recall_trial",))
def linear_recall_trial(params):
    """One training run of the factual-recall linear memory (trial for ``run_sweep``).

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
        ``n``, ``d``, ``load`` (``n ln n / d^2``), ``t_all`` and ``t_99``: first
        step (number of updates made) at which all facts, resp. at least
        ``ceil(0.99 n)`` of them, are recalled (None if never within the
        budget), ``final_accuracy`` (at the stop), ``steps`` (updates made),
        ``cpu_seconds``.

    Notes
    -----
    Facts ``x_i -> u_i`` with ``x, u`` from :func:`embeddings` of one Gaussian
    draw fixed by ``(seed, d, n)``; scores ``X W^T U^T``, loss and gradient of
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
    need99 = math.ceil(0.99 * n - 1e-9)
    W = np.zeros((d, d), dtype)
    c0 = time.process_time()

    def lossfn(grad):
        loss, dW, corr = linear_memory_loss(W, X, U, targets, grad=grad)
        return [dW], corr

    t_all, t_99, acc, t = _train_until_recalled(lossfn, [W], n, need99, steps, lr)
    return {"n": n, "d": d, "load": n * math.log(n) / d**2, "t_all": _first(t_all),
            "t_99": _first(t_99), "final_accuracy": acc, "steps": t,
            "cpu_seconds": time.process_time() - c0}


def _train_until_recalled(lossfn, params, n, need99, steps, lr):
    """Constant-rate Adam on ``params`` until all ``n`` facts are recalled or the
    budget ``steps`` is spent; ``lossfn(grad) -> (grads, correct)``.  Returns the
    first step with all facts recalled (or None), the first with ``need99``, the
    final accuracy and the last step."""
    opt = Adam(params)
    t_all = t_99 = None
    acc = 0.0
    t = 0
    for t in range(steps + 1):
        g, corr = lossfn(t < steps)
        k = int(corr.sum())
        acc = k / n
        if t_99 is None and k >= need99:
            t_99 = t
        if k == n:
            t_all = t
            break
        if t == steps:
            break
        opt.step(g, lr=lr)
    return t_all, t_99, acc, t


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
    need99 = math.ceil(0.99 * n - 1e-9)
    c0 = time.process_time()

    def lossfn(grad):
        loss, g, corr = mlp_memory_loss(p, X, U, targets, grad=grad)
        return g, corr

    t_all, t_99, acc, t = _train_until_recalled(lossfn, p, n, need99, steps, lr)
    return {"n": n, "d": d, "m": m, "classes": k, "load": n / (m * d), "t_all": _first(t_all),
            "t_99": _first(t_99), "final_accuracy": acc, "steps": t,
            "cpu_seconds": time.process_time() - c0}


def _success(records, crit, budget):
    key = "t_all" if crit == "all" else "t_99"
    return np.array([r[key] is not None and r[key] <= budget for r in records])


def capacity_fits(records, *, budgets, load_key="load"):
    """Logistic capacity fit per criterion and step budget.

    Parameters
    ----------
    records : list of dict
        Results of :func:`linear_recall_trial` (or :func:`mlp_recall_trial`)
        for one configuration (one ``d``), run with the largest budget.
    budgets : sequence of int
        Step budgets; success within ``B`` is ``t <= B``.
    load_key : str
        Record field used as the abscissa of the fit (``"load"``).

    Returns
    -------
    dict
        ``{"all": [...], "99": [...]}``, one entry per budget with ``budget``,
        ``threshold``, ``ci_low``, ``ci_high`` (load at 50% success and its 95%
        profile-likelihood CI, :func:`validation.logistic.fit_threshold`)
        and ``successes``.

    Notes
    -----
    The fit is monotone in ``N`` by construction (a logistic in the load, an
    increasing function of ``N``), pools every seed and every ``N``, and its
    CI includes both the seed spread and the ``N`` resolution.

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#measurement
    """
    x = np.array([r[load_key] for r in records], float)
    out = {}
    for crit in ("all", "99"):
        rows = []
        for b in budgets:
            s = _success(records, crit, b)
            f = fit_threshold(x, s)
            rows.append({"budget": int(b), "threshold": f.threshold, "ci_low": f.ci_low,
                         "ci_high": f.ci_high, "successes": int(s.sum()), "trials": int(s.size)})
        out[crit] = rows
    return out


@dataclass(frozen=True)
class CapacityPrediction(Result):
    """Finite-size capacity of the linear memory at ``d`` (:func:`theory_prediction`), a frozen record.

    Parameters
    ----------
    alpha : float
        Self-consistent ``alpha_c_finite`` at ``d``.
    stderr : float
        Its Monte Carlo standard error.
    N : float
        Real ``N`` with ``N ln N = alpha d^2``.

    References
    ----------
    docs/theory_full_rank.md#load-and-capacity
    """

    alpha: float
    stderr: float
    N: float


def theory_prediction(d):
    """``alpha_c_finite`` solved self-consistently at ``d`` and the matching ``N``.

    Parameters
    ----------
    d : int
        Dimension (>= 2).

    Returns
    -------
    CapacityPrediction
        ``alpha`` and ``stderr`` (``validation.linear_memory.theory.full_rank_threshold``:
        ``alpha = alpha_c_finite(p)`` with ``p ln p = alpha d^2``), ``N``
        (real, ``N ln N = alpha d^2``).

    References
    ----------
    arXiv:2605.10795; docs/theory_full_rank.md; docs/linear_memory.md.

    Examples
    --------
    >>> t = theory_prediction(16)      # doctest: +SKIP
    >>> round(t["alpha"], 3), round(t["N"])  # doctest: +SKIP
    (0.993, 62)
    """
    from validation.linear_memory.theory import full_rank_threshold

    d = check_int("d", d, low=2)
    e = full_rank_threshold(d)
    return CapacityPrediction(alpha=float(e.value), stderr=float(e.stderr),
                              N=float(p_of_load(e.value, d)))


def mlp_capacity_fits(records, *, budgets):
    """Per-configuration logistic fit of ``c = N / (m d)`` for the MLP memory.

    Parameters
    ----------
    records : list of dict
        :func:`mlp_recall_trial` results of one ``(d, m)``.
    budgets : sequence of int
        Step budgets.

    Returns
    -------
    dict
        As :func:`capacity_fits` with the threshold in units of ``N / (m d)``.

    References
    ----------
    docs/factual_recall.md#mlp-memory-against-counting-bounds
    """
    return capacity_fits(records, budgets=budgets, load_key="load")


@dataclass(frozen=True)
class CountingBounds(Result):
    """Counting reference points for the MLP memory (:func:`counting_bounds`), a frozen record.

    Parameters
    ----------
    params : int
        ``2 m d``.
    cover_bound : float
        ``2 params / (m d) = 4``.
    effective_weights : int
        ``m d + 2 m``.
    cover_effective : float
        ``2 (m d + 2 m) / (m d)``.
    classes : int
        Number of output classes.

    References
    ----------
    docs/factual_recall.md#mlp-memory-against-counting-bounds
    """

    params: int
    cover_bound: float
    effective_weights: int
    cover_effective: float
    classes: int


def counting_bounds(d, m, classes=2):
    """Counting bounds on the number of two-class facts for the MLP memory's size.

    Parameters
    ----------
    d, m : int
        Input dimension and width.
    classes : int
        Number of output classes (the effective-weight count assumes 2).

    Returns
    -------
    CountingBounds
        ``params`` = ``2 m d`` (the paper's count); ``cover_bound`` = ``2 * params
        / (m d) = 4``: Cover's function counting / Gardner's zero-margin capacity
        of 2 patterns per adjustable weight applied to that count, in units of
        ``m d``; ``effective_weights`` = ``m d + 2 m`` (with two classes the
        memory is the network ``x -> a . relu(W1 x + b)``, ``a = W2^T (u_1 - u_2)``:
        ``W2`` enters only through its ``m`` numbers ``a``); ``cover_effective``
        = ``2 (m d + 2 m) / (m d) = 2 + 4 / d``.

    Notes
    -----
    Cover (1965): ``C(N, n) = 2 sum_{k<n} binom(N-1, k)`` of the ``2^N``
    dichotomies of ``N`` points in general position are realisable by a
    threshold unit with ``n`` adjustable weights; the fraction is 1/2 at
    ``N = 2 n``.  Gardner (1988): the typical volume of zero-margin solutions
    vanishes at ``N / n = 2``.  Both are statements about a *single*
    threshold unit; a network with hidden units can exceed 2 per weight
    (the upper bound grows like ``log`` of the number of hidden units), so
    these are reference points, not bounds, for the MLP.

    References
    ----------
    T. M. Cover, IEEE Trans. Electron. Comput. EC-14, 326 (1965); E. Gardner,
    J. Phys. A 21, 257 (1988); docs/factual_recall.md#mlp-memory-against-counting-bounds.

    Examples
    --------
    >>> b = counting_bounds(16, 16)
    >>> b["cover_bound"], b["cover_effective"]
    (4.0, 2.25)
    """
    d = check_int("d", d, low=1)
    m = check_int("m", m, low=1)
    params = 2 * m * d
    eff = m * d + 2 * m
    return CountingBounds(params=params, cover_bound=2.0 * params / (m * d), effective_weights=eff,
                          cover_effective=2.0 * eff / (m * d), classes=int(classes))


# ----------------------------------------------------------------------------- escape times

@dataclass(frozen=True)
class EscapeRates(Result):
    """Linearised growth rates at the saddle (:func:`escape_rates`), a frozen record.

    Parameters
    ----------
    relation : float
        Rate of the relation mode, ``sqrt((1 - 1/R) / D) / R``.
    subject : float
        Rate of the subject mode, ``sqrt((1 - 1/D) / R) / S``.

    References
    ----------
    docs/factual_recall.md#escape-times
    """

    relation: float
    subject: float


def escape_rates(S, R, D):
    """Linearised growth rates of the relation and subject modes at the saddle.

    Parameters
    ----------
    S, R, D : int
        Subjects, relations, answers per relation (``S`` a multiple of ``D``
        so that the answers are uniform).

    Returns
    -------
    EscapeRates
        ``relation`` = ``sqrt((1 - 1/R) / D) / R``, ``subject`` =
        ``sqrt((1 - 1/D) / R) / S``.

    Notes
    -----
    Near ``k = 0, W = 0`` the softmax is uniform and the gradient of the mean
    cross-entropy couples each token ``v``'s score ``k_v`` and value column
    ``w_v`` through ``M_v = E[c_v (p - e_y)]`` (``c_v`` the count of ``v``,
    ``p`` uniform): ``dk_v/dt = -M_v . w_v``, ``dw_v/dt = -k_v M_v``, whose
    unstable mode grows as ``exp(|M_v| t)``.  A relation token is in ``1/R``
    of the facts, whose answers are uniform on its block:
    ``|M_r|^2 = (1/D - 1/(D R)) / R^2``; a subject token in ``1/S`` of them,
    answers one per block: ``|M_s|^2 = (1/R - 1/(D R)) / S^2``.  Once the
    relation is learnt (mass uniform on the right block), ``|M_s|`` is
    unchanged, so the subject mode grows at the same rate throughout.  The
    logits of a mode are the product ``k_v w_v`` of two amplitudes of size
    ``init e^{lambda t}``, so escape (logits of order 1) takes
    ``t ~ ln(1/init) / lambda`` in continuous time; plain GD at rate ``lr``
    multiplies the amplitude by ``1 + lr lambda`` per step, so the predicted
    slope of the escape step against ``ln(1/init)`` is
    ``1 / ln(1 + lr lambda)`` (``~ 1 / (lr lambda)``).

    References
    ----------
    arXiv:2412.06538 (sequential learning); docs/factual_recall.md#escape-times.

    Examples
    --------
    >>> r = escape_rates(64, 4, 8)
    >>> round(r["relation"], 5), round(r["subject"], 5)
    (0.07655, 0.00731)
    """
    S = check_int("S", S, low=1)
    R = check_int("R", R, low=2)
    D = check_int("D", D, low=2)
    return EscapeRates(relation=math.sqrt((1 - 1 / R) / D) / R,
                       subject=math.sqrt((1 - 1 / D) / R) / S)


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


@trial("factual_recall.escape", aliases=("validation.factual_recall.theory_check:escape_trial",))
def escape_trial(params):
    """Escape steps of the two plateaus of the sequential-learning model (trial).

    Parameters
    ----------
    params : dict
        ``S``, ``R``, ``D``, ``T``, ``lr``, ``init``, ``seed``, ``steps``;
        optional ``eval_every`` (default 1).

    Returns
    -------
    dict
        ``t_relation`` / ``t_subject``: first step at which the relation
        (subject) loss falls below half its initial value ``ln R`` (``ln D``),
        interpolated between recorded steps (None if never); ``final_total``;
        ``cpu_seconds``.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#escape-times

    Examples
    --------
    >>> r = escape_trial({"S": 16, "R": 2, "D": 4, "T": 4, "lr": 4.0, "init": 1e-3,
    ...                   "seed": 0, "steps": 300})
    >>> r["t_relation"] < r["t_subject"]
    True
    """
    from .sequential import train_sequential

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


def _ols(x, y, level=0.95):
    x, y = np.asarray(x, float), np.asarray(y, float)
    A = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = y - A @ coef
    dof = len(x) - 2
    s2 = float(r @ r) / dof
    cov = s2 * np.linalg.inv(A.T @ A)
    se = math.sqrt(cov[1, 1])
    q = stats.t.ppf(0.5 + level / 2, dof)
    return {"slope": float(coef[1]), "intercept": float(coef[0]), "stderr": se,
            "ci": [float(coef[1] - q * se), float(coef[1] + q * se)], "n": int(len(x))}


def fit_escape_slopes(records, S, R, D, level=0.95):
    """Fit the escape steps against ``ln(1/init)`` and ``ln lr``; compare with theory.

    Parameters
    ----------
    records : list of (params, result) pairs
        :func:`escape_trial` parameter records and results.
    S, R, D : int
        Task sizes (for :func:`escape_rates`).
    level : float
        Confidence level of the t-intervals.

    Returns
    -------
    dict
        For each plateau ``relation`` / ``subject``:

        * ``init_slope`` per ``lr``: OLS slope of the escape step against
          ``ln(1/init)`` with its CI, and the prediction ``1 / ln(1 + lr lambda)``;
        * ``init_slope_scaled``: slope of ``ln(1 + lr lambda) * t`` against
          ``ln(1/init)`` pooled over all ``lr`` (prediction 1);
        * ``lr_exponent``: slope of ``ln t`` against ``ln lr`` at the
          smallest ``init``, with CI (gradient flow: -1; the discrete-step
          prediction ``d ln(1/ln(1 + lr lambda)) / d ln lr`` at the mean ``lr``
          is given as ``lr_exponent_theory``).

    Notes
    -----
    OLS with Student-t intervals: the residuals are the seed-to-seed spread
    of the escape step (random initial direction), treated as independent
    and homoscedastic within a fit.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#escape-times
    """
    lam = escape_rates(S, R, D)
    out = {}
    for stage in ("relation", "subject"):
        key = f"t_{stage}"
        rows = [(p["lr"], p["init"], r[key]) for p, r in records if r[key] is not None]
        lrs = sorted({x[0] for x in rows})
        per = {}
        for lr in lrs:
            sub = [(math.log(1 / i), t) for l_, i, t in rows if l_ == lr]
            if len({s[0] for s in sub}) >= 2 and len(sub) >= 3:
                f = _ols(*zip(*sub), level=level)
                f["theory"] = 1.0 / math.log1p(lr * lam[stage])
                per[f"{lr:g}"] = f
        scaled = _ols([math.log(1 / i) for _, i, _ in rows],
                      [math.log1p(l_ * lam[stage]) * t for l_, _, t in rows], level=level)
        scaled["theory"] = 1.0
        i0 = min(x[1] for x in rows)
        sub = [(math.log(l_), math.log(t)) for l_, i, t in rows if i == i0]
        lre = _ols(*zip(*sub), level=level) if len({s[0] for s in sub}) >= 2 else None
        lm = float(np.exp(np.mean([s[0] for s in sub])))
        x = lm * lam[stage]
        theo = -x / ((1 + x) * math.log1p(x))
        out[stage] = {"rate": lam[stage], "init_slope": per, "init_slope_scaled": scaled,
                      "lr_exponent": lre, "lr_exponent_theory": theo,
                      "lr_exponent_flow": -1.0, "lr_exponent_init": i0,
                      "missing": sum(1 for _, r in records if r[key] is None)}
    return out


# ----------------------------------------------------------------------------- transformer budget

@trial("factual_recall.transformer_budget", aliases=("validation.factual_recall.theory_check:transformer_budget_trial",))
def transformer_budget_trial(params):
    """Transformer trained at a constant rate, accuracy recorded along the way (trial).

    Parameters
    ----------
    params : dict
        ``d``, ``H``, ``d_h``, ``m`` (model), ``facts`` (``S R`` with the square
        split of ``experiments._split_facts``),
        ``D``, ``T``, ``seed``, ``steps``, ``batch``, ``lr`` (Adam rate),
        ``schedule`` ("constant", default, or "cosine": 5% warm-up then cosine
        decay to 1% over ``steps``, the schedule of
        :func:`validation.factual_recall.experiments.train_transformer`),
        ``eval_every`` (steps between evaluations; the run stops at the first
        evaluation with >= 99% recalled), ``eval_repeats``.

    Returns
    -------
    dict
        ``facts`` (actual ``S R``), ``params`` (count), ``eval_steps`` and
        ``accuracy`` (fraction of (fact, sequence) pairs recalled at each
        evaluation, on fresh sequences from a separate stream, so evaluating
        does not change training), ``t_99`` (first evaluated step with accuracy
        >= 0.99, None if none), ``cpu_seconds``.

    Notes
    -----
    With a constant rate, the run with budget ``B`` is the first ``B`` steps of
    this run, so success within ``B`` is ``t_99 <= B`` (up to the evaluation
    grid ``eval_every``); a cosine run is one budget only.

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#transformer-budget-study-small-size
    """
    from .experiments import _split_facts
    from .task import make_task
    from .transformer import OneLayerTransformer

    d, H, d_h, m = (int(params[k]) for k in ("d", "H", "d_h", "m"))
    S, R = _split_facts(int(params["facts"]))
    D, T = int(params["D"]), int(params["T"])
    steps, batch = int(params["steps"]), int(params["batch"])
    lr = float(params["lr"])
    every, reps = int(params["eval_every"]), int(params.get("eval_repeats", 2))
    schedule = params.get("schedule", "constant")
    if schedule not in ("constant", "cosine"):
        raise ValueError(f"schedule must be 'constant' or 'cosine', got {schedule!r}")
    rng = _trial_rng(params["seed"], d, H, d_h, m, S, R)
    task = make_task(S, R, D, T=T, rng=rng)
    net = OneLayerTransformer(d, H, d_h, m, vocab=task.vocab, n_answers=task.n_answers,
                              rng=rng, dtype=np.float32)
    erng = _trial_rng(params["seed"], 7, d, S, R)
    fs, fr = task.all_facts()
    fs, fr = np.tile(fs, reps), np.tile(fr, reps)
    opt = Adam(net.params)
    c0 = time.process_time()
    ev_steps, accs, t99 = [], [], None
    for t in range(steps + 1):
        if t % every == 0:
            tok, y, _, _ = task.sample(0, erng, subjects=fs, relations=fr)
            acc = float(net.loss(tok, y, grad=False)[2].mean())
            ev_steps.append(t)
            accs.append(acc)
            if acc >= 0.99:
                t99 = t
                break
        if t == steps:
            break
        tok, y, _, _ = task.sample(batch, rng)
        _, g, _ = net.loss(tok, y)
        opt.step(g, lr=lr if schedule == "constant" else
                 warmup_cosine(t, steps, lr=lr, warmup=0.05, final=0.01))
    return {"facts": S * R, "params": net.param_count, "eval_steps": ev_steps,
            "accuracy": accs, "t_99": t99, "t_all": None, "cpu_seconds": time.process_time() - c0}


# ----------------------------------------------------------------------------- summaries

def _group_key(p):
    return (int(p["d"]), float(p["lr"]), int(p["steps"]), p.get("inputs", "sphere"),
            p.get("outputs", "sphere"))


def _converged(rows):
    """Budget at which the threshold stopped moving: the smallest budget ``B`` whose
    threshold and every larger budget's lie inside ``B``'s CI (None if none)."""
    for i, r in enumerate(rows):
        if not math.isfinite(r["threshold"]):
            continue
        later = rows[i:]
        if all(math.isfinite(q["threshold"]) and r["ci_low"] <= q["threshold"] <= r["ci_high"]
               for q in later):
            return r["budget"]
    return None


# ----------------------------------------------------------------------------- plans

#: Full-mode plan of the linear-memory check (stored in ``stored/linear_memory.jsonl``):
#: ``groups`` are ``(d, lr, steps, inputs, outputs, seeds)``; ``N`` on ``rel`` times the
#: theory's ``N`` at ``d``.  The learning-rate / budget study is the d = 16, 32 groups at
#: three rates; the paired Gaussian groups (OP data) check the sphere normalisation.
LINEAR_PLAN = {"lr": 0.5,
               "rel": (0.6, 0.75, 0.9, 0.95, 1.0, 1.05, 1.1, 1.175, 1.25, 1.4),
               "budgets": (128, 256, 512, 1024, 2048, 4096, 8192),
               "groups": tuple([(d, 0.5, 8192, "sphere", "sphere", 4) for d in (8, 16, 32)]
                               + [(64, 0.5, 2048, "sphere", "sphere", 3)]
                               + [(d, lr, 8192, "sphere", "sphere", 4)
                                  for d in (16, 32) for lr in (0.2, 1.0)]
                               + [(d, 0.5, 8192, "gaussian", "gaussian", 4) for d in (8, 16, 32)]
                               + [(64, 0.5, 2048, "gaussian", "gaussian", 3)]
                               + [(16, 0.5, 8192, "sphere", "gaussian", 4)])}
#: Full-mode plan of the MLP check (``stored/mlp_memory.jsonl``).
MLP_PLAN = {"dm": ((8, 8), (8, 16), (16, 16), (16, 32), (32, 16)), "seeds": 3, "steps": 8192,
            "lr": 0.01, "c": (1.0, 1.25, 1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 4.0),
            "budgets": (512, 1024, 2048, 4096, 8192, 16384, 32768),
            # budget extension where 8192 steps had not converged (same draws: the first
            # 8192 steps of a long run are the short run)
            "long": {"dm": ((8, 16), (16, 16), (16, 32)), "seeds": 2, "steps": 32768,
                     "c": (2.0, 2.5, 2.75, 3.0, 3.25, 3.5)}}
#: Transformer budget study (``stored/transformer_budget.jsonl``): one shape of the quick
#: experiment (d=16, H=2, d_h=8, m=16, D=8, T=8, batch 128), facts on a grid, constant-rate
#: runs (every budget from one run) and cosine runs at three budgets.
TRANSFORMER_PLAN = {"shape": (16, 2, 8, 16), "D": 8, "T": 8, "batch": 128, "seeds": 3,
                    "facts": (36, 49, 56, 64, 72, 81, 100, 121),
                    "constant": {"lrs": (0.003, 0.01), "steps": 12000, "eval_every": 500},
                    "cosine": {"lr": 0.01, "steps": (500, 2000, 8000)},
                    "budgets": (500, 1000, 2000, 4000, 8000, 12000)}
#: Full-mode plan of the escape-time check (``stored/escape_times.jsonl``).
ESCAPE_PLAN = {"S": 64, "R": 4, "D": 8, "T": 8, "lrs": (1.0, 2.0, 4.0),
               "inits": (1e-5, 1e-4, 1e-3, 1e-2), "seeds": 3}


def linear_params(group, rel=LINEAR_PLAN["rel"]):
    """Parameter records of one linear-memory group ``(d, lr, steps, inputs, outputs, seeds)``
    (``N`` = ``rel`` times the theory's ``N`` at ``d``, rounded, duplicates merged)."""
    d, lr, steps, inputs, outputs, seeds = group
    nth = theory_prediction(d)["N"]
    ns = sorted({max(2, int(round(nth * r))) for r in rel})
    return [{"d": int(d), "n": n, "seed": s, "steps": int(steps), "lr": float(lr),
             "inputs": inputs, "outputs": outputs} for n in ns for s in range(seeds)]


def mlp_params(d, m, plan=MLP_PLAN, long=False):
    """Parameter records of the MLP check at ``(d, m)`` (``long``: the budget extension)."""
    sub = plan["long"] if long else plan
    ns = sorted({int(round(c * m * d)) for c in sub["c"]})
    return [{"d": int(d), "m": int(m), "n": n, "seed": s, "steps": sub["steps"],
             "lr": plan["lr"], "classes": 2} for n in ns for s in range(sub["seeds"])]


def escape_params(plan=ESCAPE_PLAN):
    """Parameter records of the escape-time check (steps sized from the predicted rates)."""
    lam = escape_rates(plan["S"], plan["R"], plan["D"])
    out = []
    for lr in plan["lrs"]:
        for init in plan["inits"]:
            steps = int(math.ceil(2.0 * math.log(1 / init) / math.log1p(lr * lam["subject"]))) + 200
            for s in range(plan["seeds"]):
                out.append({"S": plan["S"], "R": plan["R"], "D": plan["D"], "T": plan["T"],
                            "lr": float(lr), "init": float(init), "seed": s, "steps": steps,
                            "eval_every": 1})
    return out


def transformer_params(plan=TRANSFORMER_PLAN):
    """Parameter records of the transformer budget study."""
    d, H, d_h, m = plan["shape"]
    base = {"d": d, "H": H, "d_h": d_h, "m": m, "D": plan["D"], "T": plan["T"],
            "batch": plan["batch"], "eval_repeats": 2}
    out = []
    for f in plan["facts"]:
        for s in range(plan["seeds"]):
            for lr in plan["constant"]["lrs"]:
                out.append(dict(base, facts=f, seed=s, lr=float(lr), schedule="constant",
                                steps=plan["constant"]["steps"],
                                eval_every=plan["constant"]["eval_every"]))
            for st in plan["cosine"]["steps"]:
                out.append(dict(base, facts=f, seed=s, lr=float(plan["cosine"]["lr"]),
                                schedule="cosine", steps=int(st), eval_every=min(250, int(st))))
    return out


def run_plan(which, *, store_dir=STORE_DIR, workers=1, progress=True, compute=True,
             executor=None):
    """Run (or read back) one stored plan: ``"linear"``, ``"mlp"`` or ``"escape"``.

    Parameters
    ----------
    which : {"linear", "mlp", "escape", "transformer"}
        The plan.
    store_dir : path
        Folder of the JSONL stores.
    workers : int
        Worker processes of ``run_sweep``.
    progress : bool
        Print progress.
    compute : bool
        False: only read the stored records back (missing trials are left
        out); True: run the missing trials and append them to the store.
    executor : str or validation.engine.WorkerPool, optional
        Passed to ``run_sweep``; default ``"processes"`` if ``workers > 1``
        else ``"inprocess"``.

    Returns
    -------
    list of (params, result)
        Every ok record of the plan.

    References
    ----------
    docs/factual_recall.md#memories-against-theory
    """
    import importlib

    from validation.engine import run_sweep, read_store, trial_key

    # the importable module's functions (not ``__main__``'s under ``python -m``): the
    # store keys name the trial function
    mod = importlib.import_module("validation.factual_recall.theory_check")
    if which == "linear":
        fn, name = mod.linear_recall_trial, "linear_memory.jsonl"
        params = [p for g in LINEAR_PLAN["groups"] for p in linear_params(g)]
    elif which == "mlp":
        fn, name = mod.mlp_recall_trial, "mlp_memory.jsonl"
        params = [p for d, m in MLP_PLAN["dm"] for p in mlp_params(d, m)]
        params += [p for d, m in MLP_PLAN["long"]["dm"] for p in mlp_params(d, m, long=True)]
    elif which == "escape":
        fn, name = mod.escape_trial, "escape_times.jsonl"
        params = escape_params()
    elif which == "transformer":
        fn, name = mod.transformer_budget_trial, "transformer_budget.jsonl"
        params = transformer_params()
    else:
        raise ValueError(f"which must be 'linear', 'mlp', 'escape' or 'transformer', got "
                         f"{which!r}")
    path = Path(store_dir) / name
    if compute:
        path.parent.mkdir(parents=True, exist_ok=True)
        if executor is None:
            executor = "processes" if workers > 1 else "inprocess"
        recs = run_sweep(fn, params, store=path, workers=workers, progress=progress,
                         executor=executor, label=which)
        return [(r["params"], r["result"]) for r in recs if r["status"] == "ok"]
    scan = read_store(path, warn=False)
    ok = scan.ok
    out = []
    for p in params:
        r = ok.get(trial_key(p, fn))
        if r is not None:
            out.append((r["params"], r["result"]))
    return out


def summarize_linear(records, plan=LINEAR_PLAN):
    """Capacity fits, budget study and theory for every group of the linear plan.

    Parameters
    ----------
    records : list of (params, result)
        :func:`linear_recall_trial` records (e.g. from :func:`run_plan`).
    plan : dict
        The plan (its ``budgets``).

    Returns
    -------
    list of dict
        One per group ``(d, lr, steps, inputs, outputs)`` present: ``fits``
        (:func:`capacity_fits` over the budgets up to the group's ``steps``),
        ``converged`` (per criterion: smallest budget from which every larger
        budget's threshold lies in its CI), ``final`` (per criterion: the fit at
        the largest budget with ``N`` = real ``N`` of the threshold and of its
        CI ends), ``theory`` (:func:`theory_prediction`), ``ratio_all`` /
        ``ratio_99`` (measured load / theory load) and ``trials``.

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#results
    """
    groups = {}
    for p, r in records:
        groups.setdefault(_group_key(p), []).append(r)
    out = []
    for key in sorted(groups):
        d, lr, steps, inputs, outputs = key
        recs = groups[key]
        bud = [b for b in plan["budgets"] if b <= steps]
        fits = capacity_fits(recs, budgets=bud)
        th = theory_prediction(d)
        final = {}
        for crit in ("all", "99"):
            f = fits[crit][-1]
            final[crit] = dict(f, N=float(p_of_load(f["threshold"], d)) if math.isfinite(
                f["threshold"]) else math.nan,
                N_ci=[float(p_of_load(max(f["ci_low"], 0.0), d)) if math.isfinite(f["ci_low"])
                      else 0.0, float(p_of_load(f["ci_high"], d)) if math.isfinite(f["ci_high"])
                      else math.inf])
        out.append({"d": d, "lr": lr, "steps": steps, "inputs": inputs, "outputs": outputs,
                    "trials": len(recs), "fits": fits, "theory": th, "final": final,
                    "converged": {c: _converged(fits[c]) for c in fits},
                    "ratio_all": final["all"]["threshold"] / th["alpha"],
                    "ratio_99": final["99"]["threshold"] / th["alpha"],
                    "cpu_seconds": float(sum(r.get("cpu_seconds", 0.0) for r in recs))})
    return out


def summarize_mlp(records, plan=MLP_PLAN):
    """Fit ``c = N / (m d)`` per ``(d, m, steps)`` (99% and all recalled) and pooled.

    Parameters
    ----------
    records : list of (params, result)
        :func:`mlp_recall_trial` records.
    plan : dict
        The plan (its ``budgets`` and ``steps``).

    Returns
    -------
    dict
        ``configs`` (per ``(d, m, steps)``: ``fits`` per budget up to ``steps``,
        ``converged``, ``c_99`` / ``c_all`` with CIs at the largest budget,
        :func:`counting_bounds`); ``best`` (the rows of the base design: every
        configuration at ``plan["steps"]``, full ``c`` grid; the longer budget
        extension checks their convergence); ``pooled`` (one logistic fit of the
        records of the ``best`` rows, 99% and all-recalled criteria) and ``spread``
        (min and max of the ``best`` rows' ``c_99``).

    References
    ----------
    docs/factual_recall.md#mlp-memory-against-counting-bounds
    """
    groups = {}
    for p, r in records:
        groups.setdefault((int(p["d"]), int(p["m"]), int(p["steps"])), []).append(r)
    configs = []
    for (d, m, steps) in sorted(groups):
        recs = groups[(d, m, steps)]
        fits = capacity_fits(recs, budgets=[b for b in plan["budgets"] if b <= steps])
        row = {"d": d, "m": m, "steps": steps, "trials": len(recs), "fits": fits,
               "converged": {c: _converged(fits[c]) for c in fits}, **counting_bounds(d, m)}
        for crit in ("99", "all"):
            f = fits[crit][-1]
            row[f"c_{crit}"] = f["threshold"]
            row[f"c_{crit}_ci"] = [f["ci_low"], f["ci_high"]]
        configs.append(row)
    best = [row for row in configs if row["steps"] == plan["steps"]]
    pooled = {}
    for crit in ("99", "all"):
        key = "t_all" if crit == "all" else "t_99"
        x, y = [], []
        for row in best:
            for r in groups[(row["d"], row["m"], row["steps"])]:
                x.append(r["load"])
                y.append(r[key] is not None)
        f = fit_threshold(x, y)
        pooled[crit] = {"c": f.threshold, "ci": [f.ci_low, f.ci_high]}
    c99 = [r["c_99"] for r in best if math.isfinite(r["c_99"])]
    return {"configs": configs, "best": best, "pooled": pooled,
            "spread": [min(c99), max(c99)] if c99 else [math.nan, math.nan]}


def summarize_transformer(records, plan=TRANSFORMER_PLAN):
    """Capacity (facts at 99%) of the transformer against the step budget.

    Parameters
    ----------
    records : list of (params, result)
        :func:`transformer_budget_trial` records.
    plan : dict
        The plan (its ``budgets``, ``constant`` and ``cosine`` settings).

    Returns
    -------
    dict
        ``rows``: one per (schedule, lr, budget) with ``facts`` (50% point of the
        logistic fit of success against the number of facts, 99% criterion),
        ``ci``, ``facts_per_param`` and ``successes`` / ``trials``; ``params``
        (parameter count); ``converged`` per constant rate (smallest budget from
        which every larger budget's threshold lies in its CI).

    References
    ----------
    docs/factual_recall.md#transformer-budget-study-small-size
    """
    rows, conv, params = [], {}, None
    const = {}
    cos = {}
    for p, r in records:
        params = r["params"]
        if p["schedule"] == "constant":
            const.setdefault(float(p["lr"]), []).append(dict(r, load=float(r["facts"])))
        else:
            cos.setdefault(int(p["steps"]), []).append(dict(r, load=float(r["facts"])))
    for lr in sorted(const):
        fits = capacity_fits(const[lr], budgets=[b for b in plan["budgets"]
                                                 if b <= plan["constant"]["steps"]])["99"]
        conv[f"{lr:g}"] = _converged(fits)
        for f in fits:
            rows.append({"schedule": "constant", "lr": lr, "budget": f["budget"],
                         "facts": f["threshold"], "ci": [f["ci_low"], f["ci_high"]],
                         "facts_per_param": f["threshold"] / params,
                         "successes": f["successes"], "trials": f["trials"]})
    for st in sorted(cos):
        f = capacity_fits(cos[st], budgets=[st])["99"][0]
        rows.append({"schedule": "cosine", "lr": float(plan["cosine"]["lr"]), "budget": st,
                     "facts": f["threshold"], "ci": [f["ci_low"], f["ci_high"]],
                     "facts_per_param": f["threshold"] / params,
                     "successes": f["successes"], "trials": f["trials"]})
    return {"rows": rows, "params": params, "converged": conv}


def main(argv=None):
    """CLI: run (resume) the named plans into ``--store-dir``; one JSON line per plan."""
    ap = ArgumentParser(prog="python -m validation.factual_recall.theory_check",
                 description="Run the stored theory-check sweeps.")
    ap.add_argument("which", nargs="+", choices=["linear", "mlp", "escape", "transformer"])
    ap.add_argument("--store-dir", default=str(STORE_DIR))
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    if a.workers < 1:
        print(f"{ap.prog}: error: --workers must be >= 1, got {a.workers}", file=sys.stderr)
        return 2
    for w in a.which:
        recs = run_plan(w, store_dir=a.store_dir, workers=a.workers)
        cpu = sum(r.get("cpu_seconds", 0.0) for _, r in recs)
        print(json.dumps({"plan": w, "trials": len(recs), "cpu_seconds": round(cpu, 1)}))
    return 0


if __name__ == "__main__":
    from hcizz.cli import run_cli

    sys.exit(run_cli(main, prog="python -m validation.factual_recall.theory_check"))
