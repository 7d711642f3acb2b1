"""Simulated counterparts of the early-phase theory's moments, with standard errors over
independent tasks (docs/token_retrieval.md#theory-of-the-early-phase)."""
from __future__ import annotations

import numpy as np

from hcizz.checks import check_int

from .early_phase import early_phase, evaluate
from .runs import _setup

__all__ = ["MOMENT_KEYS", "measure_moments"]


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
