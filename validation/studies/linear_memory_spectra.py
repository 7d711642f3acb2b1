"""Finite-size study of trained spectra against the (truncated) quarter circle.

One study, ``linear_memory.spectra``.  For rank fraction ``kappa`` (1: full
rank from zero initialisation; < 1: the two-layer memory with its default
N(0, 1) initialisation), dimension ``d`` and load fraction ``f`` of the
finite-``p`` capacity, OP memories of several seeds are trained to their first
full recall (:func:`validation.linear_memory.spectra.spectrum_trial`, default
preset) and the top ``m = round(kappa d)`` singular values of the successful
ones pooled, each instance scaled by its own second-moment match to the law.
The summary (:func:`summarise_rows`) reports the pooled KS distance and edge
next to their Gaussian calibration
(:func:`validation.linear_memory.spectra.gaussian_calibration`), and
:func:`extrapolation` fits the KS excess and the edge gap against ``1/d`` and
``1/ln p`` (:func:`validation.linear_memory.spectra.extrapolate`, errors by a
bootstrap over instances).  Regenerate or extend::

    nice -n 10 python -m validation study linear_memory.spectra --workers 2

Notes
-----
The plan (:data:`PLAN`, in the order it was run): the main protocol at
``d`` = 20, 40, 80 (load fractions 0.6, 0.8, 1.0 of the capacity, 8 seeds);
the same instances trained 2048 steps past their first recall at ``d`` = 20,
40 (fractions 0.8, 1.0); ``d`` = 150 with Adam rate
:data:`validation.studies.linear_memory_d150.LR` (0.01), where the preset's 0.1
fails -- the capacity load at ``kappa`` = 0.5 with 4 seeds only (each trial
costs the whole budget there); the rate-0.01 control at ``d`` = 80 (same
instances as the rate-0.1 rows); and 0.9 of the capacity at every ``d``
(``kappa < 1``).  From ``d`` = :data:`LARGE_D` on the rate is a parameter of
the trial; below it the parameter is absent unless given, so the keys of the
first runs are those of the preset.  The report's quick mode uses
``config="quick"``: the main rows and the continued training of ``d`` = 20
only; every other row, and the extrapolation, is read from the store in both
configurations.

Docs: ``docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration``.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.spectra import (bootstrap_instances, extrapolate, gaussian_calibration,
                                              ks_edge_instance, ks_edge_statistic, law_of, pooled_ks,
                                              scaled_values, spectrum_trial)

from .base import Option, Study, fill_doc, is_ok
from .linear_memory_d150 import LR

__all__ = ["KAPPAS", "FRACS", "LARGE_D", "PLAN", "CONFIGS", "study_params", "summarise_rows", "extrapolation",
           "main_protocol", "SpectraSummary", "STUDIES"]

KAPPAS = (1.0, 0.5, 0.25)
FRACS = (0.6, 0.8, 1.0)
#: From this ``d`` on the trials use Adam rate :data:`validation.studies.linear_memory_d150.LR`.
LARGE_D = 100
#: The study, in the order it was run: ``study_params`` keyword arguments of each part.
PLAN = (dict(ds=(20, 40, 80)),
        dict(ds=(20, 40), fracs=(0.8, 1.0), extra_steps=2048),
        dict(ds=(150,), kappas=(1.0,), fracs=(0.6, 0.8)),
        dict(ds=(150,), kappas=(0.5, 0.25), fracs=(0.6, 0.8)),
        dict(ds=(150,), kappas=(0.25,), fracs=(1.0,)),
        dict(ds=(150,), kappas=(0.5,), fracs=(1.0,), seeds=4),
        dict(ds=(80,), kappas=(0.5, 0.25), lr=0.01),
        dict(ds=(20, 40, 80, 150), kappas=(0.5, 0.25), fracs=(0.9,)))
#: Per configuration: the ``d`` of the main rows and of the continued-training rows.
CONFIGS = {"full": {"ds": (20, 40, 80), "ds_continued": (20, 40)},
           "quick": {"ds": (20,), "ds_continued": (20,)}}
#: Continued-training rows: load fractions and steps past the first recall.
CONTINUED = {"fracs": (0.8, 1.0), "extra_steps": 2048}


@fill_doc
def study_params(ds, kappas=KAPPAS, fracs=FRACS, seeds=8, extra_steps=None, lr=None):
    """List the trial parameters of the spectra study.

    Parameters
    ----------
    ds : sequence of int
        Dimensions.
    kappas : sequence of float
        Rank ratios (1: full rank).
    fracs : sequence of float
        Loads as fractions of the finite-``p`` capacity at each ``d``.
    seeds : int
        Trials per ``(d, kappa, frac)``.
    extra_steps : int, optional
        Continue training that long after the first full recall.
    lr : float, optional
        Adam learning rate of every trial.  Default: the preset's (no ``lr``
        key, so the keys of earlier trials are unchanged) for ``d <`` :data:`LARGE_D`,
        :data:`validation.studies.linear_memory_d150.LR` from :data:`LARGE_D` on.

    Returns
    -------
    list of dict
        :func:`~validation.linear_memory.spectra.spectrum_trial` parameters.

    Raises
    ------
    ValueError
        ``d < 4``, ``kappa`` outside (0, 1], ``frac`` outside (0, 1.5],
        ``seeds < 1``, ``extra_steps < 0`` or ``lr <= 0`` (checked before any
        trial is run or stored).

    %(ref_spectra_study)s

    Examples
    --------
    >>> [sorted(q) for q in study_params([20, 150], kappas=[0.5], fracs=[1.0], seeds=1)]
    [['d', 'frac', 'kappa', 'kind', 'seed'], ['d', 'frac', 'kappa', 'kind', 'lr', 'seed']]
    """
    from hcizz.checks import check_int, check_real

    ds = [check_int("d", d, low=4) for d in ds]
    kappas = [check_real("kappa", k, low=0.0, high=1.0, low_open=True, allow_array=False) for k in kappas]
    fracs = [check_real("frac", f, low=0.0, high=1.5, low_open=True, allow_array=False) for f in fracs]
    seeds = check_int("seeds", seeds, low=1)
    if extra_steps is not None:
        extra_steps = check_int("extra_steps", extra_steps, low=0)
    if lr is not None:
        lr = check_real("lr", lr, low=0.0, low_open=True, allow_array=False)
    out = [{"kind": "spectra_study", "d": int(d), "kappa": float(k), "frac": float(f), "seed": int(s)}
           for d in ds for k in kappas for f in fracs for s in range(seeds)]
    for p in out:
        if extra_steps:
            p["extra_steps"] = int(extra_steps)
        if lr is not None:
            p["lr"] = float(lr)
        elif p["d"] >= LARGE_D:
            p["lr"] = float(LR)
    return out


@fill_doc
def summarise_rows(results):
    """Summarise the spectra study, one row per ``(kappa, d, frac, extra_steps)``.

    Parameters
    ----------
    results : list of dict
        :func:`~validation.linear_memory.spectra.spectrum_trial` results, each with its ``d``, ``kappa`` and ``frac``
        (and ``extra_steps``, ``lr`` where set).

    Returns
    -------
    list of dict
        Table rows (plain dicts), one per ``(kappa, d, frac, extra_steps, lr)``
        (``lr`` 0.1 where the preset's): pooled KS distance and edge against the
        (truncated) quarter circle, their Gaussian calibration
        (:func:`~validation.linear_memory.spectra.gaussian_calibration`), the
        predicted edge, margins.

    %(ref_spectra_study)s
    """
    from hcizz.quarter_circle import qc_quantile
    from validation.linear_memory.models import lowrank_m
    from validation.linear_memory.train import PRESETS

    groups = {}
    for r in results:
        lr = r.get("lr")
        groups.setdefault((r["kappa"], r["d"], r["frac"], r.get("extra_steps", 0),
                           PRESETS["default"].lr if lr is None else float(lr)), []).append(r)
    rows = []
    for (k, d, f, ex, lr), rr in sorted(groups.items(),
                                        key=lambda t: (-t[0][0], t[0][1], t[0][2], t[0][3], -t[0][4])):
        ok = [r for r in rr if r["success"]]
        m = lowrank_m(d, k)
        row = {"kappa": k, "d": d, "load_fraction": f, "extra_steps": ex, "lr": lr, "m": m, "instances": len(ok),
               "trials": len(rr),
               "margin_first_mean": (float(np.mean([r["margin_first"] for r in ok]))
                                     if ok and "margin_first" in ok[0] else None),
               "margin_trace_mean": (np.mean([r["margin_trace"] for r in ok], axis=0).tolist()
                                     if ok and "margin_trace" in ok[0] else None),
               "load": float(np.mean([r["load"] for r in rr])), "p": float(np.mean([r["p"] for r in rr])),
               "edge_theory": float(qc_quantile(1 - m / d)) if m < d else None,
               "margin_mean": float(np.mean([r["margin"] for r in ok])) if ok else None}
        if ok:
            ks, edge, n = pooled_ks([r["sv"] for r in ok], m / d)
            cal = gaussian_calibration(d, m, len(ok), rng=1000 * d + m)
            row.update(ks=ks, ks_calibration=cal["ks_mean"], ks_calibration_sd=cal["ks_sd"],
                       edge=edge if m < d else None,
                       edge_calibration=cal["edge_mean"] if m < d else None, n_values=n)
        else:
            row.update(ks=None, ks_calibration=None, ks_calibration_sd=None, edge=None,
                       edge_calibration=None, n_values=0)
        rows.append(row)
    return rows


@fill_doc
def main_protocol(r):
    """Return whether a trial follows the main protocol.

    Parameters
    ----------
    r : dict
        A trial's parameters (``d``, optional ``lr`` and ``extra_steps``).

    Returns
    -------
    bool
        Stopped at first recall, with the preset's rate below :data:`LARGE_D`
        and :data:`validation.studies.linear_memory_d150.LR` from it on (the
        defaults of :func:`study_params`).

    %(ref_spectra_study)s
    """
    lr = r.get("lr")
    return (not r.get("extra_steps")) and (lr is None if r["d"] < LARGE_D else lr == LR)


@fill_doc
def extrapolation(results, rows=None, *, boot=200, rng=0, min_sizes=3):
    """Extrapolate the pooled KS excess and the edge gap to ``d = inf``, in ``1/d`` and ``1/ln p``.

    Parameters
    ----------
    results : list of dict
        :func:`~validation.linear_memory.spectra.spectrum_trial` results with
        ``d``, ``kappa``, ``frac`` (and ``extra_steps``, ``lr``); only the main protocol
        (stop at first recall; lr of :func:`study_params`'s default) is used.
    rows : list of dict, optional
        :func:`summarise_rows` of ``results`` (computed if not given): the
        calibrations.
    boot : int
        Bootstrap replicates over instances.
    rng : int
        Seed of the bootstrap.
    min_sizes : int
        Fit a ``(kappa, frac)`` only with this many sizes having >= 2 recalled
        instances (>= 3).

    Returns
    -------
    list of dict
        One entry per ``(kappa, load_fraction, quantity, variable, sizes)``:
        ``quantity`` ``"ks_excess"`` (pooled KS minus its Gaussian calibration
        mean) or ``"edge_gap"`` (calibration edge minus trained edge; low rank
        only), ``variable`` ``"1/d"`` or ``"1/ln p"``, ``sizes`` the ``d`` used
        (all, and without the smallest), and the fields of
        :class:`~validation.linear_memory.spectra.LineFit` (its ``to_dict()``); a
        perfect match has intercept 0 for both quantities.

    Notes
    -----
    Both quantities are differences to what Gaussian matrices (whose limit is
    exactly the law) show at the same ``d`` and number of pooled instances, so
    the finite-``d`` bias of the statistic itself is removed; their limits at
    ``d = inf`` are the KS distance and the edge distance of the limiting
    trained spectrum to the law.  Errors:
    :func:`~validation.linear_memory.spectra.bootstrap_instances` over the
    recalled instances of each ``(kappa, d, frac)`` (one seed for all), plus the
    calibration's Monte Carlo error ``sd / sqrt(reps)``.

    %(ref_spectra_study)s
    """
    if int(min_sizes) < 3:
        raise ValueError(f"min_sizes must be >= 3, got {min_sizes!r}")
    from validation.linear_memory.models import lowrank_m
    from validation.linear_memory.train import PRESETS

    main = [r for r in results if main_protocol(r)]
    rows = summarise_rows(main) if rows is None else rows

    cal = {(r["kappa"], r["d"], r["load_fraction"]): r for r in rows
           if not r["extra_steps"] and r["lr"] == (PRESETS["default"].lr if r["d"] < LARGE_D else LR)}

    out = []
    for k, f in sorted({(r["kappa"], r["frac"]) for r in main}, key=lambda t: (-t[0], t[1])):
        ds = sorted({r["d"] for r in main if r["kappa"] == k and r["frac"] == f})
        groups, use = [], []
        for d in ds:
            ok = [r for r in main if r["kappa"] == k and r["frac"] == f and r["d"] == d and r["success"]]
            if len(ok) >= 2 and (k, d, f) in cal:
                m = lowrank_m(d, k)
                groups.append([ks_edge_instance(r["sv"], m / d) for r in ok])
                use.append(d)
        if len(use) < int(min_sizes):
            continue
        vals, reps = bootstrap_instances(groups, ks_edge_statistic, boot=boot, rng=rng)
        cr = [cal[(k, d, f)] for d in use]
        ks_cal = np.array([c["ks_calibration"] for c in cr])
        ks_cal_se = np.array([c["ks_calibration_sd"] for c in cr]) / math.sqrt(40)
        quantities = {"ks_excess": (vals[:, 0] - ks_cal, reps[:, :, 0] - ks_cal, ks_cal_se)}
        if k < 1:
            e_cal = np.array([c["edge_calibration"] for c in cr])
            quantities["edge_gap"] = (e_cal - vals[:, 1], e_cal - reps[:, :, 1], np.zeros(len(use)))
        xs = {"1/d": 1.0 / np.array(use, float),
              "1/ln p": 1.0 / np.log([c["p"] for c in cr])}
        subsets = [tuple(range(len(use)))] + ([tuple(range(1, len(use)))] if len(use) > int(min_sizes) else [])
        for qn, (y, yr, se) in quantities.items():
            for vn, x in xs.items():
                for sub in subsets:
                    i = list(sub)
                    fit = extrapolate(x[i], y[i], yr[:, i], offset_se=se[i])
                    out.append({"kappa": k, "load_fraction": f, "quantity": qn, "variable": vn,
                                "sizes": [use[j] for j in i], "boot": int(boot), **fit.to_dict()})
    return out


def _with_params(q, rec):
    return {**rec["result"], "d": q["d"], "kappa": q["kappa"], "frac": q["frac"], "seed": q["seed"],
            "extra_steps": q.get("extra_steps", 0), "lr": q.get("lr")}


def _store_order(r):
    return (r["d"], -r["kappa"], r["frac"], r["extra_steps"], -1.0 if r["lr"] is None else r["lr"], r["seed"])


@fill_doc
@dataclass(frozen=True)
class SpectraSummary(Result):
    """Summary of ``linear_memory.spectra``; the statistics are computed when first read.

    Parameters
    ----------
    own : list of dict
        Results of the configuration's own rows (main and continued training),
        each with its parameters.
    stored : list of dict
        Every result (own rows and the rest of the plan), in store order.
    trials, reused : int
        Trials of the configuration's own rows and how many of them were found
        in the store.

    Attributes
    ----------
    rows : list of dict
        :func:`summarise_rows` of the configuration's main rows, the ``d >=``
        :data:`LARGE_D` rows, the rate control and the 0.9 x capacity rows.
    rows_continued : list of dict
        :func:`summarise_rows` of the continued-training rows.
    main_rows : list of dict
        :func:`summarise_rows` of every main-protocol trial (all sizes).
    extrapolation : list of dict
        :func:`extrapolation` of every main-protocol trial (200 bootstrap
        replicates, seed 0).
    panels : list of dict
        One per ``(d, kappa)`` of the main rows and the ``d >= LARGE_D`` rows: the
        largest load fraction with at least two recalled instances (else the
        largest recalled one) -- ``d``, ``kappa``, ``frac``, ``lr``, ``m``,
        ``instances`` and ``values`` (the pooled, scaled singular values), for
        the histogram figure.
    verdicts : list of dict
        Per extrapolation entry: ``kappa``, ``load_fraction``, ``quantity``,
        ``variable``, ``sizes``, ``zero_inside`` (0 in its 95% interval) and
        ``line_rejected`` (``chi2 / dof > 4``).
    stored_large_d, lr_control, stored_near_capacity : list of dict
        The results of the ``d >= LARGE_D`` rows, the rate control and the
        0.9 x capacity rows below ``LARGE_D``.

    Notes
    -----
    The Gaussian calibrations and the bootstrap take a minute or more for the
    whole plan, so a replay that only checks the store does not pay for them:
    the attributes are computed on first access and kept; ``to_dict()``
    includes the tables.

    %(ref_spectra_study)s
    """

    own: list
    stored: list
    trials: int
    reused: int

    @functools.cached_property
    def stored_large_d(self):
        """Results with ``d >= LARGE_D``."""
        return [r for r in self.stored if r["d"] >= LARGE_D]

    @functools.cached_property
    def lr_control(self):
        """Results of the rate control below ``LARGE_D``."""
        return [r for r in self.stored if r["d"] < LARGE_D and r["lr"] is not None and not r["extra_steps"]]

    @functools.cached_property
    def stored_near_capacity(self):
        """Main-protocol results below ``LARGE_D`` at load fractions outside :data:`FRACS`."""
        return [r for r in self.stored if r["d"] < LARGE_D and main_protocol(r) and r["frac"] not in FRACS]

    @functools.cached_property
    def rows(self):
        """:func:`summarise_rows` of the own main rows and the stored-only rows."""
        res = [r for r in self.own if not r["extra_steps"]]
        return summarise_rows(res + self.stored_large_d + self.lr_control + self.stored_near_capacity)

    @functools.cached_property
    def rows_continued(self):
        """:func:`summarise_rows` of the own continued-training rows."""
        return summarise_rows([r for r in self.own if r["extra_steps"]])

    @functools.cached_property
    def main_rows(self):
        """:func:`summarise_rows` of every main-protocol trial."""
        return summarise_rows([r for r in self.stored if main_protocol(r)])

    @functools.cached_property
    def extrapolation(self):
        """:func:`extrapolation` of every main-protocol trial (200 replicates, seed 0)."""
        return extrapolation([r for r in self.stored if main_protocol(r)], self.main_rows, boot=200, rng=0)

    @functools.cached_property
    def panels(self):
        """The histogram panels (see the class notes)."""
        return _panels([r for r in self.own if not r["extra_steps"]] + self.stored_large_d)

    @functools.cached_property
    def verdicts(self):
        """Whether 0 is in each intercept's interval and whether its line fits."""
        return _verdicts(self.extrapolation)

    def to_dict(self):
        """Return the counts and the tables (``rows``, ``rows_continued``, ``main_rows``, ``extrapolation``, ``verdicts``).

        Returns
        -------
        dict
            Plain values.
        """
        return {"trials": self.trials, "reused": self.reused, "rows": self.rows,
                "rows_continued": self.rows_continued, "main_rows": self.main_rows,
                "extrapolation": self.extrapolation, "verdicts": self.verdicts,
                "stored_large_d_trials": len(self.stored_large_d), "lr_control_trials": len(self.lr_control),
                "stored_near_capacity_trials": len(self.stored_near_capacity)}

    def summary(self):
        """Return one line per row and extrapolation.

        Returns
        -------
        str
            Pooled KS against its calibration per row, then the d = inf intercepts (computes them).
        """
        lines = [f"kappa={r['kappa']:g} d={r['d']} load {r['load_fraction']:g} lr {r['lr']:g}: "
                 f"{r['instances']}/{r['trials']} recalled, KS "
                 + ("-" if r["ks"] is None else f"{r['ks']:.3f} (calibration {r['ks_calibration']:.3f})")
                 for r in self.rows]
        lines += [f"d = inf, kappa={e['kappa']:g} load {e['load_fraction']:g} {e['quantity']} in {e['variable']} "
                  f"(d = {','.join(map(str, e['sizes']))}): {e['intercept']:.3f} "
                  f"[{e['intercept_ci'][0]:.3f}, {e['intercept_ci'][1]:.3f}]" for e in self.extrapolation]
        return "\n".join(lines)


def _panels(res):
    out = []
    for d in sorted({x["d"] for x in res}):
        for k in KAPPAS:
            ok = [x for x in res if x["d"] == d and x["kappa"] == k and x["success"] and not x.get("extra_steps")]
            if not ok:
                continue
            counts = {f: sum(x["frac"] == f for x in ok) for f in {x["frac"] for x in ok}}
            fmax = max([f for f, c in counts.items() if c >= 2] or counts)
            rr = [x for x in ok if x["frac"] == fmax]
            m = len(rr[0]["sv"])
            law = law_of(m / d)
            out.append({"d": d, "kappa": k, "frac": fmax, "lr": rr[0].get("lr") or 0.1, "m": m,
                        "instances": len(rr), "values": np.concatenate([scaled_values(x["sv"], law) for x in rr])})
    return out


def _verdicts(extra):
    out = []
    for e in extra:
        lo, hi = e["intercept_ci"]
        out.append({"kappa": e["kappa"], "load_fraction": e["load_fraction"], "quantity": e["quantity"],
                    "variable": e["variable"], "sizes": e["sizes"], "zero_inside": bool(lo <= 0 <= hi),
                    "line_rejected": bool(e["dof"] and e["chi2"] / e["dof"] > 4)})
    return out


@fill_doc
class SpectraStudy(Study):
    """``linear_memory.spectra``: the trials of :data:`~validation.studies.linear_memory_spectra.PLAN`, pooled against the laws (see the module notes).

    %(ref_spectra_study)s
    """

    name = "linear_memory.spectra"
    title = "pooled trained spectra against the (truncated) quarter circle, with a Gaussian calibration"
    trial = spectrum_trial
    docs = "docs/linear_memory.md#spectra-study-pooled-instances-against-a-gaussian-calibration"
    options = (Option("config", "--config", str, "full",
                      "full: main rows at d = 20, 40, 80; quick: d = 20 only (the rest is read in both)",
                      choices=tuple(CONFIGS)),)

    def plan(self, config):
        out, seen = [], set()
        for part in self._own(config) + [q for kw in PLAN for q in study_params(**kw)]:
            k = tuple(sorted(part.items()))
            if k not in seen:
                seen.add(k)
                out.append(part)
        return out

    def _own(self, config):
        c = CONFIGS[config]
        return study_params(c["ds"]) + study_params(c["ds_continued"], **CONTINUED)

    @fill_doc
    def execute(self, runner, config):
        """Run the configuration's own rows, then read (or run) the rest of the plan.

        Parameters
        ----------
        %(runner)s
        config : {"full", "quick"}
            The configuration.

        Returns
        -------
        dict
            ``own`` and ``rest``: lists of ``(params, record)``; ``trials`` and
            ``reused`` of the own rows.
        """
        own = self._own(config)
        recs = runner(own)
        trials, reused = runner.trials, runner.reused
        keys = {tuple(sorted(q.items())) for q in own}
        rest = [q for q in self.plan(config) if tuple(sorted(q.items())) not in keys]
        return {"own": list(zip(own, recs)), "rest": list(zip(rest, runner(rest))), "trials": trials,
                "reused": reused}

    @fill_doc
    def summarise(self, results, config):
        """Rows, continued rows, the extrapolation and the figure panels (see :class:`SpectraSummary`).

        Parameters
        ----------
        %(executed)s
        config : {"full", "quick"}
            The configuration.

        Returns
        -------
        SpectraSummary
            The summary.
        """
        def ok(pairs):
            return [_with_params(q, r) for q, r in pairs if is_ok(r)]

        own = ok(results["own"])
        return SpectraSummary(own=own, stored=sorted(own + ok(results["rest"]), key=_store_order),
                              trials=results["trials"], reused=results["reused"])


STUDIES = (SpectraStudy(),)
