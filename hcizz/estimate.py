"""Result object for Monte Carlo estimates (value with its standard error)."""
from __future__ import annotations

from dataclasses import dataclass, field, asdict

import numpy as np

__all__ = ["Estimate"]


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate with its standard error.

    Iterating gives ``(value, stderr)``, so ``value, stderr = estimate`` works;
    :meth:`to_dict` gives a JSON-friendly dict.

    Parameters
    ----------
    value : float or ndarray
        The estimate.
    stderr : float or ndarray
        One standard error of ``value`` (0 for exact results).
    n : int, optional
        Number of independent samples behind the estimate (0 if exact).
    info : dict, optional
        Method details (e.g. quadrature tolerances, number of order statistics).

    References
    ----------
    docs/reliability.md#how-this-is-tested
    """

    value: float
    stderr: float
    n: int = 0
    info: dict = field(default_factory=dict, compare=False)

    def __iter__(self):
        # allows ``value, stderr = estimate``
        yield self.value
        yield self.stderr

    @property
    def rel_stderr(self):
        """Relative standard error ``stderr / |value|``."""
        return np.abs(self.stderr) / np.abs(self.value)

    def to_dict(self):
        """Return a JSON-friendly dict (numpy scalars/arrays converted to lists/floats).

        Returns
        -------
        dict
            ``value``, ``stderr``, ``n`` and ``info``.
        """
        d = asdict(self)
        for k in ("value", "stderr"):
            v = d[k]
            d[k] = v.tolist() if isinstance(v, np.ndarray) else float(v)
        return d

    def __format__(self, spec):
        spec = spec or ".6g"
        return f"{format(self.value, spec)} ± {format(self.stderr, '.2g')}"

    def __str__(self):
        return format(self, "")
