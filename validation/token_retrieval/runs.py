"""One run of the token-retrieval early phase on a fresh task, and its success statistics.

Every configuration ``(N, d, L, seed)`` is one vectorised run (all ``N``
samples batched).  Success criteria of one run (after the three early-phase
steps, predictor ``(W1, V2)``):

* ``retrieval``: on every training sequence the attention's largest weight is
  on the informative position;
* ``recall``: every training sequence is mapped to its label (strict argmax);
* ``test_acc``: recall accuracy on fresh sequences carrying the same facts
  (same informative tokens, new noise tokens and positions).

:func:`compare_gd` runs full training on the same task for comparison.  Grids
of runs are in :mod:`validation.token_retrieval.experiments`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result

from .early_phase import early_phase, evaluate, train_gd
from .model import make_mlp
from .success import extreme_success_prob, gaussian_success_prob
from .task import KINDS, NOISE, check_sizes, make_embeddings, sample_sequences
from ._docparams import fill_doc

__all__ = ["run_config", "check_run_options", "compare_gd", "GDComparison"]


def _positive(name, value):
    return check_real(name, value, low=0, high=math.inf, low_open=True, high_open=True, allow_array=False)


@fill_doc
def check_run_options(*, V=None, vocab_ratio=4.0, kind="random", m=None, eta=0.1, beta=10.0, gamma=None,
                      trig_scale=1.0, noise="vocab", dtype=np.float64):
    """Check the options of :func:`run_config` (all but the sizes and the seed) and return them.

    The one check of these options: :func:`run_config` calls it, and a grid
    (:func:`~validation.token_retrieval.experiments.run_grid`) calls it once
    before its first run, so a bad option is refused before any work.

    Parameters
    ----------
    V : int, optional
        Vocabulary size (>= 2).
    vocab_ratio : float
        :math:`V / N`, finite and >= 1.
    kind : {"random", "orthogonal"}
        Embeddings.
    m : int, optional
        MLP width (>= 1).
    eta, beta : float
        Finite and > 0.
    gamma : float, optional
        Finite and > 0; overrides ``beta``.
    trig_scale : float
        Finite and > 0.
    noise : {"vocab", "gaussian"}
        Noise tokens.
    dtype : numpy dtype or str
        A floating-point type.

    Returns
    -------
    dict
        The options, checked (floats as Python floats, ``dtype`` as a numpy dtype).

    Raises
    ------
    ValueError
        Naming the option, its value and the valid range.

    See Also
    --------
    validation.token_retrieval.runs.run_config
        Run the early phase once on a fresh task and return its success statistics.
    validation.token_retrieval.task.check_sizes : Validate the task sizes and return them as ints.

    %(ref_early_phase_full_training)s

    Examples
    --------
    >>> check_run_options(eta=float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: eta must be a real number in (0, inf), got inf
    """
    out = {"V": None if V is None else check_sizes(V=V)["V"],
           "vocab_ratio": check_real("vocab_ratio", vocab_ratio, low=1, high=math.inf, high_open=True,
                                     allow_array=False),
           "m": None if m is None else check_sizes(m=m)["m"],
           "eta": _positive("eta", eta), "beta": None if beta is None else _positive("beta", beta),
           "gamma": None if gamma is None else _positive("gamma", gamma),
           "trig_scale": _positive("trig_scale", trig_scale)}
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if noise not in NOISE:
        raise ValueError(f"noise must be one of {NOISE}, got {noise!r}")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        raise ValueError(f"dtype must be a floating-point type such as 'float64', got {dtype!r}")
    if out["gamma"] is None and out["beta"] is None:
        raise ValueError("exactly one of gamma and beta must be given, got neither")
    return {**out, "kind": kind, "noise": noise, "dtype": dt}


@fill_doc
@dataclass(frozen=True)
class GDComparison(Result):
    """The early phase against full training on one task (:func:`compare_gd`).

    Parameters
    ----------
    N, d, L, V : int
        The task's sizes.
    early, gd : dict
        ``train_acc``, ``test_acc``, ``attn_inf`` of the early phase and of
        full training (``gd`` also ``final_loss``).

    See Also
    --------
    validation.token_retrieval.runs.compare_gd
        Compare the early phase with full training (Adam from zero) on the same task.
    validation.token_retrieval.experiments.gd_comparison
        Compare the early phase with full training at the configurations of a preset (``gd``).

    %(ref_early_phase_full_training)s
    """

    N: int
    d: int
    L: int
    V: int
    early: dict
    gd: dict


def _recall_stats(logits, targets):
    """Bulk logit statistics: correct label, other *trained* labels (targets
    of other training samples) and untrained labels."""
    N, V = logits.shape
    rows = np.arange(N)
    trained = np.zeros(V, bool)
    trained[targets] = True
    c = logits[rows, targets]
    m1 = np.broadcast_to(trained, logits.shape).copy()
    m1[rows, targets] = False
    w1 = logits[m1]
    w0 = logits[:, ~trained].ravel()
    sd = lambda v: float(v.std(ddof=1)) if v.size > 1 else 0.0
    return {"mu_c": float(c.mean()), "sd_c": sd(c), "mu_1": float(w1.mean()) if w1.size else 0.0,
            "sd_1": sd(w1), "n_1": int(trained.sum()) - 1,
            "mu_0": float(w0.mean()) if w0.size else 0.0, "sd_0": sd(w0), "n_0": int((~trained).sum())}


def memory_need(N, d, L, V, m=None, itemsize=8):
    """Lower bound (bytes) of one run's arrays: embeddings :math:`V d`, train and
    test sequences :math:`2 N L d`, ``W`` (:math:`d^2`) and the MLP (:math:`m d`)."""
    return itemsize * (float(V) * d + 2.0 * N * L * d + float(d) * d + (m or 0) * float(d))


def check_memory_config(N, d, L, V, m=None, itemsize=8):
    """``ValueError`` (sizes and limit named) if one run cannot fit in memory."""
    from validation._memory import check_memory

    return check_memory(memory_need(N, d, L, V, m, itemsize),
                        f"token retrieval N={N} d={d} L={L} V={V}" + (f" m={m}" if m else "")
                        + f" (embeddings V d + sequences 2 N L d + d^2, {itemsize}-byte floats)")


def _setup(N, d, L, seed, V, vocab_ratio, kind, m, trig_scale, noise, dtype):
    s = check_sizes(N=N, d=d, L=L, m=m)
    N, d, L = s["N"], s["d"], s["L"]
    if V is None:
        vocab_ratio = check_real("vocab_ratio", vocab_ratio, low=1, allow_array=False)
        check_memory_config(N, d, L, vocab_ratio * N, m, np.dtype(dtype).itemsize)
    if not isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        seed = check_int("seed", seed, low=0)
    V = check_sizes(V=V if V is not None else max(2, int(round(vocab_ratio * N))))["V"]
    check_memory_config(N, d, L, V, m, np.dtype(dtype).itemsize)
    rng = check_rng(seed)
    emb = make_embeddings(V, d, kind=kind, trig_scale=trig_scale, rng=rng, dtype=dtype)
    train = sample_sequences(emb, N, L, rng=rng, noise=noise)
    test = sample_sequences(emb, N, L, rng=rng, noise=noise, informative=train.informative)
    A = None if m is None else make_mlp(m, d, rng=rng, dtype=dtype)
    return emb, train, test, A, V


def _attention_gap(W, emb, batch):
    """Score of the informative position minus the best other score (N,)."""
    N, L, d = batch.X.shape
    s = (batch.X.reshape(N * L, d) @ (W @ emb.q)).reshape(N, L)
    rows = np.arange(N)
    inf = s[rows, batch.pos].copy()
    mask = np.ones(s.shape, bool)
    mask[rows, batch.pos] = False
    noise = s[mask]
    s[rows, batch.pos] = -np.inf
    sd = lambda v: float(v.std(ddof=1)) if v.size > 1 else 0.0
    st = {"mu_c": float(inf.mean()), "sd_c": sd(inf), "mu_0": float(noise.mean()), "sd_0": sd(noise)}
    return inf - s.max(axis=1), st


def run_config(N, d, L, *, seed=0, V=None, vocab_ratio=4.0, kind="random", m=None, eta=0.1,
               beta=10.0, gamma=None, trig_scale=1.0, noise="vocab", dtype=np.float64):
    r"""Run the early phase once on a fresh task and return its success statistics.

    Parameters
    ----------
    N, d, L : int
        Training sequences (>= 1), dimension (>= 1), length (>= 2).
    seed : int or Generator
        Seeds embeddings, labels, sequences and MLP.
    V : int, optional
        Vocabulary size (>= 2, >= N); default ``round(vocab_ratio * N)``.
    vocab_ratio : float
        :math:`V / N` when ``V`` is not given.
    kind : {"random", "orthogonal"}
        Embeddings, see :func:`~validation.token_retrieval.task.make_embeddings`.
    m : int, optional
        Width of the fixed random MLP (None: no MLP).
    eta, beta : float
        Early-phase step size and :math:`\|W_1\|_F` (see
        :func:`~validation.token_retrieval.early_phase.early_phase`).
    gamma : float, optional
        Step size of steps 2 and 3; overrides ``beta``.
    trig_scale : float
        Trigger norm, see :func:`~validation.token_retrieval.task.make_embeddings`.
    noise : {"vocab", "gaussian"}
        Noise tokens, see :func:`~validation.token_retrieval.task.sample_sequences`.
    dtype : numpy dtype
        Float type of the run.

    Returns
    -------
    dict
        ``recall`` (bool), ``recall_acc``, ``retrieval`` (bool),
        ``retrieval_acc``, ``attn_inf`` (mean attention on the informative
        position), ``test_acc``, ``margin_mean``/``margin_std`` (logit margins
        over training samples), ``gap_mean``/``gap_std`` (attention-score
        gaps), ``p_recall_margin``/``p_retrieval_margin`` (Gaussian model of
        the margins, :func:`gaussian_success_prob`), ``recall_stats`` /
        ``attn_stats`` (bulk statistics of correct and competing logits /
        scores) and ``p_recall_snr``/``p_retrieval_snr`` (their extreme-value
        prediction :func:`extreme_success_prob`), ``gamma``, ``V``.

    Raises
    ------
    ValueError
        Sizes out of range (``L < 2``, ``d < 1``, ``N < 1``, ``V < 2``,
        ``V < N``, ``m < 1``), ``vocab_ratio < 1``, a bad seed or step size.

    See Also
    --------
    validation.token_retrieval.early_phase.early_phase : Run the three early-phase steps on the training ``batch``.
    validation.token_retrieval.runs.check_run_options
        Check the options of ``run_config`` (all but the sizes and the seed) and return them.
    validation.token_retrieval.experiments.run_grid : Run ``run_config`` over the product grid ``Ns x ds x Ls``.

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#early-phase-and-full-training

    Examples
    --------
    >>> r = run_config(8, 64, 4, seed=0)
    >>> r["V"], 0.0 <= r["test_acc"] <= 1.0, isinstance(r["recall"], bool)
    (32, True, True)
    """
    check_run_options(V=V, vocab_ratio=vocab_ratio, kind=kind, m=m, eta=eta, beta=beta, gamma=gamma,
                      trig_scale=trig_scale, noise=noise, dtype=dtype)
    emb, train, test, A, V = _setup(N, d, L, seed, V, vocab_ratio, kind, m, trig_scale, noise, dtype)
    ep = early_phase(emb, train, eta=eta, beta=None if gamma is not None else beta,
                     gamma=gamma, A=A)
    tr = evaluate(ep.W1, ep.V2, emb, train, A)
    te = evaluate(ep.W1, ep.V2, emb, test, A)
    gap, sc = _attention_gap(ep.W1, emb, train)
    mg = tr["margins"]
    n = train.N
    out = {"N": n, "d": emb.d, "L": train.L, "V": V, "m": m, "kind": kind,
           "recall": tr["all"], "recall_acc": tr["accuracy"],
           "retrieval": bool(np.all(gap > 0)), "retrieval_acc": float(np.mean(gap > 0)),
           "attn_inf": float(np.mean(tr["attn_inf"])), "test_acc": te["accuracy"],
           "margin_mean": float(mg.mean()), "margin_std": float(mg.std(ddof=1)) if n > 1 else 0.0,
           "gap_mean": float(gap.mean()), "gap_std": float(gap.std(ddof=1)) if n > 1 else 0.0,
           "gamma": ep.gamma}
    out["p_recall_margin"] = gaussian_success_prob(out["margin_mean"], out["margin_std"], n)
    out["p_retrieval_margin"] = gaussian_success_prob(out["gap_mean"], out["gap_std"], n)
    rs = _recall_stats(tr["logits"], train.targets)
    out["recall_stats"] = rs
    out["attn_stats"] = sc
    out["p_recall_snr"] = extreme_success_prob(
        rs["mu_c"], rs["sd_c"], [(rs["mu_1"], rs["sd_1"], rs["n_1"]), (rs["mu_0"], rs["sd_0"], rs["n_0"])], n)
    out["p_retrieval_snr"] = extreme_success_prob(
        sc["mu_c"], sc["sd_c"], [(sc["mu_0"], sc["sd_0"], train.L - 1)], n)
    return out


@fill_doc
def compare_gd(N, d, L, *, seed=0, steps=300, lr=0.05, **kw):
    """Compare the early phase with full training (Adam from zero) on the same task.

    Both are scored by training recall accuracy and fresh-sequence accuracy.

    Parameters
    ----------
    N, d, L : int
        Sizes, as in :func:`run_config`.
    seed : int or Generator
        Seed, as in :func:`run_config`.
    steps : int
        Full-training steps
        (:func:`~validation.token_retrieval.early_phase.train_gd`).
    lr : float
        Peak learning rate of the full training.
    **kw
        Task options of :func:`run_config` (``V``, ``vocab_ratio``, ``kind``,
        ``m``, ``trig_scale``, ``noise``) and early-phase step sizes (``eta``,
        ``beta`` or ``gamma``; default ``beta = 10``).

    Returns
    -------
    GDComparison
        ``N, d, L, V`` and ``early`` / ``gd``: ``train_acc``, ``test_acc``,
        ``attn_inf`` (and ``final_loss`` for ``gd``).

    See Also
    --------
    validation.token_retrieval.early_phase.train_gd
        Train from zero with full-batch Adam or GD, for comparison with the early phase.
    validation.token_retrieval.runs.GDComparison : The early phase against full training on one task (``compare_gd``).

    %(ref_early_phase_full_training)s
    """
    V, vocab_ratio = kw.pop("V", None), kw.pop("vocab_ratio", 4.0)
    kind, m = kw.pop("kind", "random"), kw.pop("m", None)
    trig, noise = kw.pop("trig_scale", 1.0), kw.pop("noise", "vocab")
    emb, train, test, A, V = _setup(N, d, L, seed, V, vocab_ratio, kind, m, trig, noise, np.float64)
    if "gamma" not in kw and "beta" not in kw:
        kw["beta"] = 10.0
    ep = early_phase(emb, train, A=A, **kw)
    W, Wv, hist = train_gd(emb, train, steps=steps, lr=lr, A=A)
    out = {}
    for name, (w, v) in {"early": (ep.W1, ep.V2), "gd": (W, Wv)}.items():
        tr = evaluate(w, v, emb, train, A)
        te = evaluate(w, v, emb, test, A)
        out[name] = {"train_acc": tr["accuracy"], "test_acc": te["accuracy"],
                     "attn_inf": float(tr["attn_inf"].mean())}
    out["gd"]["final_loss"] = hist[-1][1]
    return GDComparison(N=N, d=d, L=L, V=V, **out)
