"""Linear associative memories trained in numpy, and their comparison with the
replica theory (docs/theory_full_rank.md and docs/rank_constrained.md).  See ``docs/linear_memory.md``.

Modules: ``data`` (OP/DP fact sets, one type each), ``models`` (scores,
gradients, Hebbian, low rank), ``registry`` (each memory model declared once:
name, facts, parametrisation, theory, CLI help, grid), ``train`` (Adam
presets, training past the first recall), ``capacity`` (trials, grids, the
threshold measurement, budget refits), ``theory`` (matching predictions),
``mechanism`` (scores, spectra), ``margins`` (score/margin trial and its
predictions), ``spectra`` (spectrum trial, pooled statistic, calibration,
extrapolation), ``exact`` (certified existence of a memory), ``cli``
(``python -m validation capacity``).  The studies that run these trials
(plans, committed stores, summaries) are in :mod:`validation.studies`
(``linear_memory_*``).
"""
from .data import Facts, OPFacts, DPFacts, make_facts, make_op, make_dp
from .models import scores, xent_and_grad, hebbian_W, lowrank_W
from .train import train, PRESETS, TrainConfig
from .registry import MemoryModel, Parametrization, register_model, get_model, model_names
from .capacity import capacity_trial, measure_capacity
from .exact import exact_feasibility, exact_trial, verify_feasible, verify_infeasible

__all__ = ["Facts", "OPFacts", "DPFacts", "make_facts", "make_op", "make_dp",
           "scores", "xent_and_grad", "hebbian_W", "lowrank_W", "train", "PRESETS",
           "TrainConfig", "MemoryModel", "Parametrization", "register_model", "get_model",
           "model_names", "capacity_trial", "measure_capacity",
           "exact_feasibility", "exact_trial", "verify_feasible", "verify_infeasible"]
