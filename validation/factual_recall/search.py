"""The adaptive search over the number of facts of the transformer capacity studies.

Two searches.  The paper's protocol (:func:`next_paper_trial`,
:func:`largest_passed`) walks over the number of subjects :math:`S = R` one size
at a time, each size trying the learning rates :data:`PAPER_LRS` until one
passes, and reports the largest size that passed with the next one failing.
The capacity of a configuration is searched on a geometric grid of numbers of
facts (:func:`grid_facts`, ratio :math:`2^{1/4}` in the studies): each path
brackets the 99 % point by moves of several grid points and then bisects on
the grid (:func:`next_grid_index`); :func:`shape_of` turns the paper's ratios
:math:`H d_h / d` and :math:`m / d` into a model shape.  The plans and the round-by-round
search live in :mod:`validation.studies.factual_recall_capacity`; the fit of the
outcomes in :func:`validation.factual_recall.fits.fit_capacity`.

docs/factual_recall.md#facts-per-parameter-budget-checked.
"""
from __future__ import annotations

from dataclasses import dataclass

from hcizz.checks import check_int
from hcizz.results import Result
from validation._docparams import fill_doc, returned_by
from .task import split_facts
from .transformer import TransformerShape

__all__ = ["shape_of", "grid_facts", "next_grid_index", "MAX_HEADS", "PAPER_LRS",
           "size_outcomes", "next_paper_trial", "LargestPassed", "largest_passed",
           "PaperCodeRow", "paper_code_comparison"]

#: The learning rates of the paper's protocol, in the order a size tries them (a size
#: passes as soon as one passes, so the order changes the cost, not the outcome).
PAPER_LRS = (0.01, 0.003, 0.001)

#: Heads of a shape with ``H d_h >= MAX_HEADS`` (the paper's 8); below it ``H d_h``
#: heads of size 1.
MAX_HEADS = 8


@fill_doc
def shape_of(d, attn_ratio, mlp_ratio, max_heads=MAX_HEADS):
    """``(d, H, d_h, m)`` for the ratios :math:`H d_h / d` and :math:`m / d`.

    Parameters
    ----------
    d : int
        Embedding dimension of the model.
    attn_ratio, mlp_ratio : float
        :math:`H d_h / d` and :math:`m / d`.
    max_heads : int
        Heads used when ``H d_h >= max_heads`` (the paper's 8); below that
        :math:`H = H d_h` heads of size 1.

    Returns
    -------
    tuple of int
        ``(d, H, d_h, m)``: embedding dimension, number of heads, head size
        ``round(attn_ratio d) / H`` and MLP width ``round(mlp_ratio d)``.

    Raises
    ------
    ValueError
        If ``round(attn_ratio d) < 1`` or it is not a multiple of the number of
        heads.

    See Also
    --------
    validation.factual_recall.search.paper_code_comparison : Compares shapes with the paper's code.

    %(ref_facts_per_param_paper)s

    Examples
    --------
    >>> shape_of(16, 1.0, 1.0), shape_of(16, 0.25, 4.0)
    ((16, 8, 2, 16), (16, 4, 1, 64))
    """
    hd = int(round(attn_ratio * d))
    m = int(round(mlp_ratio * d))
    if hd < 1:
        raise ValueError(f"attn_ratio * d must be >= 1, got {attn_ratio} * {d}")
    H = max_heads if hd >= max_heads else hd
    if hd % H:
        raise ValueError(f"H d_h = {hd} is not a multiple of {H} heads")
    return int(d), H, hd // H, m


@fill_doc
def grid_facts(k, n0, ratio):
    r"""Number of facts :math:`S R` (square split) at grid index ``k`` of a geometric grid.

    Parameters
    ----------
    k : int
        Grid index (negative below the origin).
    n0 : float
        Grid origin: the target number of facts at ``k = 0`` (the study uses
        ``rate0`` times the parameter count).
    ratio : float
        Ratio of consecutive grid points (:math:`2^{1/4}` in the study).

    Returns
    -------
    int
        :math:`S R` for the square split :math:`R = \mathrm{round}(\sqrt{n})`, :math:`S = \mathrm{round}(n / R)`
        of the target :math:`n = \max(4, \mathrm{round}(n_0\, \mathrm{ratio}^k))`; it can differ slightly
        from ``n`` (128 becomes 12 x 11 = 132), and two neighbouring indices can
        give the same number.

    See Also
    --------
    validation.factual_recall.search.next_grid_index : The next index of an adaptive path.

    %(ref_facts_per_param_paper)s

    Examples
    --------
    >>> grid_facts(0, 64, 2 ** 0.25), grid_facts(4, 64, 2 ** 0.25)   # 128 -> 11 x 12
    (64, 132)
    """
    S, R = split_facts(max(4, int(round(n0 * ratio ** k))))
    return S * R


