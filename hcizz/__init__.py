"""Spectral laws, free convolution and spherical (HCIZ) integrals.

Lowest layer of the package: imports nothing from ``replica`` or ``validation``.
"""
from ._estimate import Estimate

__all__ = ["Estimate"]
