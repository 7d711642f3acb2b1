"""The claims ledger that opens the report: one row per headline claim, its verdict computed.

Each row names a claim of one of the papers (or of this package), the theory
value, the measured value with its confidence interval, and a verdict that
:func:`verdict` computes from the prediction and the interval.  The rows are
read from the sections' ``report.json`` entries (:func:`ledger`); nothing is
recomputed here and no verdict is typed.  A claim whose numbers are missing
from a report (a section not built, a study without its store) gets a
``not decided`` row that says so.
"""
from __future__ import annotations

import math
import re

from .base import fill_doc

__all__ = ["verdict", "exact_verdict", "enough_points", "ledger", "ledger_markdown", "slug", "CLAIM_KEYS"]

#: The keys of one ledger row in ``report.json["claims"]``.
CLAIM_KEYS = ("claim", "source", "theory", "measured", "ci", "verdict", "section")

_Z95 = 1.959963984540054  # the two-sided 95 % normal quantile


def verdict(prediction, ci, *, estimate=None, prediction_stderr=0.0, kind="equal",
            n_points=None, n_params=None, level=0.95):
    """Verdict of a measurement against a prediction, from its confidence interval.

    Parameters
    ----------
    prediction : float or None
        The theory value (for ``kind="at_most"`` / ``"at_least"`` the bound).
        ``None``: no prediction, the claim is not decided.
    ci : sequence of two floats or None
        The measured confidence interval ``(low, high)`` at ``level``.
        ``None``: no interval (one run), the claim is not decided.
    estimate : float, optional
        The measured point estimate (default: the midpoint of ``ci``); it only
        enters the size of a difference, never the decision.
    prediction_stderr : float, optional
        Monte Carlo standard error of the prediction; the interval is widened
        by ``z * prediction_stderr`` on both sides before the test.
    kind : {"equal", "at_most", "at_least"}, optional
        ``"equal"``: the measurement should equal the prediction;
        ``"at_most"``: it should not exceed the bound; ``"at_least"``: not fall
        below it.
    n_points, n_params : int, optional
        Points behind a fit and the parameters it fits: a fit with fewer than
        ``n_params + 2`` points decides nothing.
    level : float, optional
        Level of ``ci`` (sets ``z`` of the sigma count).

    Returns
    -------
    str
        ``"agrees"``, ``"differs by X (k sigma)"`` (``X`` = estimate minus
        prediction, ``k`` = ``|X|`` over the combined standard error read off
        the interval), ``"below the bound"`` / ``"above the bound"``, or
        ``"not decided: <why>"``.

    Raises
    ------
    ValueError
        On an unknown ``kind`` or an interval with ``low > high``.

    Notes
    -----
    *Decision.* With ``[l, h]`` the interval widened by
    :math:`z\\,\\sigma_{\\rm th}`, ``"equal"`` agrees when :math:`l \\le
    \\theta \\le h`. Otherwise the difference is :math:`X = \\hat x - \\theta`
    and :math:`k = |X| / \\sqrt{s^2 + \\sigma_{\\rm th}^2}` with
    :math:`s = (h_0 - l_0) / (2 z)` from the unwidened interval.  A bound is
    respected when the whole interval lies on its side, violated when the whole
    interval lies beyond it, and undecided when the interval straddles it.

    References
    ----------
    docs/linear_memory.md#empirical-capacity-threshold

    Examples
    --------
    >>> verdict(0.5, (0.45, 0.55))
    'agrees'
    >>> verdict(0.844, (0.858, 0.870), estimate=0.862)
    'differs by +0.018 (5.9 sigma)'
    >>> verdict(4.0, (2.39, 2.71), kind="at_most")
    'below the bound'
    >>> verdict(1.0, (0.2, 9.0), n_points=2, n_params=2)
    'not decided: 2 points for 2 parameters (a fit needs at least 4)'
    """
    if kind not in ("equal", "at_most", "at_least"):
        raise ValueError(f"kind must be one of 'equal', 'at_most', 'at_least', got {kind!r}")
    if n_points is not None and n_params is not None and not enough_points(n_points, n_params):
        return (f"not decided: {n_points} points for {n_params} parameters "
                f"(a fit needs at least {n_params + 2})")
    if prediction is None or not _finite(prediction):
        return "not decided: no prediction"
    if ci is None or len(ci) != 2 or not (_finite(ci[0]) and _finite(ci[1])):
        return "not decided: no confidence interval (a single run)"
    lo, hi = float(ci[0]), float(ci[1])
    if lo > hi:
        raise ValueError(f"ci must have low <= high, got {ci!r}")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    ps = float(prediction_stderr or 0.0)
    wlo, whi = lo - z * ps, hi + z * ps
    theta = float(prediction)
    if kind == "at_most":
        if whi <= theta:
            return "below the bound"
        if wlo > theta:
            return "above the bound"
        return "not decided: the interval straddles the bound"
    if kind == "at_least":
        if wlo >= theta:
            return "above the bound"
        if whi < theta:
            return "below the bound"
        return "not decided: the interval straddles the bound"
    if wlo <= theta <= whi:
        return "agrees"
    est = 0.5 * (lo + hi) if estimate is None else float(estimate)
    s = math.hypot((hi - lo) / (2 * z), ps)
    diff = est - theta
    k = abs(diff) / s if s > 0 else math.inf
    return f"differs by {diff:+.2g} ({k:.1f} sigma)" if abs(diff) < 0.01 else \
        f"differs by {diff:+.3f} ({k:.1f} sigma)"


