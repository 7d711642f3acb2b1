"""Spectral laws, free convolution and spherical (HCIZ) integrals.

Lowest layer of the package: imports nothing from ``replica`` or ``validation``.
``hcizz.__version__`` is the version of the whole distribution (``assocmem``); its one
source of truth is ``setup.cfg``, and ``replica`` and ``validation`` re-export it.

The public names are imported on first use (``hcizz.hciz_mc``,
``from hcizz import hciz_mc``): importing one module of the package, e.g. the
shared layer ``hcizz.jsonout`` or ``hcizz.checks``, does not import the others
(nor scipy).
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


import sys as _sys
import types as _types

# Public names, resolved on first use (PEP 562), ``__version__`` included:
# ``import hcizz.jsonout`` (or ``hcizz.checks``, the shared layer used by the
# sweep engine's worker processes) runs this file, and must not pay for
# importing every law, hence scipy.
_EXPORTS = {
    "Estimate": "estimate",
    "Result": "results",
    **dict.fromkeys(["quarter_circle", "truncated_quarter_circle", "qc_quantile",
                     "qc_quantile_mp", "qc_moment"], "quarter_circle"),
    **dict.fromkeys(["marchenko_pastur", "mp_moment"], "marchenko_pastur"),
    **dict.fromkeys(["mp_product", "mp_product_moment", "mp_product_edges"], "mp_product"),
    **dict.fromkeys(["spherical_integral", "hciz_large_theta", "hciz_small_theta", "hciz_exact_d2",
                     "hciz_mc", "hciz_ais", "rank_one_spherical_integral", "rank_one_mc",
                     "rectangular_r_transform", "quantile_coupling_value"], "spherical"),
    "free_transforms": None,   # a submodule, exported as such
}

__all__ = ["__version__", "Estimate", "Result", "quarter_circle", "truncated_quarter_circle", "qc_quantile",
           "qc_quantile_mp", "qc_moment", "marchenko_pastur", "mp_moment", "mp_product",
           "mp_product_moment", "mp_product_edges", "spherical_integral", "hciz_large_theta",
           "hciz_small_theta", "hciz_exact_d2", "hciz_mc", "hciz_ais", "rank_one_spherical_integral",
           "rank_one_mc", "rectangular_r_transform", "quantile_coupling_value", "free_transforms"]


def __getattr__(name):
    if name == "__version__":     # read once, on first use
        global __version__
        __version__ = _distribution_version()
        return __version__
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    submodule = _EXPORTS[name]
    if submodule is None:
        return importlib.import_module(f"{__name__}.{name}")
    value = getattr(importlib.import_module(f"{__name__}.{submodule}"), name)
    globals()[name] = value       # later look-ups are plain attribute reads
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | {"__version__"})


class _Package(_types.ModuleType):
    """The module type of ``hcizz``: the import system binds each loaded submodule
    to its package (``hcizz.quarter_circle = <module>``); where a public function
    has its module's name (``quarter_circle``, ``marchenko_pastur``,
    ``mp_product``) the function is bound instead, as the eager
    ``from .quarter_circle import quarter_circle`` did.  ``sys.modules`` keeps
    the submodule, so ``from hcizz.quarter_circle import ...`` is unchanged."""

    def __setattr__(self, name, value):
        if (isinstance(value, _types.ModuleType) and _EXPORTS.get(name) == name
                and value.__name__ == f"{__name__}.{name}"):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
