"""Thin numpy (torch-free) training and theory-vs-simulation comparison layer.

``validation.__version__`` is the distribution's version (the same object as
``hcizz.__version__``).  It is looked up lazily: worker processes import
``validation.engine`` and must not pay for importing ``hcizz`` (scipy).
"""

__all__ = ["__version__"]


def __getattr__(name):
    if name == "__version__":
        from hcizz import __version__

        return __version__
    raise AttributeError(f"module 'validation' has no attribute {name!r}")
