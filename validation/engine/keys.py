"""Canonical JSON, trial keys and the name of a trial function.

A trial is identified by the pair (trial function, parameter record). Its key
is the SHA-256 of one canonical JSON text, so the key is stable across runs,
processes, machines and Python versions:

``trial_key(params, fn) = sha256(canonical_json({"fn": NAME, "params": key_params(params)}))``

* ``NAME`` is the trial's stable name (``"linear_memory.capacity"``, given by
  :func:`validation.engine.trial`), or ``"module:qualname"`` of a function
  that is not registered, or ``None`` when no function is given. Including
  it lets two experiments share one store without one's results being
  mistaken for the other's. A registered trial can move between modules
  without changing a key; renaming it (or changing what an unregistered
  function's module path is) starts its sweep afresh, unless the old name is
  declared as an alias.
* ``key_params`` rounds every float to 12 significant digits (``0.1 + 0.2``
  and ``0.3`` are one trial): parameters are identities, and a load computed
  from a theory prediction differs in its last bits between numpy versions
  and BLAS builds; two floats give the same key exactly when they agree to 12
  significant digits. The record keeps the exact parameters.
* Canonical JSON: ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
  ensure_ascii=False, allow_nan=False)``. Dict keys are sorted, so key order
  in ``params`` does not matter. ``1`` and ``1.0`` are different values (an
  int and a float) and give different keys.
* Only plain JSON values are accepted: dicts with ``str`` keys, lists,
  ``str``, ``int``, finite ``float``, ``bool`` and ``None``. Tuples are
  normalised to lists and numpy scalars to the Python scalar of the same value
  (``np.float64(0.1)`` -> ``0.1``, ``np.int64(3)`` -> ``3``); NaN, infinities,
  non-string dict keys and every other type raise ``ValueError``. This is
  :func:`hcizz.jsonout.to_json_value` with ``nonfinite="raise"``: a parameter
  is an identity, and ``nan`` is not equal to itself (the JSON policy of the
  project is in ``docs/reliability.md#json``).

These are the keys of store format version 2 (``docs/sweeps.md#records``);
version 1 keyed the exact floats under ``module:qualname`` and is read with
recomputed keys.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import pickle
import sys

import numpy as np

from hcizz.jsonout import to_json_value
from validation._docparams import fill_doc

__all__ = ["canonical_json", "normalize_params", "key_params", "trial_key", "key_of", "fn_name", "check_fn",
           "KEY_DIGITS"]

#: Significant digits of the floats of a key (see the module notes).
KEY_DIGITS = 12


def _normalize(obj, where):
    # the project's one JSON converter (docs/reliability.md#json)
    return to_json_value(obj, nonfinite="raise", where=where, strict_types=True)


def normalize_params(params, name="params"):
    """Return ``params`` as a plain JSON dict (see module notes).

    Parameters
    ----------
    params : dict
        Parameter record.
    name : str
        Name used in error messages.

    Returns
    -------
    dict
        The same values as plain JSON (tuples -> lists, numpy scalars ->
        Python scalars).

    Raises
    ------
    ValueError
        Naming ``name`` (and the offending entry) when ``params`` is not a
        dict or holds a value that is not plain JSON.

    See Also
    --------
    validation.engine.keys.key_params : The parameters as they enter a key.

    References
    ----------
    docs/sweeps.md#writing-a-trial; docs/reliability.md#json

    Examples
    --------
    >>> normalize_params({"t": (1, 2), "x": np.float64(0.5)})
    {'t': [1, 2], 'x': 0.5}
    >>> normalize_params({"x": float("nan")})
    Traceback (most recent call last):
    ...
    ValueError: params['x'] must be JSON-serialisable: non-finite float nan is not allowed
    """
    if not isinstance(params, dict):
        raise ValueError(f"{name} must be a dict of JSON values, got {type(params).__name__} {params!r:.80}")
    return _normalize(params, name)


@fill_doc
def canonical_json(obj):
    """Return the canonical JSON text of a plain JSON value.

    Keys are sorted, there are no spaces, floats are written as their shortest
    round-trip ``repr`` and NaN/infinity are rejected.

    Parameters
    ----------
    obj : object
        A plain JSON value (dicts with str keys, lists, str, int, float, bool, None).

    Returns
    -------
    str
        The canonical text.

    See Also
    --------
    validation.engine.keys.trial_key : Hashes this text.

    %(ref_records)s

    Examples
    --------
    >>> canonical_json({"b": [0.1, True], "a": None})
    '{"a":null,"b":[0.1,true]}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


@fill_doc
def fn_name(fn):
    """Return the name a trial function is keyed by, or ``fn`` itself if it is a str.

    Parameters
    ----------
    fn : callable or str
        The trial function or its name.

    Returns
    -------
    str
        The stable name of a registered trial (:func:`validation.engine.trial`),
        else ``"module:qualname"``.

    Raises
    ------
    ValueError
        If ``fn`` has no module or qualified name.

    See Also
    --------
    validation.engine.trials.trial_name : The stable name of a registered trial.

    %(ref_writing_a_trial)s
    """
    if isinstance(fn, str):
        return fn
    stable = getattr(fn, "__trial_name__", None)
    if stable is not None:
        return stable
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise ValueError(f"fn must be an importable module-level function, got {fn!r:.80}")
    return f"{module}:{qualname}"


