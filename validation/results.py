"""One shape for results: frozen dataclasses with ``to_dict()``.

The convention of the project (docs/architecture.md#results-have-one-shape):

* a Monte Carlo value with its standard error is an :class:`hcizz.estimate.Estimate`;
* a result with a fixed set of fields is a frozen dataclass deriving from
  :class:`Result`: attributes (``res.threshold``), ``to_dict()`` for JSON and
  report output, and, so that callers written for the earlier plain dicts keep
  working, a read-only mapping view (``res["threshold"]``, ``dict(res)``,
  ``res.get``, ``**res``);
* free-form records (engine trial results stored in a JSONL store, report
  payloads whose keys depend on the mode) stay plain dicts.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, fields

__all__ = ["Result", "optional"]


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

    References
    ----------
    docs/architecture.md#results-have-one-shape
    """
    return field(default=default, metadata={"omit_if_none": True})


class Result(Mapping):
    """Base class of the project's result records (use with ``@dataclass(frozen=True)``).

    A subclass is a frozen dataclass; this base adds :meth:`to_dict` and the
    read-only mapping protocol over the same keys, so
    ``dict(res) == res.to_dict()`` and ``res[k] == getattr(res, k)``.
    Unlike a ``dict`` subclass with ``__getattr__``, ``hasattr``,
    ``copy.deepcopy`` and pickling behave normally.

    Notes
    -----
    Nested results stay objects in ``to_dict()``;
    :func:`hcizz.jsonout.to_json_value` (and so ``report.json``) converts them
    through their own ``to_dict()``.

    References
    ----------
    docs/architecture.md#results-have-one-shape

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Pair(Result):
    ...     a: float
    ...     b: int = optional()
    >>> r = Pair(0.5)
    >>> r.a, r["a"], r.to_dict(), "b" in r
    (0.5, 0.5, {'a': 0.5}, False)
    """

    __slots__ = ()

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
        return out

    def __getitem__(self, key):
        return self.to_dict()[key]

    def __iter__(self):
        return iter(self.to_dict())

    def __len__(self):
        return len(self.to_dict())
