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

from hcizz.checks import check_int, check_real, check_rng
from hcizz.results import Result

from . import theory as th
from .token_theory import token_theory
from ._docparams import fill_doc

__all__ = ["QUANTITIES", "TARGETS", "simulated_points", "theory_grid", "save_theory_grid", "load_theory_grid",
           "TheoryVsSim", "theory_vs_sim", "responsible_term", "TargetCheck", "target_check", "LimitsOnGrid",
           "limits_on_grid", "SeedCheck", "seed_check", "TokenMomentCheck", "token_moment_check",
           "scan_theory", "ScanComparison", "scan_comparison", "ColumnCheck", "column_check"]

#: prediction key -> (record key, kind): "all" events are Bernoulli per run, "frac" fractions
QUANTITIES = {"p_retrieval": ("retrieval", "all"), "p_recall": ("recall", "all"),
              "p_retrieval_seq": ("retrieval_acc", "frac"), "p_recall_seq": ("recall_acc", "frac"),
              "test_acc": ("test_acc", "frac")}
#: the pre-existing report's names of the same quantities (keys of ``theory_vs_sim`` points)
#: the targets of the comparison over the full grid: the all-N probabilities' maximum and mean
#: absolute errors, and the standard-error multiple within which every moment must lie
TARGETS = {"max_abs_error": 0.20, "mean_abs_error": 0.05, "z": 3.0}
REPORT_NAMES = {"p_retrieval": "p_retrieval", "p_recall": "p_recall", "p_retrieval_seq": "retrieval_seq",
                "p_recall_seq": "recall_seq", "test_acc": "test_acc"}


@fill_doc
def simulated_points(records):
    r"""Group run records by ``(N, d, L)``: per quantity the mean over seeds and its standard error.

    Parameters
    ----------
    records : list of dict
        :func:`~validation.token_retrieval.runs.run_config` results (``N``, ``d``, ``L`` and the
        success keys).

    Returns
    -------
    dict
        ``(N, d, L)`` -> ``{"seeds": n, key: (mean, stderr)}`` for the keys of
        :data:`QUANTITIES`.  All-``N`` events: :math:`\mathrm{stderr} = \sqrt{\max(p(1-p), 1/(4n)) / n}`
        (the floor keeps a 0/n or n/n fraction from claiming zero error); fractions: the
        between-seed standard deviation over :math:`\sqrt{n}`.

    See Also
    --------
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.
    validation.token_retrieval.experiments.run_grid : Run ``run_config`` over the product grid ``Ns x ds x Ls``.

    %(ref_theory_vs_sim)s

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


@fill_doc
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

    See Also
    --------
    validation.token_retrieval.comparison.save_theory_grid
        Write ``theory_grid`` output as JSON (read back by ``load_theory_grid``).
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.

    %(ref_theory_vs_sim)s

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


@fill_doc
def save_theory_grid(grid, path, **about):
    """Write :func:`theory_grid` output as JSON (read back by :func:`load_theory_grid`).

    Parameters
    ----------
    grid : dict
        Tuple key (``(N, d, L)``, or the ``(kind, m, N, d, L)`` of :func:`scan_theory`; parts
        ints, names or None) -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.
    path : str or Path
        The file to write.
    **about
        JSON-able metadata stored beside the predictions (``reps``, ``rng``, ``cpu_seconds``, ...).

    Returns
    -------
    pathlib.Path
        The path written.

    See Also
    --------
    validation.token_retrieval.comparison.load_theory_grid
        Load token-level predictions written by ``save_theory_grid``.
    validation.token_retrieval.comparison.theory_grid
        Evaluate the token-level theory at each ``(N, d, L)`` of ``points``.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.json"
    >>> g = theory_grid([(4, 64, 4)], reps=4)
    >>> load_theory_grid(save_theory_grid(g, f, reps=4))[(4, 64, 4)] == g[(4, 64, 4)]
    True
    """
    import json
    from pathlib import Path

    p = Path(path)
    p.write_text(json.dumps({**about, "theory": {",".join(map(str, k)): v.to_dict() for k, v in grid.items()}},
                            indent=1, sort_keys=True) + "\n")
    return p


@fill_doc
def load_theory_grid(path):
    """Load token-level predictions written by :func:`save_theory_grid`.

    Parameters
    ----------
    path : str or Path
        The JSON file (the committed predictions of the full grid are read by the study
        ``token_retrieval.full_grid``, ``FullGrid.committed_theory``).

    Returns
    -------
    dict
        ``(N, d, L)`` -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.

    Raises
    ------
    LookupError
        If the file does not exist.

    See Also
    --------
    validation.token_retrieval.comparison.save_theory_grid
        Write ``theory_grid`` output as JSON (read back by ``load_theory_grid``).
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> load_theory_grid("no/such/file.json")
    Traceback (most recent call last):
    ...
    LookupError: no stored token-level predictions at no/such/file.json
    """
    import json
    from pathlib import Path

    from .token_theory import TokenTheory

    p = Path(path)
    if not p.exists():
        raise LookupError(f"no stored token-level predictions at {p}")
    raw = json.loads(p.read_text())["theory"]
    return {tuple(_key_part(x) for x in k.split(",")): TokenTheory(**v) for k, v in raw.items()}


def _key_part(x):
    """One part of a stored key: an int, None or a name."""
    if x == "None":
        return None
    try:
        return int(x)
    except ValueError:
        return x


@fill_doc
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
        predicted probabilities; ``*_mean``, ``*_q95``), and the same with the predictions'
        Monte Carlo error added (a Gaussian of standard deviation ``{q}_pred_se`` per point:
        an exact theory evaluated by as many draws; ``*_mean_mc``, ``*_q95_mc``).
    worst : list of dict
        The points with the largest error of P(retrieval) or P(recall).

    See Also
    --------
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.
    validation.token_retrieval.comparison.target_check
        Check a ``theory_vs_sim`` comparison against the targets ``TARGETS``.

    %(ref_theory_vs_sim)s
    """

    points: list
    errors: dict
    noise_floor: dict
    worst: list


