"""Factual-recall memories and learning dynamics against theory: four fixed-plan studies.

* ``factual_recall.linear_memory`` -- the linear associative memory of the
  factual-recall paper is the original problem (OP) of the linear-memory
  paper (arXiv:2605.10795): its trained capacity against the finite-``p``
  replica prediction (:func:`validation.factual_recall.theory.theory_prediction`),
  per dimension, learning rate, step budget and embedding kind;
* ``factual_recall.mlp_memory`` -- the two-class MLP memory, ``N = c m d``,
  against Cover's / Gardner's counting reference points;
* ``factual_recall.escape_times`` -- escape steps from the two plateaus of the
  sequential-learning model against the linearised saddle rates;
* ``factual_recall.transformer_budget`` -- one small transformer shape,
  capacity against the step budget (constant rate and cosine schedule).

Each trial records the first step at which its criterion is met, so with a
constant rate one run gives the outcome at every smaller budget (the budget
study comes for free).  Regenerate or extend (committed trials are reused;
the new store is in your folder)::

    nice -n 10 python -m validation study factual_recall.linear_memory --workers 2

Recomputing every committed trial costs about 21 min CPU (linear 628 s, MLP
449 s, escape 46 s, transformer 148 s on the shared development machine).
Docs: ``docs/factual_recall.md#memories-against-theory``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hcizz.results import Result
from replica import p_of_load
from validation.factual_recall.fits import (CapacityFits, IntervalResult, capacity_fits,
                                            converged_budget, fit_escape_slopes)
from validation.factual_recall.theory import (CapacityPrediction, CountingBounds, counting_bounds,
                                              escape_rates, theory_prediction)
from validation.factual_recall.trials import (escape_trial, linear_recall_trial, mlp_recall_trial,
                                              transformer_budget_trial)
from validation.logistic import fit_threshold

from .base import Study, fill_doc, ok_pairs

__all__ = ["LINEAR_PLAN", "MLP_PLAN", "TRANSFORMER_PLAN", "ESCAPE_PLAN", "THEORY_CURVE_D",
           "linear_params", "mlp_params", "escape_params", "transformer_params", "FinalCapacity",
           "LinearGroup", "LinearMemorySummary", "MlpConfig", "PooledFit", "MlpMemorySummary",
           "BudgetRow", "TransformerBudgetSummary", "LinearMemory", "MlpMemory", "EscapeTimes",
           "TransformerBudget", "STUDIES"]

#: Plan of the linear-memory check: ``groups`` are ``(d, lr, steps, inputs, outputs,
#: seeds)``; ``N`` on ``rel`` times the theory's ``N`` at ``d``.  The learning-rate /
#: budget study is the d = 16, 32 groups at three rates; the paired Gaussian groups (OP
#: data) check the sphere normalisation.
LINEAR_PLAN = {"lr": 0.5,
               "rel": (0.6, 0.75, 0.9, 0.95, 1.0, 1.05, 1.1, 1.175, 1.25, 1.4),
               "budgets": (128, 256, 512, 1024, 2048, 4096, 8192),
               "groups": tuple([(d, 0.5, 8192, "sphere", "sphere", 4) for d in (8, 16, 32)]
                               + [(64, 0.5, 2048, "sphere", "sphere", 3)]
                               + [(d, lr, 8192, "sphere", "sphere", 4)
                                  for d in (16, 32) for lr in (0.2, 1.0)]
                               + [(d, 0.5, 8192, "gaussian", "gaussian", 4) for d in (8, 16, 32)]
                               + [(64, 0.5, 2048, "gaussian", "gaussian", 3)]
                               + [(16, 0.5, 8192, "sphere", "gaussian", 4)])}

#: Plan of the MLP check.  ``long``: budget extension where 8192 steps had not
#: converged (same draws: the first 8192 steps of a long run are the short run).
MLP_PLAN = {"dm": ((8, 8), (8, 16), (16, 16), (16, 32), (32, 16)), "seeds": 3, "steps": 8192,
            "lr": 0.01, "c": (1.0, 1.25, 1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 4.0),
            "budgets": (512, 1024, 2048, 4096, 8192, 16384, 32768),
            "long": {"dm": ((8, 16), (16, 16), (16, 32)), "seeds": 2, "steps": 32768,
                     "c": (2.0, 2.5, 2.75, 3.0, 3.25, 3.5)}}

#: Transformer budget study: one shape of the quick experiment (d=16, H=2, d_h=8, m=16,
#: D=8, T=8, batch 128), facts on a grid, constant-rate runs (every budget from one run)
#: and cosine runs at three budgets.
TRANSFORMER_PLAN = {"shape": (16, 2, 8, 16), "D": 8, "T": 8, "batch": 128, "seeds": 3,
                    "facts": (36, 49, 56, 64, 72, 81, 100, 121),
                    "constant": {"lrs": (0.003, 0.01), "steps": 12000, "eval_every": 500},
                    "cosine": {"lr": 0.01, "steps": (500, 2000, 8000)},
                    "budgets": (500, 1000, 2000, 4000, 8000, 12000)}

#: Plan of the escape-time check.
ESCAPE_PLAN = {"S": 64, "R": 4, "D": 8, "T": 8, "lrs": (1.0, 2.0, 4.0),
               "inits": (1e-5, 1e-4, 1e-3, 1e-2), "seeds": 3}

#: Dimensions of the theory curve drawn beside the measured linear-memory capacities
#: (the measured ones are added).
THEORY_CURVE_D = (8, 12, 16, 24, 32, 48, 64)


def linear_params(group, rel=LINEAR_PLAN["rel"]):
    """Build the parameter records of one linear-memory group.

    Parameters
    ----------
    group : tuple
        ``(d, lr, steps, inputs, outputs, seeds)`` (an entry of ``LINEAR_PLAN["groups"]``).
    rel : sequence of float, optional
        ``N`` relative to the theory's ``N`` at ``d``.

    Returns
    -------
    list of dict
        :func:`~validation.factual_recall.trials.linear_recall_trial` records:
        ``N`` = ``rel`` times the predicted ``N``, rounded, duplicates merged;
        every seed.

    References
    ----------
    docs/factual_recall.md#measurement
    """
    d, lr, steps, inputs, outputs, seeds = group
    nth = theory_prediction(d).N
    ns = sorted({max(2, int(round(nth * r))) for r in rel})
    return [{"d": int(d), "n": n, "seed": s, "steps": int(steps), "lr": float(lr),
             "inputs": inputs, "outputs": outputs} for n in ns for s in range(seeds)]


@fill_doc
def mlp_params(d, m, plan=MLP_PLAN, long=False):
    """Build the parameter records of the MLP check at ``(d, m)``.

    Parameters
    ----------
    d, m : int
        Input dimension and width.
    plan : dict, optional
        The plan (:data:`MLP_PLAN`).
    long : bool, optional
        The budget extension (``plan["long"]``) instead of the base design.

    Returns
    -------
    list of dict
        :func:`~validation.factual_recall.trials.mlp_recall_trial` records,
        ``N = round(c m d)`` for the plan's ``c``.

    %(ref_mlp_memory)s
    """
    sub = plan["long"] if long else plan
    ns = sorted({int(round(c * m * d)) for c in sub["c"]})
    return [{"d": int(d), "m": int(m), "n": n, "seed": s, "steps": sub["steps"],
             "lr": plan["lr"], "classes": 2} for n in ns for s in range(sub["seeds"])]


def escape_params(plan=ESCAPE_PLAN):
    """Build the parameter records of the escape-time check.

    Parameters
    ----------
    plan : dict, optional
        The plan (:data:`ESCAPE_PLAN`).

    Returns
    -------
    list of dict
        :func:`~validation.factual_recall.trials.escape_trial` records; the
        steps of each are twice the predicted subject escape time plus 200.

    References
    ----------
    docs/factual_recall.md#escape-times
    """
    lam = escape_rates(plan["S"], plan["R"], plan["D"])
    out = []
    for lr in plan["lrs"]:
        for init in plan["inits"]:
            steps = int(math.ceil(2.0 * math.log(1 / init) / math.log1p(lr * lam.subject))) + 200
            for s in range(plan["seeds"]):
                out.append({"S": plan["S"], "R": plan["R"], "D": plan["D"], "T": plan["T"],
                            "lr": float(lr), "init": float(init), "seed": s, "steps": steps,
                            "eval_every": 1})
    return out


@fill_doc
def transformer_params(plan=TRANSFORMER_PLAN):
    """Build the parameter records of the transformer budget study.

    Parameters
    ----------
    plan : dict, optional
        The plan (:data:`TRANSFORMER_PLAN`).

    Returns
    -------
    list of dict
        :func:`~validation.factual_recall.trials.transformer_budget_trial`
        records: per number of facts and seed, the constant-rate runs and the
        cosine runs.

    %(ref_transformer_budget)s
    """
    d, H, d_h, m = plan["shape"]
    base = {"d": d, "H": H, "d_h": d_h, "m": m, "D": plan["D"], "T": plan["T"],
            "batch": plan["batch"], "eval_repeats": 2}
    out = []
    for f in plan["facts"]:
        for s in range(plan["seeds"]):
            for lr in plan["constant"]["lrs"]:
                out.append(dict(base, facts=f, seed=s, lr=float(lr), schedule="constant",
                                steps=plan["constant"]["steps"],
                                eval_every=plan["constant"]["eval_every"]))
            for st in plan["cosine"]["steps"]:
                out.append(dict(base, facts=f, seed=s, lr=float(plan["cosine"]["lr"]),
                                schedule="cosine", steps=int(st), eval_every=min(250, int(st))))
    return out


# ----------------------------------------------------------------------------- linear memory

@fill_doc
@dataclass(frozen=True)
class FinalCapacity(Result):
    """The capacity of a group at its largest budget, as a load and as a number of facts.

    Parameters
    ----------
    budget : int
        The largest budget.
    threshold : float
        Load ``N ln N / d^2`` at 50 % success.
    %(ci)s
    successes, trials : int
        Successes and trials.
    N : float
        Real ``N`` with ``N ln N = threshold d^2`` (NaN without a threshold).
    N_ci_low, N_ci_high : float
        ``N`` at the interval's ends (0 / inf at open ends).

    References
    ----------
    docs/factual_recall.md#results
    """

    budget: int
    threshold: float
    ci_low: float
    ci_high: float
    successes: int
    trials: int
    N: float
    N_ci_low: float
    N_ci_high: float

    _estimate = "threshold"
    level = 0.95


@fill_doc
@dataclass(frozen=True)
class LinearGroup(Result):
    """One group of the linear-memory study: fits per budget, theory and the ratio.

    Parameters
    ----------
    %(d)s
    lr : float
        Constant Adam rate.
    steps : int
        Largest budget.
    inputs, outputs : str
        Embedding kinds (``"sphere"`` / ``"gaussian"``).
    trials : int
        Trials.
    fits : CapacityFits
        Per criterion and budget.
    theory : CapacityPrediction
        The finite-``p`` prediction at ``d``.
    final_all, final_99 : FinalCapacity
        The capacities at the largest budget.
    converged : dict
        Criterion -> smallest budget from which every larger budget's threshold
        lies in its interval (None if none).
    ratio_all, ratio_99 : float
        Measured over predicted load.
    cpu_seconds : float
        CPU seconds of the trials.

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#results
    """

    d: int
    lr: float
    steps: int
    inputs: str
    outputs: str
    trials: int
    fits: CapacityFits
    theory: CapacityPrediction
    final_all: FinalCapacity
    final_99: FinalCapacity
    converged: dict
    ratio_all: float
    ratio_99: float
    cpu_seconds: float

    def final(self, crit):
        """Return the capacity at the largest budget for criterion ``crit`` (``"all"`` / ``"99"``).

        Parameters
        ----------
        crit : {"all", "99"}
            The criterion.

        Returns
        -------
        FinalCapacity
            The capacity.
        """
        return self.final_all if crit == "all" else self.final_99

    def theory_inside(self, crit="all"):
        """Return whether the predicted load lies inside the measured interval.

        Parameters
        ----------
        crit : {"all", "99"}, optional
            The criterion.

        Returns
        -------
        bool
            ``ci_low <= theory <= ci_high``.
        """
        f = self.final(crit)
        return bool(f.ci_low <= self.theory.alpha <= f.ci_high)


@dataclass(frozen=True)
class LinearMemorySummary(Result):
    """Summary of ``factual_recall.linear_memory``: every group and the theory curve.

    Parameters
    ----------
    groups : list of LinearGroup
        Sorted by ``(d, lr, steps, inputs, outputs)``.
    main_lr : float
        The main learning rate of the plan.
    curve_d : list of int
        Dimensions of the theory curve.
    curve_alpha : list of float
        ``alpha_c_finite`` at them.

    References
    ----------
    docs/factual_recall.md#results
    """

    groups: list
    main_lr: float
    curve_d: list
    curve_alpha: list

    def summary(self):
        """Return one line per group: capacity load, interval, theory and ratio.

        Returns
        -------
        str
            A small table.
        """
        lines = ["LinearMemorySummary (criterion: all recalled, at the largest budget)"]
        for g in self.groups:
            f = g.final_all
            lines.append(f"  d={g.d:<3d} lr={g.lr:<4g} {g.inputs}/{g.outputs}: alpha {f.threshold:.4f} "
                         f"[{f.ci_low:.4f}, {f.ci_high:.4f}], theory {g.theory.alpha:.4f}, ratio "
                         f"{g.ratio_all:.3f}, converged from {g.converged['all']}")
        return "\n".join(lines)

    def main(self):
        """Return the sphere-embedding groups at the main learning rate.

        Returns
        -------
        list of LinearGroup
            One per ``d``.
        """
        return [g for g in self.groups if g.lr == self.main_lr and g.inputs == g.outputs == "sphere"]

    def gaussian(self, both=False):
        """Return the groups with Gaussian outputs (``both``: Gaussian inputs too) at the main rate.

        Parameters
        ----------
        both : bool, optional
            Only Gaussian inputs and outputs (the OP data).

        Returns
        -------
        list of LinearGroup
            The groups.
        """
        return [g for g in self.groups if g.lr == self.main_lr and g.outputs == "gaussian"
                and (not both or g.inputs == "gaussian")]


def _final(f, d):
    N = float(p_of_load(f.threshold, d)) if math.isfinite(f.threshold) else math.nan
    lo = float(p_of_load(max(f.ci_low, 0.0), d)) if math.isfinite(f.ci_low) else 0.0
    hi = float(p_of_load(f.ci_high, d)) if math.isfinite(f.ci_high) else math.inf
    return FinalCapacity(budget=f.budget, threshold=f.threshold, ci_low=f.ci_low, ci_high=f.ci_high,
                         successes=f.successes, trials=f.trials, N=N, N_ci_low=lo, N_ci_high=hi)


class LinearMemory(Study):
    """The linear memory against the finite-``p`` replica capacity (see the module notes).

    References
    ----------
    arXiv:2605.10795; docs/factual_recall.md#memories-against-theory
    """

    name = "factual_recall.linear_memory"
    title = ("trained capacity of the factual-recall linear memory against the finite-p replica "
             "capacity (per d, learning rate, budget and embedding)")
    trial = linear_recall_trial
    docs = "docs/factual_recall.md#memories-against-theory"

    def plan(self):
        return [p for g in LINEAR_PLAN["groups"] for p in linear_params(g)]

    def summarise(self, results):
        """Fit every group of :data:`LINEAR_PLAN` present in ``results``.

        Parameters
        ----------
        results : list of dict
            The engine records of the plan (None for a missing trial).

        Returns
        -------
        LinearMemorySummary
            The groups and the theory curve.
        """
        groups = {}
        for p, r in ok_pairs(results):
            key = (int(p["d"]), float(p["lr"]), int(p["steps"]), p.get("inputs", "sphere"),
                   p.get("outputs", "sphere"))
            groups.setdefault(key, []).append(r)
        out = []
        for key in sorted(groups):
            d, lr, steps, inputs, outputs = key
            recs = groups[key]
            fits = capacity_fits(recs, budgets=[b for b in LINEAR_PLAN["budgets"] if b <= steps])
            th = theory_prediction(d)
            fa, f9 = _final(fits.all[-1], d), _final(fits.p99[-1], d)
            out.append(LinearGroup(d=d, lr=lr, steps=steps, inputs=inputs, outputs=outputs,
                                   trials=len(recs), fits=fits, theory=th, final_all=fa, final_99=f9,
                                   converged={"all": converged_budget(fits.all),
                                              "99": converged_budget(fits.p99)},
                                   ratio_all=fa.threshold / th.alpha, ratio_99=f9.threshold / th.alpha,
                                   cpu_seconds=float(sum(r.get("cpu_seconds", 0.0) for r in recs))))
        main = {g.d for g in out if g.lr == LINEAR_PLAN["lr"] and g.inputs == g.outputs == "sphere"}
        ds = sorted(set(THEORY_CURVE_D) | main)
        return LinearMemorySummary(groups=out, main_lr=LINEAR_PLAN["lr"], curve_d=ds,
                                   curve_alpha=[theory_prediction(d).alpha for d in ds])


# ----------------------------------------------------------------------------- MLP memory

@fill_doc
@dataclass(frozen=True)
class MlpConfig(Result):
    """One ``(d, m, steps)`` of the MLP study: ``c = N / (m d)`` per criterion, counting bounds.

    Parameters
    ----------
    d, m : int
        Input dimension and width.
    steps : int
        Largest budget.
    trials : int
        Trials.
    fits : CapacityFits
        Per criterion and budget (threshold in units of ``N / (m d)``).
    converged : dict
        Criterion -> budget from which ``c`` stops moving (None if none).
    bounds : CountingBounds
        Cover's / Gardner's reference points for this size.
    c_99, c_99_ci_low, c_99_ci_high : float
        ``c`` at 99 % recalled and its interval, at the largest budget.
    c_all, c_all_ci_low, c_all_ci_high : float
        The same with every fact recalled.

    %(ref_mlp_memory)s
    """

    d: int
    m: int
    steps: int
    trials: int
    fits: CapacityFits
    converged: dict
    bounds: CountingBounds
    c_99: float
    c_99_ci_low: float
    c_99_ci_high: float
    c_all: float
    c_all_ci_low: float
    c_all_ci_high: float

    def c(self, crit):
        """Return ``(c, ci_low, ci_high)`` for criterion ``crit`` (``"99"`` / ``"all"``).

        Parameters
        ----------
        crit : {"99", "all"}
            The criterion.

        Returns
        -------
        tuple of float
            The estimate and its interval.
        """
        return ((self.c_99, self.c_99_ci_low, self.c_99_ci_high) if crit == "99" else
                (self.c_all, self.c_all_ci_low, self.c_all_ci_high))

    def per_effective_weight(self, crit):
        """Return ``(value, low, high)``: facts per effective weight, ``c m d / (m d + 2 m)``.

        Parameters
        ----------
        crit : {"99", "all"}
            The criterion.

        Returns
        -------
        tuple of float
            The estimate and its interval (the interval of ``c``, scaled).
        """
        s = self.d * self.m / self.bounds.effective_weights
        return tuple(v * s for v in self.c(crit))


@fill_doc
@dataclass(frozen=True)
class PooledFit(Result):
    """One logistic fit of ``c`` over several configurations.

    Parameters
    ----------
    c : float
        ``N / (m d)`` at 50 % success.
    %(ci)s

    %(ref_mlp_memory)s
    """

    c: float
    ci_low: float
    ci_high: float

    _estimate = "c"
    level = 0.95


@fill_doc
@dataclass(frozen=True)
class MlpMemorySummary(Result):
    """Summary of ``factual_recall.mlp_memory``.

    Parameters
    ----------
    configs : list of MlpConfig
        Every ``(d, m, steps)`` present.
    best : list of MlpConfig
        The base design (every configuration at ``MLP_PLAN["steps"]``).
    pooled_99, pooled_all : PooledFit
        One fit over the trials of ``best``, per criterion.
    spread_low, spread_high : float
        Smallest and largest ``c_99`` of ``best``.
    base_steps : int
        The base design's budget.

    %(ref_mlp_memory)s
    """

    configs: list
    best: list
    pooled_99: PooledFit
    pooled_all: PooledFit
    spread_low: float
    spread_high: float
    base_steps: int

    def summary(self):
        """Return the pooled ``c`` and one line per configuration.

        Returns
        -------
        str
            A small table.
        """
        p = self.pooled_99
        lines = [f"MlpMemorySummary: pooled c (99%) {p.c:.3f} [{p.ci_low:.3f}, {p.ci_high:.3f}] over "
                 f"the {len(self.best)} configurations at {self.base_steps} steps"]
        for r in self.configs:
            lines.append(f"  d={r.d:<3d} m={r.m:<3d} steps={r.steps:<6d} c99 {r.c_99:.3f} "
                         f"[{r.c_99_ci_low:.3f}, {r.c_99_ci_high:.3f}], Cover on effective weights "
                         f"{r.bounds.cover_effective:.3f}")
        return "\n".join(lines)

    def longer(self):
        """Return ``(long, base)`` pairs: each budget-extension row with its base-design row.

        Returns
        -------
        list of tuple
            ``(MlpConfig, MlpConfig)``.
        """
        base = {(r.d, r.m): r for r in self.best}
        return [(r, base[(r.d, r.m)]) for r in self.configs
                if r.steps > self.base_steps and (r.d, r.m) in base]


@fill_doc
class MlpMemory(Study):
    """The two-class MLP memory against the counting bounds (see the module notes).

    %(ref_mlp_memory)s
    """

    name = "factual_recall.mlp_memory"
    title = "capacity N = c m d of the two-class MLP memory against Cover's / Gardner's counting"
    trial = mlp_recall_trial
    docs = "docs/factual_recall.md#mlp-memory-against-counting-bounds"

    def plan(self):
        return ([p for d, m in MLP_PLAN["dm"] for p in mlp_params(d, m)]
                + [p for d, m in MLP_PLAN["long"]["dm"] for p in mlp_params(d, m, long=True)])

    @fill_doc
    def summarise(self, results):
        """Fit ``c`` per ``(d, m, steps)`` and pooled over the base design.

        %(records_params)s

        Returns
        -------
        MlpMemorySummary
            Per configuration and pooled.
        """
        groups = {}
        for p, r in ok_pairs(results):
            groups.setdefault((int(p["d"]), int(p["m"]), int(p["steps"])), []).append(r)
        configs = []
        for (d, m, steps) in sorted(groups):
            recs = groups[(d, m, steps)]
            fits = capacity_fits(recs, budgets=[b for b in MLP_PLAN["budgets"] if b <= steps])
            f9, fa = fits.p99[-1], fits.all[-1]
            configs.append(MlpConfig(d=d, m=m, steps=steps, trials=len(recs), fits=fits,
                                     converged={"all": converged_budget(fits.all),
                                                "99": converged_budget(fits.p99)},
                                     bounds=counting_bounds(d, m), c_99=f9.threshold,
                                     c_99_ci_low=f9.ci_low, c_99_ci_high=f9.ci_high,
                                     c_all=fa.threshold, c_all_ci_low=fa.ci_low,
                                     c_all_ci_high=fa.ci_high))
        best = [r for r in configs if r.steps == MLP_PLAN["steps"]]
        pooled = {}
        for crit in ("99", "all"):
            key = "t_all" if crit == "all" else "t_99"
            x, y = [], []
            for row in best:
                for r in groups[(row.d, row.m, row.steps)]:
                    x.append(r["load"])
                    y.append(r[key] is not None)
            f = fit_threshold(x, y)
            pooled[crit] = PooledFit(c=f.threshold, ci_low=f.ci_low, ci_high=f.ci_high)
        c99 = [r.c_99 for r in best if math.isfinite(r.c_99)]
        return MlpMemorySummary(configs=configs, best=best, pooled_99=pooled["99"],
                                pooled_all=pooled["all"], spread_low=min(c99) if c99 else math.nan,
                                spread_high=max(c99) if c99 else math.nan,
                                base_steps=MLP_PLAN["steps"])


# ----------------------------------------------------------------------------- escape times

class EscapeTimes(Study):
    """Escape steps of the sequential-learning model against the saddle rates (see the module notes).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#escape-times
    """

    name = "factual_recall.escape_times"
    title = "escape steps from the two plateaus of sequential learning against the saddle rates"
    trial = escape_trial
    docs = "docs/factual_recall.md#escape-times"

    def plan(self):
        return escape_params()

    @fill_doc
    def summarise(self, results):
        """Fit the escape slopes (:func:`~validation.factual_recall.fits.fit_escape_slopes`).

        %(records_params)s

        Returns
        -------
        validation.factual_recall.fits.EscapeSlopes
            Both plateaus.
        """
        pl = ESCAPE_PLAN
        return fit_escape_slopes(ok_pairs(results), pl["S"], pl["R"], pl["D"])


# ----------------------------------------------------------------------------- transformer budget

@fill_doc
@dataclass(frozen=True)
class BudgetRow(IntervalResult):
    """Capacity of the transformer at one schedule, rate and budget.

    Parameters
    ----------
    schedule : str
        ``"constant"`` or ``"cosine"``.
    lr : float
        (Peak) Adam rate.
    budget : int
        Step budget.
    facts : float
        Facts at 50 % success (99 % criterion; logistic in the number of facts).
    %(ci)s
    facts_per_param : float
        ``facts / params``.
    successes, trials : int
        Successes and trials.

    %(ref_transformer_budget)s
    """

    schedule: str
    lr: float
    budget: int
    facts: float
    ci_low: float
    ci_high: float
    facts_per_param: float
    successes: int
    trials: int

    _estimate = "facts"
    level = 0.95


@fill_doc
@dataclass(frozen=True)
class TransformerBudgetSummary(Result):
    """Summary of ``factual_recall.transformer_budget``.

    Parameters
    ----------
    rows : list of BudgetRow
        Constant-rate rows (every budget of each rate), then the cosine rows.
    params : int or None
        Parameter count of the shape.
    converged : dict
        ``f"{lr:g}"`` -> budget from which the constant-rate capacity stops
        moving (None if none).

    %(ref_transformer_budget)s
    """

    rows: list
    params: int | None
    converged: dict

    def summary(self):
        """Return one line per schedule, rate and budget.

        Returns
        -------
        str
            A small table.
        """
        lines = [f"TransformerBudgetSummary ({self.params} parameters; converged: {self.converged})"]
        lines += [f"  {r.schedule:<8s} lr={r.lr:<6g} budget={r.budget:<6d} facts {r.facts:.1f} "
                  f"[{r.ci_low:.1f}, {r.ci_high:.1f}]" for r in self.rows]
        return "\n".join(lines)

    def best(self):
        """Return the row with the largest finite capacity (None if none).

        Returns
        -------
        BudgetRow or None
            The row.
        """
        return max((r for r in self.rows if math.isfinite(r.facts)), key=lambda r: r.facts,
                   default=None)


class TransformerBudget(Study):
    """Capacity of one small transformer against the step budget (see the module notes).

    References
    ----------
    arXiv:2412.06538; docs/factual_recall.md#transformer-budget-study-small-size
    """

    name = "factual_recall.transformer_budget"
    title = "capacity of one small transformer shape against the step budget and schedule"
    trial = transformer_budget_trial
    docs = "docs/factual_recall.md#transformer-budget-study-small-size"

    def plan(self):
        return transformer_params()

    @fill_doc
    def summarise(self, results):
        """Fit the capacity per schedule, rate and budget.

        %(records_params)s

        Returns
        -------
        TransformerBudgetSummary
            Rows, parameter count and converged budgets.
        """
        plan = TRANSFORMER_PLAN
        rows, conv, params = [], {}, None
        const, cos = {}, {}
        for p, r in ok_pairs(results):
            params = r["params"]
            if p["schedule"] == "constant":
                const.setdefault(float(p["lr"]), []).append(dict(r, load=float(r["facts"])))
            else:
                cos.setdefault(int(p["steps"]), []).append(dict(r, load=float(r["facts"])))

        def row(schedule, lr, f):
            return BudgetRow(schedule=schedule, lr=lr, budget=f.budget, facts=f.threshold,
                             ci_low=f.ci_low, ci_high=f.ci_high, facts_per_param=f.threshold / params,
                             successes=f.successes, trials=f.trials)

        for lr in sorted(const):
            fits = capacity_fits(const[lr], budgets=[b for b in plan["budgets"]
                                                     if b <= plan["constant"]["steps"]]).p99
            conv[f"{lr:g}"] = converged_budget(fits)
            rows += [row("constant", lr, f) for f in fits]
        for st in sorted(cos):
            rows.append(row("cosine", float(plan["cosine"]["lr"]),
                            capacity_fits(cos[st], budgets=[st]).p99[0]))
        return TransformerBudgetSummary(rows=rows, params=params, converged=conv)


STUDIES = (LinearMemory(), MlpMemory(), EscapeTimes(), TransformerBudget())