@fill_doc
def enough_points(n_points, n_params):
    """Whether a fit of ``n_params`` parameters to ``n_points`` points may be reported (``n >= k + 2``).

    Parameters
    ----------
    n_points : int or None
        Points behind the fit (None: unknown, not enough).
    n_params : int
        Its parameters.

    Returns
    -------
    bool
        True when there are at least ``n_params + 2`` points.

    %(ref_report)s

    Examples
    --------
    >>> enough_points(4, 2), enough_points(3, 2), enough_points(None, 1)
    (True, False, False)
    """
    return n_points is not None and n_points >= n_params + 2


def _finite(x):
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


@fill_doc
def slug(title):
    """The GitHub-style anchor of a Markdown heading.

    Parameters
    ----------
    title : str
        Heading text without the leading ``#``.

    Returns
    -------
    str
        Lower case, punctuation dropped, spaces as ``-``.

    %(ref_report)s

    Examples
    --------
    >>> slug("Exact capacity: does a memory exist?")
    'exact-capacity-does-a-memory-exist'
    """
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return s.replace(" ", "-")


def _get(report, *path):
    # the report dict holds results (``Result``) until it is written: read them as their
    # ``to_dict()`` so a claim sees what report.json will hold
    o = report
    for k in path:
        if not isinstance(o, dict) and hasattr(o, "to_dict"):
            o = o.to_dict()
        if isinstance(o, dict) and k in o:
            o = o[k]
        elif isinstance(o, dict) and str(k) in o:
            o = o[str(k)]
        else:
            return None
    return o


def _row(claim, source, theory, measured, ci, section, *, verdict_text=None, **vkw):
    return {"claim": claim, "source": source, "theory": theory, "measured": measured,
            "ci": None if ci is None else [float(ci[0]), float(ci[1])],
            "verdict": verdict_text if verdict_text is not None else verdict(theory, ci, estimate=measured, **vkw),
            "section": section}


def _missing(claim, source, section, what):
    return {"claim": claim, "source": source, "theory": None, "measured": None, "ci": None,
            "verdict": f"not decided: {what} not in this report", "section": section}


_LM = "arXiv:2605.10795"
_FR = "arXiv:2412.06538"
_TR = "arXiv:2603.15923"
_OURS = "this package"
_LW = "arXiv:2605.05189"


@fill_doc
def exact_verdict(e):
    """Verdict of one exact-capacity entry (``report.json`` ``linear_memory.exact.<d>``) against ``alpha_c_finite``.

    Parameters
    ----------
    e : dict
        With ``theory``, ``theory_stderr``, ``threshold`` and ``ci``.

    Returns
    -------
    str
        :func:`verdict` of the threshold against the theory.

    %(ref_report)s

    Examples
    --------
    >>> exact_verdict({"theory": 0.878, "theory_stderr": 4e-4, "threshold": 0.877, "ci": [0.855, 0.919]})
    'agrees'
    """
    return verdict(e["theory"], e["ci"], estimate=e["threshold"],
                   prediction_stderr=e.get("theory_stderr") or 0.0)


