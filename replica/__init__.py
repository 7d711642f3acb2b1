"""Replica theory of linear associative memories: free entropy, energy terms,
capacities and symbolic checks.  May import ``hcizz``, never ``validation``."""
from hcizz import __version__
from hcizz.estimate import Estimate

from .gaussian_max import gaussian_max_moments
from .energy import energy_G, energy_G_limit
from .free_entropy import free_entropy, saddle, Saddle
from .finite_capacity import alpha_c_finite, v_p, ALPHA_C_LIMIT
from .hebbian import (HEBBIAN_LIMIT, hebbian, hebbian_recall_probability, hebbian_threshold,
                      hebbian_score_moments, hebbian_matrix, hebbian_simulate,
                      hebbian_tam_probability, hebbian_tam_threshold, HebbianPrediction)
from .load import load_of, p_of_load, p_from_load
from .rank_capacity import alpha_c, alpha_c_quad, alpha_c_small_kappa, quantile_coupling, capacity_from_profile
from .listwise import (tam_capacity, tam_capacity_expansion, tam_finite_p_coefficient,
                       tam_capacity_small_tau, tam_free_entropy, tam_score_laws, tam_scores,
                       gaussian_tail_mean, gardner_energy)

__all__ = [
    "__version__", "Estimate", "gaussian_max_moments", "energy_G", "energy_G_limit", "free_entropy",
    "saddle", "Saddle", "alpha_c_finite", "v_p", "ALPHA_C_LIMIT", "HEBBIAN_LIMIT", "hebbian",
    "hebbian_recall_probability", "hebbian_threshold", "hebbian_score_moments",
    "hebbian_matrix", "hebbian_simulate", "hebbian_tam_probability", "hebbian_tam_threshold",
    "HebbianPrediction",
    "load_of", "p_of_load", "p_from_load",
    "alpha_c", "alpha_c_quad", "alpha_c_small_kappa", "quantile_coupling", "capacity_from_profile",
    "tam_capacity", "tam_capacity_expansion", "tam_finite_p_coefficient", "tam_capacity_small_tau",
    "tam_free_entropy", "tam_score_laws", "tam_scores", "gaussian_tail_mean", "gardner_energy",
]


def __getattr__(name):
    # ``replica.symbolic`` (sympy objects) is imported on first use: ``import replica``
    # stays free of sympy, and ``replica.symbolic.saddle_point()`` works without an import
    if name == "symbolic":
        import importlib

        return importlib.import_module(f"{__name__}.symbolic")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
