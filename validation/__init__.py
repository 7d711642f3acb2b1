"""Thin numpy (torch-free) training and theory-vs-simulation comparison layer."""
from hcizz import __version__

__all__ = ["__version__"]
