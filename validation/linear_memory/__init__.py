"""Linear associative memories trained in numpy, and their comparison with the
replica theory (docs/theory_full_rank.md and docs/rank_constrained.md).  See ``docs/linear_memory.md``.

Modules: ``data`` (OP/DP fact sets), ``models`` (scores, gradients, Hebbian,
low rank), ``registry`` (each memory model declared once: name, facts,
parametrisation, theory, CLI help, grid), ``train`` (Adam presets), ``capacity`` (trials, threshold fits),
``theory`` (matching predictions), ``mechanism`` (scores, spectra),
``budget`` (step-budget study), ``exact`` (certified existence of a memory), ``d150`` (adaptive d = 100/150 thresholds,
committed store), ``adaptive_compare`` (fixed grid vs adaptive design), ``cli``
(``python -m validation capacity``).
"""
from .data import Facts, make_facts, make_op, make_dp
from .models import scores, xent_and_grad, hebbian_W, lowrank_W
from .train import train, PRESETS, TrainConfig
from .registry import MemoryModel, Parametrization, register_model, get_model, model_names
from .capacity import capacity_trial, measure_capacity
from .exact import exact_feasibility, exact_trial, verify_feasible, verify_infeasible

__all__ = ["Facts", "make_facts", "make_op", "make_dp",
           "scores", "xent_and_grad", "hebbian_W", "lowrank_W", "train", "PRESETS",
           "TrainConfig", "MemoryModel", "Parametrization", "register_model", "get_model",
           "model_names", "capacity_trial", "measure_capacity",
           "exact_feasibility", "exact_trial", "verify_feasible", "verify_infeasible"]
