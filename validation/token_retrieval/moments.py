"""Simulated counterparts of the early-phase theory's moments, with standard errors over
independent tasks, and their check against the theory
(docs/token_retrieval.md#theory-of-the-early-phase)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int
from hcizz.results import Result

from . import theory as th
from .early_phase import early_phase, evaluate
from .runs import _setup
from ._docparams import fill_doc

__all__ = ["MOMENT_KEYS", "MomentSample", "MomentCheck", "measure_moments", "moment_check"]


@fill_doc
@dataclass(frozen=True)
class MomentSample(Result):
    """One simulated moment over independent tasks (:func:`measure_moments`).

    Parameters
    ----------
    mean : float
        Mean of the per-task values (NaN if none is finite).
    stderr : float
        Standard deviation of the per-task values over ``sqrt(tasks)``
        (NaN for fewer than two finite values).
    values : list of float
        The finite per-task values.

    See Also
    --------
    validation.token_retrieval.moments.measure_moments
        Measure the simulated counterparts of the theory's moments, with standard errors.
    validation.token_retrieval.moments.MomentCheck
        One moment of the early phase: the theory's value against the simulated one (``moment_check``).

    %(ref_theory_of_the_early_phase)s
    """

    mean: float
    stderr: float
    values: list


@fill_doc
@dataclass(frozen=True)
class MomentCheck(Result):
    r"""One moment of the early phase: the theory's value against the simulated one (:func:`moment_check`).

    Parameters
    ----------
    N, d, L : int
        The configuration.
    kind : {"random", "orthogonal"}
        Embeddings.
    quantity : str
        A key of :data:`MOMENT_KEYS`.
    predicted : float
        The theory's value (variances as squares of the theory's standard deviations).
    simulated, stderr : float
        The simulated mean over tasks and its standard error.
    seeds : int
        Tasks.
    z : float or None
        ``(predicted - simulated) / stderr``; None where the standard error is
        below the float64 round-off of the quantity's scale (``1e-12 max(1, |predicted|)``).
    rel_err : float or None
        ``(predicted - simulated) / |simulated|`` (None when the simulated value is 0).

    See Also
    --------
    validation.token_retrieval.moments.moment_check
        Check every moment of the theory against the simulation at the given configurations.
    validation.token_retrieval.theory.score_moments
        Compute leading-order moments of the attention scores :math:`x \cdot \tilde w` after step 2.

    %(ref_theory_of_the_early_phase)s
    """

    N: int
    d: int
    L: int
    kind: str
    quantity: str
    predicted: float
    simulated: float
    stderr: float
    seeds: int
    z: float | None
    rel_err: float | None


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
    r"""Measure the simulated counterparts of the theory's moments, with standard errors.

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
        Vocabulary size (default :math:`4 N`).
    kind : {"random", "orthogonal"}
        As in :func:`run_config`.
    m : int, optional
        MLP width, as in :func:`run_config`.
    eta, beta : float
        Early-phase step size and :math:`\|W_1\|_F`, as in :func:`run_config`.
    gamma : float, optional
        Step size of steps 2 and 3 (overrides ``beta``).
    trig_scale : float
        Trigger norm.
    noise : {"vocab", "gaussian"}
        Noise tokens.

    Returns
    -------
    dict
        ``{key: MomentSample}`` (``mean``, ``stderr``, ``values``) for each key of
        :data:`MOMENT_KEYS`: ``A`` (:math:`z \cdot \tilde w / \|z\|^2`), ``mu_inf`` /
        ``var_inf`` (informative score: mean, variance over the ``N``
        sequences of one task), ``mu_noise`` / ``var_noise`` (noise scores,
        training sequences), the same on fresh sequences, ``alpha`` (mean
        attention on the informative position), ``Gs`` / ``Gc`` (target and
        other-trained logits minus the mean untrained logit), ``var_0`` /
        ``var_1`` (variance of the untrained / other-trained logits within a
        sample), ``var_c`` (variance of the target margin over samples).
        Scores in units of :math:`\tilde w` (:math:`W_1 = \frac{\gamma \eta}{L N^2}\, \tilde w q^T`),
        logits in units of :math:`\gamma / N`.

    See Also
    --------
    validation.token_retrieval.token_theory.token_moments : Predict the per-task moments of ``measure_moments``.
    validation.token_retrieval.moments.moment_check
        Check every moment of the theory against the simulation at the given configurations.

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
        out[k] = MomentSample(mean=float(v.mean()) if v.size else float("nan"),
                              stderr=float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan"),
                              values=v.tolist())
    return out