def _lm_rows(r):
    rows = []
    sec_exact = "Exact capacity: does a memory exist?"
    exact = _get(r, "linear_memory", "exact") or {}
    ds = sorted((int(k) for k, v in exact.items() if isinstance(v, dict) and v.get("ci")), key=int)
    lim = _get(r, "theory", "alpha_c", "limit")
    if ds:
        dmax = ds[-1]
        e = exact[str(dmax)] if str(dmax) in exact else exact[dmax]
        rows.append(_row("full-rank capacity p ln p / d^2 -> 1/2 (d -> infinity)", _LM, lim,
                         e["threshold"], None, sec_exact,
                         verdict_text=f"not decided: a d -> infinity limit; the largest d measured "
                                      f"is {dmax} (the finite-p law, next rows, applies there)"))
        each = {d: exact_verdict(exact[str(d)]) for d in ds}
        agree = sum(v == "agrees" for v in each.values())
        e = exact[str(dmax)]
        rows.append(_row(f"existence threshold = alpha_c_finite(p) at d = {dmax} (agrees at {agree} "
                         f"of {len(ds)} sizes d = {ds[0]}-{dmax})", _LM, e["theory"],
                         e["threshold"], e["ci"], sec_exact, verdict_text=each[dmax]))
    else:
        rows.append(_missing("existence threshold = alpha_c_finite(p)", _LM, sec_exact,
                             "the exact-capacity study"))
    # existence vs training at the largest d with both
    both = [d for d in ds if (exact.get(str(d)) or {}).get("trained_ci")]
    if both:
        d = both[-1]
        e = exact[str(d)]
        diff = e["trained_threshold"] - e["threshold"]
        hw = math.hypot((e["ci"][1] - e["ci"][0]) / 2, (e["trained_ci"][1] - e["trained_ci"][0]) / 2)
        rows.append(_row(f"training reaches the existence threshold (trained - exact), d = {d}",
                         _OURS, 0.0, diff, (diff - hw, diff + hw), sec_exact))
    # OP vs DP (exact decisions, same relative loads): the largest d with both
    fs = exact.get("finite_size") or {}
    comp = fs.get("op_vs_dp") or []
    dpx = exact.get("dp") or {}
    if comp:
        c = comp[-1]
        rows.append(_row(f"OP and DP share one existence threshold (OP - DP, exact), d = {c['d']} "
                         f"(agrees at {sum(x['verdict'] == 'agrees' for x in comp)} of {len(comp)} sizes "
                         f"d = {comp[0]['d']}-{c['d']})", _LM, 0.0, c["difference"],
                         (c["ci_low"], c["ci_high"]), sec_exact))
    if dpx:
        dmax = max(dpx, key=int)
        e = dpx[dmax]
        each = [exact_verdict(v) for v in dpx.values()]
        rows.append(_row(f"DP existence threshold = alpha_c_finite(p) at d = {dmax} (agrees at "
                         f"{sum(v == 'agrees' for v in each)} of {len(each)} sizes)", _LM, e["theory"],
                         e["threshold"], e["ci"], sec_exact, verdict_text=exact_verdict(e)))
    # OP vs DP (trained, same d)
    sec_cap = "Capacity thresholds"
    cap = [x for x in (_get(r, "linear_memory", "rows") or []) if x.get("preset") == "default"]
    by = {(x["model"], x["d"]): x for x in cap}
    dd = sorted({d for (m, d) in by if m == "op" and ("dp", d) in by})
    if dd:
        d = dd[-1]
        op, dp = by[("op", d)], by[("dp", d)]
        diff = op["threshold"] - dp["threshold"]
        hw = math.hypot((op["ci_high"] - op["ci_low"]) / 2, (dp["ci_high"] - dp["ci_low"]) / 2)
        rows.append(_row(f"OP and DP share one capacity (OP - DP, trained), d = {d}", _LM, 0.0,
                         diff, (diff - hw, diff + hw), sec_cap))
    else:
        rows.append(_missing("OP and DP share one capacity", _LM, sec_cap, "the OP/DP thresholds"))
    # d = 150 rows (the paper's size)
    sec_150 = "The paper's size: d = 100 and d = 150"
    d150 = _get(r, "linear_memory", "d150", "rows") or {}
    for name, x in d150.items():
        if x.get("d") != 150 or not x.get("ci"):
            continue
        what = "OP" if x["model"] == "op" else f"rank kappa = {x['kappa']:g}"
        paper = f" (paper's table: {x['paper']:g}, a large-d value)" if x.get("paper") is not None else ""
        rows.append(_row(f"d = 150, {what}: threshold = alpha_c_finite{paper}", _LM,
                         x["theory_finite_p"], x["threshold"], x["ci"], sec_150,
                         prediction_stderr=x.get("theory_stderr") or 0.0))
    if not any(x.get("d") == 150 for x in d150.values()):
        rows.append(_missing("d = 150 thresholds", _LM, sec_150, "the d = 150 study"))
    # alpha_c(kappa) low rank, finite p
    sec_lr = "Low rank against the finite-p rank-constrained capacity"
    lr = [x for x in (_get(r, "linear_memory", "lowrank_finite_p", "rows") or []) if x.get("ci")]
    if lr:
        x = max(lr, key=lambda x: (x["d"], -abs(x["kappa"] - 0.5)))
        rows.append(_row(f"low rank: threshold = alpha_c(kappa) at finite p, kappa = {x['kappa']:g}, "
                         f"d = {x['d']} (large-d alpha_c(kappa) = {x['alpha_c_kappa']:.3f})", _LM,
                         x["theory"], x["threshold"], x["ci"], sec_lr,
                         prediction_stderr=x.get("theory_stderr") or 0.0))
    else:
        rows.append(_missing("low rank: threshold = alpha_c(kappa)", _LM, sec_lr,
                             "the low-rank finite-p study"))
    # Hebbian
    sec_h = "Capacity thresholds"
    heb = sorted((x for x in cap if x["model"] == "hebbian"), key=lambda x: x["d"])
    if heb:
        x = heb[-1]
        rows.append(_row(f"Hebbian threshold = conditional Hebbian model, d = {x['d']} "
                         f"(large-d limit {_get(r, 'theory', 'hebbian', 'limit')})", _LM,
                         x["theory"], x["threshold"], (x["ci_low"], x["ci_high"]), sec_h))
    else:
        rows.append(_missing("Hebbian threshold", _LM, sec_h, "the Hebbian thresholds"))
    # truncated quarter circle
    sec_sp = "Spectra study: pooled instances against a Gaussian calibration"
    ext = _get(r, "linear_memory", "spectra_study", "extrapolation") or []
    cand = [e for e in ext if e.get("quantity") == "ks_excess" and e.get("kappa", 1) < 1]
    if cand:
        kap = max(e["kappa"] for e in cand)
        fractions = sorted({e["load_fraction"] for e in cand if e["kappa"] == kap}, reverse=True)
        # the largest load whose extrapolation has enough sizes to decide (else the largest load)
        top = next((f for f in fractions if max(len(e["sizes"]) for e in cand
                                                if e["kappa"] == kap and e["load_fraction"] == f) >= 4),
                   fractions[0])
        pick = [e for e in cand if e["load_fraction"] == top and e["kappa"] == kap]
        longest = {}
        for e in pick:
            if e["variable"] not in longest or len(e["sizes"]) > len(longest[e["variable"]]["sizes"]):
                longest[e["variable"]] = e
        vs = {v: verdict(0.0, e["intercept_ci"], estimate=e["intercept"],
                         n_points=len(e["sizes"]), n_params=2) for v, e in longest.items()}
        e = longest.get("1/d") or next(iter(longest.values()))
        if len(set(vs.values())) == 1:
            text = vs[e["variable"]]
        else:
            text = "not decided: " + "; ".join(f"extrapolated in {v}: {t}" for v, t in sorted(vs.items()))
        rows.append(_row(f"trained rank-kappa spectrum -> truncated quarter circle: KS excess -> 0 "
                         f"(kappa = {kap:g}, load {top:g} alpha_c, in {e['variable']})", _LM, 0.0,
                         e["intercept"], e["intercept_ci"], sec_sp, verdict_text=text))
    else:
        rows.append(_missing("trained spectrum -> truncated quarter circle", _LM, sec_sp,
                             "the spectra study"))
    return rows


