"""One protocol for results: frozen dataclasses deriving from :class:`Result`.

The convention of the whole distribution (``docs/architecture.md#one-result-protocol``):

* every public result is a frozen dataclass deriving from :class:`Result`
  (``replica``, ``hcizz`` and ``validation`` alike; :class:`hcizz.estimate.Estimate`,
  a Monte Carlo value with its standard error, is one);
* fields are read as attributes (``res.threshold``); ``to_dict()`` gives plain
  values for JSON (``report.json`` converts results through it, so a result may
  keep a historical JSON key such as ``"ci": [lo, hi]`` in its ``to_dict`` while
  its fields are ``ci_low`` / ``ci_high``);
* ``conf_int(alpha=0.05)`` returns the ``(low, high)`` interval of the result's
  main estimate at level ``1 - alpha`` (a result without one raises
  ``NotImplementedError`` naming itself); ``summary()`` returns a short text
  table of the fields;
* results are records, not containers: iterating one raises ``TypeError``
  (``res["x"]``, ``res.keys()``, ``"x" in res`` and so ``dict(res)`` and
  ``**res`` read the fields of ``to_dict()``).

Free-form records stay plain dicts: engine trial results (written to and read
back from JSONL stores) and report payloads whose keys depend on the mode.

This module imports only the standard library, so the sweep engine's worker
processes can import results without numpy or scipy.
"""
from __future__ import annotations

import math
from dataclasses import field, fields

from ._docparams import fill_doc

__all__ = ["Result", "optional", "interval_at"]


@fill_doc
def optional(default=None):
    """Declare a dataclass field that is left out of ``to_dict()`` while it is ``None``.

    Parameters
    ----------
    default : object, optional
        The field's default (``None``).

    Returns
    -------
    dataclasses.Field
        A field whose key exists only for the results that have a value
        (e.g. the certificates of an exact capacity measurement).

    See Also
    --------
    hcizz.results.Result : The record base class whose ``to_dict`` honours it.

    %(refs_result_protocol)s

    Examples
    --------
    %(pair_result_example)s
    >>> print(Pair(0.5).to_dict(), Pair(0.5, b=2).to_dict())
    {'a': 0.5} {'a': 0.5, 'b': 2}
    """
    return field(default=default, metadata={"omit_if_none": True})


@fill_doc
def interval_at(alpha, level, low, high, name):
    """Return ``(low, high)`` if ``1 - alpha`` equals ``level``, else raise ``ValueError``.

    The helper of results that store one interval, computed at ``level``.

    Parameters
    ----------
    alpha : float
        Requested ``1 - level``, in (0, 1).
    level : float
        Confidence level the stored interval was computed at.
    low, high : float
        The stored interval.
    name : str
        The result's class name, for the message.

    %(ci_returns)s

    Raises
    ------
    ValueError
        If ``alpha`` is not in (0, 1) or ``1 - alpha`` differs from ``level``.

    See Also
    --------
    hcizz.Estimate : A Monte Carlo estimate with its normal interval.
    hcizz.results.Result : The records whose ``conf_int`` uses it.

    %(refs_result_protocol)s

    Examples
    --------
    >>> interval_at(0.05, 0.95, 0.1, 0.2, "Fit")
    (0.1, 0.2)
    """
    _check_alpha(alpha)
    if not math.isclose(1.0 - alpha, level, rel_tol=0, abs_tol=1e-12):
        raise ValueError(f"alpha must be {1 - level:g} for a {name} (its interval was computed at level "
                         f"{level:g}; refit with level={1 - alpha:g}), got {alpha!r}")
    return (low, high)


def _check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")


def _fmt(v):
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, Result):
        return f"<{type(v).__name__}>"
    text = repr(v) if not isinstance(v, str) else v
    return text if len(text) <= 60 else text[:57] + "..."


