"""Result object for Monte Carlo estimates (value with its standard error)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import NormalDist

import numpy as np

from .docstrings import fill_doc
from .results import Result, _check_alpha

__all__ = ["Estimate"]


@dataclass(frozen=True)
class Estimate(Result):
    """A Monte Carlo estimate with its standard error.

    A :class:`hcizz.results.Result`: fields as attributes, :meth:`to_dict`
    gives a JSON-friendly dict, :meth:`conf_int` the normal-approximation
    interval, ``format(est)`` prints ``value ± stderr``.

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

    See Also
    --------
    hcizz.results.Result : The base of the project's result records.
    replica.v_p : A function that returns an estimate.

    References
    ----------
    docs/reliability.md#how-this-is-tested

    Examples
    --------
    >>> e = Estimate(0.85, 0.001, n=400)
    >>> print(e)
    0.85 ± 0.001
    >>> [round(v, 5) for v in e.conf_int()]
    [0.84804, 0.85196]
    """

    value: float
    stderr: float
    n: int = 0
    info: dict = field(default_factory=dict, compare=False)

    _estimate = "value"

    @property
    def rel_stderr(self):
        """Relative standard error ``stderr / |value|``."""
        return np.abs(self.stderr) / np.abs(self.value)

    @fill_doc
    def conf_int(self, alpha=0.05):
        """Return the normal-approximation interval ``value -/+ z_{1-alpha/2} stderr``.

        %(conf_int_params)s

        Returns
        -------
        tuple
            ``(low, high)``, floats or arrays like ``value``.

        Notes
        -----
        The central limit theorem interval of a mean of ``n`` independent
        samples; for an exact result (``stderr = 0``) it is ``(value, value)``.
        """
        _check_alpha(alpha)
        z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
        return (self.value - z * self.stderr, self.value + z * self.stderr)

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

    def summary(self):
        """Return ``"Estimate: value ± stderr (n samples)"`` with the 95 % interval.

        Returns
        -------
        str
            One line.
        """
        lo, hi = self.conf_int()
        if np.ndim(lo):
            ci = ", ".join(f"[{a:.6g}, {b:.6g}]" for a, b in zip(np.ravel(lo), np.ravel(hi)))
        else:
            ci = f"[{lo:.6g}, {hi:.6g}]"
        return f"Estimate: {self} (n={self.n}); 95% CI {ci}"

    def __format__(self, spec):
        spec = spec or ".6g"
        if np.ndim(self.value) or np.ndim(self.stderr):     # arrays: one "v ± s" per entry
            v, s = np.broadcast_arrays(np.asarray(self.value, float), np.asarray(self.stderr, float))
            return "[" + ", ".join(f"{format(float(a), spec)} ± {format(float(b), '.2g')}"
                                   for a, b in zip(v.ravel(), s.ravel())) + "]"
        return f"{format(self.value, spec)} ± {format(self.stderr, '.2g')}"

    def __str__(self):
        return format(self, "")