@fill_doc
def next_grid_index(tested, start, *, max_trials=8, step=4):
    """Next grid index of one adaptive path, or None when the path is done.

    Parameters
    ----------
    tested : dict
        ``{k: success}`` of the trials made so far on this path.
    start : int
        Grid index of the path's first trial.
    max_trials : int
        Most trials on one path: None is returned once ``tested`` holds this many.
    step : int
        Grid indices per move while not bracketed (4: a factor 2 in ``N`` on the
        :math:`2^{1/4}` grid).

    Returns
    -------
    int or None
        ``start`` first; while only successes (failures) are known, ``step``
        indices above the largest success (below the smallest failure); once
        bracketed, the index halfway between the largest success and the
        smallest failure (bisection on the grid); None once they are adjacent
        (or inverted) or after ``max_trials`` trials.

    See Also
    --------
    validation.factual_recall.search.grid_facts : The number of facts at an index.

    %(ref_facts_per_param_paper)s

    Examples
    --------
    >>> next_grid_index({}, 0), next_grid_index({0: True}, 0), next_grid_index({0: True, 4: False}, 0)
    (0, 4, 2)
    >>> next_grid_index({0: True, 2: False, 1: True}, 0) is None
    True
    """
    if not tested:
        return int(start)
    if len(tested) >= max_trials:
        return None
    ok = [k for k, s in tested.items() if s]
    bad = [k for k, s in tested.items() if not s]
    if not bad:
        return max(ok) + step
    if not ok:
        return min(bad) - step
    lo, hi = max(ok), min(bad)
    if hi - lo > 1:
        return (lo + hi) // 2
    return None


@fill_doc
def size_outcomes(runs, lrs=PAPER_LRS, budget=None):
    """Outcome of every size tried: passed (some rate passed), failed (every rate failed) or pending.

    Parameters
    ----------
    runs : iterable of dict
        One record per training run with ``S``, ``lr``, ``passed`` and
        ``pass_step`` (the step of the first check at 99 %, None if none).
    lrs : sequence of float
        The learning rates a size must try before it has failed.
    budget : int, optional
        Outcomes under a smaller step budget: a run passes when it passed at
        a step ``<= budget`` (a shorter run is a prefix of the longer one).

    Returns
    -------
    dict
        ``S -> (outcome, lr)`` with outcome ``True`` (passed, ``lr`` the first
        rate of ``lrs`` that passed), ``False`` (all rates failed) or
        ``None`` (pending: some rate not tried yet and none passed).

    See Also
    --------
    validation.factual_recall.search.largest_passed : The criterion read from these outcomes.

    %(ref_papers_protocol_paper)s

    Examples
    --------
    >>> runs = [dict(S=4, lr=0.01, passed=True, pass_step=256),
    ...         dict(S=5, lr=0.01, passed=False, pass_step=None)]
    >>> size_outcomes(runs, lrs=(0.01, 0.003))
    {4: (True, 0.01), 5: (None, None)}
    >>> size_outcomes(runs, lrs=(0.01,), budget=128)
    {4: (False, None), 5: (False, None)}
    """
    lrs = tuple(float(x) for x in lrs)
    by = {}
    for r in runs:
        ok = bool(r["passed"]) and (budget is None or (r.get("pass_step") is not None
                                                        and r["pass_step"] <= budget))
        by.setdefault(int(r["S"]), {})[float(r["lr"])] = ok
    out = {}
    for S in sorted(by):
        tried = by[S]
        passed = [lr for lr in lrs if tried.get(lr)]
        if passed:
            out[S] = (True, passed[0])
        elif all(lr in tried for lr in lrs):
            out[S] = (False, None)
        else:
            out[S] = (None, None)
    return out