@fill_doc
class Result:
    """Base class of the project's result records (use with ``@dataclass(frozen=True)``).

    A subclass is a frozen dataclass; this base adds :meth:`to_dict`,
    :meth:`conf_int`, :meth:`summary` and read access by field name, so
    ``dict(res) == res.to_dict()`` and ``res[k] == getattr(res, k)`` for the
    fields in ``to_dict()``.  Unlike a ``dict`` subclass with ``__getattr__``,
    ``hasattr``, ``copy.deepcopy`` and pickling behave normally.

    See Also
    --------
    hcizz.results.optional : A field left out of ``to_dict`` while ``None``.
    hcizz.Estimate : The Monte Carlo estimate, a related record.

    Notes
    -----
    A subclass with one main estimate names it in the class attribute
    ``_estimate`` and stores its interval as fields ``ci_low``, ``ci_high``
    computed at the field (or class attribute) ``level``; :meth:`conf_int` then
    returns that interval for ``alpha = 1 - level``.  A subclass that can
    recompute its interval at any level (a Monte Carlo estimate, a likelihood
    fit) overrides :meth:`conf_int`.  Nested results stay objects in
    ``to_dict()``; :func:`hcizz.jsonout.to_json_value` (and so ``report.json``)
    converts them through their own ``to_dict()``.

    %(refs_result_protocol)s

    Examples
    --------
    %(pair_result_example)s
    >>> r = Pair(0.5)
    >>> r.a, r["a"], r.to_dict(), "b" in r, dict(r)
    (0.5, 0.5, {'a': 0.5}, False, {'a': 0.5})
    >>> print(r.summary())
    Pair
      a  0.5
    """

    __slots__ = ()

    #: Name of the field holding the main estimate (None: no interval).
    _estimate = None
    #: Write ``ci_low`` / ``ci_high`` as one ``"ci": [low, high]`` entry in :meth:`to_dict`
    #: (the key some ``report.json`` entries have always used).
    _ci_pair = False

    def to_dict(self):
        """Return the fields as a plain ``dict`` (optional fields only when set).

        Returns
        -------
        dict
            Field name to value, in declaration order.
        """
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None and f.metadata.get("omit_if_none"):
                continue
            out[f.name] = v
        if self._ci_pair and "ci_low" in out:
            lo, hi = out.pop("ci_low"), out.pop("ci_high")
            out["ci"] = [lo, hi]
        return out

    @fill_doc
    def conf_int(self, alpha=0.05):
        """Return the ``(low, high)`` confidence interval of the main estimate at level ``1 - alpha``.

        %(conf_int_params)s

        %(ci_returns)s

        Raises
        ------
        NotImplementedError
            If the result has no main estimate with an interval.
        ValueError
            If ``alpha`` is outside (0, 1), or the result stores one interval
            computed at another level.
        """
        _check_alpha(alpha)
        if self._estimate is None or not hasattr(self, "ci_low"):
            raise NotImplementedError(f"{type(self).__name__} has no confidence interval")
        level = getattr(self, "level", 0.95)
        return interval_at(alpha, level, self.ci_low, self.ci_high, type(self).__name__)

    def summary(self):
        """Return a short text table of the result's fields.

        Returns
        -------
        str
            The class name, then one line per field of ``to_dict()`` (floats to
            six significant digits, long values cut), then the 95 % interval of
            the main estimate where there is one.
        """
        d = self.to_dict()
        width = max((len(k) for k in d), default=0)
        lines = [type(self).__name__]
        lines += [f"  {k:<{width}}  {_fmt(v)}" for k, v in d.items()]
        if self._estimate is not None:
            try:
                lo, hi = self.conf_int()
            except (NotImplementedError, ValueError):
                pass
            else:
                lines.append(f"  {'95% CI':<{width}}  [{_fmt(lo)}, {_fmt(hi)}] ({self._estimate})")
        return "\n".join(lines)

    def __getitem__(self, key):
        d = self.to_dict()
        if key not in d:
            raise KeyError(key)
        return d[key]

    def keys(self):
        """Return the field names of ``to_dict()`` (so ``dict(res)`` and ``**res`` work).

        Returns
        -------
        dict_keys
            The keys of ``to_dict()``.
        """
        return self.to_dict().keys()

    def get(self, key, default=None):
        """Return field ``key`` of ``to_dict()``, or ``default``.

        Parameters
        ----------
        key : str
            Field name.
        default : object, optional
            Returned when the field is absent (or an unset optional field).

        Returns
        -------
        object
            The value.
        """
        return self.to_dict().get(key, default)

    def __contains__(self, key):
        return key in self.to_dict()

    def __iter__(self):
        raise TypeError(f"{type(self).__name__} is a result record, not a container: read its fields "
                        "as attributes or use .to_dict()")
