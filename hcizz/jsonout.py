"""The project's one JSON policy: strict JSON, non-finite floats as strings.

Every JSON text the project writes (``--json`` output of ``python -m replica``,
``python -m hcizz`` and ``python -m validation``, ``report.json``, the records
of a sweep store) goes through :func:`to_json_value` / :func:`dumps`, so it is
*strict* JSON: ``json.loads(text, parse_constant=...)`` never sees the
non-standard tokens ``NaN``, ``Infinity`` or ``-Infinity``.

Policy (documented once, here and in ``docs/reliability.md#json``)
-------------------------------------------------------------------
* numpy scalars and arrays become the plain Python value / list of the same
  value; tuples become lists; ``pathlib.Path`` becomes ``str``; objects with a
  ``to_dict()`` method are converted through it.
* a non-finite float is written as one of the three **strings** ``"nan"``,
  ``"inf"``, ``"-inf"`` (``str(float(x))``): no information is lost (the sign
  of an infinity survives) and ``float(value)`` reads it back in Python, numpy
  and most other languages. :func:`from_json_value` undoes it.
* where a float is an *identity* rather than a measurement -- the parameters
  of a trial, hashed into its key -- a non-finite value is refused instead
  (``nonfinite="raise"``, a ``ValueError`` naming the entry), since ``nan``
  is not equal to itself.
* a worker process of the sweep engine converts a trial's result to plain
  Python values with ``nonfinite="keep"`` and ``strict_types=True`` (a value
  of any other type is a ``TypeError`` naming the entry); the parent writes it
  to the store under the string policy.

This module imports only the standard library and numpy, and importing it
does not import the rest of ``hcizz`` (its package ``__init__`` is lazy), so
a worker process that needs it does not load scipy.
"""
from __future__ import annotations

import json
import math
from pathlib import PurePath

__all__ = ["to_json_value", "from_json_value", "dumps", "loads_strict", "NONFINITE_STRINGS"]

#: The strings that stand for the non-finite floats.
NONFINITE_STRINGS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _np():
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    return numpy


def to_json_value(obj, *, nonfinite="string", where="value", strict_types=False,
                  type_error=ValueError):
    """Convert ``obj`` to plain JSON values under the project policy.

    Parameters
    ----------
    obj : object
        Dicts, lists, tuples, str, int, float, bool, None, numpy scalars and
        arrays, paths, objects with ``to_dict()``.
    nonfinite : {"string", "raise", "keep"}
        ``"string"``: NaN/inf become ``"nan"``, ``"inf"``, ``"-inf"``.
        ``"raise"``: a ``ValueError`` naming ``where``.
        ``"keep"``: they stay Python floats; the result is plain Python values
        but not yet strict JSON (the sweep engine's workers use it: the
        parent process writes the record with the ``"string"`` policy).
    where : str
        Name of ``obj`` used in error messages (``params['x'][1]``).
    strict_types : bool
        Refuse (``type_error``) dict keys that are not ``str`` and values of any
        other type, instead of passing them through (``str`` keys) / unchanged.
        Objects with ``to_dict()`` (the project's result records) are converted
        through it in both modes.
    type_error : type, optional
        Exception class of a ``strict_types`` refusal: ``ValueError`` (default)
        for a bad argument, ``TypeError`` where a function returned a value of
        the wrong type (the sweep engine's trial results).

    Returns
    -------
    object
        Plain JSON value.

    See Also
    --------
    hcizz.jsonout.from_json_value : Undo the non-finite encoding.
    hcizz.jsonout.dumps : Serialise to JSON text with this conversion.

    References
    ----------
    docs/reliability.md#json

    Examples
    --------
    >>> import numpy as np
    >>> to_json_value({"a": np.float64(0.5), "b": [float("-inf"), np.nan], "c": (1, 2)})
    {'a': 0.5, 'b': ['-inf', 'nan'], 'c': [1, 2]}
    >>> to_json_value({"y": np.array([1.0, np.inf])}, nonfinite="keep", strict_types=True)
    {'y': [1.0, inf]}
    >>> to_json_value({"s": {1, 2}}, where="result", strict_types=True, type_error=TypeError)
    Traceback (most recent call last):
    ...
    TypeError: result['s'] must be JSON-serialisable: got set {1, 2}
    """
    if nonfinite not in _NONFINITE_POLICIES:
        raise ValueError(f"nonfinite must be one of {_NONFINITE_POLICIES}, got {nonfinite!r}")
    return _convert(obj, nonfinite, where, strict_types, type_error)


_NONFINITE_POLICIES = ("string", "raise", "keep")