def _fr_rows(r):
    rows = []
    fp = _get(r, "factual_recall", "facts_per_param")
    sec = "9. Facts per parameter at `T = 32` (budget-checked, stored)"
    if fp and fp.get("exponent"):
        ex = fp["exponent"]
        rows.append(_row("facts grow linearly with parameters (exponent of facts vs parameters)",
                         _FR, 1.0, ex["slope"], ex.get("ci"), sec, n_points=ex.get("n"), n_params=2))
        rows.append(_row("facts per parameter (T = 32, paper's value)", _FR, fp.get("paper"),
                         fp["value"], fp.get("ci"), sec))
    else:
        rows.append(_missing("facts per parameter", _FR, sec, "the facts-per-parameter study"))
    bf = _get(r, "factual_recall", "tradeoff", "boundary_fit")
    sec = "10. Trade-off map at a fixed number of facts (stored)"
    if bf and bf.get("p_ci"):
        ci = bf["p_ci"] if len(bf["p_ci"]) == 2 else None
        rows.append(_row("attention and MLP parameters trade off additively (boundary exponent p = 1)",
                         _FR, 1.0, bf["best_p"], ci, sec))
    else:
        rows.append(_missing("attention/MLP trade-off", _FR, sec, "the trade-off fit"))
    st = _get(r, "factual_recall", "stage_boundaries")
    sec = "4. Sequential learning: relations before subjects"
    if st:
        rel = abs(st["plateau1"] - st["ln_DR"]) / st["ln_DR"]
        rel2 = abs(st["plateau2"] - st["ln_D"]) / st["ln_D"]
        rows.append(_row("sequential stages: loss plateaus at ln(DR), then ln(D)", _FR,
                         st["ln_DR"], st["plateau1"], None, sec,
                         verdict_text=f"not decided: one run, no interval (plateaus within "
                                      f"{100 * rel:.1f} % and {100 * rel2:.1f} % of ln(DR), ln(D); "
                                      f"order {st['order']})"))
    else:
        rows.append(_missing("sequential stages", _FR, sec, "the sequential run"))
    mm = _get(r, "factual_recall", "mlp_memory")
    sec = "6. The MLP memory against the counting bounds"
    if mm and mm.get("ci"):
        rows.append(_row("MLP memory stores N = c m d facts with c below the counting bound", _FR,
                         mm["cover_bound"], mm["c"], mm["ci"], sec, kind="at_most"))
    lin = _get(r, "factual_recall", "linear_memory_vs_theory", "per_d") or {}
    sec = "5. The linear memory against the finite-p replica capacity"
    if lin:
        d = max(lin, key=int)
        x = lin[d]
        rows.append(_row(f"normalised linear memory: capacity = alpha_c_finite, d = {d}", _OURS,
                         x["theory_alpha_c_finite"], x["alpha_all"], x["alpha_all_ci"], sec,
                         prediction_stderr=x.get("theory_stderr") or 0.0))
    return rows


