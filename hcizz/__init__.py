"""Spectral laws, free convolution and spherical (HCIZ) integrals.

Lowest layer of the package: imports nothing from ``replica`` or ``validation``.
"""
from ._estimate import Estimate
from .quarter_circle import (quarter_circle, truncated_quarter_circle, qc_quantile,
                             qc_quantile_mp, qc_moment)
from .marchenko_pastur import marchenko_pastur, mp_moment
from .mp_product import mp_product, mp_product_moment, mp_product_edges
from .spherical import (spherical_integral, hciz_large_theta, hciz_small_theta, hciz_exact_d2,
                        hciz_mc, hciz_ais, rank_one_spherical_integral, rank_one_mc,
                        rectangular_r_transform,
                        quantile_coupling_value)
from . import free_transforms

__all__ = ["Estimate", "quarter_circle", "truncated_quarter_circle", "qc_quantile",
           "qc_quantile_mp", "qc_moment", "marchenko_pastur", "mp_moment", "mp_product",
           "mp_product_moment", "mp_product_edges", "spherical_integral", "hciz_large_theta",
           "hciz_small_theta", "hciz_exact_d2", "hciz_mc", "hciz_ais", "rank_one_spherical_integral",
           "rank_one_mc", "rectangular_r_transform", "quantile_coupling_value", "free_transforms"]