@fill_doc
def theory_vs_sim(records, *, theory=None, reps=100, rng=0, floor_draws=2000, progress=None):
    r"""Compare the token-level and the closed-form theory with simulated runs, point by point.

    Parameters
    ----------
    records : list of dict
        Simulated runs (one per seed and grid point, random embeddings, :math:`V = 4 N`).
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

    See Also
    --------
    validation.token_retrieval.comparison.theory_grid
        Evaluate the token-level theory at each ``(N, d, L)`` of ``points``.
    validation.token_retrieval.comparison.target_check
        Check a ``theory_vs_sim`` comparison against the targets ``TARGETS``.
    validation.token_retrieval.predictions.theory_vs_simulation
        Compare the theory with the simulated success fractions at every grid point.

    Notes
    -----
    :math:`z = (\mathrm{sim} - \mathrm{pred}) / \sqrt{\mathrm{se}_{\mathrm{sim}}^2 + \mathrm{se}_{\mathrm{pred}}^2}` with the simulated standard errors of
    :func:`simulated_points`; for all-``N`` events the binomial error is taken at the
    *predicted* probability (floored at :math:`1/(2n)`), the hypothesis under test.

    %(ref_theory_vs_sim)s

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
    rs_mc = check_rng(np.random.SeedSequence([int(rng), 2]))
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
        # the same with the predictions' own Monte Carlo error (an exact theory evaluated by
        # `reps` draws): independent stream, so the keys above do not change
        pse = np.array([p[f"{q}_pred_se"] for p in points])
        d2 = rs_mc.binomial(ns[None, :], np.clip(pr, 0, 1)[None, :], size=(floor_draws, pr.size)) / ns
        e2 = np.abs(d2 - pr[None, :] - pse[None, :] * rs_mc.standard_normal((floor_draws, pr.size)))
        floor[q].update({"mean_abs_error_mean_mc": float(e2.mean(axis=1).mean()),
                         "mean_abs_error_q95_mc": float(np.quantile(e2.mean(axis=1), 0.95)),
                         "max_abs_error_mean_mc": float(e2.max(axis=1).mean()),
                         "max_abs_error_q95_mc": float(np.quantile(e2.max(axis=1), 0.95))})
    worst = sorted(points, key=lambda p: -max(abs(p["p_retrieval_pred"] - p["p_retrieval_sim"]),
                                              abs(p["p_recall_pred"] - p["p_recall_sim"])))[:10]
    return TheoryVsSim(points=points, errors=errors, noise_floor=floor, worst=worst)


#: the all-N quantities the error targets are about
TARGET_QUANTITIES = ("p_retrieval", "p_recall")


@fill_doc
def responsible_term(N, d, L, *, vocab_ratio=4.0):
    r"""Name the approximation of the token-level theory that dominates its error at ``(N, d, L)``.

    Parameters
    ----------
    N, d, L : int
        Grid point (``V = vocab_ratio N``).
    vocab_ratio : float, optional
        :math:`V / N`.

    Returns
    -------
    str
        ``"wishart_Pn"`` where a sequence's second-moment matrix is a Wishart matrix with
        :math:`L \geq d` samples (the theory uses its mean, :math:`\mathbb{E} P_n^2` and
        :math:`P_n \approx (L/d) I`); ``"law_of_A"`` where :math:`V / d \geq 30` (the law (docs, eq. tokret-tl6) of the
        trigger coefficient); ``"token_variance"`` otherwise (the leading-order per-token variance
        terms :math:`T_1`, :math:`T_K` and the self term of eqs. tokret-tl4 and tokret-tl5).

    See Also
    --------
    validation.token_retrieval.comparison.target_check
        Check a ``theory_vs_sim`` comparison against the targets ``TARGETS``.
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.

    Notes
    -----
    The regimes come from the diagnostics of the docs (per-token residual variances against the
    exact key vector, the measured law of ``A`` over the grid's tasks); the rule is a label for
    the report, not a measurement.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> responsible_term(64, 32, 32), responsible_term(512, 32, 8), responsible_term(16, 128, 16)
    ('wishart_Pn', 'law_of_A', 'token_variance')
    """
    if L >= d:
        return "wishart_Pn"
    if vocab_ratio * N / d >= 30:
        return "law_of_A"
    return "token_variance"


@fill_doc
@dataclass(frozen=True)
class TargetCheck(Result):
    """The token-level theory against the targets :data:`TARGETS` (:func:`target_check`).

    Parameters
    ----------
    targets : dict
        The targets used.
    quantities : dict
        Per all-``N`` quantity (``p_retrieval``, ``p_recall``): ``mean_abs_error``,
        ``max_abs_error``, ``n``, ``within_3se``, ``max_met`` / ``mean_met`` (the error at or below
        its target), ``floor_max_abs_error`` / ``floor_max_abs_error_q95`` (mean and 95 % quantile
        of the maximum error of an *exact* theory with the same seeds), ``max_reachable``
        (the floor's mean maximum at or below the target), ``floor_mean_abs_error`` (the floor's
        mean error), ``floor_mean_abs_error_mc`` / ``floor_mean_abs_error_q95_mc`` (mean and 95 %
        quantile of the mean error of an exact theory evaluated with the predictions' Monte Carlo
        error), ``mean_consistent`` (the mean error at or below that 95 % quantile: no error of
        the theory's own is visible in the mean), and the closed form's errors
        ``closed_mean_abs_error``, ``closed_max_abs_error``.
    misses : list of dict
        Every point and quantity (all five of :data:`QUANTITIES`) outside ``z`` combined standard
        errors or, for the all-``N`` quantities, above the maximum-error target: ``N``, ``d``,
        ``L``, ``quantity``, ``sim``, ``pred``, ``z``, ``within_se`` (``|z| <= z``) and ``term``
        (:func:`responsible_term`, or ``"sampling"`` for an error above the target but within
        ``z`` standard errors).
    terms : dict
        Misses outside ``z`` standard errors counted by ``term``.
    moments : dict or None
        ``{"within": k, "n": n}`` moments within ``z`` combined standard errors, when given.

    See Also
    --------
    validation.token_retrieval.comparison.target_check
        Check a ``theory_vs_sim`` comparison against the targets ``TARGETS``.
    validation.token_retrieval.comparison.TheoryVsSim : Theory against simulation over a grid (``theory_vs_sim``).

    %(ref_theory_vs_sim)s
    """

    targets: dict
    quantities: dict
    misses: list
    terms: dict
    moments: dict | None

    def summary(self):
        """Return one line per all-``N`` quantity and one for the misses.

        Returns
        -------
        str
            The lines.
        """
        t = self.targets
        lines = []
        for q, e in self.quantities.items():
            lines.append(f"{q}: mean |error| {e['mean_abs_error']:.3f} (target {t['mean_abs_error']}, "
                         f"{'met' if e['mean_met'] else 'missed'}), max {e['max_abs_error']:.3f} (target "
                         f"{t['max_abs_error']}, {'met' if e['max_met'] else 'missed'}; an exact theory with "
                         f"these seeds: {e['floor_max_abs_error']:.2f}), {e['within_3se']}/{e['n']} within 3 SE")
        out = sum(not m["within_se"] for m in self.misses)
        lines.append(f"points outside {t['z']:g} SE: {out} (" + ", ".join(f"{k} {v}" for k, v in self.terms.items())
                     + ")" + (f"; moments {self.moments['within']}/{self.moments['n']} within {t['z']:g} SE"
                              if self.moments else ""))
        return "\n".join(lines)


@fill_doc
def target_check(tv, *, targets=None, moments=None):
    """Check a :func:`theory_vs_sim` comparison against the targets :data:`TARGETS`.

    Parameters
    ----------
    tv : TheoryVsSim
        The comparison.
    targets : dict, optional
        ``max_abs_error``, ``mean_abs_error``, ``z`` (default :data:`TARGETS`).
    moments : sequence of float, optional
        ``z`` scores of moments (simulation against the theory over their combined standard
        error); counted against ``targets["z"]``.

    Returns
    -------
    TargetCheck
        Errors, verdicts, misses and the term named for each.

    See Also
    --------
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.
    validation.token_retrieval.comparison.responsible_term
        Name the approximation of the token-level theory that dominates its error at ``(N, d, L)``.

    Notes
    -----
    A verdict is computed from the numbers: ``max_met`` is ``max_abs_error <= target``,
    ``max_reachable`` compares the target with the mean maximum error that binomial draws at the
    predicted probabilities give (``tv.noise_floor``), i.e. what an exact theory would show.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> from validation.token_retrieval.experiments import run_grid
    >>> tv = theory_vs_sim(run_grid((4,), (64,), (4,), seeds=2), reps=4, floor_draws=100)
    >>> tc = target_check(tv, moments=[0.5, -1.0, 3.5])
    >>> sorted(tc.quantities), tc.moments
    (['p_recall', 'p_retrieval'], {'within': 2, 'n': 3})
    """
    t = dict(TARGETS if targets is None else targets)
    quantities = {}
    for q in TARGET_QUANTITIES:
        e, f = tv.errors[q], tv.noise_floor[q]
        quantities[q] = {"mean_abs_error": e["mean_abs_error"], "max_abs_error": e["max_abs_error"], "n": e["n"],
                         "within_3se": e["within_3se"],
                         "max_met": bool(e["max_abs_error"] <= t["max_abs_error"]),
                         "mean_met": bool(e["mean_abs_error"] <= t["mean_abs_error"]),
                         "floor_max_abs_error": f["max_abs_error_mean"],
                         "floor_max_abs_error_q95": f["max_abs_error_q95"],
                         "floor_mean_abs_error": f["mean_abs_error_mean"],
                         "floor_mean_abs_error_mc": f["mean_abs_error_mean_mc"],
                         "floor_mean_abs_error_q95_mc": f["mean_abs_error_q95_mc"],
                         "mean_consistent": bool(e["mean_abs_error"] <= f["mean_abs_error_q95_mc"]),
                         "max_reachable": bool(f["max_abs_error_mean"] <= t["max_abs_error"]),
                         "closed_mean_abs_error": e["closed"]["mean_abs_error"],
                         "closed_max_abs_error": e["closed"]["max_abs_error"]}
    misses, terms = [], {}
    for p in tv.points:
        for q in QUANTITIES:
            name = REPORT_NAMES[q]
            sim, pred, z = p[f"{name}_sim"], p[f"{name}_pred"], p[f"{name}_z"]
            inside = bool(abs(z) <= t["z"])
            big = q in TARGET_QUANTITIES and abs(sim - pred) > t["max_abs_error"]
            if inside and not big:
                continue
            term = "sampling" if inside else responsible_term(p["N"], p["d"], p["L"])
            if not inside:
                terms[term] = terms.get(term, 0) + 1
            misses.append({"N": p["N"], "d": p["d"], "L": p["L"], "quantity": q, "sim": sim, "pred": pred,
                           "z": z, "within_se": inside, "term": term})
    mom = None
    if moments is not None:
        zs = np.asarray(list(moments), float)
        mom = {"within": int(np.sum(np.abs(zs) <= t["z"])), "n": int(zs.size)}
    return TargetCheck(targets=t, quantities=quantities, misses=misses, terms=dict(sorted(terms.items())),
                       moments=mom)


@fill_doc
@dataclass(frozen=True)
class LimitsOnGrid(Result):
    """Retrieval boundaries of simulation and theories beside the statistical limits (:func:`limits_on_grid`).

    Parameters
    ----------
    rows : list of dict
        Per ``(d, L)``: ``N_sim`` (simulated crossing of P(retrieval of all ``N``) = 1/2),
        ``N_token`` (token-level theory), ``N_closed`` (closed form,
        :func:`~validation.token_retrieval.theory.retrieval_boundary`), and the limits of
        :func:`~validation.token_retrieval.lower_bound.lower_bound_boundaries` (``N_counting``,
        ``N_storage``, ``N_oracle_max``, ``N_mean_pool``); None where there is no crossing.
    sim_above_mean_pool : tuple of int
        ``(k, n)``: the simulated crossing at or above ``N_mean_pool`` at ``k`` of the ``n``
        ``(d, L)`` where both exist.
    token_within_factor : tuple of int
        ``(k, n)``: the token-level crossing within ``factor`` of the simulated one at ``k`` of
        the ``n`` simulated crossings.
    factor : float
        The factor used.

    See Also
    --------
    validation.token_retrieval.lower_bound.lower_bound_boundaries
        Compute the boundaries in ``N`` of the statistical limits, for the phase diagrams.
    validation.token_retrieval.comparison.limits_on_grid
        Locate the retrieval boundaries of a comparison and put the statistical limits beside them.

    %(ref_lower_bound_question)s
    """

    rows: list
    sim_above_mean_pool: tuple
    token_within_factor: tuple
    factor: float


@fill_doc
def limits_on_grid(tv, *, factor=1.5):
    r"""Locate the retrieval boundaries of a comparison and put the statistical limits beside them.

    Parameters
    ----------
    tv : TheoryVsSim
        A :func:`theory_vs_sim` comparison over a product grid in ``N``.
    factor : float, optional
        Tolerance factor of the token-level crossing against the simulated one (> 1).

    Returns
    -------
    LimitsOnGrid
        One row per ``(d, L)`` and the two counts.

    See Also
    --------
    validation.token_retrieval.lower_bound.lower_bound_boundaries
        Compute the boundaries in ``N`` of the statistical limits, for the phase diagrams.
    validation.token_retrieval.theory.retrieval_boundary
        Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.

    Notes
    -----
    Crossings from below along ``N`` (:func:`~validation.token_retrieval.boundary.boundary_points`,
    geometric interpolation); the limits are exact integrals (no Monte Carlo).

    %(ref_lower_bound_question)s

    Examples
    --------
    >>> from validation.token_retrieval.experiments import run_grid
    >>> tv = theory_vs_sim(run_grid((4, 16), (64,), (16,), seeds=2), reps=4, floor_draws=100)
    >>> r, = limits_on_grid(tv).rows
    >>> r["d"], r["L"], r["N_storage"], r["N_mean_pool"]
    (64, 16, 63.0, 1.0)
    """
    from .boundary import boundary_points
    from .lower_bound import lower_bound_boundaries

    factor = check_real("factor", factor, low=1.0, low_open=True)
    sim = {(p["N"], p["d"], p["L"]): (p["p_retrieval_sim"], p["seeds"]) for p in tv.points}
    tok = {(p["N"], p["d"], p["L"]): (p["p_retrieval_pred"], p["seeds"]) for p in tv.points}
    bs = {(b["d"], b["L"]): b["N"] for b in boundary_points(sim)}
    bt = {(b["d"], b["L"]): b["N"] for b in boundary_points(tok)}
    rows = []
    for d, L in sorted({(k[1], k[2]) for k in sim}):
        lim = lower_bound_boundaries(d, L)
        rows.append({"d": d, "L": L, "N_sim": bs.get((d, L)), "N_token": bt.get((d, L)),
                     "N_closed": th.retrieval_boundary(d, L),
                     **{k: lim[k] for k in ("N_counting", "N_storage", "N_oracle_max", "N_mean_pool")}})
    both = [r for r in rows if r["N_sim"] is not None and r["N_mean_pool"] is not None]
    cross = [r for r in rows if r["N_sim"] is not None]
    within = [r for r in cross if r["N_token"] is not None and 1 / factor <= r["N_token"] / r["N_sim"] <= factor]
    return LimitsOnGrid(rows=rows, sim_above_mean_pool=(sum(r["N_sim"] >= r["N_mean_pool"] for r in both), len(both)),
                        token_within_factor=(len(within), len(cross)), factor=float(factor))


@fill_doc
@dataclass(frozen=True)
class SeedCheck(Result):
    """All-``N`` probabilities re-measured with more seeds at chosen points (:func:`seed_check`).

    Parameters
    ----------
    rows : list of dict
        Per point and quantity: ``N``, ``d``, ``L``, ``quantity``, ``pred``, ``pred_se``,
        ``sim_first`` (the first runs, which chose the point), ``n_new``, ``sim_new``,
        ``se_new``, ``z_new`` (the new runs alone: unbiased by the choice), ``n_all``,
        ``sim_all``, ``se_all``, ``error_all``, ``z_all`` (all runs pooled).
    max_error_new, max_error_all : float
        Largest ``|sim - pred|`` over the rows, new runs and pooled.
    max_abs_z_new : float
        Largest ``|z_new|``.

    See Also
    --------
    validation.token_retrieval.comparison.seed_check
        Compare the token-level theory with all-``N`` success re-measured on new seeds.
    validation.token_retrieval.comparison.TheoryVsSim : Theory against simulation over a grid (``theory_vs_sim``).

    %(ref_theory_vs_sim)s
    """

    rows: list
    max_error_new: float
    max_error_all: float
    max_abs_z_new: float


@fill_doc
@dataclass(frozen=True)
class ColumnCheck(Result):
    """One all-``N`` probability, theory against simulation, column by column (:func:`column_check`).

    Parameters
    ----------
    quantity : str
        ``"p_retrieval"`` or ``"p_recall"``.
    rows : list of dict
        Per ``(d, L)``: ``d``, ``L``, ``points`` (the ``N`` with a finite ``z``), ``chi2``
        (sum of ``z^2``), ``p_value`` (:math:`\\chi^2` law with ``points`` degrees of freedom),
        ``mean_diff`` (mean of simulation minus prediction), ``z_min``, ``z_max``.
    level : float
        The p-value below which a column is listed as a miss.
    misses : list of tuple
        ``(d, L)`` of the columns with ``p_value < level``.

    See Also
    --------
    validation.token_retrieval.comparison.column_check
        Test an all-``N`` probability of a comparison column by column in ``(d, L)``.

    %(ref_theory_vs_sim)s
    """

    quantity: str
    rows: list
    level: float
    misses: list

    def rejected(self):
        """Return the rows of the columns in ``misses``.

        Returns
        -------
        list of dict
            Rows of ``rows``, in their order.
        """
        return [r for r in self.rows if (r["d"], r["L"]) in self.misses]

    def summary(self):
        """Return one line: the columns whose chi-squared p-value is below ``level``.

        Returns
        -------
        str
            The text.
        """
        bad = self.rejected()
        text = ", ".join(f"d={r['d']} L={r['L']}: chi2 {r['chi2']:.1f}/{r['points']} (p = {r['p_value']:.2g}, "
                         f"mean sim - pred {r['mean_diff']:+.3f})" for r in bad)
        return (f"{self.quantity}: {len(bad)} of {len(self.rows)} (d, L) columns with p < {self.level:g}"
                + (f": {text}" if bad else ""))


@fill_doc
def column_check(tv, *, quantity="p_retrieval", level=0.01):
    r"""Test an all-``N`` probability of a comparison column by column in ``(d, L)``.

    Parameters
    ----------
    tv : TheoryVsSim
        The comparison (:func:`theory_vs_sim`).
    quantity : {"p_retrieval", "p_recall"}
        The probability tested.
    level : float
        Columns with a p-value below it are listed as misses, in (0, 1).

    Returns
    -------
    ColumnCheck
        One row per ``(d, L)`` and the misses.

    See Also
    --------
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.

    Notes
    -----
    A column's statistic is :math:`\chi^2 = \sum_N z_N^2` over its points with a finite
    :math:`z` (the difference over the combined standard error of :func:`theory_vs_sim`: binomial
    at the prediction and the theory's Monte Carlo error); under an exact theory and independent
    points it is close to a :math:`\chi^2` law with one degree of freedom per point (the binomial
    law is discrete, so the tail is only approximate at a few seeds).  A systematic error in a
    column shows as a large :math:`\chi^2` and a ``mean_diff`` of one sign.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> from validation.token_retrieval.experiments import run_grid
    >>> tv = theory_vs_sim(run_grid((4, 8), (64,), (4,), seeds=2), reps=4, floor_draws=100)
    >>> cc = column_check(tv)
    >>> [(r["d"], r["L"], r["points"]) for r in cc.rows]
    [(64, 4, 2)]
    """
    if quantity not in TARGET_QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(TARGET_QUANTITIES)}, got {quantity!r}")
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    from scipy.stats import chi2 as chi2_law

    cols = {}
    for p in tv.points:
        cols.setdefault((p["d"], p["L"]), []).append(p)
    rows, misses = [], []
    for (d, L), ps in sorted(cols.items()):
        z = np.array([p[f"{quantity}_z"] for p in ps], float)
        diff = np.array([p[f"{quantity}_sim"] - p[f"{quantity}_pred"] for p in ps], float)
        fin = np.isfinite(z)
        k = int(fin.sum())
        c2 = float(np.sum(z[fin] ** 2))
        pv = float(chi2_law.sf(c2, k)) if k else float("nan")
        rows.append({"d": int(d), "L": int(L), "points": k, "chi2": c2, "p_value": pv,
                     "mean_diff": float(diff.mean()), "z_min": float(z[fin].min()) if k else float("nan"),
                     "z_max": float(z[fin].max()) if k else float("nan")})
        if k and pv < level:
            misses.append((int(d), int(L)))
    return ColumnCheck(quantity=quantity, rows=rows, level=level, misses=misses)


def _binom_z(m, n, pred, pse):
    pp = min(max(pred, 0.5 / n), 1 - 0.5 / n)
    return (m - pred) / math.sqrt(pp * (1 - pp) / n + pse ** 2)


@fill_doc
def seed_check(points, first, new, theory):
    """Compare the token-level theory with all-``N`` success re-measured on new seeds.

    Parameters
    ----------
    points : sequence of tuple
        ``(N, d, L, quantity)`` with ``quantity`` ``"p_retrieval"`` or ``"p_recall"``.
    first, new : list of dict
        Run records (:func:`~validation.token_retrieval.runs.run_config` results): the runs that
        chose the points and the new ones.
    theory : dict
        ``(N, d, L)`` -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.

    Returns
    -------
    SeedCheck
        One row per point.

    See Also
    --------
    validation.token_retrieval.comparison.theory_vs_sim
        Compare the token-level and the closed-form theory with simulated runs, point by point.
    validation.token_retrieval.token_theory.token_theory
        Predict the early phase's success probabilities from the token-level theory.

    Notes
    -----
    ``z`` uses the binomial error at the predicted probability (floored at :math:`1/(2n)`) and the
    theory's Monte Carlo error, as :func:`theory_vs_sim`; ``se_new``/``se_all`` are the binomial
    errors at the measured fraction (floored like :func:`simulated_points`).

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> from validation.token_retrieval.token_theory import TokenTheory
    >>> t = theory_grid([(4, 64, 4)], reps=4)
    >>> runs = [{"N": 4, "d": 64, "L": 4, "retrieval": True, "recall": True}] * 4
    >>> c = seed_check([(4, 64, 4, "p_retrieval")], runs[:1], runs[1:], t)
    >>> c.rows[0]["n_new"], c.rows[0]["sim_all"]
    (3, 1.0)
    """
    keys = {"p_retrieval": "retrieval", "p_recall": "recall"}
    rows = []
    for N, d, L, q in points:
        if q not in keys:
            raise ValueError(f"quantity must be one of {', '.join(keys)}, got {q!r}")
        k = (int(N), int(d), int(L))
        v1 = [float(r[keys[q]]) for r in first if (r["N"], r["d"], r["L"]) == k]
        v2 = [float(r[keys[q]]) for r in new if (r["N"], r["d"], r["L"]) == k]
        if not v2:
            raise ValueError(f"new has no run at (N, d, L) = {k}")
        t = theory[k]
        pred, pse = float(getattr(t, q)), float(getattr(t, q + "_se"))
        row = {"N": k[0], "d": k[1], "L": k[2], "quantity": q, "pred": pred, "pred_se": pse,
               "sim_first": float(np.mean(v1)) if v1 else float("nan")}
        for tag, v in (("new", v2), ("all", v1 + v2)):
            n, m = len(v), float(np.mean(v))
            row.update({f"n_{tag}": n, f"sim_{tag}": m, f"se_{tag}": math.sqrt(max(m * (1 - m), 0.25 / n) / n),
                        f"error_{tag}": abs(m - pred), f"z_{tag}": _binom_z(m, n, pred, pse)})
        rows.append(row)
    return SeedCheck(rows=rows, max_error_new=max(r["error_new"] for r in rows),
                     max_error_all=max(r["error_all"] for r in rows),
                     max_abs_z_new=max(abs(r["z_new"]) for r in rows))


@fill_doc
@dataclass(frozen=True)
class TokenMomentCheck(Result):
    r"""Measured moments against the token-level theory (:func:`token_moment_check`).

    Parameters
    ----------
    rows : list of dict
        Per configuration and moment: ``N``, ``d``, ``L``, ``kind``, ``quantity``, ``simulated``,
        ``stderr`` (over tasks), ``token`` and ``token_se`` (token-level theory, Monte Carlo over
        draws), ``closed`` (closed form), ``z`` (``(simulated - token)`` over the combined standard
        error; None where both errors vanish) and ``z_closed`` (over the simulation's error).
    within : int
        Moments with :math:`|z| \leq 3`.
    within_closed : int
        Moments with :math:`|z_{\mathrm{closed}}| \leq 3`.
    n : int
        Moments with a ``z`` score.
    n_closed : int
        Moments with a ``z_closed`` score.

    See Also
    --------
    validation.token_retrieval.moments.MomentCheck
        One moment of the early phase: the theory's value against the simulated one (``moment_check``).
    validation.token_retrieval.comparison.token_moment_check : Put the token-level theory beside measured moments.

    %(ref_theory_vs_sim)s
    """

    rows: list
    within: int
    within_closed: int
    n: int
    n_closed: int


@fill_doc
def token_moment_check(checks, *, reps=64):
    """Put the token-level theory beside measured moments.

    Parameters
    ----------
    checks : sequence of MomentCheck
        :func:`~validation.token_retrieval.moments.moment_check` rows (measured moments with their
        standard errors and the closed form); configurations keep their order.
    reps : int, optional
        Draws of :func:`~validation.token_retrieval.token_theory.token_moments` per configuration
        (seeded by ``[N, d, L]``).

    Returns
    -------
    TokenMomentCheck
        One row per moment and the counts within 3 standard errors.

    See Also
    --------
    validation.token_retrieval.moments.moment_check
        Check every moment of the theory against the simulation at the given configurations.
    validation.token_retrieval.token_theory.token_moments : Predict the per-task moments of ``measure_moments``.

    Notes
    -----
    A ``z`` score needs a combined standard error above float64 round-off of the quantity's scale
    (``1e-12 max(1, |token|)``), as :func:`~validation.token_retrieval.moments.moment_check`.

    %(ref_theory_vs_sim)s

    Examples
    --------
    >>> from validation.token_retrieval.moments import moment_check
    >>> c = token_moment_check(moment_check([(16, 64, 4, "random")], seeds=2), reps=4)
    >>> c.n_closed <= 13, c.rows[0]["quantity"]
    (True, 'A')
    """
    from .token_theory import token_moments

    reps = check_int("reps", reps, low=2)
    cache, rows = {}, []
    for c in checks:
        key = (c.N, c.d, c.L, c.kind)
        if key not in cache:
            cache[key] = token_moments(c.N, c.d, c.L, kind=c.kind, reps=reps, rng=[c.N, c.d, c.L])
        t = cache[key][c.quantity]
        se = math.hypot(c.stderr, t["stderr"])
        z = (c.simulated - t["mean"]) / se if se > 1e-12 * max(1.0, abs(t["mean"])) else None
        rows.append({"N": c.N, "d": c.d, "L": c.L, "kind": c.kind, "quantity": c.quantity,
                     "simulated": c.simulated, "stderr": c.stderr, "token": float(t["mean"]),
                     "token_se": float(t["stderr"]), "closed": c.predicted, "z": z,
                     "z_closed": None if c.z is None else -c.z})
    zs = [r["z"] for r in rows if r["z"] is not None]
    zc = [r["z_closed"] for r in rows if r["z_closed"] is not None]
    return TokenMomentCheck(rows=rows, within=sum(abs(z) <= 3 for z in zs), within_closed=sum(abs(z) <= 3 for z in zc),
                            n=len(zs), n_closed=len(zc))



@fill_doc
def scan_theory(points, *, reps=100, rng=0, progress=None):
    """Evaluate the token-level theory at scan configurations with their embedding kind and MLP width.

    Parameters
    ----------
    points : iterable of tuple
        ``(kind, m, N, d, L)`` (``m`` None for no MLP).
    reps : int
        Draws per point.
    rng : int
        Root seed; point ``(kind, m, N, d, L)`` uses ``SeedSequence([rng, N, d, L, k, m'])``
        with ``k`` 0 (random) or 1 (orthogonal) and ``m' = 0`` for no MLP.
    progress : callable, optional
        Called with one line per point.

    Returns
    -------
    dict
        ``(kind, m, N, d, L)`` -> :class:`~validation.token_retrieval.token_theory.TokenTheory`.

    See Also
    --------
    validation.token_retrieval.comparison.scan_comparison
        Compare the runs of the embedding contrast and of the MLP-width scan with both theories.
    validation.token_retrieval.comparison.theory_grid
        Evaluate the token-level theory at each ``(N, d, L)`` of ``points``.

    %(ref_contrast_vs_token_theory)s

    Examples
    --------
    >>> g = scan_theory([("orthogonal", None, 2, 64, 4)], reps=4)
    >>> round(g[("orthogonal", None, 2, 64, 4)].p_retrieval, 2) <= 1.0
    True
    """
    reps = check_int("reps", reps, low=2)
    root = check_int("rng", rng, low=0)
    out = {}
    for kind, m, N, d, L in points:
        if kind not in ("random", "orthogonal"):
            raise ValueError(f"kind must be 'random' or 'orthogonal', got {kind!r}")
        if progress:
            progress(f"token theory {kind} m={m} N={N} d={d} L={L}")
        ss = np.random.SeedSequence([root, int(N), int(d), int(L), int(kind == "orthogonal"), int(m or 0)])
        out[(kind, m, int(N), int(d), int(L))] = token_theory(int(N), int(d), int(L), kind=kind, m=m, reps=reps, rng=ss)
    return out


@fill_doc
@dataclass(frozen=True)
class ScanComparison(Result):
    """The embedding contrast and the MLP-width scan against both theories (:func:`scan_comparison`).

    Parameters
    ----------
    points : list of dict
        Per ``(part, kind, m, N, d, L)`` and all-``N`` quantity (``p_retrieval``, ``p_recall``):
        ``seeds``, ``sim``, ``sim_se``, ``token``, ``token_se``, ``closed``, ``z`` (token-level, over
        the combined error with the binomial error at the prediction), ``z_closed`` (closed form,
        binomial error at its prediction).
    errors : dict
        Per group (``orthogonal:random``, ``orthogonal:orthogonal``, ``mlp``) and quantity:
        ``n``, ``mean_abs_error``, ``max_abs_error``, ``within_3se`` (token-level) and the closed
        form's ``closed_mean_abs_error``, ``closed_max_abs_error``, ``closed_within_3se``.
    mlp_boundaries : list of dict
        Per ``(d, m)`` (``m = 0``: no MLP): the recall boundary ``N_max`` (last crossing of
        P(recall) = 1/2 from above along ``N``) simulated (``N_sim``), token-level (``N_token``) and
        closed form (``N_closed``); None without a crossing.

    See Also
    --------
    validation.token_retrieval.comparison.scan_comparison
        Compare the runs of the embedding contrast and of the MLP-width scan with both theories.
    validation.token_retrieval.experiments.OrthogonalContrast
        Random against orthogonal embeddings at equal ``d`` (``contrast``).

    %(ref_contrast_vs_token_theory)s
    """

    points: list
    errors: dict
    mlp_boundaries: list


@fill_doc
def scan_comparison(orthogonal, mlp, theory):
    """Compare the runs of the embedding contrast and of the MLP-width scan with both theories.

    Parameters
    ----------
    orthogonal, mlp : list of dict
        Run records (:func:`~validation.token_retrieval.runs.run_config` results with ``kind``
        and ``m``) of the two scans; :math:`V = 4 N`.
    theory : dict
        :func:`scan_theory` output covering every configuration.

    Returns
    -------
    ScanComparison
        Points, errors per group and the MLP recall boundaries.

    See Also
    --------
    validation.token_retrieval.comparison.scan_theory
        Evaluate the token-level theory at scan configurations with their embedding kind and MLP width.
    validation.token_retrieval.experiments.orthogonal_contrast
        Contrast random with orthogonal (one-hot) embeddings at equal ``d`` and :math:`V = 4 N`.
    validation.token_retrieval.experiments.mlp_scan
        Locate the recall boundary ``N_max`` with a fixed random MLP of width ``m``.

    %(ref_contrast_vs_token_theory)s

    Examples
    --------
    >>> recs = [{"N": 2, "d": 64, "L": 4, "kind": "orthogonal", "m": None, "retrieval": True,
    ...          "recall": True}] * 2
    >>> c = scan_comparison(recs, [], scan_theory([("orthogonal", None, 2, 64, 4)], reps=4))
    >>> sorted(c.errors), c.points[0]["seeds"]
    (['orthogonal:orthogonal'], 2)
    """
    from .boundary import boundary_points

    keys = {"p_retrieval": "retrieval", "p_recall": "recall"}
    groups = {}
    for part, recs in (("orthogonal", orthogonal), ("mlp", mlp)):
        for r in recs:
            if "skipped" in r:
                continue
            k = (part, r["kind"], r["m"], int(r["N"]), int(r["d"]), int(r["L"]))
            groups.setdefault(k, []).append(r)
    points, closed_cache = [], {}
    for k, rs in sorted(groups.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        part, kind, m, N, d, L = k
        if (kind, m, N, d, L) not in theory:
            raise ValueError(f"theory has no prediction at (kind, m, N, d, L) = {(kind, m, N, d, L)}")
        t = theory[(kind, m, N, d, L)]
        if (kind, m, N, d, L) not in closed_cache:
            closed_cache[(kind, m, N, d, L)] = th.success_probs(N, d, L, V=max(2, 4 * N), kind=kind, m=m)
        old = closed_cache[(kind, m, N, d, L)]
        n = len(rs)
        for q, rk in keys.items():
            v = float(np.mean([float(r[rk]) for r in rs]))
            pred, pse, pc = float(getattr(t, q)), float(getattr(t, q + "_se")), float(old[q])
            points.append({"part": part, "kind": kind, "m": m, "N": N, "d": d, "L": L, "quantity": q, "seeds": n,
                           "sim": v, "sim_se": math.sqrt(max(v * (1 - v), 0.25 / n) / n), "token": pred,
                           "token_se": pse, "closed": pc, "z": _binom_z(v, n, pred, pse),
                           "z_closed": _binom_z(v, n, pc, 0.0)})
    errors = {}
    for p in points:
        g = f"orthogonal:{p['kind']}" if p["part"] == "orthogonal" else "mlp"
        errors.setdefault(g, {}).setdefault(p["quantity"], []).append(p)
    for g, byq in errors.items():
        for q, ps in byq.items():
            e = np.array([abs(p["token"] - p["sim"]) for p in ps])
            ec = np.array([abs(p["closed"] - p["sim"]) for p in ps])
            byq[q] = {"n": len(ps), "mean_abs_error": float(e.mean()), "max_abs_error": float(e.max()),
                      "within_3se": int(sum(abs(p["z"]) <= 3 for p in ps)),
                      "closed_mean_abs_error": float(ec.mean()), "closed_max_abs_error": float(ec.max()),
                      "closed_within_3se": int(sum(abs(p["z_closed"]) <= 3 for p in ps))}
    bnd = []
    rec = [p for p in points if p["part"] == "mlp" and p["quantity"] == "p_recall"]
    for src in ("sim", "token", "closed"):
        frac = {(p["N"], p["d"], p["m"] or 0): (p[src], p["seeds"]) for p in rec}
        for b in boundary_points(frac, by=("N", "d", "m"), direction="down"):
            bnd.append((b["d"], b["m"], src, b["N"]))
    dm = sorted({(p["d"], p["m"] or 0) for p in rec})
    mlp_b = [{"d": d, "m": m, **{f"N_{src}": next((x[3] for x in bnd if x[:3] == (d, m, src)), None)
                                 for src in ("sim", "token", "closed")}} for d, m in dm]
    return ScanComparison(points=points, errors=errors, mlp_boundaries=mlp_b)
