"""The report's capacity sweep: trained thresholds of OP, DP, low-rank and Hebbian memories against theory.

One study, ``linear_memory.capacity``, in two configurations (:data:`CONFIGS`):
``quick`` (the report's quick mode: ``d`` = 20, 30, three seeds, 2048 steps)
and ``full`` (``d`` = 20-60, eight seeds, the default preset's 4096 steps).
Every group ``(model, kappa, d, preset)`` gets a grid of loads around its
predicted threshold (:func:`group_loads`), all groups run in one sweep, then
one extension round adds two loads beyond each end of a grid whose crossing is
not bracketed (:func:`validation.linear_memory.capacity.extension_loads`); the
threshold of each group is the logistic fit of its trials
(:func:`validation.logistic.fit_threshold`) next to the model's prediction
(:func:`validation.linear_memory.registry.prediction`).  The summary also
re-derives the memories of the largest recalled OP and low-rank loads at
``mech_d`` (trials are deterministic) for the mechanism diagnostics
(:func:`mechanism`).  Nothing is committed: both configurations compute on a
store in your folder (``--store``; the report uses its output folder)::

    nice -n 10 python -m validation study linear_memory.capacity --config quick --workers 2

Notes
-----
The grids (:func:`group_loads`) are placement choices, not predictions:
trained models get ``n_loads`` loads in ``[0.75, 1.15]`` times the grid centre
of the model (:func:`validation.linear_memory.capacity.grid_center`), because
loads far above the threshold always fail and each failure costs the whole
step budget (the extension round widens the grid where needed); the ``paper``
preset stops short of the capacity, so its centre is 0.75 times lower; Hebbian
trials cost nothing and at these sizes simulation and Gaussian model differ by
~2x, so they get 12 loads from 0.3 to 4 times the centre.  Quick mode cuts the
default preset's budget to 2048 steps (the budget study in
docs/linear_memory.md: at ``d <= 30`` the threshold moves by < 0.01 between
2048 and 8192 steps).

Docs: ``docs/linear_memory.md#measured-comparison-quick-report``.
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

import numpy as np

from hcizz.results import Result
from validation.linear_memory.capacity import (ThresholdEstimate, capacity_trial, extension_loads, grid_center,
                                               trial_params)
from validation.logistic import fit_threshold
from replica import load_of, p_from_load

from .base import Option, Study, fill_doc, is_ok

__all__ = ["CONFIGS", "group_loads", "row_command", "CapacityRow", "Mechanism", "mechanism", "CapacitySweep",
           "STUDIES"]

#: The two configurations: dimensions, groups ``(model, kappa)``, seeds per load (Hebbian
#: separately), loads per grid, ``paper``-preset groups ``(model, kappa, d)``, the ``d`` of the
#: mechanism diagnostics, worker processes, and the step budget of the default preset
#: (None: the preset's own).
CONFIGS = {
    "quick": {"ds": [20, 30], "groups": [("op", None), ("dp", None), ("lowrank", 0.5), ("hebbian", None)],
              "seeds": 3, "hebbian_seeds": 12, "n_loads": 6, "paper": [("op", None, 20)], "mech_d": 30,
              "workers": 2, "steps": 2048},
    "full": {"ds": [20, 30, 40, 60],
             "groups": [("op", None), ("dp", None), ("lowrank", 0.5), ("lowrank", 0.25), ("hebbian", None)],
             "seeds": 8, "hebbian_seeds": 32, "n_loads": 8,
             "paper": [("op", None, 20), ("op", None, 30), ("dp", None, 30)], "mech_d": 40, "workers": 2,
             "steps": None},
}


@fill_doc
def group_loads(model, kappa, d, cfg, preset, theory):
    """Return the load grid and trial parameters of one group (see the module notes).

    Parameters
    ----------
    model : str
        A registered memory model.
    kappa : float or None
        Rank ratio (low rank).
    %(d)s
    cfg : dict
        A configuration of :data:`CONFIGS`.
    preset : {"default", "paper"}
        Training preset.
    theory : dict
        The model's prediction at ``(d, kappa)``.

    Returns
    -------
    loads : list of float
        Loads of integer ``p``, sorted, unique.
    params : list of dict
        :func:`~validation.linear_memory.capacity.capacity_trial` parameters.

    %(ref_quick_report)s
    """
    heb = model == "hebbian"
    c = grid_center(model, d, kappa, theory)
    if preset == "paper":
        c *= 0.75
    grid = c * np.geomspace(0.3, 4.0, 12) if heb else c * np.linspace(0.75, 1.15, cfg["n_loads"])
    loads = sorted({float(load_of(p_from_load(a, d), d)) for a in grid})
    seeds = range(cfg["hebbian_seeds"] if heb else cfg["seeds"])
    steps = cfg["steps"] if preset == "default" and not heb else None
    return loads, trial_params(model, d, loads, seeds, kappa=kappa, preset=preset, steps=steps)


def row_command(params, loads):
    """Return the ``python -m validation capacity`` command that retrains one group's trials.

    Parameters
    ----------
    params : list of dict
        The group's trial parameters (model, ``d``, ``kappa``, preset, step
        budget and seeds are read from them).
    loads : sequence of float
        The group's final loads (grid plus extension, written as exact floats).

    Returns
    -------
    str
        The command line, with no further extension of the grid.

    Raises
    ------
    ValueError
        If the seeds are not ``0 .. n - 1``.

    References
    ----------
    docs/linear_memory.md#cli
    """
    p0 = params[0]
    seeds = sorted({p["seed"] for p in params})
    if seeds != list(range(len(seeds))):
        raise ValueError(f"seeds must be 0 .. n-1 to be reproducible from the CLI, got {seeds}")
    words = ["python", "-m", "validation", "capacity", "--model", p0["model"], "--d", str(p0["d"])]
    if p0.get("kappa") is not None:
        words += ["--kappa", repr(p0["kappa"])]
    words += ["--seeds", str(len(seeds)), "--alphas", ",".join(repr(float(a)) for a in loads)]
    if p0["preset"] != "default":
        words += ["--preset", p0["preset"]]
    if p0.get("steps") is not None:
        words += ["--steps", str(p0["steps"])]
    words += ["--extend", "0", "--json"]
    return shlex.join(words)


@fill_doc
@dataclass(frozen=True)
class CapacityRow(ThresholdEstimate):
    """The trained threshold of one group against its prediction.

    Parameters
    ----------
    model : str
        The registered model.
    kappa : float or None
        Rank ratio.
    %(d)s
    preset : str
        Training preset.
    threshold : float
        Logistic 1/2 point of the group's trials.
    %(ci)s
    p_at_threshold : int or None
        ``p`` at the threshold load.
    theory, theory_stderr : float
        The prediction and its Monte Carlo error.
    theory_name : str
        What the prediction is.
    kappa_eff : float or None
        Actual ``m / d`` (low rank).
    theory_plain : float or None
        The independent-Gaussian Hebbian model (Hebbian only).
    counts : list
        ``[load, successes, trials]`` rows.
    trials : int
        Trials.
    train_seconds, train_cpu_seconds : float
        Summed trial wall and CPU time.
    mean_steps : float or None
        Mean training steps.
    command : str
        The command that retrains exactly these trials (:func:`row_command`).
    ratio_to_op : float or None
        Low rank: threshold over the OP threshold at the same ``d``.

    %(ref_quick_report)s
    """

    model: str
    kappa: float | None
    d: int
    preset: str
    threshold: float
    ci_low: float
    ci_high: float
    p_at_threshold: int | None
    theory: float | None
    theory_stderr: float | None
    theory_name: str | None
    kappa_eff: float | None
    theory_plain: float | None
    counts: list
    trials: int
    train_seconds: float
    train_cpu_seconds: float
    mean_steps: float | None
    command: str
    ratio_to_op: float | None


@fill_doc
@dataclass(frozen=True)
class Mechanism(Result):
    """Scores and spectra of the memories at the largest recalled loads (:func:`mechanism`).

    Parameters
    ----------
    %(d)s
    scores : dict or None
        OP: ``d``, ``p``, ``load``, ``seed`` and the
        :class:`~validation.linear_memory.mechanism.ScoreSummary` of the trained
        (``trained``) and the Hebbian (``hebbian``) memory of the same facts.
    score_arrays : dict or None
        ``trained`` and ``hebbian``: ``(correct, competitors)`` normalised scores, for figures.
    spectrum_full, spectrum_lowrank : SpectrumComparison or None
        Trained full-rank and low-rank singular values against their laws.
    spectrum_init : InitSpectrum or None
        The low-rank memory at initialisation against ``mp_product``.
    lowrank_m : int or None
        Rank of the low-rank memory.
    spectra_table : list
        ``[name, load, law, KS, n]`` rows.

    %(ref_mechanism)s
    """

    d: int
    scores: dict | None
    score_arrays: dict | None
    spectrum_full: object
    spectrum_lowrank: object
    spectrum_init: object
    lowrank_m: int | None
    spectra_table: list


@fill_doc
def mechanism(by_group, d):
    """Re-derive the memories at the largest recalled OP and low-rank (0.5) loads at ``d``; scores and spectra.

    Parameters
    ----------
    by_group : dict
        ``(model, kappa, d, preset)`` -> trial results (with ``seed``), as in
        ``CapacitySweep.by_group``.
    %(d)s

    Returns
    -------
    Mechanism
        The diagnostics (None parts where the group recalled nothing).

    Notes
    -----
    Trials are deterministic in ``(seed, d, p)``, so the memory of a recorded
    trial is retrained exactly (default preset, its full budget).

    %(ref_mechanism)s
    """
    from validation.linear_memory.data import make_facts, trial_rngs
    from validation.linear_memory.mechanism import (init_spectrum_vs_mp_product, normalized_scores, score_summary,
                                                    spectrum_vs_quarter_circle)
    from validation.linear_memory.models import hebbian_W, lowrank_m
    from validation.linear_memory.train import train

    def best(model, kappa):
        res = [r for r in by_group.get((model, kappa, d, "default"), []) if r["success"]]
        return max(res, key=lambda r: r["load"]) if res else None

    trained = {}
    for model, kappa in (("op", None), ("lowrank", 0.5)):
        r = best(model, kappa)
        if r is None:
            continue
        rf, ri = trial_rngs(r["seed"], d, r["p"])
        facts = make_facts("op", r["p"], d, rng=rf)
        res = train(facts, parametrization="full" if model == "op" else "lowrank", kappa=kappa or 1.0, rng=ri)
        if res.success:
            trained[model] = (facts, res, r["seed"])
    scores = arrays = full = low = init = m = None
    table = []
    if "op" in trained:
        facts, res, seed = trained["op"]
        f64 = facts.astype(np.float64)
        c_t, q_t = normalized_scores(res.W.astype(np.float64), f64)
        c_h, q_h = normalized_scores(hebbian_W(f64), f64)
        scores = {"d": d, "p": facts.p, "load": facts.load, "seed": seed, "trained": score_summary(c_t, q_t),
                  "hebbian": score_summary(c_h, q_h)}
        arrays = {"trained": (c_t, q_t), "hebbian": (c_h, q_h)}
        full = spectrum_vs_quarter_circle(res.W, 1.0)
        table.append(["full rank trained", facts.load, full["law"], full["ks"], full["n"]])
    if "lowrank" in trained:
        facts, res, _ = trained["lowrank"]
        m = lowrank_m(d, 0.5)
        k_eff = m / d
        low = spectrum_vs_quarter_circle(res.W, k_eff, rank=m)
        table.append([f"rank {m}/{d} trained", facts.load, low["law"], low["ks"], low["n"]])
        init = init_spectrum_vs_mp_product(res.W0, k_eff, rank=m)
        table.append([f"rank {m}/{d} at init (s^2)", None, f"mp_product({k_eff:.2f})", init["ks"], init["n"]])
    return Mechanism(d=d, scores=scores, score_arrays=arrays, spectrum_full=full, spectrum_lowrank=low,
                     spectrum_init=init, lowrank_m=m, spectra_table=table)


@fill_doc
@dataclass(frozen=True)
class CapacitySweep(Result):
    """Summary of ``linear_memory.capacity``.

    Parameters
    ----------
    config : dict
        The configuration (:data:`CONFIGS`).
    rows : list of CapacityRow
        One per group: the default preset at every ``d`` and group, then the
        ``paper`` groups.
    theories : dict
        ``(model, kappa, d)`` -> prediction dict.
    by_group : dict
        ``(model, kappa, d, preset)`` -> trial results (with ``seed``).
    mechanism : Mechanism
        At ``config["mech_d"]``.
    trials : int
        Trials of the grids and the extension round.

    %(ref_quick_report)s
    """

    config: dict
    rows: list
    theories: dict
    by_group: dict
    mechanism: Mechanism
    trials: int

    def summary(self):
        """Return one line per group.

        Returns
        -------
        str
            Threshold, interval and prediction of each group.
        """
        return "\n".join(
            f"{r.model}{'' if r.kappa is None else f' kappa={r.kappa:g}'} d={r.d} {r.preset}: threshold "
            f"{r.threshold:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}], theory "
            + ("-" if r.theory is None else f"{r.theory:.4f}") + f", {r.trials} trials" for r in self.rows)


@fill_doc
class CapacityStudy(Study):
    """``linear_memory.capacity``: the report's capacity sweep (see the module notes).

    %(ref_quick_report)s
    """

    name = "linear_memory.capacity"
    title = "trained capacity thresholds of OP, DP, low-rank and Hebbian memories against theory (no committed runs)"
    trial = capacity_trial
    docs = "docs/linear_memory.md#measured-comparison-quick-report"
    committed = False
    options = (Option("config", "--config", str, "full", "quick (the report's quick mode) or full",
                      choices=tuple(CONFIGS)),)

    @staticmethod
    def _groups(cfg):
        return ([(m, k, d, "default") for d in cfg["ds"] for m, k in cfg["groups"]]
                + [(m, k, d, "paper") for m, k, d in cfg["paper"]])

    @fill_doc
    def execute(self, runner, config):
        """All groups' grids in one round, then one extension round.

        Parameters
        ----------
        %(runner)s
        config : {"quick", "full"}
            The configuration.

        Returns
        -------
        dict
            ``theories``, ``plan`` (group -> ``loads`` and ``params``), ``by_group``
            (group -> trial results with ``seed``) and ``trials``.
        """
        from validation.linear_memory.registry import prediction

        cfg = CONFIGS[config]
        theories = {(m, k, d): prediction(m, d, k) for d in cfg["ds"] for m, k in cfg["groups"]}
        plan, params = {}, []
        for g in self._groups(cfg):
            m, k, d, preset = g
            loads, prm = group_loads(m, k, d, cfg, preset, theories[(m, k, d)])
            plan[g] = {"loads": loads, "params": prm}
            params += prm
        by_group = {}

        def collect(prm, recs):
            for q, r in zip(prm, recs):
                if is_ok(r):
                    by_group.setdefault((q["model"], q.get("kappa"), q["d"], q["preset"]), []).append(
                        {**r["result"], "seed": q["seed"]})

        collect(params, runner(params))
        more = []
        for g, info in plan.items():
            res = by_group.get(g, [])
            new = extension_loads(info["loads"], res, g[2]) if res else []
            if new:
                seeds = sorted({p["seed"] for p in info["params"]})
                old = info["params"][0]
                more += trial_params(g[0], g[2], new, seeds, kappa=g[1], preset=g[3], steps=old.get("steps"))
                info["loads"] = sorted(info["loads"] + new)
        if more:
            collect(more, runner(more))
        return {"theories": theories, "plan": plan, "by_group": by_group, "trials": len(params) + len(more)}

    @fill_doc
    def summarise(self, results, config):
        """Fit every group; the mechanism diagnostics (see :class:`CapacitySweep`).

        Parameters
        ----------
        %(executed)s
        config : {"quick", "full"}
            The configuration.

        Returns
        -------
        CapacitySweep
            The summary.
        """
        cfg = CONFIGS[config]
        theories, by_group = results["theories"], results["by_group"]
        rows = []
        emp = {}
        for g in self._groups(cfg):
            m, k, d, preset = g
            res = by_group.get(g, [])
            fit = fit_threshold([r["load"] for r in res], [r["success"] for r in res])
            th = theories[(m, k, d)]
            emp[g] = fit.threshold
            rows.append(dict(
                model=m, kappa=k, d=d, preset=preset, threshold=fit.threshold, ci_low=fit.ci_low,
                ci_high=fit.ci_high, p_at_threshold=p_from_load(fit.threshold, d) if math.isfinite(fit.threshold)
                else None, theory=th.get("value"), theory_stderr=th.get("stderr"), theory_name=th.get("name"),
                kappa_eff=th.get("kappa_eff"), theory_plain=th.get("plain_model"), counts=fit.counts,
                trials=len(res), train_seconds=float(sum(r["seconds"] for r in res)),
                train_cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in res)),
                mean_steps=float(np.mean([r["steps"] for r in res])) if res else None,
                command=row_command(results["plan"][g]["params"], sorted({r["load"] for r in res}))))
        out = []
        for row in rows:
            full = emp.get(("op", None, row["d"], "default"), math.nan)
            out.append(CapacityRow(**row, ratio_to_op=row["threshold"] / full if row["model"] == "lowrank" else None))
        return CapacitySweep(config=cfg, rows=out, theories=theories, by_group=by_group,
                             mechanism=mechanism(by_group, cfg["mech_d"]), trials=results["trials"])


STUDIES = (CapacityStudy(),)
