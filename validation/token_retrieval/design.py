r"""Measuring one token-retrieval boundary :math:`N_c(d, L)`: the trial, the fit, a fixed ``N`` grid
against the adaptive design, and their comparison on the same seeds.

At fixed ``(d, L)`` the retrieval boundary is the number of training
sequences ``N_c`` where the probability that the early phase retrieves the
informative token of all ``N`` sequences crosses 1/2 (upward in ``N``).  Here
it is one threshold in :math:`x = \log N`,

.. math:: P(\text{retrieval} \mid N) = \sigma\big((\log N - \log N_c) / w\big),

fitted with the profile-likelihood interval of
:func:`validation.logistic.fit_threshold` (``increasing=True``,
:func:`fit_log_boundary`), and measured by two designs; replicate ``r`` draws
its seeds from the pool ``1000 r, 1000 r + 1, ...`` in both:

* **grid** (:func:`grid_design`) -- seeds ``1000 r + 0 .. S - 1`` at every
  ``N`` of a fixed grid, ``S = 1, 2, ...`` until the 95% half-width of
  :math:`\log N_c` is <= the target (at most ``s_max`` seeds);
* **adaptive** (:func:`adaptive_design`) --
  :func:`validation.adaptive.adaptive_threshold` with ``increasing=True``: a
  first round at a centre (the theory's ``N_c``) times ``exp(start)``, then
  rounds of ``batch`` values of ``N`` around the current fit, the same target,
  at most ``len(grid) * s_max`` trials.

A trial's randomness is a function of ``(N, d, L, seed)`` only
(:func:`boundary_trial`), so a pair ``(N, seed)`` run by both designs is the
same task and the same early phase: one record in a store, one outcome.
:func:`compare_designs` runs both designs on any ``run(params)`` (the engine,
or a synthetic success model); the study
``token_retrieval.adaptive_boundary``
(:mod:`validation.studies.token_retrieval_adaptive_boundary`) runs them on
its committed store.  See
``docs/token_retrieval.md#adaptive-design-of-the-boundary``.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields

import numpy as np

from hcizz.checks import check_int, check_real
from hcizz.results import Result
from validation.engine.trials import trial
from validation.logistic import fit_threshold

from ._docparams import fill_doc

__all__ = ["ROOT", "trial_params", "boundary_trial", "fit_log_boundary", "theory_centre", "DesignRun",
           "DesignComparison", "DesignComparisons", "grid_design", "adaptive_design", "design_runs", "pooled_comparison",
           "check_design", "compare_designs", "read_comparisons"]

#: root entropy of every boundary trial's ``SeedSequence`` (part of the trial's parameters)
ROOT = 0


@fill_doc
def trial_params(N, d, L, seed, *, root=ROOT):
    """Return the engine parameter record of one boundary trial.

    Parameters
    ----------
    N, d, L : int
        Training sequences, dimension, sequence length.
    seed : int
        Seed index (>= 0).
    root : int, optional
        Root entropy (default :data:`ROOT`).

    Returns
    -------
    dict
        ``{"N", "d", "L", "seed", "root"}`` as plain ints: the input of
        :func:`boundary_trial` and, through
        :func:`validation.engine.trial_key`, the key of its record in a store.

    See Also
    --------
    validation.token_retrieval.design.boundary_trial
        Run the early phase once at ``(N, d, L)`` with randomness keyed by ``(N, d, L, seed)``.
    validation.engine.trial_key : Return the stable key of one trial: SHA-256 hex digest of its canonical JSON.

    %(ref_adaptive_design)s

    Examples
    --------
    >>> trial_params(16, 128, 8, 3)
    {'N': 16, 'd': 128, 'L': 8, 'seed': 3, 'root': 0}
    """
    return {"N": int(N), "d": int(d), "L": int(L), "seed": int(seed), "root": int(root)}


@trial("token_retrieval.boundary", aliases=("validation.token_retrieval.adaptive_boundary:boundary_trial",))
def boundary_trial(params):
    """Run the early phase once at ``(N, d, L)`` with randomness keyed by ``(N, d, L, seed)``.

    A trial of :func:`validation.engine.run_sweep` (module level, JSON in and
    out).

    Parameters
    ----------
    params : dict
        ``N``, ``d``, ``L``, ``seed`` and ``root`` (:func:`~validation.token_retrieval.design.trial_params`).

    Returns
    -------
    dict
        ``N``, ``seed``, ``retrieval`` and ``recall`` (the success flags of
        :func:`validation.token_retrieval.runs.run_config`), ``gap_mean``
        (its mean attention-score gap, a fingerprint of the draw) and
        ``cpu_seconds`` (timing, not a result); kept small because the
        comparison's store is committed.

    See Also
    --------
    validation.token_retrieval.design.trial_params : Return the engine parameter record of one boundary trial.
    validation.token_retrieval.runs.run_config
        Run the early phase once on a fresh task and return its success statistics.

    Notes
    -----
    The run draws everything (embeddings, labels, sequences) from
    ``default_rng(SeedSequence([root, d, L, N, seed]))`` with the defaults of
    :func:`~validation.token_retrieval.runs.run_config` (:math:`V = 4N`, random
    embeddings, ``eta = 0.1``, ``beta = 10``).  Unlike the report's grid
    (whose seeds follow the position of a value in the grid), the draw does
    not depend on which design asked for the trial: that is what makes the
    comparison of designs one "on the same seeds".

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#adaptive-design-of-the-boundary
    """
    from .runs import run_config

    N, d, L, s, root = (int(params[k]) for k in ("N", "d", "L", "seed", "root"))
    c0 = time.process_time()
    r = run_config(N, d, L, seed=np.random.default_rng(np.random.SeedSequence([root, d, L, N, s])))
    return {"N": N, "seed": s, "retrieval": bool(r["retrieval"]), "recall": bool(r["recall"]),
            "gap_mean": float(r["gap_mean"]), "cpu_seconds": time.process_time() - c0}


@fill_doc
def fit_log_boundary(log_n, success, **kw):
    r"""Fit the boundary in :math:`\log N`: :func:`validation.logistic.fit_threshold`, increasing, widths >= 0.01.

    Parameters
    ----------
    log_n : sequence of float
        :math:`\log N` of each trial.
    success : sequence of bool
        Retrieval of all ``N`` sequences.
    **kw
        Passed to :func:`~validation.logistic.fit_threshold` (``n_grid``, ``level``, ...).

    Returns
    -------
    validation.logistic.ThresholdFit
        The fit (threshold and interval in :math:`\log N`).

    See Also
    --------
    validation.logistic.fit_threshold
        Fit a logistic threshold to pass/fail trials, with a profile-likelihood interval.
    validation.token_retrieval.design.adaptive_design
        Replicate ``r`` of the adaptive design (``adaptive_threshold`` in :math:`\log N`).

    Notes
    -----
    The smallest width, 0.01, is the sharpest transition that integer ``N``
    below 100 can resolve (1 % in ``N``).

    %(ref_adaptive_design)s

    Examples
    --------
    >>> f = fit_log_boundary(np.log([4, 8, 16, 32]), [False, False, True, True])
    >>> print(f"{f.threshold:.4f}", f"{math.exp(f.threshold):.2f}")   # between ln 8 and ln 16
    2.4399 11.47
    """
    return fit_threshold(log_n, success, increasing=True, min_width=0.01, **kw)


@fill_doc
def theory_centre(d, L):
    r"""Return the centre of the adaptive design's first round: the theory's :math:`N_c(d, L)` (16 without a crossing).

    Parameters
    ----------
    d, L : int
        The boundary.

    Returns
    -------
    float
        :func:`validation.token_retrieval.theory.retrieval_boundary`, or 16.

    See Also
    --------
    validation.token_retrieval.theory.retrieval_boundary
        Predict :math:`N_c(d, L)`, the smallest ``N`` with :math:`P(\text{retrieval of all } N) \geq` ``level``.
    validation.token_retrieval.design.adaptive_design
        Replicate ``r`` of the adaptive design (``adaptive_threshold`` in :math:`\log N`).

    %(ref_adaptive_design)s
    """
    from .theory import retrieval_boundary

    return retrieval_boundary(d, L) or 16.0


def _exp(x):
    return math.exp(x) if math.isfinite(x) else (0.0 if x < 0 else math.inf)


@dataclass(frozen=True)
class _ThresholdRecord(Result):
    """Base of the design records: a threshold ``N_c`` with its 95 % interval
    ``ci_low``, ``ci_high``, written as ``"ci": [ci_low, ci_high]`` by ``to_dict()``."""

    _estimate = "threshold"
    level = 0.95
    _ci_pair = True

    @classmethod
    def from_dict(cls, d):
        """Rebuild a record from :meth:`to_dict` output (plain JSON values).

        Parameters
        ----------
        d : dict
            As written by :meth:`to_dict` and :func:`hcizz.jsonout.to_json_value`.

        Returns
        -------
        DesignRun or DesignComparison
            The record, of the class this is called on.

        Raises
        ------
        KeyError, TypeError
            ``d`` is not such a record.
        """
        kw = {f.name: d[f.name] for f in fields(cls) if f.name not in ("ci_low", "ci_high")}
        return cls(ci_low=d["ci"][0], ci_high=d["ci"][1], **cls._nested(kw))

    @staticmethod
    def _nested(kw):
        """The fields of a record as rebuilt from JSON (nested records restored)."""
        return kw


@fill_doc
@dataclass(frozen=True)
class DesignRun(_ThresholdRecord):
    r"""One replicate of one design (:func:`grid_design`, :func:`adaptive_design`).

    Parameters
    ----------
    trials : int
        Trials the design ran.
    threshold : float
        Its last fit's ``N_c`` (NaN without a crossing).
    ci_low, ci_high : float
        The fit's 95 % interval in ``N`` (0 or inf where unbounded).
    reached : bool
        Whether the target half-width was met before the cap.
    cpu_seconds : float
        Summed trial CPU seconds.
    seeds : list of int
        ``[first, last]`` seed used.

    See Also
    --------
    validation.token_retrieval.design.grid_design
        Replicate ``r`` of the fixed grid: one more seed at every ``N`` until the target is met.
    validation.token_retrieval.design.adaptive_design
        Replicate ``r`` of the adaptive design (``adaptive_threshold`` in :math:`\log N`).

    Notes
    -----
    ``to_dict()`` writes the interval as ``"ci": [ci_low, ci_high]`` (the key
    of ``report.json``).

    %(ref_adaptive_design)s
    """

    trials: int
    threshold: float
    ci_low: float
    ci_high: float
    reached: bool
    cpu_seconds: float
    seeds: list


@fill_doc
@dataclass(frozen=True)
class DesignComparison(_ThresholdRecord):
    r"""One boundary of :func:`compare_designs`: trials of the fixed grid and of the adaptive design.

    Parameters
    ----------
    d, L : int
        The boundary's dimension and sequence length.
    target_halfwidth : float
        Target 95% half-width of :math:`\log N_c`.
    replicates : int
        Replicates per design.
    centre : float
        Centre of the adaptive design's first round.
    threshold : float
        ``N_c`` fitted to all distinct trials of both designs and every replicate.
    ci_low, ci_high : float
        Its 95% profile-likelihood interval (in ``N``).
    width : float
        The logistic width ``w`` (in :math:`\log N`) of that fit.
    trials_grid, trials_adaptive : float
        Mean trials to reach the target (or the cap) over replicates.
    trials_grid_stderr, trials_adaptive_stderr : float
        Their standard errors (sd / sqrt(replicates); NaN for one replicate).
    trials_ratio : float
        ``trials_adaptive / trials_grid``.
    reached_grid, reached_adaptive : int
        Replicates that met the target before the cap.
    cpu_seconds_grid, cpu_seconds_adaptive : float
        Mean summed trial CPU time per replicate.
    trials_pooled : int
        Distinct trials behind ``threshold``.
    covers_grid, covers_adaptive : int
        Replicates whose interval contains ``threshold`` (a check of the
        per-replicate intervals against the pooled estimate; nominal 95 %).
    runs : dict
        ``{"grid": [DesignRun, ...], "adaptive": [...]}``, one per replicate.

    See Also
    --------
    validation.token_retrieval.design.pooled_comparison
        Summarise both designs at one boundary: the pooled fit, trials, coverage, CPU time.
    validation.token_retrieval.design.DesignRun : One replicate of one design (``grid_design``, ``adaptive_design``).

    Notes
    -----
    ``to_dict()`` writes the interval as ``"ci": [ci_low, ci_high]`` (the key
    of ``report.json`` and of the committed summary).

    %(ref_adaptive_design)s
    """

    d: int
    L: int
    target_halfwidth: float
    replicates: int
    centre: float
    threshold: float
    ci_low: float
    ci_high: float
    width: float
    trials_grid: float
    trials_adaptive: float
    trials_grid_stderr: float
    trials_adaptive_stderr: float
    trials_ratio: float
    reached_grid: int
    reached_adaptive: int
    cpu_seconds_grid: float
    cpu_seconds_adaptive: float
    trials_pooled: int
    covers_grid: int
    covers_adaptive: int
    runs: dict

    @staticmethod
    def _nested(kw):
        """The fields with ``runs`` rebuilt as :class:`DesignRun` records."""
        return {**kw, "runs": {k: [x if isinstance(x, DesignRun) else DesignRun.from_dict(x) for x in v]
                               for k, v in kw["runs"].items()}}


@fill_doc
@dataclass(frozen=True)
class DesignComparisons(Result):
    """The comparison of both designs at several boundaries (the outcome of the study).

    Parameters
    ----------
    boundaries : list of DesignComparison
        One per boundary.

    See Also
    --------
    validation.token_retrieval.design.compare_designs
        Run the fixed grid and the adaptive design on every boundary and replicate, and compare them.
    validation.token_retrieval.design.read_comparisons
        Read a JSON file of design comparisons (a committed summary, or the ``--json`` output of a study).

    %(ref_adaptive_design)s
    """

    boundaries: list

    def summary(self):
        """Return one line per boundary: ``N_c`` and its interval, trials and CPU time of both designs.

        Returns
        -------
        str
            The lines.
        """
        return "\n".join(
            f"d={r.d} L={r.L}: N_c {r.threshold:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}], width {r.width:.3f} "
            f"in log N (first round around {r.centre:.1f}, {r.trials_pooled} trials); trials grid "
            f"{r.trials_grid:.1f} ± {r.trials_grid_stderr:.1f}, adaptive {r.trials_adaptive:.1f} ± "
            f"{r.trials_adaptive_stderr:.1f} (ratio {r.trials_ratio:.2f}); CPU s grid {r.cpu_seconds_grid:.2f}, "
            f"adaptive {r.cpu_seconds_adaptive:.2f}; reached {r.reached_grid}/{r.replicates} and "
            f"{r.reached_adaptive}/{r.replicates}; intervals covering the pooled N_c {r.covers_grid} and "
            f"{r.covers_adaptive}" for r in self.boundaries)


def _design_run(fit, trials, reached, res, seeds):
    r"""The :class:`DesignRun` of a replicate from its last fit in :math:`\log N` (``threshold``,
    ``ci_low``, ``ci_high``), its trial results ``res`` and its first and last seed."""
    return DesignRun(trials=trials, threshold=math.exp(fit.threshold) if math.isfinite(fit.threshold) else math.nan,
                     ci_low=_exp(fit.ci_low), ci_high=math.exp(fit.ci_high) if math.isfinite(fit.ci_high) else math.inf,
                     reached=reached, cpu_seconds=float(sum(x.get("cpu_seconds", 0.0) for x in res)), seeds=seeds)


@fill_doc
def grid_design(d, L, r, target, run, *, grid_ns, s_max):
    r"""Replicate ``r`` of the fixed grid: one more seed at every ``N`` until the target is met.

    Parameters
    ----------
    %(boundary_dL)s %(replicate)s %(target)s %(run)s
    grid_ns : sequence of int
        The grid's ``N``.
    s_max : int
        Most seeds per grid value.

    Returns
    -------
    %(design_returns)s

    See Also
    --------
    validation.token_retrieval.design.adaptive_design
        Replicate ``r`` of the adaptive design (``adaptive_threshold`` in :math:`\log N`).
    validation.token_retrieval.design.design_runs : Run every replicate of both designs at one boundary.

    %(ref_adaptive_design)s
    """
    res = []
    f = None
    for S in range(1, s_max + 1):
        res += run([trial_params(N, d, L, 1000 * r + S - 1) for N in grid_ns])
        f = fit_log_boundary([math.log(x["N"]) for x in res], [x["retrieval"] for x in res])
        if (f.ci_high - f.ci_low) / 2 <= target:
            break
    return _design_run(f, len(res), bool((f.ci_high - f.ci_low) / 2 <= target), res,
                       [1000 * r, 1000 * r + S - 1]), res


@fill_doc
def adaptive_design(d, L, r, target, run, *, centre, max_trials, start, batch):
    r"""Replicate ``r`` of the adaptive design (:func:`validation.adaptive.adaptive_threshold` in :math:`\log N`).

    Parameters
    ----------
    %(boundary_dL)s %(replicate)s %(target)s %(run)s
    centre : float
        Centre of the first round (in ``N``).
    max_trials : int
        Cap on the trials.
    start : sequence of float
        :math:`\log N` offsets of the first round from ``log centre``.
    batch : int
        Values of ``N`` per later round.

    Returns
    -------
    %(design_returns)s

    See Also
    --------
    validation.token_retrieval.design.grid_design
        Replicate ``r`` of the fixed grid: one more seed at every ``N`` until the target is met.
    validation.adaptive.adaptive_threshold : Measure a threshold by a sequential design around the current fit.

    References
    ----------
    docs/token_retrieval.md#adaptive-design-of-the-boundary; docs/sweeps.md#adaptive-threshold-design
    """
    from validation.adaptive import adaptive_threshold

    res = []

    def trials(loads, seeds):
        out = run([trial_params(int(round(math.exp(a))), d, L, s) for a, s in zip(loads, seeds)])
        res.extend(out)
        return [math.log(x["N"]) for x in out], [x["retrieval"] for x in out]

    snap = lambda a: math.log(max(2, int(round(math.exp(a)))))    # noqa: E731  (integer N >= 2)
    ad = adaptive_threshold(trials, fit_log_boundary, [math.log(centre) + o for o in start],
                            target_halfwidth=target, max_trials=max_trials, batch=batch, seed0=1000 * r,
                            snap=snap, lower=math.log(2), increasing=True)
    return _design_run(ad, ad.trials, ad.stop == "target", res, [1000 * r, 1000 * r + ad.trials - 1]), res


@fill_doc
def design_runs(d, L, replicates, target, run, *, centre, grid_ns, s_max, start, batch):
    r"""Run every replicate of both designs at one boundary.

    Parameters
    ----------
    %(boundary_dL)s
    replicates : int
        Replicates per design.
    %(target)s %(run)s
    centre : float
        Centre of the adaptive design's first round.
    grid_ns : sequence of int
        The fixed grid.
    s_max : int
        Most seeds per grid value (the adaptive cap is ``len(grid_ns) * s_max``).
    start : sequence of float
        First-round offsets in :math:`\log N`.
    batch : int
        Values of ``N`` per adaptive round.

    Returns
    -------
    runs : dict
        ``{"grid": [DesignRun], "adaptive": [DesignRun]}``.
    pool : dict
        ``{(N, seed): retrieval}`` of every distinct trial.

    See Also
    --------
    validation.token_retrieval.design.pooled_comparison
        Summarise both designs at one boundary: the pooled fit, trials, coverage, CPU time.
    validation.token_retrieval.design.compare_designs
        Run the fixed grid and the adaptive design on every boundary and replicate, and compare them.

    %(ref_adaptive_design)s
    """
    runs = {"grid": [], "adaptive": []}
    pool = {}
    for r in range(replicates):
        g, rg = grid_design(d, L, r, target, run, grid_ns=grid_ns, s_max=s_max)
        a, ra = adaptive_design(d, L, r, target, run, centre=centre, max_trials=len(grid_ns) * s_max,
                                start=start, batch=batch)
        runs["grid"].append(g)
        runs["adaptive"].append(a)
        for x in rg + ra:
            pool[(int(x["N"]), int(x["seed"]))] = bool(x["retrieval"])
    return runs, pool


def _mean_se(v):
    v = np.asarray(v, float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan)


@fill_doc
def pooled_comparison(d, L, runs, pool, *, target, centre):
    """Summarise both designs at one boundary: the pooled fit, trials, coverage, CPU time.

    Parameters
    ----------
    d, L : int
        The boundary.
    runs, pool : dict
        As returned by :func:`design_runs`.
    target : float
        The target half-width used.
    centre : float
        The first round's centre used.

    Returns
    -------
    DesignComparison
        The comparison.

    See Also
    --------
    validation.token_retrieval.design.design_runs : Run every replicate of both designs at one boundary.
    validation.token_retrieval.design.DesignComparison
        One boundary of ``compare_designs``: trials of the fixed grid and of the adaptive design.

    Notes
    -----
    ``threshold`` and its interval come from one fit to every distinct
    ``(N, seed)`` trial of both designs and all replicates, on a profile grid
    of 6001 points (hundreds of trials give an interval of a few cells of the
    default grid).

    %(ref_adaptive_design)s
    """
    keys = sorted(pool)
    f = fit_log_boundary([math.log(k[0]) for k in keys], [pool[k] for k in keys], n_grid=6001)
    nc = math.exp(f.threshold) if math.isfinite(f.threshold) else math.nan
    covers = {k: sum(x.ci_low <= nc <= x.ci_high for x in v) for k, v in runs.items()}
    tg, sg = _mean_se([x.trials for x in runs["grid"]])
    ta, sa = _mean_se([x.trials for x in runs["adaptive"]])
    return DesignComparison(
        d=d, L=L, target_halfwidth=target, replicates=len(runs["grid"]), centre=centre, threshold=nc,
        ci_low=_exp(f.ci_low), ci_high=math.exp(f.ci_high) if math.isfinite(f.ci_high) else math.inf,
        width=float(f.width), trials_grid=tg, trials_grid_stderr=sg, trials_adaptive=ta,
        trials_adaptive_stderr=sa, trials_ratio=ta / tg,
        reached_grid=sum(x.reached for x in runs["grid"]), reached_adaptive=sum(x.reached for x in runs["adaptive"]),
        cpu_seconds_grid=_mean_se([x.cpu_seconds for x in runs["grid"]])[0],
        cpu_seconds_adaptive=_mean_se([x.cpu_seconds for x in runs["adaptive"]])[0],
        trials_pooled=len(keys), covers_grid=covers["grid"], covers_adaptive=covers["adaptive"], runs=runs)


@fill_doc
def check_design(replicates, target, grid_ns, s_max):
    """Check the design's arguments (before any trial) and return them.

    Parameters
    ----------
    replicates : int
        1 to 1000.
    target : float
        > 0.
    grid_ns : sequence of int
        At least one value, each >= 2.
    s_max : int
        1 to ``1000 // len(grid_ns)`` (a replicate's seeds stay in its pool of 1000).

    Returns
    -------
    tuple
        ``(replicates, target, grid_ns, s_max)`` checked.

    Raises
    ------
    ValueError
        Naming the argument, its value and the range.

    See Also
    --------
    validation.token_retrieval.design.compare_designs
        Run the fixed grid and the adaptive design on every boundary and replicate, and compare them.
    validation.token_retrieval.design.design_runs : Run every replicate of both designs at one boundary.

    %(ref_adaptive_design)s
    """
    replicates = check_int("replicates", replicates, low=1, high=1000)
    target = check_real("target", target, low=0, high=math.inf, low_open=True, high_open=True, allow_array=False)
    grid_ns = [check_int("grid_ns", n, low=2) for n in grid_ns]
    if not grid_ns:
        raise ValueError("grid_ns must hold at least one value of N, got []")
    # a replicate's seeds stay below the next replicate's pool (1000 seeds)
    s_max = check_int("s_max", s_max, low=1, high=1000 // len(grid_ns))
    return replicates, target, grid_ns, s_max


@fill_doc
def compare_designs(boundaries, replicates, target, *, run, grid_ns, s_max, start=(-0.6, -0.2, 0.2, 0.6),
                    batch=4, centre=theory_centre):
    r"""Run the fixed grid and the adaptive design on every boundary and replicate, and compare them.

    Parameters
    ----------
    boundaries : sequence of (int, int)
        ``(d, L)`` of each boundary.
    replicates : int
        Replicates per boundary and design (1 to 1000); replicate ``r`` uses
        the seeds ``1000 r, 1000 r + 1, ...`` in both designs.
    target : float
        Target 95% CI half-width of :math:`\log N_c` (> 0).
    run : callable
        ``run(params) -> results``: receives a list of :func:`~validation.token_retrieval.design.trial_params`
        records and returns one dict per record with at least ``N``, ``seed``
        and ``retrieval`` (the engine on a store, or a synthetic success model).
    grid_ns : sequence of int
        ``N`` values of the fixed grid.
    s_max : int
        Most seeds per grid value (1 to ``1000 // len(grid_ns)``); the
        adaptive design is capped at ``len(grid_ns) * s_max`` trials.
    start : sequence of float, optional
        First adaptive round: :math:`\log N` offsets from ``log centre(d, L)``.
    batch : int, optional
        Values of ``N`` per adaptive round.
    centre : callable, optional
        ``centre(d, L) -> N`` (default :func:`theory_centre`).

    Returns
    -------
    %(comparisons_returns)s

    Raises
    ------
    ValueError
        ``replicates``, ``target``, ``grid_ns``, ``s_max`` or a boundary out of range.

    See Also
    --------
    validation.token_retrieval.design.check_design : Check the design's arguments (before any trial) and return them.
    validation.token_retrieval.design.design_runs : Run every replicate of both designs at one boundary.
    validation.token_retrieval.design.read_comparisons
        Read a JSON file of design comparisons (a committed summary, or the ``--json`` output of a study).

    Notes
    -----
    Both designs stop at the first fit whose 95% half-width is <= ``target``
    (the adaptive one only once two consecutive rounds met it and at least
    12 trials were run: the stopping rule of
    :func:`validation.adaptive.adaptive_threshold`).

    References
    ----------
    arXiv:2603.15923; docs/token_retrieval.md#adaptive-design-of-the-boundary;
    docs/sweeps.md#adaptive-threshold-design
    """
    replicates, target, grid_ns, s_max = check_design(replicates, target, grid_ns, s_max)
    bounds = [(check_int("d", d, low=1), check_int("L", L, low=2)) for d, L in boundaries]
    out = []
    for d, L in bounds:
        c = float(centre(d, L))
        runs, pool = design_runs(d, L, replicates, target, run, centre=c, grid_ns=grid_ns, s_max=s_max,
                                 start=start, batch=batch)
        out.append(pooled_comparison(d, L, runs, pool, target=target, centre=c))
    return out


@fill_doc
def read_comparisons(path):
    """Read a JSON file of design comparisons (a committed summary, or the ``--json`` output of a study).

    Parameters
    ----------
    path : str or Path
        A JSON document with ``"boundaries"`` (a list of
        :meth:`DesignComparison.to_dict` records), or with ``"outcome"``
        holding it (as printed by ``python -m validation study
        token_retrieval.adaptive_boundary --json``).

    Returns
    -------
    %(comparisons_returns)s

    Raises
    ------
    LookupError
        The file does not exist.
    ValueError
        The file is not such a document.

    See Also
    --------
    validation.token_retrieval.design.compare_designs
        Run the fixed grid and the adaptive design on every boundary and replicate, and compare them.
    validation.token_retrieval.design.DesignComparisons
        The comparison of both designs at several boundaries (the outcome of the study).

    %(ref_adaptive_design)s
    """
    from pathlib import Path

    from hcizz.jsonout import from_json_value, loads_strict

    path = Path(path)
    if not path.exists():
        raise LookupError(f"no adaptive-design summary at {path}")
    doc = from_json_value(loads_strict(path.read_text()))
    try:
        recs = doc["boundaries"] if "boundaries" in doc else doc["outcome"]["boundaries"]
        return [DesignComparison.from_dict(b) for b in recs]
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"{path} is not an adaptive-design summary ({exc!r})") from None
