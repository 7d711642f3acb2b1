"""The certified max-margin TAM memories against the score laws at capacity.

Each trial solves one instance of the exact listwise study (same facts for the same
``(model, d, n, seed)``) to its largest TAM margin ``gamma*`` and reads the per-fact
scores of the optimal memory in the normalisation of ``replica.tam_scores(normalise=True)``
(:func:`validation.linear_memory.listwise_max_margin.listwise_max_margin_trial`).  The sizes
are 0.85 and 0.95 times the predicted TAM capacity :data:`CENTRE` of the exact study (its
committed thresholds are at 0.99 to 1.05 times it), so that most instances have a memory.
In the replica picture the max-margin memory below capacity is the capacity-point memory at
margin ``gamma*``; the summary sets, per ``(model, d, tau, n)``, the measured pinned fraction,
mean correct score, mean tail mean and mean margin next to ``replica.tam_scores(tau, p,
margin=gamma*)`` at each instance's own ``p`` and ``gamma*`` and to the large-``p`` laws
``replica.tam_score_laws``, with a two-sample KS distance of the pooled correct scores and
its calibration.

Regenerate or extend::

    nice -n 10 python -m validation study linear_memory.listwise_max_margin --workers 1

Print the table of the docs::

    python -c "from validation.studies.linear_memory_listwise_max_margin import print_table; print_table()"

Docs: ``docs/listwise.md#score-laws-at-the-certified-optimum``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.listwise_max_margin import listwise_max_margin_trial

from .base import check_planned_dims, Study, dims_option, fill_doc, is_ok, models_option
from .linear_memory_listwise import CASES, CENTRE

__all__ = ["PLAN", "TAUS", "TAUS_AT", "SAMPLES", "CALIBRATION_REPS", "Z_AGREE", "ks_distance", "ListwiseMaxMarginRow",
           "ListwiseMaxMargin", "summary_table", "print_table", "STUDIES"]

#: Tail fractions (zero-margin TAM cases of the exact study).
TAUS = (0.05, 0.2)

#: Tail fractions per d where they differ from :data:`TAUS`: at ``d = 20`` and ``30`` also
#: ``tau = 0.01``, whose tail is one or two competitors (``k = max(tau (p - 1), 1)`` is 1.0 at
#: ``d = 20`` and 1.4-1.6 at ``d = 30``), so the top-1 end of the TAM family.
TAUS_AT = {20: (0.01,) + TAUS, 30: (0.01,) + TAUS}

#: Per ``(model, d)``: sizes relative to :data:`CENTRE` and seeds per size.  A trial (two
#: solves to the optimum, one core) costs 1-5 CPU s at ``d = 20``, 5-30 s at ``d = 30`` and
#: 27-104 s at ``d = 40`` on the committed runs, so ``d = 30`` has six seeds and DP at ``d = 40``
#: three.
PLAN = {("dp", 20): ((0.85, 0.95), 8), ("op", 20): ((0.85, 0.95), 8), ("dp", 30): ((0.85, 0.95), 6),
        ("op", 30): ((0.85, 0.95), 6), ("op", 40): ((0.85, 0.95), 6), ("dp", 40): ((0.85, 0.95), 3)}

#: Rows drawn from ``replica.tam_scores`` per instance for the prediction.
SAMPLES = 4000

#: Repetitions of the KS calibration.
CALIBRATION_REPS = 20

#: A measured mean "agrees" with its prediction when they differ by at most this many
#: combined standard errors (about a 95 % interval).
Z_AGREE = 2.0


def ks_distance(a, b):
    """Return the two-sample Kolmogorov-Smirnov distance of two samples.

    Parameters
    ----------
    a, b : array_like
        Samples (1-d, not empty).

    Returns
    -------
    float
        :math:`\\sup_x |F_a(x) - F_b(x)|` of the empirical distribution functions.

    Raises
    ------
    ValueError
        If a sample is empty or not finite.

    See Also
    --------
    scipy.stats.ks_2samp : The same statistic, with a p-value for independent samples.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum

    Examples
    --------
    >>> ks_distance([0.0, 1.0], [0.5, 1.5, 2.5])
    0.6666666666666667
    """
    out = []
    for name, x in (("a", a), ("b", b)):
        x = np.sort(np.asarray(x, np.float64).ravel())
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"{name} must be a non-empty finite sample, got {x.size} values")
        out.append(x)
    a, b = out
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


@dataclass(frozen=True)
class ListwiseMaxMarginRow(Result):
    r"""Max-margin TAM memories at one ``(model, d, tau, n)`` against the replica laws.

    Parameters
    ----------
    model : str
        ``"op"`` or ``"dp"``.
    d : int
        Dimension.
    tau : float
        Tail fraction.
    n, p : int
        Facts planned and facts (``p = n``).
    k : float
        Tail size.
    relative_size : float
        ``n`` over the predicted capacity :data:`CENTRE`.
    instances, feasible : int
        Instances solved and those with a verified optimal memory.
    gamma, gamma_se : float
        Mean certified optimal margin ``gamma*`` and its standard error over instances.
    pinned, pinned_se, pinned_pred, pinned_pred_se, pinned_law : float
        Fraction of pinned facts: measured (mean over instances of the per-instance fraction)
        and its standard error over instances; the same mean for
        ``replica.tam_scores(tau, p, margin=gamma*)`` (:data:`SAMPLES` rows per instance at its
        own ``gamma*``, seed 0) and its Monte Carlo error; the large-``p`` law
        ``replica.tam_score_laws(tau, margin=gamma)`` at the mean ``gamma*``.
    correct, correct_se, correct_pred, correct_pred_se, correct_law : float
        The same five numbers for the per-instance mean normalised correct score.
    tail_mean, tail_mean_se, tail_mean_pred, tail_mean_pred_se, tail_mean_law : float
        The same for the normalised tail mean (law: :math:`\kappa_\tau`).
    margin, margin_se, margin_pred, margin_pred_se, margin_law : float
        The same for the normalised TAM margin.
    z : dict
        Quantity -> (measured - predicted) / combined standard error.
    verdicts : dict
        Quantity -> ``"agrees"`` when ``|z| <= Z_AGREE``, else ``"differs"`` (``"one instance"``
        when there is no standard error over instances); ``"ks"``:
        ``"agrees"`` when ``ks`` is at most the calibration mean plus two of its s.d.
    ks : float
        Two-sample KS distance of the pooled measured correct scores to the pooled predicted ones.
    ks_calibration, ks_calibration_sd : float
        Mean and s.d. over :data:`CALIBRATION_REPS` repetitions of the KS distance of a fresh
        ``tam_scores`` sample of the measured size (``p`` rows per instance) to the same
        predicted sample.
    spread_ratio, spread_ratio_se, spread_ratio_pred : float
        Mean over the pinned facts of their normalised margin over ``gamma*``, i.e. of the
        solver's unit :math:`s(W)` over the row's competitor spread :math:`s_\mu` (measured, its
        standard error over instances, and the same ratio for the active rows of
        ``tam_scores``, where the unit is the unperturbed competitor s.d.).
    offset : float
        Mean competitor score over the row spread (0 in the replica picture).
    cpu_seconds_per_instance : float
        Mean CPU time of a trial (both solves).

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum
    """

    model: str
    d: int
    tau: float
    n: int
    p: int
    k: float
    relative_size: float
    instances: int
    feasible: int
    gamma: float
    gamma_se: float
    pinned: float
    pinned_se: float
    pinned_pred: float
    pinned_pred_se: float
    pinned_law: float
    correct: float
    correct_se: float
    correct_pred: float
    correct_pred_se: float
    correct_law: float
    tail_mean: float
    tail_mean_se: float
    tail_mean_pred: float
    tail_mean_pred_se: float
    tail_mean_law: float
    margin: float
    margin_se: float
    margin_pred: float
    margin_pred_se: float
    margin_law: float
    z: dict
    verdicts: dict
    ks: float
    ks_calibration: float
    ks_calibration_sd: float
    spread_ratio: float
    spread_ratio_se: float
    spread_ratio_pred: float
    offset: float
    cpu_seconds_per_instance: float


def _se(x):
    x = np.asarray(x, float)
    return float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else math.nan


def _group_row(model, d, tau, n, res):
    from replica import tam_score_laws, tam_scores

    ok = [r for r in res if r["feasible"] and r.get("polished")]
    p = res[0]["p"]
    nan = math.nan
    base = dict(model=model, d=d, tau=tau, n=n, p=p, k=float(res[0]["k"]),
                relative_size=n / CENTRE[d][CASES.index(("tam", tau, 0.0))], instances=len(res),
                feasible=len(ok), cpu_seconds_per_instance=float(np.mean([r["cpu_seconds"] for r in res])))
    keys = ("pinned", "correct", "tail_mean", "margin")
    if not ok:
        vals = {f"{q}{s}": nan for q in keys for s in ("", "_se", "_pred", "_pred_se", "_law")}
        return ListwiseMaxMarginRow(**base, gamma=nan, gamma_se=nan, z={}, verdicts={}, ks=nan,
                                    ks_calibration=nan, ks_calibration_sd=nan, spread_ratio=nan,
                                    spread_ratio_se=nan, spread_ratio_pred=nan, offset=nan, **vals)
    gam = np.array([r["gamma"] for r in ok])
    meas = {"pinned": [r["pinned"] / p for r in ok],
            "correct": [np.mean(r["correct"]) for r in ok],
            "tail_mean": [np.mean(r["tail_mean"]) for r in ok],
            "margin": [np.mean(r["tam_margin"]) for r in ok]}
    ratio = [float(np.mean(np.asarray(r["tam_margin"])[np.asarray(r["is_pinned"], bool)])) / r["gamma"] for r in ok]
    pred = {q: [] for q in keys}
    pred_var = {q: [] for q in keys}
    sampled, ratio_pred = [], []
    for g in gam:
        s = tam_scores(tau, p, margin=float(g), samples=SAMPLES, rng=0)
        ratio_pred.append(float(np.mean(s["tam_margin"][s["active"]])) / float(g))
        cols = {"pinned": s["active"].astype(float), "correct": s["correct"], "tail_mean": s["tail_mean"],
                "margin": s["tam_margin"]}
        for q in keys:
            pred[q].append(float(cols[q].mean()))
            pred_var[q].append(float(cols[q].var(ddof=1)) / SAMPLES)
        sampled.append(s["correct"])
    sampled = np.concatenate(sampled)
    pooled = np.concatenate([r["correct"] for r in ok])
    ks = ks_distance(pooled, sampled)
    cal = []
    for j in range(CALIBRATION_REPS):
        fresh = [tam_scores(tau, p, margin=float(g), samples=p, rng=1000 * (j + 1) + i)["correct"]
                 for i, g in enumerate(gam)]
        cal.append(ks_distance(np.concatenate(fresh), sampled))
    cal = np.array(cal)
    laws = tam_score_laws(tau, margin=float(gam.mean()))
    law = {"pinned": laws.pinned, "correct": float(laws.correct.mean()), "tail_mean": laws.tail_mean,
           "margin": float(laws.tam_margin.mean())}
    vals, z, verdicts = {}, {}, {}
    m_ok = len(ok)
    for q in keys:
        m, se = float(np.mean(meas[q])), _se(meas[q])
        pm, pse = float(np.mean(pred[q])), math.sqrt(sum(pred_var[q])) / m_ok
        vals.update({q: m, f"{q}_se": se, f"{q}_pred": pm, f"{q}_pred_se": pse, f"{q}_law": float(law[q])})
        comb = math.hypot(se, pse)
        if not math.isfinite(comb):                   # one instance: no error over instances
            z[q], verdicts[q] = nan, "one instance"
            continue
        z[q] = (m - pm) / comb if comb > 0 else (0.0 if m == pm else math.copysign(math.inf, m - pm))
        verdicts[q] = "agrees" if abs(z[q]) <= Z_AGREE else "differs"
    verdicts["ks"] = "agrees" if ks <= cal.mean() + 2 * cal.std(ddof=1) else "differs"
    return ListwiseMaxMarginRow(**base, gamma=float(gam.mean()), gamma_se=_se(gam), z=z, verdicts=verdicts,
                                ks=ks, ks_calibration=float(cal.mean()), ks_calibration_sd=float(cal.std(ddof=1)),
                                spread_ratio=float(np.mean(ratio)), spread_ratio_se=_se(ratio),
                                spread_ratio_pred=float(np.mean(ratio_pred)),
                                offset=float(np.mean([r["offset_mean"] for r in ok])), **vals)


class ListwiseMaxMargin(Study):
    """Certified max-margin TAM memories against the score laws at capacity (see the module notes).

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum
    """

    name = "linear_memory.listwise_max_margin"
    title = "certified max-margin TAM memories: pinned fraction and score laws against replica"
    trial = listwise_max_margin_trial
    docs = "docs/listwise.md#score-laws-at-the-certified-optimum"
    options = (dims_option(sorted({d for _, d in PLAN}), help="dimensions (planned: 20, 30, 40)"), models_option())

    def validate(self, options):
        return check_planned_dims(options, sorted({d for _, d in PLAN}))

    @fill_doc
    def plan_d(self, model, d):
        """Return the trial parameters of one ``(model, d)`` of :data:`PLAN` (seed-major; none if unplanned).

        Parameters
        ----------
        %(model)s
        d : int
            Dimension.

        Returns
        -------
        list of dict
            ``model``, ``d``, ``n``, ``tau``, ``seed`` records.
        """
        if (model, d) not in PLAN:
            return []
        rel, seeds = PLAN[model, d]
        out = []
        for s in range(seeds):
            for tau in TAUS_AT.get(d, TAUS):
                c = CENTRE[d][CASES.index(("tam", tau, 0.0))]
                for r in rel:
                    out.append({"model": model, "d": int(d), "n": int(round(c * r)), "tau": float(tau), "seed": s})
        return out

    def plan(self, ds, models):
        return [q for d in ds for m in models for q in self.plan_d(m, d)]

    def execute(self, runner, ds, models):
        params = self.plan(ds, models)
        return list(zip(params, runner(params)))

    @fill_doc
    def summarise(self, results, ds, models):
        """One :class:`ListwiseMaxMarginRow` per ``(model, d, tau, n)``.

        Parameters
        ----------
        %(record_pairs)s
        models : tuple of str
            The fact models.

        Returns
        -------
        list of ListwiseMaxMarginRow
            By model, ``d``, ``tau``, ``n``.
        """
        groups = {}
        for q, rec in results:
            if is_ok(rec):
                groups.setdefault((q["model"], q["d"], q["tau"], q["n"]), []).append(rec["result"])
        return [_group_row(*key, res) for key, res in sorted(groups.items())]


def summary_table(rows):
    """Return the docs' table of summary rows, as Markdown lines.

    Parameters
    ----------
    rows : list of ListwiseMaxMarginRow
        :meth:`ListwiseMaxMargin.summarise` rows.

    Returns
    -------
    list of str
        Header and one line per row: measured ± s.e. / finite-p prediction ± its Monte Carlo
        error / large-p law
        for the pinned fraction, correct score, tail mean and margin, then the KS distance
        and its calibration.

    See Also
    --------
    validation.studies.linear_memory_listwise_max_margin.print_table : Prints it from the committed store.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum
    """
    def cell(r, q, digits):
        v = r.verdicts.get(q, "")
        return (f"{getattr(r, q):.{digits}f} ± {getattr(r, q + '_se'):.{digits}f} / "
                f"{getattr(r, q + '_pred'):.{digits}f} ± {getattr(r, q + '_pred_se'):.{digits}f} / "
                f"{getattr(r, q + '_law'):.{digits}f} ({v})")

    out = ["| model | d | $\\tau$ | n (rel.) | feasible | $\\gamma^*$ ± s.e. | pinned fraction | correct score "
           "| tail mean | margin | KS [calibration] |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.model.upper()} | {r.d} | {r.tau:g} | {r.n} ({r.relative_size:.2f}) | {r.feasible}/{r.instances} "
                   f"| {r.gamma:.4f} ± {r.gamma_se:.4f} | {cell(r, 'pinned', 3)} | {cell(r, 'correct', 3)} "
                   f"| {cell(r, 'tail_mean', 3)} | {cell(r, 'margin', 3)} "
                   f"| {r.ks:.3f} [{r.ks_calibration:.3f} ± {r.ks_calibration_sd:.3f}] ({r.verdicts.get('ks', '')}) |")
    return out


def print_table():
    """Replay the committed store and print :func:`summary_table` and the z-scores of each row.

    See Also
    --------
    validation.studies.linear_memory_listwise_max_margin.summary_table : The table printed.

    References
    ----------
    docs/listwise.md#score-laws-at-the-certified-optimum
    """
    run = STUDIES[0].run(compute=False, progress=False)
    rows = run.outcome
    print("\n".join(summary_table(rows)))
    res = [rec["result"] for _, rec in run.results if is_ok(rec)]
    feas = [r for r in res if r["feasible"]]
    print(f"{len(res)} trials, {len(feas)} feasible, {sum(bool(r.get('polished')) for r in feas)} measured, "
          f"all verified {all(r['verified'] for r in res)}, all optimal {all(r['optimal'] for r in res)}, "
          f"{sum(r['cpu_seconds'] for r in res):.0f} CPU s; largest relative bracket width "
          f"{max((r['gamma_high'] - r['gamma_low']) / r['gamma_low'] for r in feas):.1e}, largest "
          f"|margin of the memory / gamma_low - 1| {max(abs(r['gamma'] / r['gamma_low'] - 1) for r in feas if 'gamma' in r):.1e}")
    for r in rows:
        print(r.model, r.d, r.tau, r.n, "z:", {q: round(v, 2) for q, v in r.z.items()},
              f"margin / predicted {r.margin / r.margin_pred:.2f}",
              f"spread ratio {r.spread_ratio:.4f} ± {r.spread_ratio_se:.4f} (tam_scores {r.spread_ratio_pred:.4f})",
              f"offset {r.offset:.4f}", f"cpu/instance {r.cpu_seconds_per_instance:.1f} s")
    for q in ("pinned", "correct", "tail_mean", "margin", "ks"):
        v = [r.verdicts.get(q) for r in rows]
        z = [r.z[q] for r in rows if q in r.z and math.isfinite(r.z[q])]
        print(f"{q}: agrees in {v.count('agrees')} of {len(v)} rows" +
              (f", z from {min(z):.2f} to {max(z):.2f}, {sum(x > 0 for x in z)} positive" if z else ""))


STUDIES = (ListwiseMaxMargin(),)