def _tr_rows(r):
    rows = []
    sec = "Adaptive design of the boundary"
    th = _get(r, "token_retrieval", "theory", "retrieval_boundary", "points") or []
    ad = _get(r, "token_retrieval", "adaptive_design", "boundaries") or {}
    pts = {(p["d"], p["L"]): p["N"] for p in th}
    done = False
    for b in ad.values():
        if (b["d"], b["L"]) in pts and b.get("ci"):
            rows.append(_row(f"retrieval boundary N_c(d = {b['d']}, L = {b['L']}) = early-phase theory",
                             _TR, pts[(b["d"], b["L"])], b["threshold"], b["ci"], sec))
            done = True
    if not done:
        rows.append(_missing("retrieval boundary vs theory", _TR, sec, "a measured boundary at a theory point"))
    # the token-level theory's boundary (its crossing on the full grid, geometric interpolation in N)
    tok = {(p["d"], p["L"]): p.get("N_token")
           for p in _get(r, "token_retrieval", "lower_bound", "statistical", "points") or []}
    hit = [b for b in ad.values() if tok.get((b["d"], b["L"])) is not None and b.get("ci")]
    # the (d, L) of the closed-form row above when the token-level grid has it, so the two compare
    hit.sort(key=lambda b: (b["d"], b["L"]) not in pts)
    if hit:
        b = hit[0]
        rows.append(_row(f"retrieval boundary N_c(d = {b['d']}, L = {b['L']}) = token-level theory", _OURS,
                         tok[(b["d"], b["L"])], b["threshold"], b["ci"], sec))
    else:
        rows.append(_missing("retrieval boundary vs token-level theory", _OURS, sec,
                             "a measured boundary at a point of the token-level grid"))
    ex = _get(r, "token_retrieval", "exponents", "retrieval_logistic")
    tex = _get(r, "token_retrieval", "theory", "retrieval_boundary", "exponents")
    nb = _get(r, "token_retrieval", "boundaries", "retrieval_boundary", "n_points")
    sec = "Boundary law read off the theory"
    if ex and tex:
        v, s = ex["L"]["value"], ex["L"]["stderr"]
        rows.append(_row("boundary law N_c ~ d^a L^b: L exponent", _TR, tex["L"], v,
                         (v - _Z95 * s, v + _Z95 * s), sec, n_points=nb, n_params=3))
    lb = _get(r, "token_retrieval", "lower_bound", "points") or []
    sec = "Information-theoretic (counting) bound"
    cnt = {(p["d"], p["L"]): p["N_counting"] for p in lb}
    for b in ad.values():
        if (b["d"], b["L"]) in cnt and b.get("ci"):
            rows.append(_row(f"measured boundary below the counting bound (d = {b['d']}, L = {b['L']})",
                             _TR, cnt[(b["d"], b["L"])], b["threshold"], b["ci"], sec, kind="at_most"))
            break
    return rows


