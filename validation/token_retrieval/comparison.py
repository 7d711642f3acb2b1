"""Theory against simulation over a grid of early-phase runs, with Monte Carlo standard errors.

:func:`theory_vs_sim` compares the token-level theory
(:func:`validation.token_retrieval.token_theory.token_theory`) and the closed-form
leading-order theory (:func:`validation.token_retrieval.theory.success_probs`) with the
success fractions of simulated runs (records of
:func:`validation.token_retrieval.experiments.run_grid` or of the study
``token_retrieval.full_grid``).  Every simulated fraction carries its binomial (all-``N``
events) or between-seed (per-sequence fractions) standard error, and the *noise floor* says
how large the errors of an exact theory would be with the same number of seeds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.checks import check_int, check_rng
from hcizz.results import Result

from . import theory as th
from .token_theory import token_theory

__all__ = ["QUANTITIES", "simulated_points", "theory_grid", "load_theory_grid", "TheoryVsSim",
           "theory_vs_sim"]

#: committed token-level predictions at the full grid (:func:`load_theory_grid`)
STORED_THEORY = "token_theory_grid.json"

#: prediction key -> (record key, kind): "all" events are Bernoulli per run, "frac" fractions
QUANTITIES = {"p_retrieval": ("retrieval", "all"), "p_recall": ("recall", "all"),
              "p_retrieval_seq": ("retrieval_acc", "frac"), "p_recall_seq": ("recall_acc", "frac"),
              "test_acc": ("test_acc", "frac")}
#: the pre-existing report's names of the same quantities (keys of ``theory_vs_sim`` points)
REPORT_NAMES = {"p_retrieval": "p_retrieval", "p_recall": "p_recall", "p_retrieval_seq": "retrieval_seq",
                "p_recall_seq": "recall_seq", "test_acc": "test_acc"}


def simulated_points(records):
    """Group run records by ``(N, d, L)``: per quantity the mean over seeds and its standard error.

    Parameters
    ----------
    records : list of dict
        :func:`~validation.token_retrieval.runs.run_config` results (``N``, ``d``, ``L`` and the
        success keys).

    Returns
    -------
    dict
        ``(N, d, L)`` -> ``{"seeds": n, key: (mean, stderr)}`` for the keys of
        :data:`QUANTITIES`.  All-``N`` events: ``stderr = sqrt(max(p(1-p), 1/(4n)) / n)``
        (the floor keeps a 0/n or n/n fraction from claiming zero error); fractions: the
        between-seed standard deviation over ``sqrt(n)``.

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation

    Examples
    --------
    >>> recs = [{"N": 4, "d": 8, "L": 2, "retrieval": s % 2 == 0, "recall": False, "retrieval_acc": 1.0,
    ...          "recall_acc": 0.5, "test_acc": 0.5} for s in range(4)]
    >>> p = simulated_points(recs)[(4, 8, 2)]
    >>> p["seeds"], p["p_retrieval"]
    (4, (0.5, 0.25))
    """
    groups = {}
    for r in records:
        groups.setdefault((int(r["N"]), int(r["d"]), int(r["L"])), []).append(r)
    out = {}
    for k, rs in sorted(groups.items()):
        n = len(rs)
        row = {"seeds": n}
        for q, (rk, kind) in QUANTITIES.items():
            v = np.array([float(r[rk]) for r in rs])
            m = float(v.mean())
            if kind == "all":
                se = math.sqrt(max(m * (1 - m), 0.25 / n) / n)
            else:
                se = float(v.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
            row[q] = (m, se)
        out[k] = row
    return out


def theory_grid(points, *, reps=100, rng=0, progress=None, **kw):
    """Evaluate the token-level theory at each ``(N, d, L)`` of ``points``.

    Parameters
    ----------
    points : iterable of tuple
        ``(N, d, L)`` triples.
    reps : int
        Monte Carlo draws per point (:func:`~validation.token_retrieval.token_theory.token_theory`).
    rng : int
        Root seed; point ``(N, d, L)`` uses ``SeedSequence([rng, N, d, L])``, so a point's
        prediction does not depend on the other points.
    progress : callable, optional
        Called with one line per point.
    **kw
        Options of :func:`~validation.token_retrieval.token_theory.token_theory`.

    Returns
    -------
    dict
        ``(N, d, L)`` -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation

    Examples
    --------
    >>> g = theory_grid([(4, 64, 4)], reps=4)
    >>> round(g[(4, 64, 4)].p_retrieval, 2)
    1.0
    """
    reps = check_int("reps", reps, low=2)
    root = check_int("rng", rng, low=0)
    out = {}
    for (N, d, L) in points:
        if progress:
            progress(f"token theory N={N} d={d} L={L}")
        out[(int(N), int(d), int(L))] = token_theory(int(N), int(d), int(L), reps=reps,
                                                     rng=np.random.SeedSequence([root, N, d, L]), **kw)
    return out


def load_theory_grid(path=None):
    """Load committed token-level predictions of the full grid (as :func:`theory_grid` returns them).

    Parameters
    ----------
    path : str or Path, optional
        A JSON file written like the committed one (default
        ``validation/token_retrieval/stored/token_theory_grid.json``, made by
        ``theory_grid(points, reps=100, rng=0)`` over the 160 points of the full grid).

    Returns
    -------
    dict
        ``(N, d, L)`` -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.

    Raises
    ------
    LookupError
        If the file does not exist.

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation

    Examples
    --------
    >>> g = load_theory_grid()
    >>> len(g), round(g[(256, 64, 64)].p_retrieval, 2)
    (160, 0.09)
    """
    import json
    from pathlib import Path

    from .token_theory import TokenTheory

    p = Path(path) if path is not None else Path(__file__).resolve().parent / "stored" / STORED_THEORY
    if not p.exists():
        raise LookupError(f"no stored token-level predictions at {p}")
    raw = json.loads(p.read_text())["theory"]
    return {tuple(int(x) for x in k.split(",")): TokenTheory(**v) for k, v in raw.items()}


@dataclass(frozen=True)
class TheoryVsSim(Result):
    """Theory against simulation over a grid (:func:`theory_vs_sim`).

    Parameters
    ----------
    points : list of dict
        Per ``(N, d, L)``: ``seeds``; for each quantity ``q`` of :data:`QUANTITIES` (report
        names ``p_retrieval``, ``p_recall``, ``retrieval_seq``, ``recall_seq``, ``test_acc``):
        ``{q}_sim``, ``{q}_stderr``, ``{q}_pred`` (token-level theory), ``{q}_pred_se`` (its
        Monte Carlo error), ``{q}_pred_closed`` (closed-form theory), ``{q}_z`` (difference over
        the combined standard error).
    errors : dict
        Per quantity: ``mean_abs_error``, ``max_abs_error``, ``n``, ``within_3se``,
        ``within_2se``, ``chi2_per_point`` (mean squared ``z``) for the token-level theory, and
        the same ``mean_abs_error``/``max_abs_error`` of the closed form under ``closed``.
    noise_floor : dict
        Per all-``N`` quantity: mean and 95 % quantile of the mean and of the maximum absolute
        error an *exact* theory would show with the same seeds (binomial draws at the
        predicted probabilities).
    worst : list of dict
        The points with the largest error of P(retrieval) or P(recall).

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation
    """

    points: list
    errors: dict
    noise_floor: dict
    worst: list

    _estimate = None


def theory_vs_sim(records, *, theory=None, reps=100, rng=0, floor_draws=2000, progress=None):
    """Compare the token-level and the closed-form theory with simulated runs, point by point.

    Parameters
    ----------
    records : list of dict
        Simulated runs (one per seed and grid point, random embeddings, ``V = 4 N``).
    theory : dict, optional
        Precomputed :func:`theory_grid` output (computed here when None).
    reps : int
        Draws per point when the theory is computed here.
    rng : int
        Root seed of the theory's draws and of the noise-floor draws.
    floor_draws : int
        Binomial draws of the noise floor (>= 100).
    progress : callable, optional
        Progress lines.

    Returns
    -------
    TheoryVsSim
        Points, error table, noise floor and worst points.

    Notes
    -----
    ``z = (sim - pred) / sqrt(se_sim^2 + se_pred^2)`` with the simulated standard errors of
    :func:`simulated_points`; for all-``N`` events the binomial error is taken at the
    *predicted* probability (floored at ``1/(2n)``), the hypothesis under test.

    References
    ----------
    docs/token_retrieval.md#token-level-theory-against-simulation

    Examples
    --------
    >>> from validation.token_retrieval.experiments import run_grid
    >>> recs = run_grid((4,), (64,), (4,), seeds=2)
    >>> tv = theory_vs_sim(recs, reps=4, floor_draws=100)
    >>> sorted(tv.errors) == sorted(QUANTITIES)
    True
    """
    floor_draws = check_int("floor_draws", floor_draws, low=100)
    sim = simulated_points(records)
    if theory is None:
        theory = theory_grid(sim.keys(), reps=reps, rng=rng, progress=progress)
    points = []
    for k, row in sim.items():
        if k not in theory:
            raise ValueError(f"theory has no prediction at (N, d, L) = {k}")
        N, d, L = k
        t = theory[k]
        old = th.success_probs(N, d, L, V=max(2, 4 * N))
        n = row["seeds"]
        p = {"N": N, "d": d, "L": L, "seeds": n}
        for q, (_, kind) in QUANTITIES.items():
            name = REPORT_NAMES[q]
            m, se = row[q]
            pred = float(getattr(t, q))
            pse = float(getattr(t, q + "_se"))
            if kind == "all":
                pp = min(max(pred, 0.5 / n), 1 - 0.5 / n)
                se_h = math.sqrt(pp * (1 - pp) / n)
            else:
                se_h = se if math.isfinite(se) else 0.0
            tot = math.sqrt(se_h ** 2 + pse ** 2)
            p.update({f"{name}_sim": m, f"{name}_stderr": se, f"{name}_pred": pred, f"{name}_pred_se": pse,
                      f"{name}_pred_closed": float(old[q]),
                      f"{name}_z": (m - pred) / tot if tot > 0 else (0.0 if m == pred else math.inf)})
        points.append(p)
    errors = {}
    for q in QUANTITIES:
        name = REPORT_NAMES[q]
        e = np.array([abs(p[f"{name}_pred"] - p[f"{name}_sim"]) for p in points])
        eo = np.array([abs(p[f"{name}_pred_closed"] - p[f"{name}_sim"]) for p in points])
        z = np.array([p[f"{name}_z"] for p in points])
        fin = np.isfinite(z)
        errors[q] = {"mean_abs_error": float(e.mean()), "max_abs_error": float(e.max()), "n": int(e.size),
                     "within_3se": int(np.sum(np.abs(z) <= 3)), "within_2se": int(np.sum(np.abs(z) <= 2)),
                     "chi2_per_point": float(np.mean(z[fin] ** 2)) if fin.any() else float("nan"),
                     "closed": {"mean_abs_error": float(eo.mean()), "max_abs_error": float(eo.max())}}
    rs = check_rng(np.random.SeedSequence([int(rng), 1]))
    floor = {}
    for q in ("p_retrieval", "p_recall"):
        pr = np.array([p[f"{q}_pred"] for p in points])
        ns = np.array([p["seeds"] for p in points])
        draws = rs.binomial(ns[None, :], np.clip(pr, 0, 1)[None, :], size=(floor_draws, pr.size)) / ns
        err = np.abs(draws - pr[None, :])
        floor[q] = {"mean_abs_error_mean": float(err.mean(axis=1).mean()),
                    "mean_abs_error_q95": float(np.quantile(err.mean(axis=1), 0.95)),
                    "max_abs_error_mean": float(err.max(axis=1).mean()),
                    "max_abs_error_q95": float(np.quantile(err.max(axis=1), 0.95)),
                    "draws": floor_draws}
    worst = sorted(points, key=lambda p: -max(abs(p["p_retrieval_pred"] - p["p_retrieval_sim"]),
                                              abs(p["p_recall_pred"] - p["p_recall_sim"])))[:10]
    return TheoryVsSim(points=points, errors=errors, noise_floor=floor, worst=worst)
