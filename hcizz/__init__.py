"""Spectral laws, free convolution and spherical (HCIZ) integrals.

Lowest layer of the package: imports nothing from ``replica`` or ``validation``.
``hcizz.__version__`` is the version of the whole distribution (``assocmem``); its one
source of truth is ``setup.cfg``, and ``replica`` and ``validation`` re-export it.
"""


def _distribution_version():
    """Version of the installed ``assocmem`` distribution, or of the source tree's
    ``setup.cfg`` when the packages are imported from an uninstalled checkout."""
    from importlib import metadata
    from pathlib import Path

    setup_cfg = Path(__file__).resolve().parent.parent / "setup.cfg"
    if setup_cfg.is_file():   # a source checkout (editable install or PYTHONPATH)
        import configparser

        cfg = configparser.ConfigParser()
        cfg.read(setup_cfg)
        if cfg.get("metadata", "name", fallback="") == "assocmem":
            return cfg.get("metadata", "version")
    try:
        return metadata.version("assocmem")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _distribution_version()

from .estimate import Estimate
from .quarter_circle import (quarter_circle, truncated_quarter_circle, qc_quantile,
                             qc_quantile_mp, qc_moment)
from .marchenko_pastur import marchenko_pastur, mp_moment
from .mp_product import mp_product, mp_product_moment, mp_product_edges
from .spherical import (spherical_integral, hciz_large_theta, hciz_small_theta, hciz_exact_d2,
                        hciz_mc, hciz_ais, rank_one_spherical_integral, rank_one_mc,
                        rectangular_r_transform,
                        quantile_coupling_value)
from . import free_transforms

__all__ = ["__version__", "Estimate", "quarter_circle", "truncated_quarter_circle", "qc_quantile",
           "qc_quantile_mp", "qc_moment", "marchenko_pastur", "mp_moment", "mp_product",
           "mp_product_moment", "mp_product_edges", "spherical_integral", "hciz_large_theta",
           "hciz_small_theta", "hciz_exact_d2", "hciz_mc", "hciz_ais", "rank_one_spherical_integral",
           "rank_one_mc", "rectangular_r_transform", "quantile_coupling_value", "free_transforms"]
