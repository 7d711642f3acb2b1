r"""Sequential (adaptive) design for a success-probability threshold.

A threshold experiment runs trials at a *load* ``x`` (a control parameter:
facts per parameter, sequence length, ...) whose outcome is success or
failure, and fits :math:`P(\mathrm{success} \mid x)` with a decreasing logistic (an
increasing one with ``increasing=True``, e.g. a number of training samples)
whose 1/2 point is the threshold.  A fixed grid spends most trials at loads where the
outcome is nearly certain and carries almost no information about the 1/2
point.  :func:`adaptive_threshold` instead chooses each new batch of loads
from the current fit: inside the current confidence interval of the
threshold, around the fitted 1/2 point, until the interval is as narrow as
requested or a trial cap is reached.

The module knows no experiment: the caller passes a function that runs a
batch of ``(load, seed)`` trials and the fit.  See
``docs/sweeps.md#adaptive-threshold-design``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from hcizz.results import Result
from validation._docparams import fill_doc

__all__ = ["AdaptiveResult", "adaptive_threshold", "next_loads"]


@fill_doc
@dataclass(frozen=True)
class AdaptiveResult(Result):
    """Outcome of :func:`adaptive_threshold`.

    Parameters
    ----------
    threshold : float
        Fitted 1/2 point of the last fit (NaN if never bracketed).
    ci_low, ci_high : float
        Confidence interval of the last fit (may be infinite).
    loads : list of float
        Load of every trial, in the order run.
    success : list of bool
        Outcome of every trial.
    seeds : list of int
        Seed of every trial.
    history : list of dict
        One entry per round: ``trials`` (cumulative), ``threshold``, ``ci_low``,
        ``ci_high``, ``loads`` (of the round).
    stop : str
        ``"target"`` (the half-width reached ``target_halfwidth``) or
        ``"max_trials"``.
    fit : object
        The last fit as returned by the caller's ``fit``.

    See Also
    --------
    validation.adaptive.adaptive_threshold : The function that returns it.

    Notes
    -----
    ``conf_int(alpha)`` is the last fit's interval at level ``1 - alpha``,
    ``fit.conf_int(alpha)`` (e.g. :meth:`validation.logistic.ThresholdFit.conf_int`):
    the contract of :meth:`hcizz.results.Result.conf_int`, answered by the fit.

    %(ref_adaptive_threshold_design)s
    """

    threshold: float
    ci_low: float
    ci_high: float
    loads: list
    success: list
    seeds: list
    history: list
    stop: str
    fit: object

    _estimate = "threshold"

    def conf_int(self, alpha=0.05):  # the documented contract of Result.conf_int (class Notes)
        return self.fit.conf_int(alpha)

    @property
    def trials(self):
        """Number of trials run."""
        return len(self.loads)

    @property
    def halfwidth(self):
        """Half-width ``(ci_high - ci_low) / 2`` of the last interval."""
        return (self.ci_high - self.ci_low) / 2

    def to_dict(self):
        """The fields as plain values.

        Returns
        -------
        dict
            The fields, ``trials``, and the fit as its ``to_dict()`` when it has one.
        """
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["fit"] = self.fit.to_dict() if hasattr(self.fit, "to_dict") else self.fit
        out["trials"] = self.trials
        return out


@fill_doc
def next_loads(fit, loads, success, *, batch, step, lower=0.0, min_spread=0.0, increasing=False):
    r"""The next batch of loads given the current data and fit.

    Parameters
    ----------
    fit : object
        Fit of the data with attributes ``threshold``, ``width``, ``ci_low``,
        ``ci_high`` (e.g. :class:`validation.logistic.ThresholdFit`).
    loads, success : sequence
        Loads and outcomes so far (at least one trial).
    batch : int
        Number of loads to return (>= 1).
    step : float
        Step (> 0) used to walk out of an unbracketed region.
    lower : float
        Smallest admissible load.
    min_spread : float
        Smallest spread ``s`` (below).
    increasing : bool
        False (default): success is likely at small loads (a capacity);
        True: at large loads (e.g. a number of training samples).  Only the
        direction of the walk out of an unbracketed region depends on it.

    Returns
    -------
    list of float
        ``batch`` loads (not rounded; the caller snaps them to attainable loads).

    See Also
    --------
    validation.adaptive.adaptive_threshold : The design that uses it.

    Notes
    -----
    * Only successes so far: ``max(loads) + k * step``, ``k = 1..batch``
      (only failures: ``min(loads) - k * step``, kept above ``lower``); with
      ``increasing=True`` the other way round.
    * Otherwise, with fitted 1/2 point ``a`` and width ``w``: the interval
      half-width ``h`` (where the interval is infinite on a side, the distance
      from ``a`` to the farthest load tried on that side, at least ``step``),
      spread :math:`s = \max(\min(\max(h / 2, w), h), \mathrm{min\_spread})` and loads :math:`a + s u`
      with :math:`u` equally spaced in :math:`[-1, 1]` (a batch of two: :math:`u = -1/3, 1/3`,
      the inner pair of a batch of four, so that the interval keeps shrinking on
      a sharp transition; a batch of one: ``u = 0``).
      Trials near the 1/2 point carry the most information on it (Fisher
      information of a logistic location :math:`P (1 - P) / w^2`); the spread
      shrinks with the interval (a stochastic bisection) but not below
      ``min_spread``: in a band much narrower than the true width every
      outcome is a coin flip, a noise-fitted sharp step then pulls the next
      loads into the band, and the profile interval (which cannot identify
      the width there) undercovers.  :func:`adaptive_threshold` uses twice the
      target half-width (simulated coverage: docs/sweeps.md#adaptive-threshold-design).

    %(ref_adaptive_threshold_design)s
    """
    x = np.asarray(loads, float)
    y = np.asarray(success, bool)
    k = np.arange(1, batch + 1)
    if y.all() or not y.any():
        up = bool(y.all()) != bool(increasing)      # walk towards the outcome not yet seen
        if up:
            return [float(v) for v in x.max() + k * step]
        return [float(max(v, lower)) for v in x.min() - k * step]
    a = fit.threshold
    if not math.isfinite(a):
        # both outcomes seen but the fit sits on its search edge: bisect the
        # gap between the largest success and the smallest failure (increasing:
        # the largest failure and the smallest success)
        a = 0.5 * (x[~y].max() + x[y].min()) if increasing else 0.5 * (x[y].max() + x[~y].min())
    lo = fit.ci_low if math.isfinite(fit.ci_low) else a - max(a - x.min(), step)
    hi = fit.ci_high if math.isfinite(fit.ci_high) else a + max(x.max() - a, step)
    h = max(0.5 * (hi - lo), 1e-12)
    w = fit.width if math.isfinite(fit.width) else h
    s = max(min(max(h / 2, w), h), min_spread)
    u = np.linspace(-1.0, 1.0, batch) if batch > 2 else np.array([-1 / 3, 1 / 3][:batch]) if batch == 2 \
        else np.zeros(1)
    return [float(max(v, lower)) for v in a + s * u]


@fill_doc
def adaptive_threshold(run, fit, start, *, target_halfwidth, max_trials, batch=2, seed0=0,
                       step=None, snap=None, lower=0.0, min_trials=None, confirm=1, increasing=False):
    """Measure a threshold by a sequential design around the current fit.

    Parameters
    ----------
    run : callable
        ``run(loads, seeds) -> (loads_actual, success)``: runs one trial per
        ``(load, seed)`` pair and returns the loads actually used and the
        outcomes (bool).  Called once per round; it may run the batch in
        parallel and reuse stored trials.
    fit : callable
        ``fit(loads, success)`` returning an object with ``threshold``,
        ``width``, ``ci_low``, ``ci_high`` (e.g.
        :func:`validation.logistic.fit_threshold`).
    start : sequence of float
        First round of loads (a coarse bracket around the expected threshold).
    target_halfwidth : float
        Stop once ``(ci_high - ci_low) / 2 <= target_halfwidth`` (> 0).
    max_trials : int
        Stop once this many trials have been run (the last round is cut to fit).
    batch : int
        Loads per round after the first (e.g. the number of workers).
    seed0 : int
        Trial ``i`` (in the order run) gets seed ``seed0 + i``.
    step : float, optional
        Step of the walk out of an unbracketed region; default the spacing
        of ``start`` (or 10 % of its value for a single load).
    snap : callable, optional
        Maps a load to an attainable load (e.g. integer ``p``).
    lower : float
        Smallest admissible load.
    min_trials : int, optional
        Do not stop on the target before this many trials (default
        ``len(start) + 2 * batch``).
    confirm : int
        Stop on the target only when it was also met by the fits of the
        ``confirm`` previous rounds (>= 0; default 1).
    increasing : bool
        Whether success becomes likely as the load grows (default False: a
        capacity, success below the threshold); passed to :func:`next_loads`.
        The caller's ``fit`` must model the same direction.

    Returns
    -------
    AdaptiveResult
        Last fit, every trial's load, outcome and seed, the per-round history and
        why it stopped.

    Raises
    ------
    ValueError
        ``target_halfwidth <= 0``, ``max_trials < 1``, ``batch < 1`` or an
        empty ``start``.

    See Also
    --------
    validation.adaptive.next_loads : The rule for the next loads.
    validation.logistic.fit_threshold : A fit to pass as ``fit``.

    Notes
    -----
    The design is a deterministic function of the outcomes, so with
    deterministic trials (seeded) a rerun follows the same path; with a
    resumable trial store it recomputes nothing.  Seeds are used once each, so
    a comparison with a fixed grid "on the same seeds" gives both designs the
    same pool of fact sets.  The interval of the stopping rule is the caller's
    fit's; for a profile-likelihood interval it stays infinite until
    successes and failures overlap enough to bound the width, so the rule
    does not stop on a lucky separated sample.  Rule for the loads:
    :func:`next_loads`.

    %(ref_adaptive_threshold_design)s

    Examples
    --------
    >>> import numpy as np
    >>> from validation.adaptive import adaptive_threshold
    >>> from validation.logistic import fit_threshold
    >>> def run(loads, seeds):          # a noiseless step at 0.7
    ...     return loads, [x < 0.7 for x in loads]
    >>> r = adaptive_threshold(run, fit_threshold, [0.5, 0.9], target_halfwidth=0.02,
    ...                        max_trials=40)
    >>> print(f"{r.threshold:.3f}", r.stop)
    0.701 target
    """
    from hcizz.checks import check_int, check_real

    check_real("target_halfwidth", target_halfwidth, low=0, low_open=True, allow_array=False)
    max_trials = check_int("max_trials", max_trials, low=1)
    batch = check_int("batch", batch, low=1)
    start = [float(v) for v in start]
    if not start:
        raise ValueError("start must hold at least one load, got []")
    if step is None:
        s = sorted(start)
        step = (s[-1] - s[0]) / (len(s) - 1) if len(s) > 1 and s[-1] > s[0] else 0.1 * abs(s[0])
    step = check_real("step", step, low=0, low_open=True, allow_array=False)
    min_trials = len(start) + 2 * batch if min_trials is None else check_int("min_trials", min_trials, low=1)
    confirm = check_int("confirm", confirm, low=0)
    snap = snap or (lambda v: v)
    loads, success, seeds, history = [], [], [], []
    todo = start
    f = None
    streak = 0
    stop = "max_trials"
    while len(loads) < max_trials:
        todo = [snap(v) for v in todo[:max_trials - len(loads)]]
        sd = [seed0 + len(loads) + i for i in range(len(todo))]
        got, ok = run(todo, sd)
        loads += [float(v) for v in got]
        success += [bool(v) for v in ok]
        seeds += sd
        f = fit(loads, success)
        history.append({"trials": len(loads), "threshold": float(f.threshold), "ci_low": float(f.ci_low),
                        "ci_high": float(f.ci_high), "loads": [float(v) for v in got]})
        met = (f.ci_high - f.ci_low) / 2 <= target_halfwidth
        streak = streak + 1 if met else 0
        if len(loads) >= min_trials and streak > confirm:
            stop = "target"
            break
        todo = next_loads(f, loads, success, batch=batch, step=step, lower=lower,
                          min_spread=2 * target_halfwidth, increasing=increasing)
    return AdaptiveResult(threshold=float(f.threshold), ci_low=float(f.ci_low), ci_high=float(f.ci_high),
                          loads=loads, success=success, seeds=seeds, history=history, stop=stop, fit=f)