#: The theory's counterpart of each simulated moment: (source, name); source ``"s"``: scores
#: (:func:`~validation.token_retrieval.theory.score_moments`), ``"f"``: scores on fresh
#: sequences, ``"m"``: margins (:func:`~validation.token_retrieval.theory.margin_moments`;
#: ``sd_*`` are standard deviations, compared as variances).
_PREDICTED = {"A": ("s", "A"), "mu_inf": ("s", "mu_inf"), "var_inf": ("s", "var_inf"),
              "mu_noise": ("s", "mu_noise"), "var_noise": ("s", "var_noise"),
              "mu_noise_fresh": ("f", "mu_noise"), "var_noise_fresh": ("f", "var_noise"),
              "alpha": ("m", "alpha"), "Gs": ("m", "Gs"), "Gc": ("m", "Gc"),
              "var_0": ("m", "sd_0"), "var_1": ("m", "sd_1"), "var_c": ("m", "sd_c")}


@fill_doc
def moment_check(configs, *, seeds, seed=0):
    """Check every moment of the theory against the simulation at the given configurations.

    Parameters
    ----------
    configs : sequence of (int, int, int, str)
        ``(N, d, L, kind)`` of each configuration (:math:`V = 4 N`, default step sizes).
    seeds : int
        Independent tasks per configuration (>= 2).
    seed : int, optional
        Root seed of :func:`measure_moments` (the same at every configuration).

    Returns
    -------
    list of MomentCheck
        One row per configuration and key of :data:`MOMENT_KEYS`, in that order.

    See Also
    --------
    validation.token_retrieval.moments.measure_moments
        Measure the simulated counterparts of the theory's moments, with standard errors.
    validation.token_retrieval.theory.predict
        Return ``success_probs`` together with the moments it uses (one JSON-friendly dict).

    Notes
    -----
    The theory's values come from
    :func:`~validation.token_retrieval.theory.score_moments` (training and
    fresh sequences) and :func:`~validation.token_retrieval.theory.margin_moments`;
    the ``z`` score is ``(predicted - simulated) / stderr`` with the Monte
    Carlo standard error over tasks.

    %(ref_theory_of_the_early_phase)s

    Examples
    --------
    >>> rows = moment_check([(16, 64, 4, "random")], seeds=2)
    >>> len(rows), rows[0].quantity, rows[0].predicted > 0
    (13, 'A', True)
    """
    seeds = check_int("seeds", seeds, low=2)
    rows = []
    for (N, d, L, kind) in configs:
        sim = measure_moments(N, d, L, seeds=seeds, seed=seed, kind=kind)
        src = {"s": th.score_moments(N, d, L, kind=kind), "f": th.score_moments(N, d, L, kind=kind, fresh=True),
               "m": th.margin_moments(N, d, L, kind=kind)}
        for q in MOMENT_KEYS:
            which, name = _PREDICTED[q]
            p = float(src[which][name])
            if q in ("var_0", "var_1", "var_c"):
                p = p * p
            s = sim[q]
            # a z-score needs a stderr above float64 round-off of the quantity's scale
            z = (p - s.mean) / s.stderr if s.stderr > 1e-12 * max(1.0, abs(p)) else None
            rows.append(MomentCheck(N=N, d=d, L=L, kind=kind, quantity=q, predicted=p, simulated=s.mean,
                                    stderr=s.stderr, seeds=seeds, z=z,
                                    rel_err=(p - s.mean) / abs(s.mean) if s.mean else None))
    return rows
