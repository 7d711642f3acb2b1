"""Phase diagrams, power-law boundary fits, orthogonal contrast and SNR
prediction for the token-retrieval early phase.

Every configuration ``(N, d, L, seed)`` is one vectorised run (all ``N``
samples batched); grids are plain loops over configurations.

Success criteria of one run (after the three early-phase steps, predictor
``(W1, V2)``):

* ``retrieval``: on every training sequence the attention's largest weight is
  on the informative position;
* ``recall``: every training sequence is mapped to its label (strict argmax);
* ``test_acc``: recall accuracy on fresh sequences carrying the same facts
  (same informative tokens, new noise tokens and positions).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy import stats

from hcizz.checks import check_int, check_real, check_rng

from .early_phase import early_phase, evaluate, train_gd
from .model import make_mlp
from .task import check_sizes, make_embeddings, sample_sequences

__all__ = ["run_config", "run_grid", "grid_trial", "aggregate", "boundary_points", "fit_boundary",
           "logistic_fit", "multiplicative_test", "gaussian_success_prob", "extreme_success_prob",
           "compare_gd", "measure_moments", "MOMENT_KEYS", "GRIDS", "grid_records", "fits",
           "orthogonal_contrast", "mlp_scan", "beta_scan", "snr_comparison"]


def gaussian_success_prob(mean, std, n):
    """Compute ``Phi(mean / std) ** n``, the Gaussian-model probability that all margins are positive.

    The ``n`` margins are taken independent ``N(mean, std^2)`` (the Gaussian
    SNR model).

    Parameters
    ----------
    mean : float
        Mean margin.
    std : float
        Standard deviation of the margin (>= 0; 0 gives ``1[mean > 0]``).
    n : int
        Number of samples (>= 0).

    Returns
    -------
    float
        The probability.

    References
    ----------
    docs/token_retrieval.md#retrieval-probability

    Examples
    --------
    >>> round(gaussian_success_prob(0.0, 1.0, 2), 3)
    0.25
    """
    mean = check_real("mean", mean, allow_array=False)
    std = check_real("std", std, low=0, allow_array=False)
    n = check_int("n", n, low=0)
    if std <= 0:
        return float(mean > 0)
    return float(np.exp(n * stats.norm.logcdf(mean / std)))


def extreme_success_prob(mu_c, sd_c, groups, n, *, nodes=80):
    """Compute the Gaussian extreme-value model of "all ``n`` samples succeed".

    A sample's correct score is ``N(mu_c, sd_c^2)``; its competitors form
    groups ``(mu, sd, count)`` of independent ``N(mu, sd^2)`` scores.  The
    sample succeeds if the correct score beats all competitors::

        p = E_g prod_groups Phi((mu_c + sd_c g - mu) / sd) ** count,  g ~ N(0, 1)

    (Gauss-Hermite quadrature with ``nodes`` nodes) and ``P(all) = p ** n``
    (samples independent).

    Parameters
    ----------
    mu_c, sd_c : float
        Mean and std of the correct score.
    groups : list of (float, float, int)
        Competitor groups.
    n : int
        Number of samples.
    nodes : int, optional
        Gauss-Hermite nodes (default 80).

    Returns
    -------
    float
        ``P(all) = p ** n``.

    Notes
    -----
    The inputs are *bulk* statistics (means and stds over many scores), the
    output is a tail event (a maximum over ``sum count`` competitors and
    ``n`` samples): this is the extrapolation the SNR prediction tests.
    Checked against a direct Monte Carlo simulation in
    ``tests/test_tr_experiments.py``.

    References
    ----------
    docs/token_retrieval.md#retrieval-probability

    Examples
    --------
    One competitor, both scores ``N(0, 1)``: the correct one wins with
    probability 1/2.

    >>> round(extreme_success_prob(0.0, 1.0, [(0.0, 1.0, 1)], 1), 6)
    0.5
    """
    mu_c = check_real("mu_c", mu_c, allow_array=False)
    sd_c = check_real("sd_c", sd_c, low=0, allow_array=False)
    n = check_int("n", n, low=0)
    nodes = check_int("nodes", nodes, low=1)
    for i, g in enumerate(groups):
        if len(g) != 3:
            raise ValueError(f"groups[{i}] must be (mu, sd, count), got {g!r}")
        check_real(f"groups[{i}] sd", g[1], low=0, allow_array=False)
        check_int(f"groups[{i}] count", g[2], low=0)
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    w = w / w.sum()
    logp = np.zeros_like(x)
    for mu, sd, cnt in groups:
        if cnt <= 0:
            continue
        if sd <= 0:
            logp += np.where(mu_c + sd_c * x > mu, 0.0, -np.inf)
        else:
            logp += cnt * stats.norm.logcdf((mu_c + sd_c * x - mu) / sd)
    p = float(np.sum(w * np.exp(logp)))
    return float(min(1.0, max(0.0, p)) ** n)


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
    """Lower bound (bytes) of one run's arrays: embeddings ``V d``, train and
    test sequences ``2 N L d``, ``W`` (``d^2``) and the MLP (``m d``)."""
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
    """Run the early phase once on a fresh task and return its success statistics.

    Parameters
    ----------
    N, d, L : int
        Training sequences (>= 1), dimension (>= 1), length (>= 2).
    seed : int or Generator
        Seeds embeddings, labels, sequences and MLP.
    V : int, optional
        Vocabulary size (>= 2, >= N); default ``round(vocab_ratio * N)``.
    vocab_ratio : float
        ``V / N`` when ``V`` is not given.
    kind : {"random", "orthogonal"}
        Embeddings, see :func:`~validation.token_retrieval.task.make_embeddings`.
    m : int, optional
        Width of the fixed random MLP (None: no MLP).
    eta, beta : float
        Early-phase step size and ``||W1||_F`` (see
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

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#early-phase-and-full-training

    Examples
    --------
    >>> r = run_config(8, 64, 4, seed=0)
    >>> r["V"], 0.0 <= r["test_acc"] <= 1.0, isinstance(r["recall"], bool)
    (32, True, True)
    """
    eta = check_real("eta", eta, low=0, low_open=True, allow_array=False)
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


def _skippable(exc):
    """A configuration that cannot exist (``N > V``, orthogonal ``d < V + 2``)."""
    return "kind='orthogonal'" in str(exc) or "when distinct" in str(exc)


def grid_trial(params):
    """Run one :func:`run_grid` configuration as a trial of :func:`validation.engine.run_sweep`.

    The function is module level, with JSON in and out.

    Parameters
    ----------
    params : dict
        ``N``, ``d``, ``L``, ``seed`` (seed index, copied to the result),
        ``entropy`` (the :class:`numpy.random.SeedSequence` entropy of the
        run) and any keyword of :func:`run_config` (JSON values; ``dtype`` as
        a name such as ``"float64"``).

    Returns
    -------
    dict
        The :func:`run_config` result with ``seed`` added, or
        ``{"skipped": message}`` for a configuration that cannot exist.

    References
    ----------
    docs/sweeps.md#writing-a-trial
    """
    p = dict(params)
    entropy, s = p.pop("entropy"), p.pop("seed")
    N, d, L = p.pop("N"), p.pop("d"), p.pop("L")
    try:
        r = run_config(N, d, L, seed=np.random.default_rng(np.random.SeedSequence(entropy)), **p)
    except ValueError as exc:
        if _skippable(exc):
            return {"skipped": str(exc)}
        raise
    r["seed"] = s
    return r


def run_grid(Ns, ds, Ls, *, seeds=3, seed=0, progress=None, executor=None, store=None,
             workers=None, **kw):
    """Run :func:`run_config` over the product grid ``Ns x ds x Ls``.

    Parameters
    ----------
    Ns, ds, Ls : sequence of int
        Grid values of ``N``, ``d`` and ``L``.
    seeds : int
        Independent seeds per grid point (>= 1), derived from ``seed`` by
        ``SeedSequence([seed, i_L, i_d, i_N, s])``.
    seed : int
        Root seed (>= 0).
    progress : callable, optional
        Called with one progress line per ``(L, d)`` slice (serial path);
        with an ``executor``, any truthy value turns on the engine's own
        progress lines on stderr.
    executor : {None, "inprocess", "processes", "dask"}
        None (default): a plain loop in this process.  Otherwise the grid
        runs through :func:`validation.engine.run_sweep` (trial
        :func:`grid_trial`): parallel workers, and with ``store`` a
        resumable JSONL store.  The results are the same, bit for bit.
    store : str or Path, optional
        JSONL store of :func:`~validation.engine.run_sweep` (needs an
        ``executor``).
    workers : int, optional
        Worker processes (``executor="processes"`` or ``"dask"``).
    **kw
        Passed to :func:`run_config`.

    Returns
    -------
    list of dict
        The :func:`run_config` results, with ``seed`` (the seed index)
        added.  Configurations with ``N > V`` or an orthogonal
        ``d < V + 2`` are skipped.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json

    Examples
    --------
    >>> recs = run_grid((2, 4), (16,), (3,), seeds=2)
    >>> [(r["N"], r["seed"]) for r in recs]
    [(2, 0), (2, 1), (4, 0), (4, 1)]
    """
    seeds = check_int("seeds", seeds, low=1)
    root = np.random.SeedSequence(check_int("seed", seed, low=0))
    out = []
    Ns, ds, Ls = list(Ns), list(ds), list(Ls)
    if executor is not None:
        return _run_grid_engine(Ns, ds, Ls, seeds, root, progress, executor, store, workers, kw)
    if store is not None or workers is not None:
        raise ValueError("store and workers need an executor (e.g. executor='processes'), "
                         f"got executor=None with store={store!r}, workers={workers!r}")
    for i, L in enumerate(Ls):
        for j, d in enumerate(ds):
            if progress:
                progress(f"token_retrieval grid: L={L} d={d} ({i * len(ds) + j + 1}/{len(Ls) * len(ds)})")
            for k, N in enumerate(Ns):
                for s in range(seeds):
                    ss = np.random.SeedSequence([root.entropy, i, j, k, s])
                    try:
                        r = run_config(N, d, L, seed=np.random.default_rng(ss), **kw)
                    except ValueError as exc:
                        if _skippable(exc):
                            continue
                        raise
                    r["seed"] = s
                    out.append(r)
    return out


def _run_grid_engine(Ns, ds, Ls, seeds, root, progress, executor, store, workers, kw):
    from validation.engine import run_sweep

    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = np.dtype(kw["dtype"]).name
    params = [{"N": N, "d": d, "L": L, "seed": s, "entropy": [root.entropy, i, j, k, s], **kw}
              for i, L in enumerate(Ls) for j, d in enumerate(ds) for k, N in enumerate(Ns)
              for s in range(seeds)]
    recs = run_sweep(grid_trial, params, store=store, executor=executor, workers=workers,
                     progress=bool(progress), label="token_retrieval grid")
    bad = [r for r in recs if r["status"] != "ok"]
    if bad:
        e = bad[0]["error"]
        raise (ValueError if e["type"] == "ValueError" else RuntimeError)(
            f"{len(bad)} of {len(recs)} grid runs failed; first ({bad[0]['params']}): "
            f"{e['type']}: {e['message']}")
    return [r["result"] for r in recs if "skipped" not in r["result"]]


def aggregate(records, key, by=("N", "d", "L")):
    """Average the success flag ``key`` per configuration.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.
    key : str
        Success flag (or fraction) to average, e.g. ``"retrieval"``.
    by : tuple of str
        Fields that identify a configuration.

    Returns
    -------
    dict
        ``{config tuple: (fraction, count)}``, sorted by configuration.

    References
    ----------
    docs/token_retrieval.md#measured

    Examples
    --------
    >>> aggregate([{"N": 2, "d": 8, "L": 3, "ok": True},
    ...            {"N": 2, "d": 8, "L": 3, "ok": False}], "ok")
    {(2, 8, 3): (0.5, 2)}
    """
    for i, r in enumerate(records):
        missing = [b for b in (key,) + tuple(by) if b not in r]
        if missing:
            raise ValueError(f"records[{i}] has no field(s) {missing} (key={key!r}, by={tuple(by)})")
    acc = defaultdict(list)
    for r in records:
        acc[tuple(r[b] for b in by)].append(float(r[key]))
    return {k: (float(np.mean(v)), len(v)) for k, v in sorted(acc.items())}


def boundary_points(frac, *, along="N", by=("N", "d", "L"), direction="up", level=0.5):
    """Locate where the success fraction crosses ``level`` along one variable.

    Parameters
    ----------
    frac : dict
        Output of :func:`aggregate` (values ``(fraction, count)``).
    along : str
        Variable scanned (one of ``by``).
    by : tuple of str
        Fields of the configuration tuples (the keys of ``frac``).
    direction : {"up", "down"}
        ``"up"``: first crossing from below (success grows with the
        variable); ``"down"``: last crossing from above.
    level : float
        Crossing level.

    Returns
    -------
    list of dict
        One per slice with a crossing: the other variables and ``along``
        (geometric interpolation between the bracketing grid points).

    Notes
    -----
    Between grid points ``x_t < x_{t+1}`` with fractions
    ``f_t < level <= f_{t+1}``: ``log x_c = log x_t + w (log x_{t+1} -
    log x_t)``, ``w = (level - f_t) / (f_{t+1} - f_t)``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    >>> p, = boundary_points({(4, 10, 2): (0.0, 3), (16, 10, 2): (1.0, 3)})
    >>> p["d"], p["L"], round(p["N"], 9)              # geometric midpoint of 4 and 16
    (10, 2, 8.0)
    """
    by = tuple(by)
    if along not in by:
        raise ValueError(f"along must be one of {by}, got {along!r}")
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    level = check_real("level", level, low=0, high=1, low_open=True, high_open=True,
                       allow_array=False)
    ia = by.index(along)
    slices = defaultdict(list)
    for k, (f, _) in frac.items():
        rest = tuple(x for i, x in enumerate(k) if i != ia)
        slices[rest].append((k[ia], f))
    out = []
    others = [b for b in by if b != along]
    for rest, pts in sorted(slices.items()):
        pts.sort()
        xs = np.log([p[0] for p in pts])
        fs = np.array([p[1] for p in pts])
        if direction == "down":
            xs, fs = xs[::-1], fs[::-1]
        x = None
        for t in range(len(fs) - 1):
            if fs[t] < level <= fs[t + 1]:
                w = (level - fs[t]) / (fs[t + 1] - fs[t])
                x = xs[t] + w * (xs[t + 1] - xs[t])
                break
        if x is not None:
            rec = dict(zip(others, rest))
            rec[along] = float(np.exp(x))
            out.append(rec)
    return out


def _ls(y, Xd):
    coef, *_ = np.linalg.lstsq(Xd, y, rcond=None)
    res = y - Xd @ coef
    dof = max(1, len(y) - Xd.shape[1])
    s2 = float(res @ res) / dof
    cov = s2 * np.linalg.pinv(Xd.T @ Xd)
    return coef, np.sqrt(np.diag(cov)), dof


def fit_boundary(records, key, *, along="N", covars=("d", "L"), direction="up", n_boot=200,
                 rng=None, level=0.5):
    """Fit the power law ``along_c = C * prod_v v^{alpha_v}`` to the success boundary.

    Boundary points from :func:`boundary_points`; least squares of
    ``log along_c`` on ``log covars``; uncertainties (a) from the least-squares
    covariance and (b) from a bootstrap resampling seeds (with replacement)
    within each configuration.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid` (or any dicts with the fields used).
    key : str
        Success flag, e.g. ``"retrieval"`` or ``"recall"``.
    along : str
        Variable along which the boundary is located.
    covars : tuple of str
        Regressors (their logs) of ``log along_c``.
    direction : {"up", "down"}
        See :func:`boundary_points`.
    n_boot : int
        Bootstrap resamples (>= 0; errors from the bootstrap need >= 20
        successful resamples).
    rng : None, int, SeedSequence or Generator
        Randomness of the bootstrap.
    level : float
        See :func:`boundary_points`.

    Returns
    -------
    dict
        ``points``, ``exponents`` ``{v: {"value", "stderr", "ci95_boot",
        "stderr_boot"}}``, ``log_prefactor``, ``n_points``, ``n_boot_ok``;
        ``exponents`` is empty if fewer than ``len(covars) + 2`` points exist.
        With two covariates and >= 5 points also ``interaction``: the
        coefficient ``g`` of ``log v1 log v2`` added to the fit (a test of the
        product form: ``g = 0`` iff the exponents do not drift), with its
        least-squares error, t-test ``p_value`` and bootstrap error.

    Notes
    -----
    ``log along_c = c_0 + sum_v alpha_v log v + noise``; least-squares
    standard errors ``sqrt(diag(s^2 (X^T X)^{-1}))`` with
    ``s^2 = RSS / (n - p - 1)`` and Student-t 95% intervals.  The product form
    is *assumed* by this fit; ``interaction`` and
    :func:`multiplicative_test` test it.

    References
    ----------
    arXiv:2603.15923 (the scaling of the boundary); docs/token_retrieval.md#the-boundary-law

    Examples
    --------
    Success iff ``N > 2 d`` (exactly): the fitted exponent of ``d`` is 1.

    >>> recs = [{"N": N, "d": d, "L": L, "ok": N > 2 * d} for N in (2, 4, 8, 16, 32, 64)
    ...         for d in (2, 4, 8) for L in (2, 4)]
    >>> f = fit_boundary(recs, "ok", n_boot=0)
    >>> round(f["exponents"]["d"]["value"], 6), abs(round(f["exponents"]["L"]["value"], 6))
    (1.0, 0.0)
    """
    n_boot = check_int("n_boot", n_boot, low=0)
    by = (along,) + tuple(covars)
    frac = aggregate(records, key, by=by)
    pts = boundary_points(frac, along=along, by=by, direction=direction, level=level)
    res = {"points": pts, "n_points": len(pts), "exponents": {}, "along": along,
           "covars": list(covars), "direction": direction, "key": key}
    p = len(covars)
    if len(pts) < p + 2:
        return res

    def design(pp):
        return np.column_stack([np.ones(len(pp))] + [np.log([q[c] for q in pp]) for c in covars])

    def design_int(pp):
        D = design(pp)
        return np.column_stack([D, D[:, 1] * D[:, 2]]) if p == 2 else D

    y = np.log([q[along] for q in pts])
    coef, se, dof = _ls(y, design(pts))
    do_int = p == 2 and len(pts) >= 5
    if do_int:
        ci, sei, dofi = _ls(y, design_int(pts))
    # bootstrap over seeds
    rng = check_rng(rng)
    groups = defaultdict(list)
    for r in records:
        groups[tuple(r[b] for b in by)].append(float(r[key]))
    keys = list(groups)
    boots = []
    for _ in range(n_boot):
        fb = {}
        for k in keys:
            v = np.asarray(groups[k])
            fb[k] = (float(v[rng.integers(0, len(v), len(v))].mean()), len(v))
        pb = boundary_points(fb, along=along, by=by, direction=direction, level=level)
        if len(pb) >= p + 2:
            yb = np.log([q[along] for q in pb])
            cb, _, _ = _ls(yb, design(pb))
            if do_int:
                cb = np.append(cb, _ls(yb, design_int(pb))[0][-1] if len(pb) >= 5 else np.nan)
            boots.append(cb)
    boots = np.array(boots)
    tq = stats.t.ppf(0.975, dof)
    for i, c in enumerate(covars):
        e = {"value": float(coef[i + 1]), "stderr": float(se[i + 1]),
             "ci95_ls": [float(coef[i + 1] - tq * se[i + 1]), float(coef[i + 1] + tq * se[i + 1])]}
        if len(boots) >= 20:
            e["stderr_boot"] = float(boots[:, i + 1].std(ddof=1))
            e["ci95_boot"] = [float(np.percentile(boots[:, i + 1], 2.5)),
                              float(np.percentile(boots[:, i + 1], 97.5))]
        res["exponents"][c] = e
    if do_int:
        g = {"value": float(ci[-1]), "stderr": float(sei[-1]),
             "p_value": float(2 * stats.t.sf(abs(ci[-1] / sei[-1]), dofi)) if sei[-1] > 0 else None}
        gb = boots[:, -1][np.isfinite(boots[:, -1])] if len(boots) else np.array([])
        if len(gb) >= 20:
            g["stderr_boot"] = float(gb.std(ddof=1))
            g["ci95_boot"] = [float(np.percentile(gb, 2.5)), float(np.percentile(gb, 97.5))]
        res["interaction"] = g
    res["log_prefactor"] = float(coef[0])
    res["n_boot_ok"] = len(boots)
    return res


def _irls(y, Xd, ridge=1e-3, iters=100):
    """Ridge-penalised logistic regression (Newton); returns coef, cov, loglik."""
    b = np.zeros(Xd.shape[1])
    P = ridge * np.eye(Xd.shape[1])
    P[0, 0] = 0.0
    for _ in range(iters):
        eta = Xd @ b
        mu = 1.0 / (1.0 + np.exp(-eta))
        w = mu * (1 - mu)
        H = (Xd * w[:, None]).T @ Xd + P
        g = Xd.T @ (y - mu) - P @ b
        step = np.linalg.solve(H, g)
        b = b + step
        if np.max(np.abs(step)) < 1e-10:
            break
    eta = Xd @ b
    ll = float(np.sum(y * eta - np.logaddexp(0, eta)))
    mu = 1.0 / (1.0 + np.exp(-eta))
    H = (Xd * (mu * (1 - mu))[:, None]).T @ Xd + P
    return b, np.linalg.inv(H), ll


def logistic_fit(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    """Fit a logistic regression of per-run success on the logs of ``variables``.

    ``P(success) = sigmoid(b_0 + sum_v b_v log v)``; the boundary
    ``P = 1/2`` is ``N_c = exp(-b_0/b_N) prod_{v != N} v^{-b_v/b_N}``.
    Exponents ``-b_v / b_N`` with delta-method standard errors from the
    Fisher information (a ridge ``ridge * ||b||^2 / 2`` on the slopes keeps
    the fit finite under complete separation).

    Parameters
    ----------
    records : list of dict
        Per-run results with fields ``key`` and ``variables``.
    key : str
        Success flag.
    variables : tuple of str
        Regressors (their logs); the first is the scanned one (``N``).
    ridge : float
        Penalty on the slopes (>= 0).

    Returns
    -------
    dict
        ``coef``, ``stderr``, ``exponents`` ``{v: {"value", "stderr"}}``,
        ``loglik``, ``n``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    if len(records) < len(variables) + 1:
        raise ValueError(f"records must hold at least {len(variables) + 1} runs, got {len(records)}")
    y = np.array([float(r[key]) for r in records])
    Xd = np.column_stack([np.ones(len(y))] + [np.log([float(r[v]) for r in records])
                                               for v in variables])
    b, cov, ll = _irls(y, Xd, ridge)
    se = np.sqrt(np.diag(cov))
    out = {"coef": dict(zip(("const",) + tuple(variables), map(float, b))),
           "stderr": dict(zip(("const",) + tuple(variables), map(float, se))),
           "loglik": ll, "n": len(y), "exponents": {}, "key": key}
    i0 = 1  # first variable is the scanned one
    for i, v in enumerate(variables[1:], start=2):
        val = -b[i] / b[i0]
        gr = np.zeros(len(b))
        gr[i] = -1.0 / b[i0]
        gr[i0] = b[i] / b[i0] ** 2
        out["exponents"][v] = {"value": float(val), "stderr": float(np.sqrt(gr @ cov @ gr))}
    return out


def multiplicative_test(records, key, *, variables=("N", "d", "L"), ridge=1e-3):
    """Test by likelihood ratio whether the boundary depends on one product ``prod v^{c_v}``.

    The null is the logistic model linear in the ``log v``; the alternative
    adds all pairwise products ``log v log w``.

    Parameters
    ----------
    records : list of dict
        Per-run results, as in :func:`logistic_fit`.
    key : str
        Success flag.
    variables : tuple of str
        Regressors (their logs).
    ridge : float
        Penalty on the slopes (>= 0).

    Returns
    -------
    dict
        ``lr`` (twice the log-likelihood gain), ``df``, ``p_value``
        (chi-square), ``loglik_null``, ``loglik_alt``.

    Notes
    -----
    ``lr = 2 (l_alt - l_null)`` is compared with a chi-square of
    ``df = k (k - 1) / 2`` degrees of freedom (``k`` variables; Wilks).  The
    log-likelihoods are evaluated at the ridge-penalised estimates, so the
    chi-square reference is approximate when ``ridge > 0``.

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    ridge = check_real("ridge", ridge, low=0, allow_array=False)
    if len(records) < len(variables) * (len(variables) + 1) // 2 + 2:
        raise ValueError(f"records must hold more runs than parameters of the alternative model, "
                         f"got {len(records)}")
    y = np.array([float(r[key]) for r in records])
    logs = [np.log([float(r[v]) for r in records]) for v in variables]
    X0 = np.column_stack([np.ones(len(y))] + logs)
    inter = [logs[i] * logs[j] for i in range(len(logs)) for j in range(i + 1, len(logs))]
    X1 = np.column_stack([X0] + inter)
    _, _, l0 = _irls(y, X0, ridge)
    _, _, l1 = _irls(y, X1, ridge)
    lr = max(0.0, 2 * (l1 - l0))
    df = len(inter)
    return {"lr": lr, "df": df, "p_value": float(stats.chi2.sf(lr, df)),
            "loglik_null": l0, "loglik_alt": l1, "key": key}


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
    dict
        ``N, d, L, V`` and ``early`` / ``gd``: ``train_acc``, ``test_acc``,
        ``attn_inf`` (and ``final_loss`` for ``gd``).

    References
    ----------
    docs/token_retrieval.md#early-phase-and-full-training
    """
    V, vocab_ratio = kw.pop("V", None), kw.pop("vocab_ratio", 4.0)
    kind, m = kw.pop("kind", "random"), kw.pop("m", None)
    trig, noise = kw.pop("trig_scale", 1.0), kw.pop("noise", "vocab")
    emb, train, test, A, V = _setup(N, d, L, seed, V, vocab_ratio, kind, m, trig, noise, np.float64)
    if "gamma" not in kw and "beta" not in kw:
        kw["beta"] = 10.0
    ep = early_phase(emb, train, A=A, **kw)
    W, Wv, hist = train_gd(emb, train, steps=steps, lr=lr, A=A)
    out = {"N": N, "d": d, "L": L, "V": V}
    for name, (w, v) in {"early": (ep.W1, ep.V2), "gd": (W, Wv)}.items():
        tr = evaluate(w, v, emb, train, A)
        te = evaluate(w, v, emb, test, A)
        out[name] = {"train_acc": tr["accuracy"], "test_acc": te["accuracy"],
                     "attn_inf": float(tr["attn_inf"].mean())}
    out["gd"]["final_loss"] = hist[-1][1]
    return out


#: Quantities of :func:`measure_moments`, in the units of
#: :mod:`validation.token_retrieval.theory` (scores ``x·w~``, logits ``(N / gamma) u_k^T V2 f``).
MOMENT_KEYS = ("A", "mu_inf", "var_inf", "mu_noise", "var_noise", "mu_noise_fresh",
               "var_noise_fresh", "alpha", "Gs", "Gc", "var_0", "var_1", "var_c")


def _moments_one(N, d, L, rng, V, kind, m, eta, beta, gamma, trig_scale, noise):
    emb, train, test, A, V = _setup(N, d, L, rng, V, 4.0, kind, m, trig_scale, noise, np.float64)
    ep = early_phase(emb, train, eta=eta, beta=None if gamma is not None else beta, gamma=gamma, A=A)
    q2 = float(emb.q @ emb.q)
    c = ep.gamma * eta / (L * N ** 2)
    wt = ep.W1 @ emb.q / q2 / c if c > 0 else np.zeros(d)
    out = {"A": float(emb.z_trig @ wt / (emb.z_trig @ emb.z_trig))}
    for tag, b in (("", train), ("_fresh", test)):
        s = b.X @ wt
        rows = np.arange(N)
        inf = s[rows, b.pos]
        mask = np.ones(s.shape, bool)
        mask[rows, b.pos] = False
        nz = s[mask].reshape(N, L - 1)
        if tag == "":
            out["mu_inf"] = float(inf.mean())
            out["var_inf"] = float(inf.var(ddof=1)) if N > 1 else np.nan
        out["mu_noise" + tag] = float(nz.mean())
        out["var_noise" + tag] = float(nz.var(ddof=1))
    ev = evaluate(ep.W1, ep.V2, emb, train, A)
    out["alpha"] = float(ev["attn_inf"].mean())
    lg = ev["logits"] * N / ep.gamma
    rows = np.arange(N)
    trained = np.zeros(V, bool)
    trained[train.targets] = True
    un = lg[:, ~trained]
    base = un.mean(axis=1)
    tgt = lg[rows, train.targets] - base
    oth = np.broadcast_to(trained, lg.shape).copy()
    oth[rows, train.targets] = False
    tr = (lg - base[:, None])[oth].reshape(N, max(N - 1, 0))
    out["Gs"] = float(tgt.mean())
    out["Gc"] = float(tr.mean()) if N > 1 else np.nan
    out["var_0"] = float(un.var(axis=1, ddof=1).mean()) if un.shape[1] > 1 else np.nan
    out["var_1"] = float(tr.var(axis=1, ddof=1).mean()) if N > 2 else np.nan
    out["var_c"] = float(tgt.var(ddof=1)) if N > 1 else np.nan
    return out


def measure_moments(N, d, L, *, seeds=8, seed=0, V=None, kind="random", m=None, eta=0.1,
                    beta=10.0, gamma=None, trig_scale=1.0, noise="vocab"):
    """Measure the simulated counterparts of the theory's moments, with standard errors.

    Parameters
    ----------
    N, d, L : int
        Training sequences, dimension and length.
    seeds : int
        Independent tasks (>= 2); the standard error of each quantity is the
        standard deviation of its per-seed value over ``sqrt(seeds)``.
    seed : int
        Root seed.
    V : int, optional
        Vocabulary size (default ``4 N``).
    kind : {"random", "orthogonal"}
        As in :func:`run_config`.
    m : int, optional
        MLP width, as in :func:`run_config`.
    eta, beta : float
        Early-phase step size and ``||W1||_F``, as in :func:`run_config`.
    gamma : float, optional
        Step size of steps 2 and 3 (overrides ``beta``).
    trig_scale : float
        Trigger norm.
    noise : {"vocab", "gaussian"}
        Noise tokens.

    Returns
    -------
    dict
        ``{key: {"mean", "stderr", "values"}}`` for each key of
        :data:`MOMENT_KEYS`: ``A`` (``z . w~ / ||z||^2``), ``mu_inf`` /
        ``var_inf`` (informative score: mean, variance over the ``N``
        sequences of one task), ``mu_noise`` / ``var_noise`` (noise scores,
        training sequences), the same on fresh sequences, ``alpha`` (mean
        attention on the informative position), ``Gs`` / ``Gc`` (target and
        other-trained logits minus the mean untrained logit), ``var_0`` /
        ``var_1`` (variance of the untrained / other-trained logits within a
        sample), ``var_c`` (variance of the target margin over samples).
        Scores in units of ``w~`` (``W1 = gamma eta / (L N^2) w~ q^T``),
        logits in units of ``gamma / N``.

    References
    ----------
    docs/token_retrieval.md#theory-of-the-early-phase;
    docs/token_retrieval.md#how-the-code-is-checked

    Examples
    --------
    >>> mm = measure_moments(16, 64, 4, seeds=2)
    >>> sorted(mm) == sorted(MOMENT_KEYS)
    True
    """
    seeds = check_int("seeds", seeds, low=2)
    root = np.random.SeedSequence(check_int("seed", seed, low=0))
    per = [_moments_one(N, d, L, np.random.default_rng(ss), V, kind, m, eta, beta, gamma,
                        trig_scale, noise) for ss in root.spawn(seeds)]
    out = {}
    for k in MOMENT_KEYS:
        v = np.array([p[k] for p in per], float)
        v = v[np.isfinite(v)]
        out[k] = {"mean": float(v.mean()) if v.size else float("nan"),
                  "stderr": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan"),
                  "values": v.tolist()}
    return out


#: Grids (N, d, L, seeds) of the quick and full modes; shared with the report.
GRIDS = {
    True: dict(Ns=(4, 16, 64), ds=(32, 128), Ls=(4, 16), seeds=2),
    False: dict(Ns=(4, 8, 16, 32, 64, 128, 256, 512), ds=(32, 64, 128, 256), Ls=(4, 8, 16, 32, 64),
                seeds=8),
}


def grid_records(quick, *, seed=0, Ns=None, ds=None, Ls=None, seeds=None, progress=None, **kw):
    """Run :func:`run_grid` on the grid of :data:`GRIDS` (``quick`` or full).

    Any of ``Ns``, ``ds``, ``Ls``, ``seeds`` may be overridden; the memory
    need of the largest run is checked before any run starts.

    Parameters
    ----------
    quick : bool
        Quick grid (``GRIDS[True]``) or full grid.
    seed : int, optional
        Root seed.
    Ns, ds, Ls : tuple of int, optional
        Grid values replacing the preset's.
    seeds : int, optional
        Seeds per grid point replacing the preset's.
    progress : callable, optional
        Progress callback, as in :func:`run_grid`.
    **kw
        Passed to :func:`run_grid` (and on to :func:`run_config`).

    Returns
    -------
    records : list of dict
        The :func:`run_grid` results.
    grid : dict
        The grid used (``Ns``, ``ds``, ``Ls``, ``seeds``).

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    g = dict(GRIDS[bool(quick)])
    for k, v in (("Ns", Ns), ("ds", ds), ("Ls", Ls), ("seeds", seeds)):
        if v is not None:
            g[k] = v
    if all(isinstance(x, int) and x > 0 for k in ("Ns", "ds", "Ls") for x in g[k]):
        # the largest run of the grid must fit before any run starts
        vr = kw.get("vocab_ratio") or 4.0
        if isinstance(vr, (int, float)) and vr > 0:
            check_memory_config(max(g["Ns"]), max(g["ds"]), max(g["Ls"]),
                                max(2, round(vr * max(g["Ns"]))), kw.get("m"))
    return run_grid(g["Ns"], g["ds"], g["Ls"], seeds=g["seeds"], seed=seed, progress=progress,
                    **kw), g


def fits(records, *, seed=0):
    """Compute the boundary fits and multiplicative test used by the CLI and report.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.
    seed : int, optional
        Seed of the bootstraps.

    Returns
    -------
    dict
        ``retrieval_boundary`` and ``recall_boundary`` (:func:`fit_boundary`),
        ``retrieval_logistic`` (:func:`logistic_fit`) and
        ``retrieval_multiplicative`` (:func:`multiplicative_test`).

    References
    ----------
    docs/token_retrieval.md#the-boundary-law
    """
    return {
        "retrieval_boundary": fit_boundary(records, "retrieval", direction="up", rng=seed),
        "recall_boundary": fit_boundary(records, "recall", direction="down", rng=seed),
        "retrieval_logistic": logistic_fit(records, "retrieval"),
        "retrieval_multiplicative": multiplicative_test(records, "retrieval"),
    }


def orthogonal_contrast(quick, *, seed=0, progress=None):
    """Contrast random with orthogonal (one-hot) embeddings at equal d and V = 4N.

    Parameters
    ----------
    quick : bool
        Quick sizes (d = 64) or full (d = 256).
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback, as in :func:`run_grid`.

    Returns
    -------
    dict
        ``d``, ``Ns``, ``Ls``, ``seeds`` and ``rows``: success fractions per
        embedding kind, success key, ``N`` and ``L``.

    References
    ----------
    docs/token_retrieval.md#the-orthonormal-case
    """
    d = 64 if quick else 256
    Ns = (2, 4, 8, 15) if quick else (2, 4, 8, 16, 32, 63)
    Ls = (4, 16)
    seeds = 2 if quick else 8
    out = {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": []}
    for kind in ("random", "orthogonal"):
        recs = run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, kind=kind, progress=progress)
        for key in ("recall", "retrieval", "test_acc", "recall_acc"):
            for (N, dd, L), (f, n) in aggregate(recs, key).items():
                out["rows"].append({"kind": kind, "key": key, "N": N, "L": L, "value": f, "n": n})
    return out


def mlp_scan(quick, *, seed=0, progress=None):
    """Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m`` (L = 4).

    The boundary is fitted as ``N_max ~ d^a m^b``; runs without MLP are the
    reference (``m = 0`` in the records).

    Parameters
    ----------
    quick : bool
        Quick or full sizes.
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback.

    Returns
    -------
    dict
        The grid, the boundary points, the fit (:func:`fit_boundary`) and the
        recall fractions.

    References
    ----------
    docs/token_retrieval.md#experiments-python--m-validation-token-retrieval-phasefitorthogonalsnrmlpbeta---quick---json
    """
    ds, ms, L = ((64,) if quick else (64, 128, 256)), ((64, 256) if quick else (64, 256, 1024)), 4
    Ns = (2, 4, 8, 16, 32) if quick else (2, 4, 8, 16, 32, 64)
    seeds = 2 if quick else 8
    recs = []
    for m in (None,) + ms:
        if progress:
            progress(f"token_retrieval mlp scan: m={m}")
        for r in run_grid(Ns, ds, (L,), seeds=seeds, seed=seed, m=m):
            r["m"] = 0 if m is None else m
            recs.append(r)
    frac = aggregate(recs, "recall", by=("N", "d", "m"))
    pts = boundary_points(frac, by=("N", "d", "m"), direction="down")
    fit = fit_boundary([r for r in recs if r["m"] > 0], "recall", covars=("d", "m"),
                       direction="down", rng=seed)
    return {"L": L, "Ns": list(Ns), "ds": list(ds), "ms": list(ms), "seeds": seeds,
            "boundary": pts, "fit": fit,
            "recall": {str(k): v[0] for k, v in frac.items()}}


def beta_scan(quick, *, seed=0, progress=None):
    """Measure the sensitivity of the boundaries to the step size ``beta = ||W1||_F``.

    ``beta`` takes the values 3, 10 and 30 at d = 128 (d = 64 in quick mode).

    Parameters
    ----------
    quick : bool
        Quick or full sizes.
    seed : int, optional
        Root seed.
    progress : callable, optional
        Progress callback.

    Returns
    -------
    dict
        The grid and ``rows``: boundary ``N_c`` and mean informative
        attention per ``beta``, success key and ``L``.

    References
    ----------
    docs/token_retrieval.md#early-phase-and-full-training
    """
    Ns, d, Ls = ((4, 16, 64), 64, (4, 16)) if quick else ((4, 8, 16, 32, 64, 128), 128, (4, 16))
    seeds = 2 if quick else 8
    rows = []
    for beta in (3.0, 10.0, 30.0):
        if progress:
            progress(f"token_retrieval beta scan: beta={beta}")
        recs = run_grid(Ns, (d,), Ls, seeds=seeds, seed=seed, beta=beta)
        for key, direction in (("retrieval", "up"), ("recall", "down")):
            fr = aggregate(recs, key)
            bp = {b["L"]: b["N"] for b in boundary_points(fr, direction=direction)}
            for L in Ls:
                rows.append({"beta": beta, "key": key, "L": L, "N_c": bp.get(L),
                             "attn_inf": float(np.mean([r["attn_inf"] for r in recs if r["L"] == L]))})
    return {"d": d, "Ns": list(Ns), "Ls": list(Ls), "seeds": seeds, "rows": rows}


def snr_comparison(records):
    """Compare SNR predictions with measured success, per configuration and at the boundary.

    ``snr`` is the extreme-value Gaussian model of the bulk score statistics
    (:func:`~validation.token_retrieval.experiments.extreme_success_prob`),
    ``margin`` the Gaussian model of the per-sample margins.

    Parameters
    ----------
    records : list of dict
        Results of :func:`run_grid`.

    Returns
    -------
    list of dict
        One row per success key (``recall``, ``retrieval``): mean absolute
        differences, matched boundary points and the log-ratio of predicted
        to measured boundary.

    References
    ----------
    docs/token_retrieval.md#retrieval-probability
    """
    rows = []
    for key, direction in (("recall", "down"), ("retrieval", "up")):
        meas = aggregate(records, key)
        row = {"key": key, "n_configs": len(meas), "boundary": []}
        preds = {}
        for model in ("snr", "margin"):
            pred = aggregate(records, f"p_{key}_{model}")
            preds[model] = {(b["d"], b["L"]): b["N"]
                            for b in boundary_points(pred, direction=direction)}
            row[f"mean_abs_diff_{model}"] = float(np.mean([abs(meas[k][0] - pred[k][0]) for k in meas]))
        for b in boundary_points(meas, direction=direction):
            row["boundary"].append({"d": b["d"], "L": b["L"], "N_measured": b["N"],
                                    "N_snr": preds["snr"].get((b["d"], b["L"])),
                                    "N_margin": preds["margin"].get((b["d"], b["L"]))})
        lr = [np.log(p["N_snr"] / p["N_measured"]) for p in row["boundary"] if p["N_snr"]]
        row["mean_log_ratio_snr"] = float(np.mean(lr)) if lr else None
        row["sd_log_ratio_snr"] = float(np.std(lr, ddof=1)) if len(lr) > 1 else None
        row["n_matched_snr"] = len(lr)
        rows.append(row)
    return rows