def _convert(obj, nonfinite, where, strict_types, type_error):
    np = _np()
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if np is not None and isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, int) or (np is not None and isinstance(obj, np.integer)):
        return int(obj)
    if isinstance(obj, float) or (np is not None and isinstance(obj, np.floating)):
        f = float(obj)
        if math.isfinite(f) or nonfinite == "keep":
            return f
        if nonfinite == "raise":
            raise ValueError(f"{where} must be JSON-serialisable: non-finite float {f!r} is not allowed")
        return str(f)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                if strict_types:
                    raise type_error(f"{where} must be JSON-serialisable: dict key {k!r} is not a str")
                k = str(k)
            out[k] = _convert(v, nonfinite, f"{where}[{k!r}]", strict_types, type_error)
        return out
    if isinstance(obj, (list, tuple)):
        return [_convert(v, nonfinite, f"{where}[{i}]", strict_types, type_error)
                for i, v in enumerate(obj)]
    if np is not None and isinstance(obj, np.ndarray):
        return _convert(obj.tolist(), nonfinite, where, strict_types, type_error)
    if hasattr(obj, "to_dict"):
        # result records (frozen dataclasses with to_dict(), docs/architecture.md) are plain
        # data by construction, so even the strict mode accepts them
        return _convert(obj.to_dict(), nonfinite, where, strict_types, type_error)
    if strict_types:
        raise type_error(f"{where} must be JSON-serialisable: got {type(obj).__name__} {obj!r:.80}")
    if isinstance(obj, PurePath):
        return str(obj)
    if hasattr(obj, "_mpf_") or type(obj).__name__ in ("Fraction", "Decimal"):
        return _convert(float(obj), nonfinite, where, strict_types, type_error)
    return obj


def from_json_value(obj):
    """Undo the non-finite encoding of :func:`to_json_value`.

    The strings ``"nan"``, ``"inf"``, ``"-inf"`` (anywhere in ``obj``) become
    floats again.

    Parameters
    ----------
    obj : object
        A decoded JSON value (dicts, lists, scalars).

    Returns
    -------
    object
        ``obj`` with the three strings replaced by floats.

    See Also
    --------
    hcizz.jsonout.to_json_value : The encoding undone.
    hcizz.jsonout.loads_strict : Parse strict JSON text.

    References
    ----------
    docs/reliability.md#json

    Examples
    --------
    >>> from_json_value({"y": "-inf", "n": [1, "nan"], "s": "x"})
    {'y': -inf, 'n': [1, nan], 's': 'x'}
    """
    if isinstance(obj, str):
        return NONFINITE_STRINGS.get(obj, obj)
    if isinstance(obj, dict):
        return {k: from_json_value(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_json_value(v) for v in obj]
    return obj


def dumps(obj, **kw):
    """Serialise ``obj`` to strict JSON text under the project policy.

    Same as ``json.dumps(to_json_value(obj), allow_nan=False, **kw)``.

    Parameters
    ----------
    obj : object
        Anything :func:`to_json_value` converts.
    **kw
        Passed to ``json.dumps`` (e.g. ``indent``, ``sort_keys``).

    Returns
    -------
    str
        The JSON text.

    See Also
    --------
    hcizz.jsonout.loads_strict : Parse the text back.
    hcizz.jsonout.to_json_value : The conversion applied first.

    References
    ----------
    docs/reliability.md#json

    Examples
    --------
    >>> print(dumps({"a": float("inf"), "b": [1, 2.5]}))
    {"a": "inf", "b": [1, 2.5]}
    """
    return json.dumps(to_json_value(obj), allow_nan=False, **kw)


def _refuse_constant(token):
    raise ValueError(f"non-standard JSON constant {token}")


def loads_strict(text):
    """Parse JSON text, refusing the ``NaN``/``Infinity`` tokens with ``ValueError``.

    Parameters
    ----------
    text : str
        JSON text.

    Returns
    -------
    object
        The decoded value (non-finite strings are left as strings).

    See Also
    --------
    hcizz.jsonout.dumps : Write such text.
    hcizz.jsonout.from_json_value : Turn the non-finite strings back into floats.

    References
    ----------
    docs/reliability.md#json

    Examples
    --------
    >>> print(loads_strict('{"a": "inf", "b": 1}'))
    {'a': 'inf', 'b': 1}
    >>> try:
    ...     loads_strict("[NaN]")
    ... except ValueError as err:
    ...     print(err)
    non-standard JSON constant NaN
    """
    return json.loads(text, parse_constant=_refuse_constant)
