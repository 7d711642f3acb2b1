"""Budget study: the empirical threshold against the training-step budget (how the default preset was chosen).

One study, ``linear_memory.budget``.  With a constant learning rate (no
warm-up, no decay) a run with budget ``B`` is exactly the first ``B`` steps of
a run with a larger budget, and training stops at the first step where all
facts are recalled, so one run per trial at the largest budget gives the
outcome at every smaller budget: ``success(B) = success and steps <= B``
(:func:`validation.linear_memory.capacity.budget_thresholds`).  The threshold
is refitted per budget until it stops moving, for each optimiser setting of
:data:`CONFIGS`.  Nothing is committed: a run computes on a store in your
folder (``--store``, default ``./linear_memory.budget.jsonl``)::

    nice -n 10 python -m validation study linear_memory.budget --d 20,30 --workers 2

Notes
-----
Grid: 8 loads within +-30 % of :data:`CENTERS` (the measured thresholds at
these ``d``, about 0.9; 0.9 for other ``d``), ``--seeds`` trials per load.

Docs: ``docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen``.
"""
from __future__ import annotations

from dataclasses import dataclass

from hcizz.results import Result
from validation.linear_memory.capacity import MAX_TRAINED_D as MAX_D, budget_thresholds, capacity_trial, load_grid, trial_params

from .base import Option, Study, dims_option, fill_doc, seeds_option

__all__ = ["CONFIGS", "BUDGETS", "CENTERS", "BudgetCurve", "STUDIES"]

#: Candidate optimiser settings (constant learning rate) compared by the study.
CONFIGS = {
    "T1_lr0.05": {"temperature": 1.0, "lr": 0.05},
    "T0.05_lr0.1": {"temperature": 0.05, "lr": 0.1},
    "T0.05_lr0.3": {"temperature": 0.05, "lr": 0.3},
}
BUDGETS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
#: Grid centre per d (the measured thresholds; 0.9 for another d).
CENTERS = {20: 0.95, 30: 0.93, 40: 0.91, 60: 0.88}


def _trained_models():
    from validation.linear_memory.registry import MEMORY_MODELS

    # trained models that take no rank ratio (the study has no --kappa)
    return tuple(n for n, m in MEMORY_MODELS.items() if m.parametrization.trained and not m.needs_kappa)


@fill_doc
@dataclass(frozen=True)
class BudgetCurve(Result):
    """The threshold against the step budget for one setting and one ``d``.

    Parameters
    ----------
    config : str
        Name in :data:`CONFIGS`.
    %(d)s
    fits : list of BudgetThreshold
        One per budget (:func:`validation.linear_memory.capacity.budget_thresholds`).
    trials : int
        Trials.
    train_seconds : float
        Summed trial wall time.

    References
    ----------
    docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen
    """

    config: str
    d: int
    fits: list
    trials: int
    train_seconds: float


class BudgetStudy(Study):
    """``linear_memory.budget``: thresholds against the step budget (see the module notes).

    References
    ----------
    docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen
    """

    name = "linear_memory.budget"
    title = "linear-memory threshold against the training-step budget, per optimiser setting (no committed runs)"
    trial = capacity_trial
    docs = "docs/linear_memory.md#budget-study-how-the-default-preset-was-chosen"
    committed = False

    @property
    def options(self):
        return (dims_option((20, 30), high=MAX_D),
                Option("model", "--model", str, "op", "a trained model without a rank ratio",
                       choices=_trained_models()),
                seeds_option(6),
                Option("max_budget", "--max-budget", int, 8192, "step budget of every run (the largest budget)",
                       low=1, high=10**6),
                Option("configs", "--configs", str, tuple(CONFIGS), "optimiser settings", many=True,
                       choices=tuple(CONFIGS)))

    def _params(self, d, model, seeds, max_budget, name):
        loads = load_grid(CENTERS.get(d, 0.9), n=8, rel=0.3, d=d)
        return trial_params(model, d, loads, range(seeds), steps=max_budget, warmup=0.0, final=1.0,
                            **CONFIGS[name])

    def plan(self, ds, model, seeds, max_budget, configs):
        return [q for name in configs for d in ds for q in self._params(d, model, seeds, max_budget, name)]

    def execute(self, runner, ds, model, seeds, max_budget, configs):
        """One run per setting and ``d``.

        Returns
        -------
        dict
            ``(config, d)`` -> list of trial results.
        """
        return {(name, d): runner.results(self._params(d, model, seeds, max_budget, name), with_params=False)
                for name in configs for d in ds}

    def summarise(self, results, ds, model, seeds, max_budget, configs):
        """One :class:`BudgetCurve` per setting and ``d``.

        Returns
        -------
        dict
            ``"<config> d=<d>"`` -> :class:`BudgetCurve`.
        """
        use = [b for b in BUDGETS if b <= max_budget]
        return {f"{name} d={d}": BudgetCurve(config=name, d=d, fits=budget_thresholds(res, use), trials=len(res),
                                             train_seconds=float(sum(r["seconds"] for r in res)))
                for (name, d), res in results.items()}


STUDIES = (BudgetStudy(),)