def _listwise_rows(r):
    rows = []
    sec = "Top-1 or top-k: listwise (tail-average margin) capacity and capacity at a margin"
    exact = _get(r, "listwise", "exact") or {}

    def largest_d(model, case):
        cases = exact.get(model) or {}
        ds = sorted((int(d) for d, c in cases.items() if isinstance(c, dict) and (c.get(case) or {}).get("ci")))
        return (ds[-1], cases[str(ds[-1])][case]) if ds else (None, None)

    for model, case, claim, source in (
            ("dp", "tam tau=0.05 margin=0", "TAM capacity n/d^2 = finite-p RS theory, tau = 0.05, DP", _LW),
            ("dp", "top1 margin=0.5", "top-1 capacity at margin 0.5 = alpha_c_finite(p, margin), DP", _OURS),
            ("op", "top1 margin=0.5 sphere",
             "top-1 capacity at margin 0.5 = alpha_c_finite(p, margin), unit-norm inputs and candidates, OP",
             _OURS)):
        d, e = largest_d(model, case)
        if e is None:
            rows.append(_missing(claim, source, sec, f"an exact {model.upper()} threshold for '{case}'"))
        else:
            rows.append(_row(f"{claim}, d = {d} (exact)", source, e["theory"], e["threshold"], e["ci"], sec,
                             prediction_stderr=e.get("theory_stderr") or 0.0))
    for model in ("dp", "op"):
        hebb = _get(r, "listwise", "hebbian", model) or {}
        claim = (f"Hebbian memory under TAM (tau = 0.2, all facts) = conditional Hebbian model "
                 f"({'exact given the per-input scalars' if model == 'dp' else 'scalar model, Monte Carlo'}), "
                 f"{model.upper()}")
        ds = sorted(int(d) for d, c in hebb.items() if (c.get("tam tau=0.2") or {}).get("ci"))
        if ds:
            h = hebb[str(ds[-1])]["tam tau=0.2"]
            rows.append(_row(f"{claim}, d = {ds[-1]}", _OURS, h["theory"], h["threshold"], h["ci"], sec,
                             prediction_stderr=h.get("theory_stderr") or 0.0))
        else:
            rows.append(_missing(claim, _OURS, sec, "the Hebbian listwise study"))
    trained = _get(r, "listwise", "trained", "dp") or {}
    ds = sorted(int(d) for d, c in trained.items()
                if (c.get("tam tau=0.05 margin=0") or {}).get("exact_ci_low") is not None)
    claim = "trained TAM memory reaches the exact threshold (trained - exact), tau = 0.05, DP"
    if ds:
        t = trained[str(ds[-1])]["tam tau=0.05 margin=0"]
        diff = t["threshold"] - t["exact_threshold"]
        hw = math.hypot((t["ci"][1] - t["ci"][0]) / 2, (t["exact_ci_high"] - t["exact_ci_low"]) / 2)
        rows.append(_row(f"{claim}, d = {ds[-1]}", _LW, 0.0, diff, (diff - hw, diff + hw), sec))
    else:
        rows.append(_missing(claim, _LW, sec, "the trained listwise study"))
    return rows