@fill_doc
def next_paper_trial(runs, start, *, lrs=PAPER_LRS, max_sizes=6, step=1):
    """Next ``(S, lr)`` of the paper protocol's lean search on one path, or None when it is done.

    Parameters
    ----------
    runs : iterable of dict
        The path's runs so far (see :func:`size_outcomes`).
    start : int
        First size (near the expected capacity).
    lrs : sequence of float
        Learning rates, tried in this order at each size.
    max_sizes : int
        Most sizes on one path.
    step : int
        Sizes per move while only passes (failures) are known.

    Returns
    -------
    tuple or None
        ``(S, lr)``: the next untried rate of a pending size; else, with only
        passes (failures) known, the size ``step`` above the largest pass
        (below the smallest failure, not below 1); once bracketed, the
        midpoint; None once the largest pass and the smallest failure are
        adjacent (or inverted), or after ``max_sizes`` sizes.

    See Also
    --------
    validation.factual_recall.search.size_outcomes : The outcome of every size tried.
    validation.factual_recall.trials.paper_protocol_trial : The trial it schedules.

    Notes
    -----
    Started at the expected capacity, the search needs two sizes (one pass
    and one failure); a failure costs every rate at the full budget, so the
    walk moves by ``step`` sizes and then bisects, rather than bisecting a
    wide bracket as the paper's code does.  Both give the largest passed size
    with its successor failing.

    %(ref_papers_protocol_paper)s

    Examples
    --------
    >>> run = lambda S, lr, ok: dict(S=S, lr=lr, passed=ok, pass_step=128 if ok else None)
    >>> next_paper_trial([], 13), next_paper_trial([run(13, 0.01, False)], 13)
    ((13, 0.01), (13, 0.003))
    >>> next_paper_trial([run(13, 0.01, True)], 13)
    (14, 0.01)
    >>> fails = [run(14, lr, False) for lr in PAPER_LRS]
    >>> next_paper_trial([run(13, 0.01, True)] + fails, 13) is None
    True
    >>> next_paper_trial(fails, 14, step=2), next_paper_trial(fails + [run(12, 0.01, True)], 14)
    ((12, 0.01), (13, 0.01))
    """
    start = check_int("start", start, low=1)
    lrs = tuple(float(x) for x in lrs)
    runs = list(runs)
    out = size_outcomes(runs, lrs)
    if not out:
        return start, lrs[0]
    for S, (ok, _) in out.items():
        if ok is None:
            tried = {float(r["lr"]) for r in runs if int(r["S"]) == S}
            return S, next(lr for lr in lrs if lr not in tried)
    if len(out) >= max_sizes:
        return None
    good = [S for S, (ok, _) in out.items() if ok]
    bad = [S for S, (ok, _) in out.items() if not ok]
    step = check_int("step", step, low=1)
    if not bad:
        return max(good) + step, lrs[0]
    if not good:
        return (max(1, min(bad) - step), lrs[0]) if min(bad) > 1 else None
    lo, hi = max(good), min(bad)
    return ((lo + hi) // 2, lrs[0]) if hi - lo > 1 else None


@fill_doc(record_links=returned_by(
    "validation.factual_recall.search.largest_passed",
    "arXiv:2412.06538; docs/factual_recall.md#the-papers-protocol-against-the-papers-code"))
@dataclass(frozen=True)
class LargestPassed(Result):
    """The paper's criterion on one path: the largest size that passed.

    Parameters
    ----------
    S : int or None
        Largest size :math:`S = R` that passed (None if none did).
    facts : int or None
        :math:`S R` at that size.
    bracketed : bool
        Whether the next size was tried with every rate and failed (the
        criterion is then resolved to one size).
    monotone : bool
        Whether every passed size lies below every failed one.
    lr : float or None
        First rate (in the search's order) that passed at ``S``.
    pass_step : int or None
        Step of the first check at 99 % of that run.
    sizes : dict
        ``S -> True / False / None`` for every size tried.

    %(record_links)s
    """

    S: object
    facts: object
    bracketed: bool
    monotone: bool
    lr: object
    pass_step: object
    sizes: dict

    def to_dict(self):
        d = super().to_dict()
        d["sizes"] = {str(k): v for k, v in self.sizes.items()}
        return d


@fill_doc
def largest_passed(runs, lrs=PAPER_LRS, budget=None):
    """Apply the paper's criterion to the runs of one path (any rate passing makes a size pass).

    Parameters
    ----------
    runs : iterable of dict
        Runs with ``S``, ``R`` (optional, default ``S``), ``lr``, ``passed``, ``pass_step``.
    lrs : sequence of float
        The rates every size must try before it fails.
    budget : int, optional
        Apply the criterion under a smaller step budget (see :func:`size_outcomes`).

    Returns
    -------
    LargestPassed
        The largest passed size, whether its successor failed, and the sizes.

    See Also
    --------
    validation.factual_recall.search.size_outcomes : The outcome of every size.
    validation.factual_recall.fits.search_criterion : The same criterion on binary-search trials.

    %(ref_papers_protocol_paper)s

    Examples
    --------
    >>> runs = [dict(S=13, lr=0.01, passed=True, pass_step=1664)]
    >>> runs += [dict(S=14, lr=lr, passed=False, pass_step=None) for lr in PAPER_LRS]
    >>> r = largest_passed(runs)
    >>> r.S, r.facts, r.bracketed, r.lr
    (13, 169, True, 0.01)
    >>> largest_passed(runs, budget=1024).S is None
    True
    """
    runs = list(runs)
    out = size_outcomes(runs, lrs, budget)
    good = [S for S, (ok, _) in out.items() if ok]
    bad = [S for S, (ok, _) in out.items() if ok is False]
    if not good:
        return LargestPassed(None, None, False, not good or not bad or max(good) < min(bad),
                             None, None, {S: ok for S, (ok, _) in out.items()})
    S = max(good)
    lr = out[S][1]
    run = next(r for r in runs if int(r["S"]) == S and float(r["lr"]) == lr)
    R = int(run.get("R", S))
    return LargestPassed(S, S * R, out.get(S + 1, (None,))[0] is False,
                         not bad or max(good) < min(bad), lr, run.get("pass_step"),
                         {k: ok for k, (ok, _) in out.items()})


@fill_doc(record_links=returned_by(
    "validation.factual_recall.search.paper_code_comparison",
    "arXiv:2412.06538; docs/factual_recall.md#the-papers-protocol-against-the-papers-code"))
@dataclass(frozen=True)
class PaperCodeRow(TransformerShape):
    """One shape of the comparison with the paper's own code (same criterion on both sides).

    Parameters
    ----------
    d, H, d_h, m : int
        Shape.
    params : int
        :math:`4 H d_h d + 2 m d`.
    budget : int or None
        Step budget both sides are read at.
    paper_code : list of LargestPassed
        The paper's code, one entry per seed.
    ours : list of LargestPassed
        Our model and protocol, one entry per seed.
    paper_code_S, ours_S : list
        The largest passed sizes at ``budget`` (None where none passed or the
        outcome is pending).
    paper_code_full : list of LargestPassed
        The paper code at the budget its runs had, one entry per seed.
    paper_code_full_S : list
        Its largest passed sizes.
    within_paper_range : bool or None
        Whether every size of ours lies within ``[min, max]`` of the paper
        code's resolved sizes widened by one size on each side (the step of
        the criterion); None when a side has no resolved size.

    %(record_links)s
    """

    budget: object
    paper_code: list
    ours: list
    paper_code_S: list
    ours_S: list
    paper_code_full: list
    paper_code_full_S: list
    within_paper_range: object


@fill_doc
def paper_code_comparison(shapes, budgets=None):
    """Put the paper code's largest-passed sizes next to ours, shape by shape.

    Parameters
    ----------
    shapes : iterable of tuple
        ``((d, H, d_h, m), paper_runs, our_runs)`` with ``paper_runs`` and
        ``our_runs`` lists of per-seed run lists (see :func:`largest_passed`).
    budgets : sequence of int, optional
        Step budget of the criterion per shape (both sides read at it; None:
        the runs as they are).

    Returns
    -------
    list of PaperCodeRow
        One row per shape.

    See Also
    --------
    validation.factual_recall.search.largest_passed : Our side of the comparison.

    Notes
    -----
    The same function (:func:`largest_passed`) turns both sides' runs into
    sizes, so the criterion is the same by construction.  A side's resolved
    sizes are those with a passed size whose successor failed
    (``bracketed``).

    %(ref_papers_protocol_paper)s

    Examples
    --------
    >>> ok = lambda S: [dict(S=S, lr=0.01, passed=True, pass_step=128)] + [
    ...     dict(S=S + 1, lr=lr, passed=False, pass_step=None) for lr in PAPER_LRS]
    >>> row = paper_code_comparison([((16, 8, 2, 16), [ok(13)], [ok(12), ok(14)])])[0]
    >>> row.paper_code_S, row.ours_S, row.within_paper_range
    ([13], [12, 14], True)
    """
    rows = []
    shapes = list(shapes)
    budgets = [None] * len(shapes) if budgets is None else list(budgets)
    for ((d, H, d_h, m), paper_runs, our_runs), budget in zip(shapes, budgets):
        pc = [largest_passed(r, budget=budget) for r in paper_runs]
        full = [largest_passed(r) for r in paper_runs]
        us = [largest_passed(r, budget=budget) for r in our_runs]
        ps = [x.S for x in pc if x.bracketed]
        os_ = [x.S for x in us if x.bracketed]
        within = None if not ps or not os_ else all(min(ps) - 1 <= s <= max(ps) + 1 for s in os_)
        rows.append(PaperCodeRow(int(d), int(H), int(d_h), int(m), 4 * H * d_h * d + 2 * m * d,
                                 budget, pc, us, [x.S for x in pc], [x.S for x in us], full,
                                 [x.S for x in full], within))
    return rows
