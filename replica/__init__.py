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
                      HebbianPrediction)
from .rank_capacity import alpha_c, alpha_c_quad, alpha_c_small_kappa, quantile_coupling, capacity_from_profile
from .listwise import (tam_capacity, tam_capacity_expansion, tam_finite_p_coefficient,
                       tam_capacity_small_tau, tam_free_entropy, tam_score_laws, tam_scores,
                       gaussian_tail_mean, gardner_energy)

__all__ = [
    "__version__", "Estimate", "gaussian_max_moments", "energy_G", "energy_G_limit", "free_entropy",
    "saddle", "Saddle", "alpha_c_finite", "v_p", "ALPHA_C_LIMIT", "HEBBIAN_LIMIT", "hebbian",
    "hebbian_recall_probability", "hebbian_threshold", "hebbian_score_moments",
    "hebbian_matrix", "hebbian_simulate", "HebbianPrediction",
    "alpha_c", "alpha_c_quad", "alpha_c_small_kappa", "quantile_coupling", "capacity_from_profile",
    "tam_capacity", "tam_capacity_expansion", "tam_finite_p_coefficient", "tam_capacity_small_tau",
    "tam_free_entropy", "tam_score_laws", "tam_scores", "gaussian_tail_mean", "gardner_energy",
]