@fill_doc
def trial_key(params, fn=None):
    """Return the stable key of one trial: SHA-256 hex digest of its canonical JSON.

    Parameters
    ----------
    params : dict
        Parameter record of the trial (plain JSON values, seed included).
    fn : callable or str, optional
        The trial function, or its name (:func:`fn_name`). :func:`run_sweep`
        always passes it, so the ``key`` of a stored record equals
        ``trial_key(record["params"], record["fn"])``. Without ``fn`` the
        key is that of the parameters alone (``"fn": null`` is hashed).

    Returns
    -------
    str
        64 hexadecimal characters.

    See Also
    --------
    validation.engine.keys.canonical_json : The text that is hashed.
    validation.engine.keys.key_of : The key of normalised parameters.

    Notes
    -----
    ``sha256(canonical_json({"fn": fn_name(fn), "params": key_params(params)}))``,
    where canonical JSON sorts dict keys and :func:`validation.engine.keys.key_params` rounds floats
    to 12 significant digits: the key does not depend on dict order, process,
    machine, Python version or the last bits of a computed float, and two
    float values share a key exactly when they agree to 12 significant digits.

    %(ref_records)s

    Examples
    --------
    >>> from validation.engine import trial_key
    >>> trial_key({"seed": 1, "d": 8}) == trial_key({"d": 8, "seed": 1})
    True
    >>> trial_key({"x": 1}) == trial_key({"x": 1.0})
    False
    >>> trial_key({"x": 0.1 + 0.2}) == trial_key({"x": 0.3})
    True
    """
    name = None if fn is None else fn_name(fn)
    return key_of(name, normalize_params(params))


def _round(obj):
    if isinstance(obj, float):
        return float(f"{obj:.{KEY_DIGITS}g}")
    if isinstance(obj, dict):
        return {k: _round(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round(v) for v in obj]
    return obj


@fill_doc
def key_params(params):
    """Return the parameters as they enter a key: floats rounded to :data:`KEY_DIGITS` digits.

    Parameters
    ----------
    params : dict
        Normalised parameter record (see :func:`normalize_params`).

    Returns
    -------
    dict
        The same record with every float (nested ones too) rounded to 12
        significant digits; ints, strings, booleans and None unchanged.

    See Also
    --------
    validation.engine.keys.normalize_params : Plain JSON parameters.
    validation.engine.keys.key_of : The key of the parameters.

    %(ref_records)s

    Examples
    --------
    >>> key_params({"alpha": 0.9073773753570492, "d": 40, "w": [0.1 + 0.2]})
    {'alpha': 0.907377375357, 'd': 40, 'w': [0.3]}
    """
    return _round(params)


@fill_doc
def key_of(name, params):
    """Return the key of already-normalised ``params`` under function name ``name``.

    Parameters
    ----------
    name : str or None
        ``"module:qualname"`` of the trial function (``None``: parameters only).
    params : dict
        Normalised parameter record (see :func:`normalize_params`).

    Returns
    -------
    str
        SHA-256 hex digest of ``canonical_json({"fn": name, "params": key_params(params)})``.

    See Also
    --------
    validation.engine.keys.trial_key : The key of raw parameters and a trial function.

    %(ref_records)s
    """
    text = canonical_json({"fn": name, "params": _round(params)})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@fill_doc
def check_fn(fn, *, picklable=True):
    """Check that ``fn`` is an importable module-level callable; return its name.

    Worker processes receive the function by reference (module + name), so
    lambdas, closures, bound methods of local objects and ``functools.partial``
    are rejected with a ``ValueError`` naming ``fn``.

    Parameters
    ----------
    fn : callable
        The trial function.
    picklable : bool, optional
        Also require that ``fn`` pickles (default True; not needed in-process).

    Returns
    -------
    str
        The name ``fn`` is keyed by (:func:`fn_name`: its stable name if it is
        registered, else ``"module:qualname"``).

    Raises
    ------
    ValueError
        If ``fn`` is not callable, not importable as the same object, or not
        picklable when required.

    See Also
    --------
    validation.engine.keys.fn_name : The name a trial function is keyed by.

    %(ref_writing_a_trial)s
    """
    if not callable(fn):
        raise ValueError(f"fn must be an importable module-level function, got {fn!r:.80}")
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module or not qualname:
        raise ValueError(f"fn must be an importable module-level function, got {fn!r:.80}")
    name = f"{module}:{qualname}"
    if "<" in qualname:  # <lambda>, <locals>
        raise ValueError(f"fn must be an importable module-level function, got {name} "
                         "(lambdas and nested functions cannot be sent to worker processes)")
    try:
        obj = sys.modules[module] if module in sys.modules else importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        raise ValueError(f"fn must be an importable module-level function, got {name} "
                         f"which cannot be imported ({type(exc).__name__}: {exc})") from None
    if obj is not fn:
        raise ValueError(f"fn must be an importable module-level function, got {name} "
                         "which does not import as the same object")
    if picklable:
        try:
            pickle.dumps(fn)
        except Exception as exc:
            raise ValueError(f"fn must be picklable to run in worker processes, got {name} "
                             f"({type(exc).__name__}: {exc})") from None
    return fn_name(fn)