def ledger(report):
    """Claims-ledger rows computed from a report's sections.

    Parameters
    ----------
    report : dict
        The content of ``report.json`` (section keys; ``meta`` is ignored).

    Returns
    -------
    list of dict
        One row per claim with the keys of :data:`CLAIM_KEYS`: ``claim`` (what
        is claimed), ``source`` (arXiv id or ``"this package"``), ``theory``,
        ``measured`` (floats or None), ``ci`` (``[low, high]`` or None),
        ``verdict`` (from :func:`verdict`) and ``section`` (the heading of the
        subsection that shows it).

    References
    ----------
    arXiv:2605.10795; arXiv:2412.06538; arXiv:2603.15923; arXiv:2605.05189

    Examples
    --------
    >>> rows = ledger({"linear_memory": {"rows": [
    ...     {"model": "op", "d": 20, "preset": "default", "threshold": 0.99,
    ...      "ci_low": 0.94, "ci_high": 1.07},
    ...     {"model": "dp", "d": 20, "preset": "default", "threshold": 0.97,
    ...      "ci_low": 0.91, "ci_high": 1.05}]}})
    >>> [r["verdict"] for r in rows if r["claim"].startswith("OP and DP")]
    ['agrees']
    """
    rows = []
    if "theory" in report or "linear_memory" in report:
        rows += _lm_rows(report)
    if "factual_recall" in report:
        rows += _fr_rows(report)
    if "token_retrieval" in report:
        rows += _tr_rows(report)
    if "listwise" in report:
        rows += _listwise_rows(report)
    return rows


def _num(x, spec=".3f"):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    return format(x, spec) if abs(x) >= 0.01 or x == 0 else f"{x:.2g}"


@fill_doc
def ledger_markdown(rows):
    """Render the ledger rows as one Markdown table (the report's first screen).

    Parameters
    ----------
    rows : list of dict
        From :func:`ledger`.

    Returns
    -------
    str
        A heading, one line of reading and the table.

    %(ref_report)s

    Examples
    --------
    >>> print(ledger_markdown([{"claim": "c", "source": "s", "theory": 0.5, "measured": 0.51,
    ...     "ci": [0.45, 0.55], "verdict": "agrees", "section": "Capacity thresholds"}]), end="")
    ## Claims ledger
    <BLANKLINE>
    Each verdict is computed from the interval and the prediction (agrees: the 95% interval contains the prediction, widened by its Monte Carlo error; differs: by how much and how many standard errors; not decided: why).
    <BLANKLINE>
    | claim (links to its section) | source | theory | measured [95% CI] | verdict |
    |---|---|---|---|---|
    | [c](#capacity-thresholds) | s | 0.500 | 0.510 [0.450, 0.550] | agrees |
    """
    from .base import md_table

    body = []
    for r in rows:
        meas = _num(r["measured"])
        if r.get("ci"):
            meas += f" [{_num(r['ci'][0])}, {_num(r['ci'][1])}]"
        # the claim links to its section: one column fewer, so the table fits a screen
        body.append([f"[{r['claim']}](#{slug(r['section'])})", r["source"], _num(r["theory"]), meas,
                     r["verdict"]])
    return ("## Claims ledger\n\n"
            "Each verdict is computed from the interval and the prediction (agrees: the 95% "
            "interval contains the prediction, widened by its Monte Carlo error; differs: by how "
            "much and how many standard errors; not decided: why).\n\n"
            + md_table(["claim (links to its section)", "source", "theory", "measured [95% CI]", "verdict"],
                       body))
